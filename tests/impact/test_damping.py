"""Optimal damping ([Poursina 2020]) against an independent SciPy solve, closed forms and finite differences."""

import math
import re

import jax
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import diffimpact as di
from diffimpact.impact import damping as od
from diffimpact.impact.kelvin_voigt import kelvin_voigt_restitution


def scipy_restitution(c, m, v, k, n):
    """e_out of m δ̈ + c δ̇ + k δ^n = 0 to the zero-force separation, by SciPy (independent of diffrax)."""
    T = ((m * v**2 / k) ** (1 / (n + 1))) / v  # time unit; the solve itself is in SI units

    def rhs(t, y):
        return [y[1], -(c * y[1] + k * np.sign(y[0]) * abs(y[0]) ** n) / m]

    def force(t, y):
        return c * y[1] + k * np.sign(y[0]) * abs(y[0]) ** n

    force.terminal, force.direction = True, -1
    L = T * v
    sol = solve_ivp(rhs, (0, 1e3 * T), [0.0, v], method="DOP853", rtol=1e-13, atol=[1e-15 * L, 1e-15 * v], events=force)
    return -sol.y_events[0][0][1] / v


@pytest.fixture(scope="module")
def exact():
    return jax.jit(lambda m, v, k, n, e: di.optimal_damping(m, v, k, n, e, method="exact"))


SYSTEMS = [  # m (kg), v (m/s), k (N/m^n), n, e — over the ranges of [Poursina 2020] §5.1
    (1e-5, 1e-3, 1e10, 2.0, 1e-4),
    (3.0, 0.5, 1e7, 1.5, 0.3),
    (1e2, 1e2, 1e5, 1.0, 0.95),
    (0.02, 7.0, 3e9, 1.27, 0.6),
    (0.2, 3.0, 1e8, 1.5, 1e-6),  # below the closed forms' range: Newton from the heavy-damping limit
    (1.0, 1.0, 1.0, 2.0, 1e-7),
]


@pytest.mark.parametrize("system", SYSTEMS)
def test_exact_reproduces_restitution_in_an_independent_solver(exact, system):
    *params, e = system
    c = float(exact(*system))
    e_out = scipy_restitution(c, *params)
    assert abs(e_out - e) / e <= 1e-8  # eq. (24) with ε = 1e-8


def test_exact_at_n_1_matches_kelvin_voigt_closed_form(exact):
    # n = 1 is Kelvin–Voigt; the exact damping ratio must give e in eq. (55).
    m, k = 2.0, 5.0
    # Down to e = 1e-300: below 1e-4 Newton starts from the heavy-damping limit, below 1e-20 it is the limit.
    for e in (1e-300, 1e-30, 1e-12, 1e-7, 1e-3, 0.13, 0.5, 0.9):
        xi = float(exact(m, 1.0, k, 1.0, e)) / (2 * math.sqrt(k * m))
        assert float(kelvin_voigt_restitution(xi)) == pytest.approx(e, rel=1e-8)


def test_paper_formula_matches_the_published_specialisations():
    # eq. (52), n = 3/2: 1.95 (e^−0.3 − 1) k^0.4 v^0.2 m^0.6 (3 printed digits).
    m, v, k, e = 0.3, 2.0, 1e8, 0.4
    eq52 = 1.95 * (e**-0.3 - 1) * k**0.4 * v**0.2 * m**0.6
    assert float(di.optimal_damping(m, v, k, 1.5, e, method="paper")) == pytest.approx(eq52, rel=5e-3)
    # eq. (57), n = 1: 1.4181 (e^−0.44 − 1) sqrt(k m).
    eq57 = 1.4181 * (e**-0.44 - 1) * math.sqrt(k * m)
    assert float(di.optimal_damping(m, v, k, 1.0, e, method="paper")) == pytest.approx(eq57, rel=1e-9)


