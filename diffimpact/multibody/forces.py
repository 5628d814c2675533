"""Applied forces as generalised forces Q(q, v, t) ([Gismeros Moreno 2022], eqs. (2.15)–(2.16)).

A ``Force`` is called as ``force(bodies, q, v, t)`` with the coordinates and
velocities as (bodies, size) arrays, one row per body (``Model.split``), and
returns the generalised forces likewise, one row per body.
Conservative forces define ``potential_energy(bodies, q)`` and derive their
force from it, Q = −∂V/∂q, so energy diagnostics are exact. A force acting
along a scalar coordinate s(q) (a spring length, a relative angle) has the
generalised force f ∂s/∂q (virtual work f δs), taken by autodiff.
Body index ``None`` stands for the ground.
"""

import abc
from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._validation import check_range, unit_vector
from diffimpact.multibody.bodies import SPATIAL_SIZE, global_point
from diffimpact.rotations import euler_torque


def _rate(coordinate, q, v):
    """s(q) and ṡ = ∂s/∂q v."""
    return jax.jvp(coordinate, (q,), (v,))


def _along(coordinate, magnitude, q):
    """Generalised force f ∂s/∂q of a force ``magnitude`` conjugate to s(q)."""
    return jax.tree.map(lambda g: magnitude * g, jax.grad(coordinate)(q))


class Force(eqx.Module):
    """Abstract applied force: ``__call__(bodies, q, v, t)`` returns per-body Q."""

    @abc.abstractmethod
    def __call__(self, bodies, q, v, t):
        """Generalised force, (bodies, size): one row per body."""

    def potential_energy(self, bodies, q):
        """Potential energy (J); zero for forces without a potential."""
        del bodies, q
        return jnp.asarray(0.0)

    @property
    @abc.abstractmethod
    def body_indices(self):
        """Indices of the bodies involved (``None`` for the ground)."""


class Gravity(Force):
    """Uniform gravity g (m/s²): V = −Σ m_i g · r_i, Q = −∂V/∂q = m_i g on each centre of mass r_i."""

    g: jnp.ndarray

    def __init__(self, g=(0.0, -9.81)):
        self.g = check_range("g", g, shape=[(2,), (3,)])

    def potential_energy(self, bodies, q):
        return -sum(body.mass * self.g @ body.centre_of_mass(qi) for body, qi in zip(bodies, q))

    def __call__(self, bodies, q, v, t):
        del v, t
        # r_i is the first d coordinates of each body's row (planar and spatial alike)
        masses = jnp.stack([body.mass for body in bodies])
        q = jnp.asarray(q)
        return jnp.zeros_like(q).at[:, : self.g.shape[0]].set(masses[:, None] * self.g)

    @property
    def body_indices(self):
        return ()


class SpringDamper(Force):
    """Linear spring and dashpot between two body-fixed points (planar or spatial).

    Force along the line of length ℓ: f = −k (ℓ − ℓ₀) − c ℓ̇, with potential
    ½ k (ℓ − ℓ₀)². ``body_j=None`` anchors the spring at the global point
    ``point_j``. ℓ must stay positive (the direction is undefined at ℓ = 0).
    """

    body_i: int = eqx.field(static=True)
    point_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    point_j: jnp.ndarray
    stiffness: jnp.ndarray
    damping: jnp.ndarray
    free_length: jnp.ndarray

    def __init__(self, body_i, point_i, body_j, point_j, stiffness, damping, free_length):
        self.body_i = body_i
        self.point_i = check_range("point_i", point_i, shape=[(2,), (3,)])
        self.body_j = body_j
        self.point_j = check_range("point_j", point_j, shape=[(2,), (3,)])
        self.stiffness = check_range("stiffness", stiffness, 0.0, shape=())
        self.damping = check_range("damping", damping, 0.0, shape=())
        self.free_length = check_range("free_length", free_length, 0.0, shape=())

    def length(self, q):
        """Distance ℓ between the two attachment points (m)."""
        return jnp.linalg.norm(global_point(q, self.body_i, self.point_i) - global_point(q, self.body_j, self.point_j))

    def potential_energy(self, bodies, q):
        del bodies
        return 0.5 * self.stiffness * (self.length(q) - self.free_length) ** 2

    def __call__(self, bodies, q, v, t):
        del bodies, t
        length, rate = _rate(self.length, q, v)
        magnitude = -self.stiffness * (length - self.free_length) - self.damping * rate
        return _along(self.length, magnitude, q)

    @property
    def body_indices(self):
        return (self.body_i, self.body_j)


