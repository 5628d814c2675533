"""Two pendulums of seed 004 §6: compliant optimal-damping contact against Newton impacts."""

import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import LagrangeMultipliers, simulate
from diffimpact.scenes import two_pendulum as tp

TIMES = jnp.linspace(0.0, tp.DURATION, 81)


@pytest.fixture(scope="module")
def params():
    return tp.Parameters()


@pytest.fixture(scope="module")
def runs(params):
    # The "improved" closed form of c_opt compiles faster than "exact" and agrees to ~1e-3.
    models = {"optimal": tp.model(params, "optimal", method="improved"), "newton": tp.model(params, "newton")}
    state = tp.initial_state(params)
    return {k: simulate(m, state, TIMES, LagrangeMultipliers(), rtol=1e-9, atol=1e-9) for k, m in models.items()}


def onsets(events):
    return [i for i in range(int(events.count)) if bool(events.onset[i])]


def test_three_impacts_in_eight_seconds_on_rod_one(params, runs):
    for run in runs.values():
        impacts = onsets(run.events)
        assert len(impacts) == 3
        s = np.asarray(tp.contact_arc_length(params, run.events.q[np.array(impacts)]))
        assert np.all((s > 0) & (s < float(params.L1)))
    t_newton = np.asarray(runs["newton"].events.t[:3])
    np.testing.assert_allclose(t_newton, [1.1424, 3.7632, 6.6943], atol=2e-3)


def test_compliant_optimal_damping_matches_newton_restitution_at_first_impact(runs):
    newton = np.asarray(tp.angular_velocities(runs["newton"].events.v[0]))
    optimal = np.asarray(tp.angular_velocities(runs["optimal"].events.v[1]))  # at separation
    np.testing.assert_allclose(optimal, newton, rtol=0.02)
    assert float(runs["optimal"].events.t[0]) == pytest.approx(float(runs["newton"].events.t[0]), abs=1e-6)


def test_impacts_dissipate_energy_and_keep_joints(runs):
    for run in runs.values():
        energy = np.asarray(run.energy)
        assert np.all(np.diff(energy) <= 1e-6 * abs(energy[0]))
        assert float(run.constraint_violation.max()) < 1e-6
