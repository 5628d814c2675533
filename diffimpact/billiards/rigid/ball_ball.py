r"""Ball–ball collisions of the rigid engine: the interface, and the frictionless impact of two equal balls.

``Frictionless``: an instantaneous impact of two smooth spheres of equal
mass along the line of centres n̂ = (r₂ − r₁)/|r₂ − r₁|, with Newton's
kinematic restitution e (the textbook law; Stronge, *Impact Mechanics*,
2000, §4, as in ``diffimpact.impulse.newton``). Momentum along n̂ is
conserved and the normal approach speed w = (v₁ − v₂)·n̂ is reversed and
scaled by e:

    v₁⁺ = v₁ − (1 + e) w n̂ / 2,   v₂⁺ = v₂ + (1 + e) w n̂ / 2;          (B1)

the tangential velocities and both spins are unchanged (no friction, so no
throw and no spin transfer; Alciatore's throw is a model to add behind the
same interface).
"""

import abc

import equinox as eqx
import jax.numpy as jnp

from diffimpact._validation import check_range, is_concrete
from diffimpact.billiards.rigid.motion import Ball


class BallBallModel(eqx.Module):
    """A ball–ball collision model: ``model(first, second, params)`` takes the two balls' kinematics at contact
    (``motion.Ball``, centres 2R apart) and ``motion.Parameters``, and returns both balls' kinematics after."""

    @abc.abstractmethod
    def __call__(self, first, second, params):
        """(first, second) after the collision."""


class Frictionless(BallBallModel):
    """Frictionless impact of two equal balls with Newton's restitution, eq. (B1) of the module docstring.

    ``restitution``: e ∈ [0, 1]; the default 0.93 is the value ``diffimpact.scenes.billiard`` assumes, after
    Gismeros Moreno et al.'s Table 2.
    """

    restitution: float = 0.93

    def __check_init__(self):
        """e in [0, 1], refused by name when concrete."""
        if is_concrete(self.restitution):
            check_range("restitution", self.restitution, 0.0, 1.0, shape=())

    def __call__(self, first, second, params):
        del params  # equal masses: the exchange does not depend on them
        offset = second.position - first.position
        normal = offset / jnp.sqrt(jnp.sum(offset**2))
        approach = jnp.dot(first.velocity - second.velocity, normal)
        change = 0.5 * (1.0 + self.restitution) * approach * normal
        return (Ball(first.position, first.velocity - change, first.angular_velocity),
                Ball(second.position, second.velocity + change, second.angular_velocity))
