"""Holonomic kinematic constraints Φ(q, t) = 0 (seed 000, eq. (2.9)).

Every constraint is a small ``Constraint`` Module called as ``Φ(q, t)``:
``q`` is the tuple of the bodies' coordinate blocks (``q[i]`` is body i's
(x, y, φ)) and the result is a residual vector of static length ``size``.
Constraints only state the position equations; the Jacobian D = ∂Φ/∂q, the
velocity equations and the right-hand side γ of eq. (2.11) follow from JAX
autodiff in ``diffimpact.multibody.model``. A body index of ``None`` stands for
the ground.
"""

import abc
from typing import Callable, ClassVar, Optional

import equinox as eqx
import jax.numpy as jnp

from diffimpact.multibody.bodies import point_position


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
    """Fix a planar body at the pose ``(x, y, φ)``: Φ = q_i − pose (3 equations)."""

    body: int = eqx.field(static=True)
    pose: jnp.ndarray
    size: ClassVar[int] = 3

    def __init__(self, body, pose=(0.0, 0.0, 0.0)):
        self.body = body
        self.pose = jnp.asarray(pose, dtype=float)

    def __call__(self, q, t):
        del t
        return q[self.body] - self.pose

    @property
    def body_indices(self):
        return (self.body,)


class RevolutePlanar(Constraint):
    """Planar revolute (pin) joint: points P_i and P_j coincide (2 equations).

    Φ = r_i + A_i s'_i − r_j − A_j s'_j (seed 000, eqs. (2.2)–(2.3)). The points
    are in body-fixed coordinates; with ``body_j=None`` the joint is to the
    ground and ``point_j`` is a global position.
    """

    body_i: int = eqx.field(static=True)
    point_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    point_j: jnp.ndarray
    size: ClassVar[int] = 2

    def __init__(self, body_i, point_i, body_j, point_j):
        self.body_i = body_i
        self.point_i = jnp.asarray(point_i, dtype=float)
        self.body_j = body_j
        self.point_j = jnp.asarray(point_j, dtype=float)

    def __call__(self, q, t):
        del t
        p_i = point_position(q[self.body_i], self.point_i)
        p_j = self.point_j if self.body_j is None else point_position(q[self.body_j], self.point_j)
        return p_i - p_j

    @property
    def body_indices(self):
        return (self.body_i, self.body_j)


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
