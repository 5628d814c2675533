"""Rigid bodies in absolute coordinates ([Gismeros Moreno 2022], section 2.1).

Each body owns a block of the generalised coordinates q.

* ``PlanarBody``: the centre of mass and the angle of the body-fixed frame,
  q_i = (x_i, y_i, φ_i), the planar form of eqs. (2.1)–(2.3); its mass matrix
  is the planar block of eq. (2.14).
* ``SpatialBody``: the centre of mass and the Euler parameters,
  q_i = (x, y, z, e0, e1, e2, e3) (eq. (2.8)), with velocities v_i = q̇_i =
  (ṙ, ṗ). The angular velocity in the body frame is ω' = 2 G(p) ṗ with
  G = [−e, −ẽ + e0 I] (Nikravesh 1988, Computer-Aided Analysis of Mechanical
  Systems, the Euler-parameter identities), so the rotational
  blocks of eqs. (2.14) and (2.16) become, by the virtual power of ω' = 2Gṗ,

  - mass matrix M_i = diag(m I, 4 Gᵀ J' G) (eq. (2.14));
  - velocity-dependent (gyroscopic) force 2 Gᵀ(−ω̃' J' ω') (the second row
    of eq. (2.16) in body axes);
  - an applied global torque n enters as 2 Gᵀ Aᵀ n (``euler_torque``).

  4 Gᵀ J' G is singular along p; the normalisation pᵀp − 1 = 0 of eq. (2.7)
  (``constraints.EulerParameters``, added by ``Model`` for every spatial
  body) closes the saddle-point system of eq. (2.20).

  These are the paper's forms on pᵀp = 1. Off it (integration and
  stabilisation let |p| drift), this module uses the rotation of p/|p|
  throughout: A = E Gᵀ / pᵀp (``euler_rotation``) and its exact rate
  ω' = B ṗ, B = 2 G / pᵀp (G(p) p = 0, so the part of ṗ along p turns
  nothing). The mass matrix, forces and energy follow from this ω' by
  virtual power: M_i = diag(m I, Bᵀ J' B) = diag(m I, 4 Gᵀ J' G / (pᵀp)²),
  a torque enters as Bᵀ Aᵀ n = 2 Eᵀ n / pᵀp, and the velocity-dependent
  force is Bᵀ(−ω̃' J' ω' − J' Ḃ ṗ) with Ḃ ṗ = −2 (pᵀṗ) ω' / pᵀp (G(ṗ) ṗ = 0).
  Then the G-rows of eq. (2.20) are Euler's equations J' ω̇' + ω̃' J' ω' = n'
  at any |p| and any pᵀṗ: a drift of |p| moves the rotation's
  bookkeeping, never the body's answer to a torque. With the paper's
  unnormalised forms a ball at |p| = 1.05 answers as if its moment of
  inertia were J |p|⁴ = 1.22 J (docs/design/table-settings.md, "A ball's
  inertia under a drift of |p|").

``orientation`` and ``point_position`` work on either kind of block; they
dispatch on its static length (3: planar, 7: spatial).
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._math import dot
from diffimpact._validation import check_positive, check_real
from diffimpact.rotations import euler_e, euler_g, euler_rotation, matmul, matvec, rotation

PLANAR_SIZE, SPATIAL_SIZE = 3, 7


def _is_spatial(coordinates):
    size = coordinates.shape[0]
    if size not in (PLANAR_SIZE, SPATIAL_SIZE):
        raise ValueError(
            f"a body's coordinate block has 3 (planar) or 7 (spatial) entries; got {size}"
        )
    return size == SPATIAL_SIZE


def orientation(coordinates):
    """Rotation matrix of a body's block: A(φ) (2×2) for planar, A(p) (3×3) for spatial."""
    coordinates = jnp.asarray(coordinates)
    if _is_spatial(coordinates):
        return euler_rotation(coordinates[3:])
    return rotation(coordinates[2])


def position(coordinates):
    """Centre of mass r_i of a planar (2) or spatial (3) body block."""
    coordinates = jnp.asarray(coordinates)
    return coordinates[:3] if _is_spatial(coordinates) else coordinates[:2]


def point_position(coordinates, point):
    """Global position r_i + A_i s'_i of a body-fixed point ([Gismeros Moreno 2022], eqs. (2.2)–(2.3)).

    ``coordinates`` are a planar body's (x, y, φ) or a spatial body's
    (x, y, z, e0, e1, e2, e3); ``point`` is s'_i in the body frame (m),
    measured from the centre of mass, with 2 or 3 components accordingly.
    """
    return position(coordinates) + matvec(orientation(coordinates), jnp.asarray(point, dtype=float))


