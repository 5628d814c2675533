"""Holonomic kinematic constraints Φ(q, t) = 0 ([Gismeros Moreno 2022], eq. (2.9)).

Every constraint is a small ``Constraint`` Module called as ``Φ(q, t)``:
``q`` is the tuple of the bodies' coordinate blocks (``q[i]`` is body i's
(x, y, φ), or (x, y, z, e0, e1, e2, e3) for a spatial body) and the result is
a residual vector of static length ``size``.

Planar joints: ``RevolutePlanar``. Spatial joints: ``Spherical``,
``RevoluteSpatial`` and the Euler-parameter normalisation ``EulerParameters``
(eq. (2.7)), which ``Model`` adds for every ``SpatialBody``. ``Ground`` and
``Driver`` work for either kind of body.
Constraints only state the position equations; the Jacobian D = ∂Φ/∂q, the
velocity equations and the right-hand side γ of eq. (2.11) follow from JAX
autodiff in ``diffimpact.multibody.model``. A body index of ``None`` stands for
the ground.
"""

import abc
from typing import Callable, ClassVar, Optional

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_range, unit_vector

from diffimpact.multibody.bodies import PLANAR_SIZE, SPATIAL_SIZE, global_direction, global_point
from diffimpact.rotations import euler_g


class Constraint(eqx.Module):
    """Abstract holonomic constraint: ``__call__(q, t)`` returns ``size`` residuals."""

    size: ClassVar[int]

    @abc.abstractmethod
    def __call__(self, q, t):
        """Residual Φ(q, t), zero when the constraint holds."""

    @property
    @abc.abstractmethod
    def body_indices(self):
        """Indices of the bodies involved (``None`` for the ground)."""


class Ground(Constraint):
    """Fix a body at a pose (3 equations planar, 6 spatial).

    Planar: ``pose = (x, y, φ)``, Φ = q_i − pose. Spatial: ``pose = (x, y, z,
    e0, e1, e2, e3)`` (the Euler parameters are normalised here), Φ = (r_i −
    r₀, G(p₀) p_i): the position and the vector part of the relative Euler
    parameters p₀⁻¹ p_i, zero when the orientations agree; with pᵀp = 1
    (``EulerParameters``) this fixes all 7 coordinates.
    """

    body: int = eqx.field(static=True)
    pose: jnp.ndarray

    def __init__(self, body, pose=(0.0, 0.0, 0.0)):
        self.body = body
        pose = check_range("pose", pose, shape=[(PLANAR_SIZE,), (SPATIAL_SIZE,)],
                           hint=": (x, y, φ) or (x, y, z, e0, e1, e2, e3)")
        if pose.shape == (SPATIAL_SIZE,):
            pose = pose.at[3:].divide(jnp.linalg.norm(pose[3:]))
        self.pose = pose

    @property
    def size(self):
        return 3 if self.pose.shape[0] == PLANAR_SIZE else 6

    def __call__(self, q, t):
        del t
        coordinates = q[self.body]
        if coordinates.shape != self.pose.shape:
            raise ValueError(
                f"Ground pose has {self.pose.shape[0]} coordinates but body {self.body} has "
                f"{coordinates.shape[0]}"
            )
        if self.pose.shape[0] == PLANAR_SIZE:
            return coordinates - self.pose
        return jnp.concatenate([coordinates[:3] - self.pose[:3], euler_g(self.pose[3:]) @ coordinates[3:]])

    @property
    def body_indices(self):
        return (self.body,)


class EulerParameters(Constraint):
    """Normalisation of a spatial body's Euler parameters, Φ = pᵀp − 1 (eq. (2.7); 1 equation).

    ``Model`` adds one for every ``SpatialBody`` that has none: it makes the
    saddle-point system of eq. (2.20) regular, since the rotational mass
    block 4 Gᵀ J' G is singular along p.
    """

    body: int = eqx.field(static=True)
    size: ClassVar[int] = 1

    def __call__(self, q, t):
        del t
        return self.residuals((self.body,), q)

    @staticmethod
    def residuals(bodies, q):
        """Φ of the normalisations of ``bodies`` (a sequence of indices) at once, (len(bodies),): one
        vectorised expression, which ``Model.constraint`` uses for a run of these constraints (a table's 16
        balls took three small XLA kernels each per evaluation, about a fifth of a step's)."""
        p = q[np.asarray(bodies)][:, 3:]
        return jax.vmap(jnp.dot)(p, p) - 1.0

    @property
    def body_indices(self):
        return (self.body,)


