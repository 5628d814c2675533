"""Routh's method ([Sypniewska-Kamińska 2017] §3.4): every case of Fig. 4 and its mirror, against an independent impulse-stepping scheme."""

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffimpact.impulse import Routh, routh
from diffimpact.impulse.base import kinetic_energy_change

impact = jax.jit(lambda W, u, mu, k: Routh(mu, k)(W, u))


def stepped(W, u, mu, k, steps=50_000):
    """Reference without case logic: march the normal impulse F in small steps; each step takes the tangential
    impulse that brings the slip closest to zero within ±μ dF (Coulomb's law per step); compression ends where
    c crosses 0 (interpolated), the impact at (1 + k) F_m."""
    (Wnn, Wnt), (Wtn, Wtt) = W
    c, s = u
    dF = -c / Wnn / steps * 4  # compression takes a few thousand steps or more
    F = T = 0.0

    def step(c, s, F, T, dF):
        dT = min(max(-(s + Wtn * dF) / Wtt, -mu * dF), mu * dF)
        return c + Wnn * dF + Wnt * dT, s + Wtn * dF + Wtt * dT, F + dF, T + dT

    for _ in range(100 * steps):
        c_new, s_new, F_new, T_new = step(c, s, F, T, dF)
        if c_new >= 0:
            compression = F + dF * (-c) / (c_new - c)
            c, s, F, T = c_new, s_new, F_new, T_new
            break
        c, s, F, T = c_new, s_new, F_new, T_new
    remaining = (1 + k) * compression - F
    count = max(1, int(np.ceil(remaining / dF)))
    for _ in range(count):
        c, s, F, T = step(c, s, F, T, remaining / count)
    return np.array([F, T])


def case_problem(case, mirror):
    """A W, u⁻, μ, k of each arrangement of Fig. 4 (normal first), mirrored by s → −s."""
    # sliding with s > 0: dc/dF = 1 + 0.4 μ, ds/dF = −0.4 − μ; the slip stops at F = s⁻/(0.4 + μ),
    # compression ends at 1/(1 + 0.4 μ) unless it stops first, and the contact can stick iff μ ≥ 0.4
    W = np.array([[1.0, -0.4], [-0.4, 1.0]])
    problems = {
        0: (W, (-1.0, 3.0), 0.2, 0.8),  # (a) stops at 5 > F_f = 1.67: slides throughout
        1: (W, (-1.0, 0.3), 0.6, 0.8),  # (b) stops at 0.3 < F_m = 0.81, sticks
        2: (W, (-1.0, 0.3), 0.3, 0.8),  # (c) stops at 0.43 < F_m = 0.89, slides back
        3: (W, (-1.0, 1.1), 0.6, 0.8),  # (d) stops at 1.1, between F_m = 0.81 and F_f = 1.45, sticks
        4: (W, (-1.0, 0.9), 0.3, 0.8),  # (e) stops at 1.29, between F_m = 0.89 and F_f = 1.61, slides back
    }
    W, u, mu, k = problems[case]
    if mirror:
        P = np.diag([1.0, -1.0])
        W, u = P @ W @ P, P @ np.asarray(u)
    return W, np.asarray(u), mu, k


@pytest.mark.parametrize("mirror", [False, True])
@pytest.mark.parametrize("case", range(5))
def test_each_case_of_fig_4_matches_impulse_stepping(case, mirror):
    W, u, mu, k = case_problem(case, mirror)
    result = impact(W, u, mu, k)
    assert int(result.case) == case, routh.CASES[case]
    reference = stepped(W, u, mu, k)
    np.testing.assert_allclose(result.impulse, reference, rtol=1e-4, atol=1e-4)
    # the mirror image has the tangential impulse reversed
    if mirror:
        original = impact(*case_problem(case, False))
        np.testing.assert_allclose(result.impulse, original.impulse * np.array([1, -1]), atol=1e-14)
    assert result.end == pytest.approx((1 + k) * result.compression)


