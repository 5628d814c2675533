"""Kelvin–Voigt restitution with zero-force separation ([Poursina 2020] §5.2, eqs. (20), (54)–(56)).

References are independent of the module: a SciPy ODE solve with a
separation event, NumPy closed forms and finite differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from diffimpact.impact.kelvin_voigt import (
    kelvin_voigt_damping_ratio,
    kelvin_voigt_restitution,
    kelvin_voigt_separation_time,
)

MASS = 0.7  # kg
STIFFNESS = 300.0  # N/m
IMPACT_VELOCITY = 1.3  # m/s
HALF_SQRT2 = np.sqrt(0.5)

ODE_DAMPING_RATIOS = np.array(
    [0.05, 0.3, HALF_SQRT2 - 1e-6, HALF_SQRT2, HALF_SQRT2 + 1e-6, 0.9, 0.96, 0.999, 1.0,
     1.001, 1.04, 1.5, 3.0, 10.0]
)



def padded_batch(function, size):
    """jit(vmap(function)) on inputs padded to one length, so it compiles once."""
    compiled = jax.jit(jax.vmap(function))

    def call(values):
        values = np.atleast_1d(np.asarray(values, dtype=float))
        assert values.size <= size
        padded = np.concatenate([values, np.full(size - values.size, values[-1])])
        return np.asarray(compiled(jnp.asarray(padded)))[: values.size]

    return call


restitution_batch = padded_batch(kelvin_voigt_restitution, 4096)
restitution_gradient_batch = padded_batch(jax.grad(kelvin_voigt_restitution), 4096)
damping_ratio_batch = padded_batch(kelvin_voigt_damping_ratio, 128)
damping_ratio_gradient_batch = padded_batch(jax.grad(kelvin_voigt_damping_ratio), 128)


def ode_impact(damping_ratio):
    """Integrate eq. (54) to the first zero of c δ̇ + k δ (eq. (20)); return (e, t_s)."""
    damping = 2.0 * damping_ratio * np.sqrt(STIFFNESS * MASS)

    def rhs(t, state):
        penetration, rate = state
        return [rate, -(damping * rate + STIFFNESS * penetration) / MASS]

    def contact_force(t, state):
        return damping * state[1] + STIFFNESS * state[0]

    # The force starts at c v > 0 and the event only fires on a downward crossing.
    contact_force.terminal = True
    contact_force.direction = -1
    omega = np.sqrt(STIFFNESS / MASS)
    solution = solve_ivp(
        rhs, (0.0, 10.0 * np.pi / omega), [0.0, IMPACT_VELOCITY], method="DOP853",
        rtol=1e-12, atol=1e-14, events=contact_force,
    )
    assert solution.t_events[0].size == 1, "no separation found"
    separation_rate = solution.y_events[0][0][1]
    return -separation_rate / IMPACT_VELOCITY, solution.t_events[0][0]


@pytest.fixture(scope="module")
def ode_reference():
    results = np.array([ode_impact(xi) for xi in ODE_DAMPING_RATIOS])
    return results[:, 0], results[:, 1]


def numpy_closed_form(damping_ratio):
    """e(ξ) written independently with NumPy (ξ ≠ 1): atan2 below 1, exponent ξ/s above."""
    xi = np.asarray(damping_ratio, dtype=float)
    under = np.where(xi < 1.0, xi, 0.5)
    omega_d = np.sqrt(1.0 - under**2)
    e_under = np.exp(-under / omega_d * np.arctan2(2 * under * omega_d, 2 * under**2 - 1))
    over = np.where(xi > 1.0, xi, 2.0)
    s = np.sqrt(over**2 - 1.0)
    e_over = ((over - s) / (over + s)) ** (over / s)
    return np.where(xi < 1.0, e_under, e_over)  # ξ = 1 is not covered


def test_matches_ode_solve(ode_reference):
    ode_restitution, _ = ode_reference
    restitution = restitution_batch(ODE_DAMPING_RATIOS)
    np.testing.assert_allclose(restitution, ode_restitution, rtol=0, atol=1e-10)


def test_separation_time_matches_ode(ode_reference):
    _, ode_time = ode_reference
    time = jax.jit(jax.vmap(kelvin_voigt_separation_time, in_axes=(0, None, None)))(
        jnp.asarray(ODE_DAMPING_RATIOS), STIFFNESS, MASS
    )
    np.testing.assert_allclose(time, ode_time, rtol=1e-9)


def test_printed_overdamped_branch_disagrees_with_ode(ode_reference):
    """Eq. (55) as printed, exponent 2ξs/(2ξ²−1), is wrong; exponent ξ/s is right."""
    ode_restitution, _ = ode_reference
    over = ODE_DAMPING_RATIOS > 1.0
    xi = ODE_DAMPING_RATIOS[over]
    s = np.sqrt(xi**2 - 1.0)
    printed = ((xi - s) / (xi + s)) ** (2 * xi * s / (2 * xi**2 - 1))
    corrected = ((xi - s) / (xi + s)) ** (xi / s)
    assert np.all(np.abs(printed / ode_restitution[over] - 1.0) > 0.02)
    np.testing.assert_allclose(corrected, ode_restitution[over], rtol=0, atol=1e-10)
    # The printed branch even jumps to ~1 just above critical damping (e(1) = e^-2).
    assert printed[0] > 0.99


def test_principal_arctan_is_wrong_below_half_sqrt2(ode_reference):
    """The quadrant remark after eq. (55): plain arctan fails for ξ < √2/2, atan2 works."""
    ode_restitution, _ = ode_reference
    under = ODE_DAMPING_RATIOS < HALF_SQRT2 - 1e-7
    xi = ODE_DAMPING_RATIOS[under]
    omega_d = np.sqrt(1.0 - xi**2)
    principal = np.exp(-xi / omega_d * np.arctan(2 * xi * omega_d / (2 * xi**2 - 1)))
    assert np.all(np.abs(principal - ode_restitution[under]) > 0.05)
    np.testing.assert_allclose(
        numpy_closed_form(xi), ode_restitution[under], rtol=0, atol=1e-10
    )


def test_closed_form_and_series_agree_near_critical():
    xi = np.concatenate([np.linspace(0.8, 1.2, 401), [0.95 - 1e-13, 0.95 + 1e-13, 1.05 - 1e-13,
                                                     1.05 + 1e-13]])
    xi = xi[np.abs(xi - 1.0) > 1e-6]  # the NumPy reference cancels at ξ = 1
    np.testing.assert_allclose(restitution_batch(xi), numpy_closed_form(xi),
                               rtol=1e-13)


def test_special_values_and_limits():
    values = restitution_batch(np.array([0.0, 1e-8, HALF_SQRT2, 1.0, 1e4, 1e8]))
    assert values[0] == 1.0
    np.testing.assert_allclose(values[1], 1.0 - np.pi * 1e-8, rtol=1e-15)
    np.testing.assert_allclose(values[2], np.exp(-np.pi / 2), rtol=1e-14)
    np.testing.assert_allclose(values[3], np.exp(-2.0), rtol=1e-14)
    # e ≈ (1 + (1/2 − ln 2ξ)/ξ²) / (4ξ²) as ξ → ∞: positive, tending to 0.
    large = np.array([1e4, 1e8])
    asymptote = (1.0 + (0.5 - np.log(2 * large)) / large**2) / (4 * large**2)
    np.testing.assert_allclose(values[4:], asymptote, rtol=1e-12)


def test_monotone_decreasing():
    xi = np.concatenate([np.linspace(0.0, 2.0, 2001), np.geomspace(2.0, 1e6, 500)[1:]])
    restitution = restitution_batch(xi)
    gradient = restitution_gradient_batch(xi)
    assert np.all(np.diff(restitution) < 0)
    assert np.all(gradient < 0)
    assert np.all(restitution > 0)


def test_gradient_matches_finite_differences():
    xi = np.array([0.01, 0.3, HALF_SQRT2 - 1e-4, HALF_SQRT2, HALF_SQRT2 + 1e-4, 0.95, 0.999,
                   1.0, 1.001, 1.05, 1.5, 3.0, 10.0])
    step = 1e-6
    both = restitution_batch(np.concatenate([xi + step, xi - step]))
    finite_difference = (both[: xi.size] - both[xi.size:]) / (2 * step)
    gradient = restitution_gradient_batch(xi)
    np.testing.assert_allclose(gradient, finite_difference, rtol=1e-6)


def test_gradient_at_zero_and_second_derivative_near_critical():
    assert np.isclose(jax.grad(kelvin_voigt_restitution)(0.0), -np.pi, rtol=1e-14)
    xi = jnp.array([0.0, 0.95, 1.0, 1.05, 2.0])
    second = jax.jit(jax.vmap(jax.grad(jax.grad(kelvin_voigt_restitution))))(xi)
    # against differences of the first derivative (checked above against differences of e): central, and
    # one-sided of second order at ξ = 0, the end of the range
    first, h = jax.jit(jax.vmap(jax.grad(kelvin_voigt_restitution))), 1e-5
    expected = (first(xi + h) - first(jnp.maximum(xi - h, 0.0))) / (xi + h - jnp.maximum(xi - h, 0.0))
    expected = expected.at[0].set((-3 * first(xi[:1]) + 4 * first(xi[:1] + h) - first(xi[:1] + 2 * h))[0] / (2 * h))
    np.testing.assert_allclose(second, expected, rtol=1e-6)


def test_inverse_round_trip():
    restitution = np.concatenate([np.geomspace(1e-12, 1.0, 60), [np.exp(-2.0)]])
    xi = damping_ratio_batch(restitution)
    np.testing.assert_allclose(restitution_batch(xi), restitution, rtol=1e-12)
    assert xi[-2] == 0.0
    np.testing.assert_allclose(xi[-1], 1.0, rtol=1e-13)
    xi_grid = np.array([0.0, 0.05, HALF_SQRT2, 1.0, 3.0, 100.0])
    np.testing.assert_allclose(damping_ratio_batch(restitution_batch(xi_grid)), xi_grid,
                               rtol=1e-12, atol=1e-15)


def test_inverse_gradient():
    restitution = np.array([0.9, 0.5, np.exp(-2.0), 0.01, 1.0])
    gradient = damping_ratio_gradient_batch(restitution)
    xi = damping_ratio_batch(restitution)
    np.testing.assert_allclose(gradient, 1.0 / restitution_gradient_batch(xi), rtol=1e-10)
    np.testing.assert_allclose(gradient[-1], -1.0 / np.pi, rtol=1e-12)
    step = 1e-7
    inner = restitution[:-1]
    finite_difference = (damping_ratio_batch(inner + step) - damping_ratio_batch(inner - step)) / (
        2 * step
    )
    np.testing.assert_allclose(gradient[:-1], finite_difference, rtol=1e-6)


@pytest.mark.parametrize("bad", [-0.1, np.nan, np.inf, [0.5, -1.0]])
def test_bad_damping_ratio_raises(bad):
    with pytest.raises(ValueError, match=r"damping_ratio .*\[0, inf\)"):
        kelvin_voigt_restitution(bad)


@pytest.mark.parametrize("bad", [0.0, -0.2, 1.5, np.nan])
def test_bad_restitution_raises(bad):
    with pytest.raises(ValueError, match=r"restitution .*\(0, 1\]"):
        kelvin_voigt_damping_ratio(bad)
