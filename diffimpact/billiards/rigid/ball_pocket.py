"""Ball–pocket events of the rigid engine: the interface, and capture.

An event fires when a ball's centre enters a pocket's circle (``detection``).
``Capture`` takes the ball out of play there; a model of the ball rattling
in the jaws or dropping from the shelf would decide otherwise behind the
same interface.
"""

import abc

import equinox as eqx
import jax.numpy as jnp

from diffimpact.billiards.rigid.motion import Ball


class BallPocketModel(eqx.Module):
    """A ball–pocket model: ``model(ball, centre, radius, params)`` takes the ball's kinematics as its centre
    enters the pocket's circle (centre (2,), radius) and ``motion.Parameters``, and returns the ball's
    kinematics after and whether it is out of play (a boolean)."""

    @abc.abstractmethod
    def __call__(self, ball, centre, radius, params):
        """(ball, captured)."""


class Capture(BallPocketModel):
    """Every ball that enters a pocket's circle is out of play, at rest where it entered."""

    def __call__(self, ball, centre, radius, params):
        del centre, radius, params
        still = Ball(ball.position, jnp.zeros_like(ball.velocity), jnp.zeros_like(ball.angular_velocity))
        return still, jnp.asarray(True)