def point_velocity(coordinates, velocities, point):
    """Velocity (m/s) of the body's material point that is at the global position ``point`` now: ṙ + ω × s.

    s = ``point`` − r, and ω the rate of the orientation matrix of ``orientation``, so this is the time
    derivative of ``point_position`` at fixed body-fixed s': for a spatial body ω = 2 E ṗ / pᵀp (A normalises
    p, so a drift of |p| does not rotate the body), for a planar one φ̇ about the normal to the plane.
    """
    coordinates, velocities = jnp.asarray(coordinates), jnp.asarray(velocities)
    arm = point - position(coordinates)
    if _is_spatial(coordinates):
        return velocities[:3] + jnp.cross(angular_velocity(coordinates, velocities), arm)
    return velocities[:2] + velocities[2] * jnp.stack([-arm[1], arm[0]])


def point_force(coordinates, point, force):
    """Generalised force Jᵀ F of a global ``force`` (N) on the body's material point at the global ``point``.

    J = ∂(r + A s')/∂q at fixed body-fixed s' (the virtual work of ``point_velocity``): (F, s × F) for a planar
    body, (F, 2 Eᵀ (s × F) / pᵀp) for a spatial one (``euler_torque`` of the moment s × F, with A's
    normalisation), s = ``point`` − r.
    """
    coordinates = jnp.asarray(coordinates)
    arm = point - position(coordinates)
    if _is_spatial(coordinates):
        p = coordinates[3:]
        return jnp.concatenate([force, 2.0 * matvec(euler_e(p).T, jnp.cross(arm, force)) / dot(p, p)])
    return jnp.concatenate([force, (arm[0] * force[1] - arm[1] * force[0])[None]])


def global_point(q, body, point):
    """Global position of the body-fixed ``point`` of ``q[body]``; ``point`` itself for the ground (``None``)."""
    return point if body is None else point_position(q[body], point)


def global_direction(q, body, vector):
    """Global direction A_i v' of the body-fixed ``vector``; ``vector`` itself for the ground (``None``)."""
    return vector if body is None else matvec(orientation(q[body]), vector)


def angular_velocity(coordinates, velocities, body_frame=False):
    """Angular velocity of a spatial body (rad/s): ω = 2 E ṗ / pᵀp (global) or ω' = 2 G ṗ / pᵀp (body frame).

    The rate of the rotation ``euler_rotation`` of p/|p|: 2 E ṗ and 2 G ṗ on the unit sphere.
    """
    p, rate = coordinates[3:], velocities[3:]
    return 2.0 * matvec(euler_g(p) if body_frame else euler_e(p), rate) / dot(p, p)


def _spatial_gyroscopic_force(inertia, q, v):
    """``SpatialBody.gyroscopic_force`` of a body of inertia J'."""
    p, rate = q[3:], v[3:]
    norm, g = dot(p, p), euler_g(p)
    omega = angular_velocity(q, v, body_frame=True)
    moment = -jnp.cross(omega, matvec(inertia, omega)) + 2.0 * dot(p, rate) / norm * matvec(inertia, omega)
    return jnp.concatenate([jnp.zeros(3), 2.0 * matvec(g.T, moment) / norm])


def gyroscopic_forces(bodies, q, v):
    """The gyroscopic forces of eq. (2.16) of all ``bodies``, as rows like ``q`` and ``v`` (``Model.split``).

    Spatial bodies (``SpatialBody`` itself) in one vmapped evaluation, their inertias stacked; others body by
    body.
    """
    if all(type(body) is SpatialBody for body in bodies):
        return jax.vmap(_spatial_gyroscopic_force)(jnp.stack([body.inertia for body in bodies]), q, v)
    return jnp.stack([body.gyroscopic_force(qi, vi) for body, qi, vi in zip(bodies, q, v)])


class Body(eqx.Module):
    """Abstract rigid body: its block of coordinates and its inertia.

    Subclasses set ``size`` (number of coordinates) and ``dimension`` (2 or 3)
    and implement the mass matrix block, the kinetic energy and the momenta of
    one body from its own coordinates ``q`` and velocities ``v``.
    """

    size: ClassVar[int]
    dimension: ClassVar[int]

    @abc.abstractmethod
    def mass_matrix(self, q):
        """Block M_i of eq. (2.13)."""

    def gyroscopic_force(self, q, v):
        """Velocity-dependent inertial force of eq. (2.16) as a generalised force (zero by default)."""
        del v
        return jnp.zeros_like(q)

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
    size: ClassVar[int] = PLANAR_SIZE
    dimension: ClassVar[int] = 2

    def __init__(self, mass, inertia, name="body"):
        self.name = name
        self.mass = check_positive(f"{name}.mass", mass, shape=())
        self.inertia = check_positive(f"{name}.inertia", inertia, shape=())

    def mass_matrix(self, q):
        """diag(m, m, J): planar form of [Gismeros Moreno 2022], eq. (2.14)."""
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


# Relative tolerance of the symmetry and triangle-inequality checks of an inertia tensor.
_INERTIA_RTOL = 1e-10


