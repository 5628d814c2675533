"""Rigid bodies in absolute coordinates (seed 000, section 2.1).

Each body owns a block of the generalised coordinates q. A planar body is
located by its centre of mass and the angle of its body-fixed frame,
q_i = (x_i, y_i, φ_i), the planar form of eqs. (2.1)–(2.3); its mass matrix is
the planar block of eq. (2.14). Spatial bodies with Euler parameters
(eqs. (2.5)–(2.8)) will be further subclasses of ``Body``.
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from diffimpact._validation import check_positive


def rotation(angle):
    """Planar rotation matrix A(φ) of eq. (2.3)."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    return jnp.array([[c, -s], [s, c]])


def point_position(coordinates, point):
    """Global position r_i + A(φ_i) s'_i of a body-fixed point (seed 000, eqs. (2.2)–(2.3)).

    ``coordinates`` are a planar body's (x, y, φ); ``point`` is s'_i in the
    body frame (m), measured from the centre of mass.
    """
    return coordinates[:2] + rotation(coordinates[2]) @ jnp.asarray(point, dtype=float)


class Body(eqx.Module):
    """Abstract rigid body: its block of coordinates and its inertia.

    Subclasses set ``size`` (number of coordinates) and implement the mass
    matrix block, the kinetic energy and the momenta of one body from its own
    coordinates ``q`` and velocities ``v``.
    """

    size: ClassVar[int]

    @abc.abstractmethod
    def mass_matrix(self, q):
        """Block M_i of eq. (2.13)."""

    @abc.abstractmethod
    def centre_of_mass(self, q):
        """Global position of the centre of mass (m)."""

    def kinetic_energy(self, q, v):
        """½ vᵀ M_i v (J)."""
        return 0.5 * v @ self.mass_matrix(q) @ v

    @abc.abstractmethod
    def linear_momentum(self, q, v):
        """m_i ṙ_i (kg m/s)."""

    @abc.abstractmethod
    def angular_momentum(self, q, v):
        """Angular momentum about the global origin (kg m²/s)."""


class PlanarBody(Body):
    """Rigid body moving in the xy-plane, q_i = (x, y, φ) of its centre of mass.

    Parameters
    ----------
    mass : m_i (kg), > 0.
    inertia : J_i, moment of inertia about the centre of mass, perpendicular
        to the plane (kg m²), > 0.
    name : used in error messages.
    """

    mass: jnp.ndarray
    inertia: jnp.ndarray
    name: str = eqx.field(static=True)
    size: ClassVar[int] = 3

    def __init__(self, mass, inertia, name="body"):
        self.name = name
        self.mass = check_positive(f"{name}.mass", mass)
        self.inertia = check_positive(f"{name}.inertia", inertia)

    def mass_matrix(self, q):
        """diag(m, m, J): planar form of seed 000, eq. (2.14)."""
        del q
        return jnp.diag(jnp.stack([self.mass, self.mass, self.inertia]))

    def centre_of_mass(self, q):
        return q[:2]

    def linear_momentum(self, q, v):
        del q
        return self.mass * v[:2]

    def angular_momentum(self, q, v):
        """J ω + m (x ẏ − y ẋ), a scalar in the plane."""
        return self.inertia * v[2] + self.mass * (q[0] * v[1] - q[1] * v[0])
