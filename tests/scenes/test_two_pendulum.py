"""Two pendulums of [Poursina 2020] §6: compliant optimal-damping contact against Newton impacts."""

import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import AdaptiveSteps, LagrangeMultipliers, simulate
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
    return {k: simulate(m, state, TIMES, LagrangeMultipliers(), steps=AdaptiveSteps(rtol=1e-9, atol=1e-9))
            for k, m in models.items()}


def onsets(events):
    return [i for i in range(int(events.count)) if bool(events.onset[i])]


def test_three_impacts_in_eight_seconds_on_rod_one(params, runs):
    for run in runs.values():
        impacts = onsets(run.events)
        assert len(impacts) == 3
        s = np.asarray(tp.contact_arc_length(params, run.events.q[np.array(impacts)]))
        assert np.all((s > 0) & (s < float(params.L1)))


def minimal_coordinate_newton_solution(p):
    """Impacts of the rigid solution, computed independently in minimal coordinates with SciPy.

    Between impacts each rod swings freely about its pivot, θ̈ = −(3g/2L) sin θ
    (uniform rod, I_O = mL²/3). An impact happens when the tip of rod 2 reaches
    the line of rod 1 (gap d = (tip₂ − O₁)·n₁ with n₁ = (−cos θ₁, −sin θ₁));
    then an impulse P n₁ on rod 2 (−P n₁ on rod 1) changes the angular
    velocities by the angular impulses about the pivots, with P chosen so that
    the normal relative velocity becomes −e times its value before.
    Returns (impact time, θ̇₁⁺, θ̇₂⁺) for each impact in 8 s.
    """
    from scipy.integrate import solve_ivp

    g, L1, L2, a, e = (float(x) for x in (p.g, p.L1, p.L2, p.a, p.restitution))
    I1, I2 = float(p.m1) * L1**2 / 3, float(p.m2) * L2**2 / 3
    pivot2 = np.array([-a, 0.0])
    unit = lambda th: np.array([np.sin(th), -np.cos(th)])  # noqa: E731
    normal = lambda th: np.array([-np.cos(th), -np.sin(th)])  # noqa: E731
    cross = lambda r, f: r[0] * f[1] - r[1] * f[0]  # noqa: E731

    def rhs(t, y):
        return [y[2], y[3], -1.5 * g / L1 * np.sin(y[0]), -1.5 * g / L2 * np.sin(y[1])]

    def gap(t, y):
        return (pivot2 + L2 * unit(y[1])) @ normal(y[0])

    gap.terminal, gap.direction = True, -1
    y, t, impacts = np.array([*tp.INITIAL_ANGLES, 0.0, 0.0]), 0.0, []
    while True:
        sol = solve_ivp(rhs, (t, tp.DURATION), y, method="DOP853", rtol=1e-12, atol=1e-12, events=gap)
        if sol.status != 1:
            return impacts
        t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
        th1, th2 = y[:2]
        n, tip = normal(th1), pivot2 + L2 * unit(th2)
        r1, r2 = (tip @ unit(th1)) * unit(th1), tip - pivot2  # lever arms from O₁ and O₂
        def normal_velocity(w1, w2):
            return (w2 * np.array([-r2[1], r2[0]]) - w1 * np.array([-r1[1], r1[0]])) @ n
        dw1, dw2 = -cross(r1, n) / I1, cross(r2, n) / I2  # per unit impulse
        before = normal_velocity(*y[2:])
        impulse = -(1 + e) * before / normal_velocity(dw1, dw2)
        y[2:] += impulse * np.array([dw1, dw2])
        impacts.append((t, *y[2:]))


def test_newton_impacts_match_an_independent_minimal_coordinate_solution(params, runs):
    expected = np.array(minimal_coordinate_newton_solution(params))
    assert expected.shape == (3, 3)
    events = runs["newton"].events
    impacts = np.array(onsets(events))
    times = np.asarray(events.t)[impacts]
    rates = np.asarray(tp.angular_velocities(events.v[impacts]))
    np.testing.assert_allclose(times, expected[:, 0], atol=1e-6)
    np.testing.assert_allclose(rates, expected[:, 1:], atol=1e-6)


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