def _check_inertia(name, inertia):
    """J' as a 3×3 array after checking it is symmetric positive definite and physical.

    A 3-vector is taken as the principal moments. The principal moments of a
    rigid body satisfy the triangle inequality J_a + J_b ≥ J_c (mass cannot
    lie at negative squared distance from an axis); it is checked with a
    relative tolerance so that flat bodies (J_a + J_b = J_c) pass. Traced
    moments (a derivative by them) are checked at run time (``eqx.error_if``).
    """
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(inertia)):
        inertia = jnp.asarray(inertia)  # (also a sequence of traced moments, as [J] * 3)
        matrix = jnp.diag(inertia) if inertia.ndim == 1 else inertia
        moments = jnp.linalg.eigvalsh(0.5 * (matrix + matrix.T))
        scale = jnp.max(jnp.abs(matrix))
        bad = (
            jnp.any(jnp.abs(matrix - matrix.T) > _INERTIA_RTOL * scale)
            | (moments[0] <= 0)
            | (moments[0] + moments[1] < moments[2] * (1 - _INERTIA_RTOL))
            | jnp.any(~jnp.isfinite(matrix))
        )
        return eqx.error_if(
            matrix, bad, f"{name} must be a symmetric positive definite 3×3 inertia tensor "
            "whose principal moments satisfy the triangle inequality"
        )
    array = np.asarray(check_real(name, inertia), dtype=float)
    if array.shape == (3,):
        array = np.diag(array)
    if array.shape != (3, 3):
        raise ValueError(f"{name} must be a 3×3 inertia tensor or 3 principal moments; got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite; got {array.tolist()}")
    scale = np.max(np.abs(array))
    if np.max(np.abs(array - array.T)) > _INERTIA_RTOL * scale:
        raise ValueError(f"{name} must be symmetric; got {array.tolist()}")
    moments = np.linalg.eigvalsh(array)
    if moments[0] <= 0:
        raise ValueError(f"{name} must be positive definite; got principal moments {moments.tolist()}")
    if moments[0] + moments[1] < moments[2] * (1 - _INERTIA_RTOL):
        raise ValueError(
            f"{name} principal moments {moments.tolist()} violate the triangle inequality "
            "J_a + J_b ≥ J_c of a rigid body"
        )
    return jnp.asarray(array)


class SpatialBody(Body):
    """Rigid body in space, q_i = (x, y, z, e0, e1, e2, e3): centre of mass and Euler parameters.

    See the module docstring for the mass matrix and gyroscopic force in
    Euler parameters. ``Model`` adds the normalisation constraint pᵀp = 1
    (eq. (2.7)) for every spatial body.

    Parameters
    ----------
    mass : m_i (kg), > 0.
    inertia : J'_i, inertia tensor about the centre of mass in the body frame
        (kg m²): a symmetric positive definite 3×3 matrix, or the 3 principal
        moments; the principal moments must satisfy the triangle inequality.
    name : used in error messages.
    """

    mass: jnp.ndarray
    inertia: jnp.ndarray
    name: str = eqx.field(static=True)
    size: ClassVar[int] = SPATIAL_SIZE
    dimension: ClassVar[int] = 3

    def __init__(self, mass, inertia, name="body"):
        self.name = name
        self.mass = check_positive(f"{name}.mass", mass, shape=())
        self.inertia = _check_inertia(f"{name}.inertia", inertia)

    def mass_matrix(self, q):
        """diag(m I, 4 Gᵀ J' G / (pᵀp)²): eq. (2.14) for the velocities (ṙ, ṗ), with A normalising p."""
        g, norm = euler_g(q[3:]), dot(q[3:], q[3:])
        return jax.scipy.linalg.block_diag(
            self.mass * jnp.eye(3), 4.0 * matmul(g.T, matmul(self.inertia, g)) / norm**2)

    def gyroscopic_force(self, q, v):
        """(0, Bᵀ(−ω̃' J' ω' + 2 (pᵀṗ) J' ω' / pᵀp)): the term −ω̃ J ω of eq. (2.16) on the Euler parameters.

        B = 2 G / pᵀp (module docstring); the second term is −J' Ḃ ṗ and vanishes on pᵀṗ = 0. It differs from
        the force of Lagrange's equations of the kinetic energy only along p, which the multiplier of
        pᵀp = 1 absorbs.
        """
        return _spatial_gyroscopic_force(self.inertia, q, v)

    def centre_of_mass(self, q):
        return q[:3]

    def kinetic_energy(self, q, v):
        """½ m |ṙ|² + ½ ω'ᵀ J' ω' (J), equal to ½ vᵀ M_i v."""
        omega = angular_velocity(q, v, body_frame=True)
        return 0.5 * self.mass * v[:3] @ v[:3] + 0.5 * omega @ self.inertia @ omega

    def linear_momentum(self, q, v):
        del q
        return self.mass * v[:3]

    def angular_momentum(self, q, v):
        """A J' ω' + m r × ṙ about the global origin, a 3-vector."""
        omega = angular_velocity(q, v, body_frame=True)
        return euler_rotation(q[3:]) @ self.inertia @ omega + self.mass * jnp.cross(q[:3], v[:3])
