r"""Ball–cushion collisions of the rigid engine: the interface, and an impulse with restitution and friction.

``StickingFriction``: the cushion's nose touches the ball at the height of its
centre, at c = −R n̂ from it, with n̂ the segment's horizontal normal pointing
into the table (towards the ball). The impact is instantaneous and the ball
free during it (the cloth's impulse is neglected). The model is the
algebraic impact of a rigid body with Newton's kinematic restitution on the
normal (Stronge, *Impact Mechanics*, 2000, §4) and Coulomb friction whose
tangential impulse is capped where it stops the slip (the impulse-ratio
model of R. M. Brach, *Mechanical Impact Dynamics: Rigid Body Collisions*,
Wiley, 1991, its ratio limited to the critical, sticking value), written
out here for a sphere whose contact normal passes through its centre:

    P = −(1 + e) m (v·n̂)                     normal impulse (v·n̂ < 0),   (C1)
    u = v + ω × c,  u_t = u − (u·n̂) n̂         the contact point's slip (3-D, v_z = 0), (C2)
    J = −min(μ P, |u_t| / k) û_t,  k = 1/m + R²/I                         (C3)

(k: the change of slip per unit tangential impulse, the same in every
direction perpendicular to c, so the cap of (C3) ends the slip exactly), and

    v⁺ = v + (P n̂ + J)_xy / m,   ω⁺ = ω + c × J / I.                      (C4)

The vertical part of J/m is dropped: the ball stays on the cloth. With
no spin about the vertical the along-cushion slip is the velocity along it,
and a ball that keeps sliding against the nose leaves at
tan θ = (v_t − μ (1 + e) |v_n| v_t/|u_t|) / (e |v_n|) from the normal.
The defaults e = 0.98 and μ = 0.14 are Mathavan et al.'s (2010) values as
used in ``diffimpact.scenes.billiard``. Mathavan et al.'s model with the
nose above the centre (``diffimpact.impulse.mathavan_2010``) is one to add
behind the same interface.
"""

import abc

import equinox as eqx
import jax.numpy as jnp

from diffimpact._validation import check_range, is_concrete
from diffimpact.billiards.rigid.motion import Ball


class BallCushionModel(eqx.Module):
    """A ball–cushion collision model: ``model(ball, normal, params)`` takes the ball's kinematics at contact
    (``motion.Ball``, its centre R from the nose), the unit normal (2,) of the cushion pointing towards the
    ball (a segment's normal, or for a tip the line from its centre to the ball's), and ``motion.Parameters``,
    and returns the ball's kinematics after."""

    @abc.abstractmethod
    def __call__(self, ball, normal, params):
        """The ball after the collision."""


class StickingFriction(BallCushionModel):
    """Newton's restitution and Coulomb friction capped at sticking, at the height of the centre: eqs.
    (C1)–(C4) of the module docstring. ``restitution`` e ∈ [0, 1], ``friction`` μ ≥ 0."""

    restitution: float = 0.98
    friction: float = 0.14

    def __check_init__(self):
        """e in [0, 1] and μ ≥ 0, refused by name when concrete."""
        if is_concrete(self.restitution):
            check_range("restitution", self.restitution, 0.0, 1.0, shape=())
        if is_concrete(self.friction):
            check_range("friction", self.friction, 0.0, shape=())

    def __call__(self, ball, normal, params):
        mass, radius, inertia = params.mass, params.radius, params.inertia
        n = jnp.concatenate([normal, jnp.zeros(1)])
        v = jnp.concatenate([ball.velocity, jnp.zeros(1)])
        contact = -radius * n
        impulse = -(1.0 + self.restitution) * mass * jnp.dot(v, n)
        slip = v + jnp.cross(ball.angular_velocity, contact)
        tangential = slip - jnp.dot(slip, n) * n
        squared = jnp.sum(tangential**2)
        slipping = squared > 0
        speed = jnp.where(slipping, jnp.sqrt(jnp.where(slipping, squared, 1.0)), 0.0)
        compliance = 1.0 / mass + radius**2 / inertia
        magnitude = jnp.minimum(self.friction * impulse, speed / compliance)
        friction = -jnp.where(slipping, magnitude / jnp.where(slipping, speed, 1.0), 0.0) * tangential
        velocity = ball.velocity + (impulse * normal + friction[:2]) / mass
        angular_velocity = ball.angular_velocity + jnp.cross(contact, friction) / inertia
        return Ball(ball.position, velocity, angular_velocity)