def test_a_particle_in_closed_form():
    # point mass m = 1 (W = I), c = −1, s = 1, k = 0.5: F = (1 + k) m |c| = 1.5;
    # rough (μ = 10): the slip stops, T = −m s = −1; smooth (μ = 0.1): slides throughout, T = −μ F
    np.testing.assert_allclose(impact(np.eye(2), [-1.0, 1.0], 10.0, 0.5).impulse, [1.5, -1.0])
    np.testing.assert_allclose(impact(np.eye(2), [-1.0, 1.0], 0.1, 0.5).impulse, [1.5, -0.15])
    np.testing.assert_allclose(impact(np.eye(2), [-2.0, 0.0], 0.0, 1.0).impulse, [4.0, 0.0])
    # separating: no impulse
    np.testing.assert_array_equal(impact(np.eye(2), [0.5, 1.0], 0.3, 0.5).impulse, 0.0)


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mu=st.floats(0.0, 2.0), k=st.floats(0.0, 1.0))
def test_energy_never_increases_and_impulses_are_repulsive_and_in_the_cone(seed, mu, k):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(2, 2))
    W = L @ L.T + 0.05 * np.eye(2)
    u = rng.normal(size=2)
    result = impact(W, u, mu, k)
    impulse = np.asarray(result.impulse)
    assert kinetic_energy_change(W, u, impulse) <= 1e-12 * (u @ u) * np.abs(W).max()
    assert impulse[0] >= 0 and abs(impulse[1]) <= mu * impulse[0] * (1 + 1e-12) + 1e-15
    if u[0] < 0:  # the impact ends separating: c⁺ = −k c at the end of compression, scaled
        assert result.velocity[0] >= -1e-12 * abs(u[0])


def test_gradients_match_central_differences_inside_each_case(central_jacobian):
    for case in range(5):
        W, u, mu, k = case_problem(case, False)

        def post(params):
            return Routh(params[2], params[3])(W, params[:2]).velocity

        params = np.array([*u, mu, k])
        jacobian = np.asarray(jax.jit(jax.jacfwd(post))(params))
        np.testing.assert_allclose(jacobian, central_jacobian(post, params, 1e-7), atol=1e-6)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="restitution must be finite and in \\[0, 1\\]"):
        Routh(0.1, 1.5)
    with pytest.raises(ValueError, match="friction must be finite and in"):
        Routh(-0.1, 0.5)
    with pytest.raises(ValueError, match="delassus must be finite, symmetric and positive definite"):
        Routh(0.1, 0.5)(np.array([[1.0, 2.0], [2.0, 1.0]]), [-1.0, 0.0])
    with pytest.raises(ValueError, match=r"shapes \(\.\.\., 2, 2\) and \(\.\.\., 2\)"):
        Routh(0.1, 0.5)(np.eye(3), [-1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"Routh resolves planar contacts \(dimension 2\); got dimension 3"):
        Routh(0.1, 0.5)(np.eye(3), [-1.0, 0.0, 0.0], dimension=3)



def test_painleve_case_where_sliding_decompresses_still_ends():
    # dc/dF = W_nn − μ W_nt = 1 − 1.8 < 0 while sliding: the approach speeds up until the slip stops,
    # then the contact sticks (|W_tn/W_tt| = 0.9 ≤ μ) and compression ends (module docstring)
    W = np.array([[1.0, 0.9], [0.9, 1.0]])
    result = impact(W, np.array([-1.0, 5.0]), 2.0, 0.5)
    assert int(result.case) == 1
    reference = stepped(W, np.array([-1.0, 5.0]), 2.0, 0.5)
    np.testing.assert_allclose(result.impulse, reference, rtol=1e-4)
    assert kinetic_energy_change(W, np.array([-1.0, 5.0]), np.asarray(result.impulse)) < 0
