"""Gismeros Moreno et al.'s (2022) billiard balls: the cue ball sliding on the cloth, then striking the yellow ball head-on.

The two-ball scene (``billiard.model(p, balls=2)``) with the ball–ball
friction removed, so that the strike is a direct central impact, up to the
cloth's pull on the two balls during the contact. The four-ball break is checked in
tests/reproduce/test_formulations_study.py.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.contact.damping_factors import lankarani_nikravesh_law
from diffimpact.impact import central_impact
from diffimpact.multibody import ContactEvents, LagrangeMultipliers, simulate
from diffimpact.scenes import billiard

CUE, YELLOW = 0, 1
PAIR = 2  # forces: gravity, the two ball–cloth contacts, the ball–ball contact
TIMES = jnp.array([0.0, 0.05, 0.1, 0.125])


@pytest.fixture(scope="module")
def params():
    return billiard.Parameters()


@pytest.fixture(scope="module")
def run(params):
    model = billiard.model(params, balls=2)
    model = eqx.tree_at(lambda m: m.forces[PAIR].friction, model, None, is_leaf=lambda x: x is None)
    return simulate(model, billiard.initial_state(params, balls=2), TIMES, LagrangeMultipliers(),
                    events=ContactEvents(max_events=16))


def test_cue_ball_slides_with_constant_friction_before_the_strike(run, params):
    # Sliding without rolling: ẍ = −μ g, and the friction torque μ m g R spins the ball up, ω̇ = μ m g R / J.
    mu_g = params.cloth_friction * params.gravity
    for i in (1, 2):
        t = float(TIMES[i])
        x, v = billiard.position(run.q[i], CUE)[0], billiard.position(run.v[i], CUE)[0]
        np.testing.assert_allclose(x, params.cue_x + params.speed * t - 0.5 * mu_g * t**2, rtol=1e-10)
        np.testing.assert_allclose(v, params.speed - mu_g * t, rtol=1e-10)
        # The spin about y turns the orientation (1, 0, 0, 0) into (cos θ/2, 0, sin θ/2, 0), θ = ∫ω dt =
        # μ m g r t²/(2J), with the arm r = R − δ_s/2 of the contact point (the middle of the static
        # overlap δ_s = (m g/K)^(2/3)).
        p = run.q[i, 3:7]
        angle = 2 * np.arctan2(float(p[2]), float(p[0]))
        arm = params.radius - (params.radius - params.resting_height()) / 2
        np.testing.assert_allclose(angle, mu_g * params.mass * arm * t**2 / (2 * params.inertia), rtol=1e-8)
    # The yellow ball has not moved.
    np.testing.assert_array_equal(billiard.position(run.q[2], YELLOW)[:2], [params.rack_x, 0.0])


def test_strike_matches_the_central_impact_of_the_lankarani_nikravesh_law(run, params):
    events = run.events
    count = int(events.count)
    rows = [i for i in range(count) if int(events.contact[i]) == PAIR]
    assert len(rows) == 2 and bool(events.onset[rows[0]]) and not bool(events.onset[rows[1]])
    before, after = (np.asarray(events.v[i]) for i in rows)
    approach = billiard.position(before, CUE)[0] - billiard.position(before, YELLOW)[0]
    recede = billiard.position(after, YELLOW)[0] - billiard.position(after, CUE)[0]
    # Independent: the 1-DOF impact m δ̈ + f(δ, δ̇) = 0 with m = m/2 (diffimpact.impact, tested against closed forms).
    law = lankarani_nikravesh_law(params.ball_stiffness(), params.ball_restitution, approach)
    impact = central_impact(law, params.mass / 2, approach)
    duration = float(events.t[rows[1]] - events.t[rows[0]])
    # The cloth pulls each ball with at most μ m g, so the relative velocity can drift by at most 2 μ g Δt during
    # the contact (the cue ball's spin reverses its slip partway through, so the two pulls differ); the Hertz
    # contact time scales as v^(-1/5).
    drift = 2 * params.cloth_friction * params.gravity * duration
    assert abs(recede - float(impact.restitution) * approach) <= drift
    np.testing.assert_allclose(duration, float(impact.contact_duration), rtol=0.2 * drift / approach)
    # Lankarani–Nikravesh returns close to the e it is given for e near 1 ([Poursina 2020] fig. 1).
    assert abs(recede / approach - params.ball_restitution) < 0.02
    # The strike is along the x-axis: nothing moves off it.
    for ball in (CUE, YELLOW):
        np.testing.assert_array_equal(billiard.position(np.asarray(run.q), ball)[:, 1], 0.0)


def test_ball_count_is_validated(params):
    with pytest.raises(ValueError, match="balls"):
        billiard.model(params, balls=3)
