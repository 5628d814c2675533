"""Newton's and Poisson's restitution: closed forms, the classic energy gain of Newton's law, multi-contact LCPs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffimpact.impulse import Newton, Poisson, Routh
from diffimpact.impulse.base import kinetic_energy_change
from diffimpact.scenes import double_pendulum as dp

newton_2d = jax.jit(lambda W, u, e, mu: Newton(e, mu)(W, u, dimension=2))
poisson_2d = jax.jit(lambda W, u, e, mu: Poisson(e, mu)(W, u, dimension=2))


def test_one_frictionless_contact_reverses_e_times_the_normal_velocity():
    W = np.array([[2.0, 0.3, -0.1], [0.3, 1.0, 0.2], [-0.1, 0.2, 1.5]])
    u = np.array([-1.5, 0.4, -0.2])
    for model in (Newton, Poisson):
        result = model(0.7)(W, u)
        assert float(result.velocity[0]) == pytest.approx(1.05)
        np.testing.assert_allclose(result.impulse, [1.7 * 1.5 / 2.0, 0.0, 0.0])


def test_one_contact_with_friction_newton_and_poisson_coincide_and_slide_against_the_slip():
    # with the slip direction fixed the normal velocity is linear in the normal impulse, so both laws agree
    W = np.array([[2.0, 0.3, -0.1], [0.3, 1.0, 0.2], [-0.1, 0.2, 1.5]])
    u = np.array([-1.5, 0.4, -0.3])
    a, b = Newton(0.7, 0.25)(W, u), Poisson(0.7, 0.25)(W, u)
    np.testing.assert_allclose(a.impulse, b.impulse, rtol=1e-14)
    assert float(a.velocity[0]) == pytest.approx(1.05)
    slip = u[1:] / np.linalg.norm(u[1:])
    np.testing.assert_allclose(a.impulse[1:], -0.25 * a.impulse[0] * slip, rtol=1e-14)


def test_newton_gains_energy_in_kane_and_levinsons_double_pendulum_where_routh_dissipates():
    # Sypniewska-Kamińska et al.'s (2017) double pendulum striking the floor with e = 0.5, μ = 0.5 (the setting of Kane & Levinson's
    # example): friction kept along the pre-impact slip overshoots once the slip stops
    p = dp.Parameters()
    psi, dpsi = jnp.array([0.248, 0.184]), jnp.array([-3.24, 1.39])
    J = np.asarray(dp.contact_jacobian(p, psi))  # rows (c, s): normal first
    M = np.asarray(dp.mass_matrix(p, psi))
    W, u = J @ np.linalg.solve(M, J.T), J @ np.asarray(dpsi)
    kinetic = 0.5 * dpsi @ M @ dpsi
    assert u[0] < 0
    newton_change = kinetic_energy_change(W, u, np.asarray(newton_2d(W, u, 0.5, 0.5).impulse))
    poisson_change = kinetic_energy_change(W, u, np.asarray(poisson_2d(W, u, 0.5, 0.5).impulse))
    result = Routh(0.5, 0.5)(W, u)
    routh_change = kinetic_energy_change(W, u, np.asarray(result.impulse))
    assert newton_change > 0.1 * kinetic  # gains energy
    assert poisson_change == pytest.approx(newton_change)  # at a fixed slip direction, the same impulse
    assert int(result.case) == 1 and routh_change < 0  # Poisson's hypothesis with the slip followed


def two_contact_problem(rng):
    J = rng.normal(size=(4, 3))  # two planar contacts on a body with three degrees of freedom
    return J @ J.T + 1e-9 * np.eye(4), J @ rng.normal(size=3)


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.floats(0.0, 1.0))
def test_frictionless_poisson_never_gains_energy_and_both_laws_satisfy_their_complementarity(seed, e):
    W, u = two_contact_problem(np.random.default_rng(seed))
    scale = np.abs(u).max() * np.abs(W).max()
    a, b = newton_2d(W, u, e, 0.0), poisson_2d(W, u, e, 0.0)
    assert kinetic_energy_change(W, u, np.asarray(b.impulse)) <= 1e-9 * scale * np.abs(b.impulse).max(initial=1)
    normal = np.array([0, 2])
    for result in (a, b):
        assert np.all(np.asarray(result.impulse)[normal] >= 0)
        np.testing.assert_array_equal(np.asarray(result.impulse)[[1, 3]], 0.0)
    # Newton: u⁺_n ≥ −e min(u⁻_n, 0), with equality where a normal impulse acts
    gap = np.asarray(a.velocity)[normal] + e * np.minimum(u[normal], 0)
    assert np.all(gap >= -1e-9 * scale)
    assert np.all(np.abs(gap * np.asarray(a.impulse)[normal]) <= 1e-9 * scale * (1 + np.abs(a.impulse).max()))


def test_frictionless_newton_can_gain_energy_with_two_contacts_and_poisson_does_not():
    # the known inconsistency of Newton's law for simultaneous impacts; found by search over random systems
    rng = np.random.default_rng(1)
    gains = []
    for _ in range(300):
        W, u = two_contact_problem(rng)
        gains.append((kinetic_energy_change(W, u, np.asarray(newton_2d(W, u, 0.9, 0.0).impulse)),
                      kinetic_energy_change(W, u, np.asarray(poisson_2d(W, u, 0.9, 0.0).impulse)), u @ u))
    gains = np.array(gains)
    assert np.max(gains[:, 0] / gains[:, 2]) > 0.01
    assert np.max(gains[:, 1] / gains[:, 2]) <= 1e-12


def test_gradients_of_the_post_impact_velocity_match_central_differences(central_jacobian):
    W = np.array([[2.0, 0.3, -0.1], [0.3, 1.0, 0.2], [-0.1, 0.2, 1.5]])
    u = np.array([-1.5, 0.4, -0.3])
    for model in (Newton, Poisson):
        post = jax.jit(lambda params: model(params[0], params[1])(W, u).velocity)
        params = jnp.array([0.7, 0.25])
        jacobian = np.asarray(jax.jit(jax.jacfwd(post))(params))
        np.testing.assert_allclose(jacobian, central_jacobian(post, params, 1e-6), atol=1e-8)


def test_bad_input_and_jams_are_refused():
    W = np.eye(3)
    with pytest.raises(ValueError, match="restitution must be finite and in \\[0, 1\\]"):
        Newton(1.2)
    with pytest.raises(ValueError, match="dimension must be 2"):
        Poisson(0.5)(W, [-1.0, 0.0, 0.0], dimension=4)
    with pytest.raises(ValueError, match=r"velocity must have shape \(3m,\)"):
        Newton(0.5)(np.eye(4), np.zeros(4), dimension=3)
    with pytest.raises(ValueError, match=r"is not one contact \(2 or 3 components\); for several contacts pass"):
        Newton(0.5)(np.eye(4), np.zeros(4))
    # one value per contact, or one for all (three restitutions for two contacts failed in a broadcast)
    u = [-1.0, 0.2, 0.0, -1.0, 0.0, 0.0]
    for model in (Newton, Poisson):
        with pytest.raises(ValueError, match=r"restitution must be a scalar or one value per contact, shape \(2,\); "
                                             r"got shape \(3,\)"):
            model([0.5, 0.5, 0.5])(np.eye(6), u, dimension=3)
        with pytest.raises(ValueError, match=r"friction must be a scalar or one value per contact, shape \(2,\)"):
            model(0.5, [0.1, 0.2, 0.3])(np.eye(6), u, dimension=3)
    # strong coupling and a large μ at a fixed slip direction: the normal velocity falls with the impulse
    W = np.array([[1.0, 0.9], [0.9, 1.0]])
    for model in (Newton, Poisson):
        with pytest.raises(ValueError, match="Painlevé jam"):
            model(0.5, 2.0)(W, [-1.0, 5.0], dimension=2)


def test_redundant_contacts_are_refused_with_the_reason_and_the_model_that_takes_them():
    """Two contacts with the same Jacobian rows (redundant) make W singular: Newton's LCP cannot take it, and the
    message says why and names PLUS, which resolves redundant contacts by minimum-norm least squares."""
    J = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] * 2)
    W = J @ J.T
    with pytest.raises(ValueError, match="redundant.*Plus"):
        Newton(0.5)(W, np.array([-1.0, 0.0, 0.0, -1.0, 0.0, 0.0]), dimension=3)