class _CoincidentPoints(Constraint):
    """Points P_i and P_j coincide: Φ = r_i + A_i s'_i − r_j − A_j s'_j (eqs. (2.2)–(2.3)).

    One equation per component: ``size`` is the dimension of the points (2
    planar, 3 spatial). Points are body-fixed; with ``body_j=None`` the joint
    is to the ground and ``point_j`` is a global position.
    """

    body_i: int = eqx.field(static=True)
    point_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    point_j: jnp.ndarray

    def __init__(self, body_i, point_i, body_j, point_j):
        self.body_i = body_i
        self.point_i = _vector("point_i", point_i, self.size)
        self.body_j = body_j
        self.point_j = _vector("point_j", point_j, self.size)

    def __call__(self, q, t):
        del t
        return global_point(q, self.body_i, self.point_i) - global_point(q, self.body_j, self.point_j)

    @property
    def body_indices(self):
        return (self.body_i, self.body_j)


def _vector(name, value, dimension):
    return check_range(name, value, shape=(dimension,))


class RevolutePlanar(_CoincidentPoints):
    """Planar revolute (pin) joint: points P_i and P_j coincide (2 equations, [Gismeros Moreno 2022] eqs. (2.2)–(2.3))."""

    size: ClassVar[int] = 2


class Spherical(_CoincidentPoints):
    """Spherical (ball) joint between spatial bodies: points P_i and P_j coincide (3 equations, eqs. (2.2)–(2.3) in 3-D)."""

    size: ClassVar[int] = 3


def _perpendiculars(axis):
    """Two unit vectors that complete the unit ``axis`` to a right-handed orthonormal triad."""
    helper = jnp.where(jnp.abs(axis[0]) < 0.9, jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
    first = jnp.cross(axis, helper)
    first = first / jnp.linalg.norm(first)
    return first, jnp.cross(axis, first)


class RevoluteSpatial(Constraint):
    """Spatial revolute (hinge) joint: a spherical joint plus a common axis (5 equations).

    Φ = (P_i − P_j, (A_i u'_i) · (A_j a'_j), (A_i w'_i) · (A_j a'_j)) with u'_i,
    w'_i two body-fixed unit vectors perpendicular to body i's axis a'_i
    (Nikravesh 1988, the n1-type perpendicularity equations): the axes stay
    parallel, so body j can only turn about it relative to body i. The axes
    are unit-normalised here. ``body_j=None`` joins body i to the ground;
    ``point_j`` and ``axis_j`` are then global.
    """

    body_i: int = eqx.field(static=True)
    point_i: jnp.ndarray
    axis_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    point_j: jnp.ndarray
    axis_j: jnp.ndarray
    size: ClassVar[int] = 5

    def __init__(self, body_i, point_i, axis_i, body_j, point_j, axis_j):
        self.body_i, self.body_j = body_i, body_j
        self.point_i = _vector("point_i", point_i, 3)
        self.point_j = _vector("point_j", point_j, 3)
        self.axis_i = _unit("axis_i", axis_i)
        self.axis_j = _unit("axis_j", axis_j)

    def __call__(self, q, t):
        del t
        coincident = global_point(q, self.body_i, self.point_i) - global_point(q, self.body_j, self.point_j)
        first, second = _perpendiculars(self.axis_i)
        axis_j = global_direction(q, self.body_j, self.axis_j)
        return jnp.concatenate([
            coincident,
            jnp.stack([global_direction(q, self.body_i, first) @ axis_j, global_direction(q, self.body_i, second) @ axis_j]),
        ])

    @property
    def body_indices(self):
        return (self.body_i, self.body_j)


def _unit(name, vector):
    return unit_vector(name, _vector(name, vector, 3))


class Driver(Constraint):
    """Prescribed motion of one coordinate: Φ = q_i[coordinate] − motion(t) (1 equation).

    ``motion`` is a JAX-differentiable function of time; its derivatives enter
    Φ̇ and γ through autodiff.
    """

    body: int = eqx.field(static=True)
    coordinate: int = eqx.field(static=True)
    motion: Callable = eqx.field(static=True)
    size: ClassVar[int] = 1

    def __call__(self, q, t):
        return jnp.atleast_1d(q[self.body][self.coordinate] - self.motion(t))

    @property
    def body_indices(self):
        return (self.body,)