def test_exact_scales_as_eq_49(exact):
    n, e, s = 1.6, 0.5, 10.0
    base = float(exact(1.0, 1.0, 1.0, n, e))
    assert float(exact(s, 1.0, 1.0, n, e)) / base == pytest.approx(s ** (n / (n + 1)), rel=1e-8)
    assert float(exact(1.0, s, 1.0, n, e)) / base == pytest.approx(s ** ((n - 1) / (n + 1)), rel=1e-8)
    assert float(exact(1.0, 1.0, s, n, e)) / base == pytest.approx(s ** (1 / (n + 1)), rel=1e-8)


def test_lambda_is_a_slack_variable_of_eq_34():
    n = np.array([1.0, 1.5, 2.0])
    e = np.array([0.05, 0.5, 0.99])
    lam = np.asarray(di.damping_lambda(n, e))
    assert np.all((lam > 0) & (lam <= 1))  # eq. (33): c_opt ≤ bound ⇔ λ ≤ 1
    # eq. (34) read backwards, ĉ = λ ((n + 1)/2)^(n/(n+1)) / e, is the unit system's optimal damping: SciPy's
    # integration of δ̈ + ĉ δ̇ + δ^n = 0 gives back e, to eq. (24)'s ε = 1e-8
    unit = lam * ((n + 1) / 2) ** (n / (n + 1)) / e
    e_out = np.array([scipy_restitution(c, 1.0, 1.0, 1.0, ni) for c, ni in zip(unit, n)])
    assert np.all(np.abs(e_out - e) / e <= 1e-8)


UNIT_CASES = [  # (ĉ, n) from near the elastic limit to heavy damping (e from 0.9998 to 1e-3)
    (1.2e-4, 1.677), (1e-3, 1.5), (0.05, 1.01), (0.3, 1.5), (0.6, 1.99), (2.6, 1.408), (5.0, 1.27), (20.0, 2.0),
]


@pytest.fixture(scope="module")
def unit_restitution():
    return jax.jit(jax.vmap(od.unit_restitution))


def test_unit_restitution_matches_an_independent_solver(unit_restitution):
    # Global error of the adaptive solve at its local tolerance UNIT_RTOL (e to ~5e-11), against SciPy at 1e-13.
    c, n = (np.array(a) for a in zip(*UNIT_CASES))
    e_out = np.asarray(unit_restitution(c, n))
    reference = np.array([scipy_restitution(ci, 1.0, 1.0, 1.0, ni) for ci, ni in zip(c, n)])
    np.testing.assert_allclose(e_out, reference, rtol=2 * od.UNIT_RTOL)


def test_unit_restitution_at_n_1_is_kelvin_voigt_to_heavy_damping(unit_restitution):
    # eq. (55) in closed form, ĉ = 2ξ from 1e-4 to 1e6 (e down to 2.5e-12)
    c = np.logspace(-4, 6, 41)
    e_out = np.asarray(unit_restitution(c, np.ones_like(c)))
    np.testing.assert_allclose(e_out, np.asarray(kelvin_voigt_restitution(c / 2)), rtol=2 * od.UNIT_RTOL)


def test_unit_restitution_derivatives_are_those_of_the_solve(unit_restitution):
    # forward sensitivities against central differences of e_out (relative step 1e-4: truncation ~1e-8, the
    # solve's 5e-11 noise 5e-7 of the derivative)
    c, n = (np.array(a) for a in zip(*UNIT_CASES[1:6]))
    jacobian = jax.jit(jax.vmap(jax.jacfwd(od.unit_restitution, argnums=(0, 1))))
    by_damping, by_exponent = (np.asarray(d) for d in jacobian(c, n))
    h_c, h_n = 1e-4 * c, 1e-4 * n
    fd_damping = (np.asarray(unit_restitution(c + h_c, n)) - np.asarray(unit_restitution(c - h_c, n))) / (2 * h_c)
    fd_exponent = (np.asarray(unit_restitution(c, n + h_n)) - np.asarray(unit_restitution(c, n - h_n))) / (2 * h_n)
    np.testing.assert_allclose(by_damping, fd_damping, rtol=1e-5)
    np.testing.assert_allclose(by_exponent, fd_exponent, rtol=1e-5)


