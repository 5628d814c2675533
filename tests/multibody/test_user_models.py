"""Models written by a user: a normal-force law, a friction law and an impact model, each a small class that
follows its base's protocol (``NormalForceLaw``, ``FrictionLaw``, ``ImpulseModel``; docs/concepts.md, "Models of
your own"), run through ``simulate`` and differentiated with ``jax.grad`` with respect to one of its parameters:
the gradient against central differences of the same compiled run and against the scene's closed form.

The scene: a disc (a ball of the plane) on the ground, y the height of its centre.
"""

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact._validation import check_positive, check_range
from diffimpact.contact.friction import FrictionLaw
from diffimpact.contact.normal import HertzLinearDamper, NormalForceLaw
from diffimpact.impulse import Impact, ImpulseModel
from diffimpact.multibody import (
    AdaptiveSteps,
    CirclePlane,
    Contact,
    Gravity,
    LagrangeMultipliers,
    Model,
    PlanarBody,
    RigidImpact,
    State,
    simulate,
)

MASS, RADIUS, SPEED, GAP, G = 0.5, 0.05, 2.0, 0.01, 9.81


class LinearSpring(NormalForceLaw):
    """f = k δ, parting where δ = 0 (an undamped Kelvin–Voigt law)."""

    stiffness: jax.Array
    separates_at_zero_force: ClassVar[bool] = False

    def __init__(self, stiffness):
        self.stiffness = check_positive("stiffness", stiffness)

    @property
    def exponent(self):
        return jnp.asarray(1.0)

    def force(self, penetration, penetration_rate):
        del penetration_rate
        return self.stiffness * penetration


class RationalCoulomb(FrictionLaw):
    """μ F_N |v|/(|v| + v_s): Coulomb's μ F_N regularised by a rational function of the slip speed."""

    coefficient: jax.Array
    regularisation_speed: jax.Array

    def __init__(self, coefficient, regularisation_speed):
        self.coefficient = check_range("coefficient", coefficient, 0.0)
        self.regularisation_speed = check_positive("regularisation_speed", regularisation_speed)

    def magnitude(self, normal_force, slip_speed):
        return self.coefficient * normal_force * slip_speed / (slip_speed + self.regularisation_speed)

    @property
    def band(self):
        return self.regularisation_speed


class NormalRestitution(ImpulseModel):
    """One frictionless contact, planar or spatial: u⁺_n = −e u⁻_n where it approaches."""

    restitution: jax.Array
    dimensions: ClassVar[tuple] = (2, 3)
    several: ClassVar[bool] = False

    def __init__(self, restitution):
        self.restitution = check_range("restitution", restitution, 0.0, 1.0)

    def __call__(self, delassus, velocity, dimension=None):
        normal = -(1 + self.restitution) * jnp.minimum(velocity[0], 0.0) / delassus[0, 0]
        impulse = jnp.zeros_like(velocity).at[0].set(normal)
        return Impact(impulse, velocity + delassus @ impulse)


def disc_on_ground(law, friction=None, gravity=0.0):
    disc = PlanarBody(MASS, 0.5 * MASS * RADIUS**2, name="disc")
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), RADIUS)
    return Model([disc], (), (Gravity((0.0, -gravity)), Contact(ground, law, friction)))


def dropped(law, end):
    """The height y (m) at ``end`` (s) of the disc moving down at SPEED from GAP above the ground, no gravity."""
    state = State(jnp.array([0.0, RADIUS + GAP, 0.0]), jnp.array([0.0, -SPEED, 0.0]))
    return simulate(disc_on_ground(law), state, jnp.array([0.0, end]), LagrangeMultipliers()).q[-1, 1]


def check_gradient(function, point, closed_form, central_difference):
    """``jax.grad`` of ``function`` at ``point`` against central differences of the same compiled run (relative
    step 1e-5: their truncation error ~1e-10, the runs' own error (rtol 1e-10) over the step ~1e-5) and against
    the closed form."""
    gradient = float(jax.jit(jax.grad(function))(point))
    difference = central_difference(jax.jit(function), (point,), 0)
    assert gradient == pytest.approx(difference, rel=1e-4)
    assert gradient == pytest.approx(closed_form, rel=1e-6)


def test_a_normal_law_of_ones_own_is_differentiated_through_the_contact(central_difference):
    # m δ̈ = −k δ from δ̇ = SPEED at the onset: the disc leaves after τ = π √(m/k) at SPEED, so
    # y(T) = R + SPEED (T − GAP/SPEED − τ) and ∂y/∂k = SPEED τ/(2k).
    stiffness = 1e4
    duration = np.pi * np.sqrt(MASS / stiffness)
    end = GAP / SPEED + duration + 0.01
    assert float(dropped(LinearSpring(stiffness), end)) == pytest.approx(RADIUS + SPEED * 0.01, rel=1e-9)
    check_gradient(lambda k: dropped(LinearSpring(k), end), stiffness, SPEED * duration / (2 * stiffness),
                   central_difference)


def test_an_impact_model_of_ones_own_is_differentiated_through_the_onset(central_difference):
    # RigidImpact(NormalRestitution(e)): the disc leaves at e SPEED from the onset at GAP/SPEED, so
    # y(T) = R + e SPEED (T − GAP/SPEED) and ∂y/∂e = SPEED (T − GAP/SPEED).
    restitution, end = 0.6, 0.02
    assert float(dropped(RigidImpact(NormalRestitution(restitution)), end)) == pytest.approx(
        RADIUS + restitution * SPEED * (end - GAP / SPEED), rel=1e-12)
    check_gradient(lambda e: dropped(RigidImpact(NormalRestitution(e)), end), restitution,
                   SPEED * (end - GAP / SPEED), central_difference)


def test_a_friction_law_of_ones_own_is_differentiated_through_the_slide(central_difference):
    # The disc resting on the ground under gravity (its weight on the Hertz contact at δ = (m g/k)^(1/n)) and
    # sliding at SPEED: far outside the band (slip ≥ 0.5 m/s against v_s = 1e-4 m/s) the friction is μ m g to
    # 2e-4 of itself, so ẋ(t) = SPEED − μ g t until the slip stops at SPEED/(3 μ g), and ∂ẋ/∂μ = −g t.
    coefficient, stiffness, exponent = 0.3, 1e6, 1.5
    sink = (MASS * G / stiffness) ** (1 / exponent)
    end = 0.5 * SPEED / (3 * coefficient * G)
    state = State(jnp.array([0.0, RADIUS - sink, 0.0]), jnp.array([SPEED, 0.0, 0.0]))

    def speed(mu):
        model = disc_on_ground(HertzLinearDamper(stiffness, exponent, 500.0), RationalCoulomb(mu, 1e-4), G)
        return simulate(model, state, jnp.array([0.0, end]), LagrangeMultipliers(),
                        steps=AdaptiveSteps(friction_steps=True)).v[-1, 0]

    assert float(speed(coefficient)) == pytest.approx(SPEED - coefficient * G * end, rel=1e-4)
    gradient = float(jax.jit(jax.grad(speed))(coefficient))
    assert gradient == pytest.approx(central_difference(jax.jit(speed), (coefficient,), 0), rel=1e-4)
    assert gradient == pytest.approx(-G * end, rel=1e-3)