def _angle(q, body):
    """The angle φ of a planar body (0 for the ground)."""
    if body is None:
        return 0.0
    if q[body].shape[0] != 3:
        raise ValueError(f"body {body} is not planar: JointDamping acts on planar bodies")
    return q[body][2]


class JointDamping(Force):
    """Viscous torque −c (ω_j − ω_i) on the relative rotation of two planar bodies.

    [Sypniewska-Kamińska 2017], eq. (3): the terms in c₁, c₂. ``body_i=None`` damps rotation
    relative to the ground. ``coefficient`` c in N m s/rad, ≥ 0.
    """

    body_i: Optional[int] = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    coefficient: jnp.ndarray

    def __init__(self, body_i, body_j, coefficient):
        self.body_i = body_i
        self.body_j = body_j
        self.coefficient = check_range("coefficient", coefficient, 0.0, shape=())

    def relative_angle(self, q):
        return _angle(q, self.body_j) - _angle(q, self.body_i)

    def __call__(self, bodies, q, v, t):
        del bodies, t
        _, rate = _rate(self.relative_angle, q, v)
        return _along(self.relative_angle, -self.coefficient * rate, q)

    @property
    def body_indices(self):
        return (self.body_i, self.body_j)


class AppliedTorque(Force):
    """Harmonic torque M₀ cos(Ω t) on one body ([Sypniewska-Kamińska 2017], M₁(t), M₂(t)).

    ``amplitude`` M₀ in N m, ``frequency`` Ω in rad/s. On a planar body the
    torque turns about the normal to the plane (``axis=None``). On a spatial
    body it turns about the global ``axis`` (normalised here) and enters the
    Euler-parameter equations as 2 Eᵀ n / pᵀp (eqs. (2.15)–(2.16) of [Gismeros Moreno 2022],
    with the rotation of p/|p|: ``bodies.euler_torque``).
    """

    body: int = eqx.field(static=True)
    amplitude: jnp.ndarray
    frequency: jnp.ndarray
    axis: Optional[jnp.ndarray]

    def __init__(self, body, amplitude, frequency, axis=None):
        self.body = body
        self.amplitude = check_range("amplitude", amplitude, shape=())
        self.frequency = check_range("frequency", frequency, 0.0, shape=())
        if axis is None:
            self.axis = None
        else:
            axis = jnp.asarray(axis, dtype=float)
            if axis.shape != (3,):
                raise ValueError(f"axis must be a 3-vector (global torque axis of a spatial body); got shape {axis.shape}")
            self.axis = unit_vector("axis", axis)

    def __call__(self, bodies, q, v, t):
        del bodies, v
        torque = self.amplitude * jnp.cos(self.frequency * t)
        if q[self.body].shape[0] != SPATIAL_SIZE:
            if self.axis is not None:
                raise ValueError(f"body {self.body} is planar: AppliedTorque takes no axis there")
            return _along(lambda q: _angle(q, self.body), torque, q)
        if self.axis is None:
            raise ValueError(f"body {self.body} is spatial: give AppliedTorque the global axis of the torque")
        block = jnp.concatenate([jnp.zeros(3), euler_torque(q[self.body][3:], torque * self.axis)])
        return jnp.zeros_like(jnp.asarray(q)).at[self.body].set(block)

    @property
    def body_indices(self):
        return (self.body,)