POINT = [0.7, 2.0, 3e6, 1.3, 0.45]  # m, v, k, n, e


@pytest.fixture(scope="module")
def exact_grad(exact):
    """dc/d(m, v, k, n, e) of the exact method, compiled once for the module (float arguments)."""
    return jax.jit(jax.grad(exact, argnums=(0, 1, 2, 3, 4)))


@pytest.fixture(scope="module")
def exact_gradient(exact_grad):
    return exact_grad(*(float(x) for x in POINT))


@pytest.mark.parametrize("argnum", range(5))
def test_exact_gradient_matches_central_differences(exact, exact_gradient, argnum, central_difference):
    grad = float(exact_gradient[argnum])
    fd = central_difference(exact, POINT, argnum)
    assert grad == pytest.approx(fd, rel=1e-6)


def elastic_slope(n):
    """1/(2 I(n)), I(n) = ∫₀^δm √(1 − 2δ^(n+1)/(n+1)) dδ by SciPy's quadrature: the energy the damper takes on the
    elastic path, ĉ ≈ (1 − e)/(2 I) as e → 1 (independent of the library's Γ-function form)."""
    from scipy.integrate import quad

    peak = ((n + 1) / 2) ** (1 / (n + 1))
    integral, _ = quad(lambda d: np.sqrt(max(1 - 2 * d ** (n + 1) / (n + 1), 0.0)), 0.0, peak, epsabs=1e-13)
    return 1 / (2 * integral)


def test_elastic_limit_has_zero_damping_and_the_elastic_paths_slope(exact, exact_grad):
    assert float(exact(1.0, 1.0, 1.0, 1.5, 1.0)) == 0.0
    slope = float(exact_grad(1.0, 1.0, 1.0, 1.5, 1.0)[4])
    assert slope == pytest.approx(-elastic_slope(1.5), rel=1e-10)


@pytest.mark.parametrize("n", [1.0, 1.5, 2.0])
def test_near_elastic_damping_is_resolved_where_the_solve_cannot_resolve_1_minus_e(exact, n):
    """c/(1 − e) tends to a finite limit: at 1 − e = 1e-10 the solve's root is off by up to 40 % (inside its
    tolerance on e). The near-elastic root is returned there; it agrees with the solve, to its O(ĉ²) neglect (about
    (1 − e) relative), where the solve still resolves 1 − e (1e-2 to 1e-4), and its ratio to the linear root
    (1 − e)/(2 I) approaches 1 as the correction (2n/(n+1)) ĉ^(1/n)/(4 I) vanishes."""
    system = (0.2, 3.0, 1e8, n)
    scale = float(od.damping_scale(*system))
    for gap in (1e-2, 1e-3, 1e-4 * 1.01):
        solved = float(exact(*system, 1 - gap))
        near_elastic = float(od.near_elastic_unit_damping(n, 1 - gap)) * scale
        assert near_elastic == pytest.approx(solved, rel=1.2 * gap)
    for gap in (1e-6, 1e-8, 1e-10, 1e-12):
        c = float(exact(*system, 1 - gap))
        linear = gap * (2 - gap) / 2 * elastic_slope(n) * scale  # (1 − e²)/(4 I)
        correction = (2 * n / (n + 1)) * (linear / scale) ** (1 / n) * elastic_slope(n) / 2
        assert c == pytest.approx(linear * (1 + correction), rel=max(gap, correction**2) * 2)


def test_improved_is_ten_times_more_accurate_than_the_paper():
    # Worst restitution error on a grid over n ∈ [1, 2], e ∈ [1e-4, 1] (full study: `damping-improved`).
    N, E = np.meshgrid(np.linspace(1, 2, 5), np.logspace(-4, 0, 13), indexing="ij")
    errors = {}
    for method in ("paper", "improved"):
        c = np.asarray(di.optimal_damping(1.0, 1.0, 1.0, N, E, method=method))
        e_out = np.array([scipy_restitution(ci, 1.0, 1.0, 1.0, ni) for ci, ni in zip(c.ravel(), N.ravel())])
        errors[method] = np.max(np.abs(e_out - E.ravel()))
    assert errors["improved"] * 10 <= errors["paper"]


def test_broadcasting_and_methods_agree_roughly():
    e = np.linspace(0.5, 0.9, 4)
    results = {m: np.asarray(di.optimal_damping(2.0, 1.0, 1e6, 1.5, e, method=m)) for m in od.METHODS}
    assert all(r.shape == (4,) for r in results.values())
    np.testing.assert_allclose(results["improved"], results["exact"], rtol=1e-3)
    np.testing.assert_allclose(results["paper"], results["exact"], rtol=5e-2)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(mass=0.0), "mass"),
        (dict(impact_velocity=-1.0), "impact_velocity"),
        (dict(stiffness=float("nan")), "stiffness"),
        (dict(exponent=2.5), "exponent"),
        (dict(restitution=0.0), "restitution"),
        (dict(restitution=1.2), "restitution"),
        (dict(method="magic"), "method"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(mass=1.0, impact_velocity=1.0, stiffness=1.0, exponent=1.5, restitution=0.5)
    method = kwargs.pop("method", "exact")
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        di.optimal_damping(**args, method=method)


def test_bad_input_under_jit_raises_at_run_time():
    with pytest.raises(Exception, match="restitution"):
        jax.jit(lambda e: di.optimal_damping(1.0, 1.0, 1.0, 1.5, e, method="paper"))(1.5).block_until_ready()


# --- e below the closed forms' range: the heavy-damping limit (module docstring of diffimpact.impact.damping) ---
# In units of m/c and m v/c the impact is x'' + x' + ε x^n = 0, ε = k m^n v^(n−1)/c^(n+1); the body stops at
# x ≈ 1 and separates at the creep speed, e = ε x_s^n with 0 < 1 − x_s^n < 3 n ε ln(1/ε). So c < c_lim =
# [k v^(n−1) m^n / e]^(1/(n+1)) with 1 − c/c_lim < 3 n e ln(1/e)/(n + 1) (to leading order in e).


def heavy_damping_limit(m, v, k, n, e):
    return (k * v ** (n - 1) * m**n / e) ** (1 / (n + 1))


@pytest.mark.parametrize("system", [(0.2, 3.0, 1e8, 1.5, 1e-7), (1.0, 1.0, 1.0, 1.5, 1e-8), (0.02, 7.0, 3e9, 2.0, 1e-12)])
def test_exact_below_the_closed_forms_tends_to_the_heavy_damping_limit(exact, system):
    # The first system is the tester's optimal_damping(0.2, 3.0, 1e8, 1.5, 1e-7), which was NaN.
    *_, n, e = system
    deficit = 1 - float(exact(*system)) / heavy_damping_limit(*system)
    assert 0 < deficit < 3 * n * e * math.log(1 / e) / (n + 1)


def test_exact_gradient_at_tiny_restitution_is_that_of_the_limit(exact_grad):
    # e = 1e-25 < ASYMPTOTIC_RESTITUTION: c = c_lim to 1e-20, so dc/dθ = c (n, n − 1, 1, −1)/((n + 1) θ) for θ = m, v, k, e.
    m, v, k, n, e = 0.7, 2.0, 3e6, 1.3, 1e-25
    grad = exact_grad(m, v, k, n, e)
    c = heavy_damping_limit(m, v, k, n, e)
    dc_dn = c * (math.log(v) + math.log(m) - math.log(k * v ** (n - 1) * m**n / e) / (n + 1)) / (n + 1)
    expected = [c * n / ((n + 1) * m), c * (n - 1) / ((n + 1) * v), c / ((n + 1) * k), dc_dn, -c / ((n + 1) * e)]
    np.testing.assert_allclose([float(g) for g in grad], expected, rtol=1e-12)


def test_exact_gradient_below_the_fitted_range_matches_central_differences(exact, exact_grad, central_difference):
    point = [0.7, 2.0, 3e6, 1.3, 1e-6]  # Newton from the heavy-damping limit, implicit-function derivative
    grad = exact_grad(*point)
    for argnum in range(5):
        assert float(grad[argnum]) == pytest.approx(central_difference(exact, point, argnum), rel=1e-6)


def test_lambda_at_tiny_restitution_tends_to_its_limit():
    # λ = e ĉ / ((n+1)/2)^(n/(n+1)) (eq. (34)) → e^(n/(n+1)) ((n+1)/2)^(−n/(n+1)); the tester's λ(1.5, 1e-8) was NaN.
    n = np.array([1.0, 1.5, 2.0])
    e = np.array([1e-12, 1e-8, 1e-6])
    lam = np.asarray(di.damping_lambda(n, e))
    limit = e ** (n / (n + 1)) / ((n + 1) / 2) ** (n / (n + 1))
    deficit = 1 - lam / limit
    assert np.all((deficit > 0) & (deficit < 3 * n * e * np.log(1 / e) / (n + 1)))


@pytest.mark.parametrize("method", ["paper", "improved"])
def test_closed_forms_refuse_restitution_below_their_fitted_range(method):
    message = (
        f"restitution e must be finite and in [0.0001, 1] for method='{method}', the range of its fit "
        "(method='exact' takes (0, 1]); got [1e-06]"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        di.optimal_damping(0.2, 3.0, 1e8, 1.5, 1e-6, method=method)
    with pytest.raises(ValueError, match=re.escape(message.replace("[1e-06]", "[1e-06, 5e-05]"))):
        di.optimal_damping(0.2, 3.0, 1e8, 1.5, np.array([0.5, 1e-6, 5e-5]), method=method)


REAL = "must be a real number or an array of real numbers, got "


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(mass="0.2"), TypeError, "mass " + REAL + "str '0.2'"),
        (dict(mass=True), TypeError, "mass " + REAL + "bool True"),
        (dict(impact_velocity=3.0 + 0j), TypeError, "impact_velocity " + REAL + "complex (3+0j)"),
        (dict(stiffness=[1e8, "x"]), TypeError, "stiffness " + REAL + "list [100000000.0, 'x']"),
        (dict(exponent=None), TypeError, "exponent n " + REAL + "NoneType None"),
        (dict(restitution=np.array([0.5, 0.6], dtype=complex)), TypeError, "restitution e " + REAL + "an array of complex128"),
        (dict(mass=np.ones(2), restitution=np.full(3, 0.5)), ValueError,
         "shapes do not broadcast together: mass (2,), impact_velocity (), stiffness (), exponent (), restitution (3,)"),
        (dict(restitution=np.array([])), ValueError, "restitution must not be empty; got shape (0,)"),
        (dict(method=["exact"]), ValueError, "method must be one of ('exact', 'paper', 'improved'), got ['exact']"),
    ],
)
def test_malformed_input_is_refused_by_name(kwargs, error, message):
    args = dict(mass=0.2, impact_velocity=3.0, stiffness=1e8, exponent=1.5, restitution=0.5, method="exact")
    args.update(kwargs)
    with pytest.raises(error, match=re.escape(message)):
        di.optimal_damping(**args)


@pytest.mark.parametrize(
    "exponent, restitution, error, message",
    [
        ("1.5", 0.5, TypeError, "exponent n " + REAL + "str '1.5'"),
        (1.5, 0.5j, TypeError, "restitution e " + REAL + "complex 0.5j"),
        (np.full(2, 1.5), np.full(3, 0.5), ValueError, "shapes do not broadcast together: exponent (2,), restitution (3,)"),
        (np.array([]), 0.5, ValueError, "exponent must not be empty; got shape (0,)"),
        (1.5, 1.2, ValueError, "restitution e must be finite and in (0, 1]; got [1.2]"),
    ],
)
def test_lambda_malformed_input_is_refused_by_name(exponent, restitution, error, message):
    with pytest.raises(error, match=re.escape(message)):
        di.damping_lambda(exponent, restitution)
