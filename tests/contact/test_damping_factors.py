"""Hunt–Crossley damping factors against eq. (19), e → 1 asymptotics and the impact ODE."""

import jax
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import diffimpact  # noqa: F401  (enables float64)
from diffimpact.contact import HuntCrossley, damping_factors

APPROXIMATIONS = [
    damping_factors.hunt_crossley,
    damping_factors.lankarani_nikravesh,
    damping_factors.hu_guo,
    damping_factors.flores,
]

# Compilation dominates: μ and dμ/de of the exact factor are compiled once each,
# batched over a fixed number of cases.
BATCH = 5
exact_batched = jax.jit(jax.vmap(damping_factors.exact))
exact_restitution_gradient = jax.jit(jax.vmap(jax.grad(damping_factors.exact, argnums=1)))


def _batched(function, stiffness, restitution, impact_velocity):
    arrays = np.broadcast_arrays(stiffness, restitution, impact_velocity)
    count = arrays[0].size
    assert count <= BATCH
    padded = [np.resize(np.ravel(array).astype(float), BATCH) for array in arrays]
    return np.asarray(function(*padded))[:count]


def _exact(stiffness, restitution, impact_velocity):
    return _batched(exact_batched, stiffness, restitution, impact_velocity)


def test_exact_root_satisfies_eq_19():
    restitution = np.array([0.2, 0.5, 0.9, 0.99])
    stiffness, impact_velocity = 3.0e5, 1.7
    d = _exact(stiffness, restitution, impact_velocity) * restitution * impact_velocity / stiffness
    assert np.all((d > 0) & (d < 1))
    residual = np.log1p(d / restitution) - np.log1p(-d) - d * (1 + 1 / restitution)
    np.testing.assert_allclose(residual, 0.0, atol=1e-12)


@pytest.mark.parametrize("restitution", [1 / 45, 1e-3, 1e-150, 1e-300])
def test_exact_at_small_restitution_is_the_full_deficit(restitution):
    """d → 1 as e → 0 (eq. (19)): 1 − d ≈ (1 + 1/e) exp(−(1 + 1/e)) is below 1e-18 from e = 1/45 down, so
    μ = k/(e v) exactly in double precision (e = 1e-300 failed in the bisection's bracket). Beside it, the root
    at e just above the threshold is 1 − d = 46 exp(−46) below 1: the same μ to 1e-15."""
    k, v = 1e8, 3.0
    assert float(damping_factors.exact(k, restitution, v)) == pytest.approx(k / (restitution * v), rel=1e-15)
    above = 1 / 45 * (1 + 1e-12)
    assert float(damping_factors.exact(k, above, v)) == pytest.approx(k / (above * v), rel=1e-15)


def test_exact_is_zero_at_perfect_restitution():
    assert _exact(1.0e6, 1.0, 2.0)[0] == 0.0


def test_e_to_one_asymptotics():
    # With e = 1 − ε, eq. (19) divided by d² is
    #   g(d) = Σ_{k≥2} [1 + (−1)^{k+1} e^{−k}] d^{k−2}/k = 0
    # (the k = 1 terms cancel). Expanding e^{−k} = (1 − ε)^{−k} = 1 + kε + k(k+1)ε²/2 + ...:
    #   k = 2: −ε − 3ε²/2 − 2ε³,   k = 3: (2/3 + ε + 2ε²) d,
    #   k = 4: (−ε − 5ε²/2) d²,    k = 5: (2/5 + ε) d³.
    # Inserting d = aε + bε² + cε³ and collecting orders:
    #   ε:  −1 + 2a/3 = 0                              → a = 3/2
    #   ε²: −3/2 + 2b/3 + a = 0                        → b = 0
    #   ε³: −2 + 2c/3 + 2a − a² + (2/5)a³ = 0           → c = −3/20
    # so d = 3ε/2 − 3ε³/20 and, by eq. (18), μ v/k = d/e = 3ε/2 + 3ε²/2 + 27ε³/20 + O(ε⁴).
    # Eqs. (13)–(16) in the same variable: 3ε/2 (HC), 3ε/2 − 3ε²/4 (LN),
    # 3ε/(2e) = 3ε/2 + 3ε²/2 + 3ε³/2 (Hu–Guo), 8ε/(5e) = 8ε/5 + ... (Flores).
    # HC, LN and Hu–Guo agree with the exact factor to leading order (Hu–Guo to second
    # order); Flores does not.
    stiffness, impact_velocity = 2.0e7, 0.8
    scale = stiffness / impact_velocity
    epsilon = np.array([1e-2, 1e-3])
    restitution = 1.0 - epsilon
    exact = _exact(stiffness, restitution, impact_velocity) / scale

    remainder = (exact - (1.5 * epsilon + 1.5 * epsilon**2 + 1.35 * epsilon**3)) / epsilon**4
    assert np.all(np.abs(remainder) < 2.0)
    np.testing.assert_allclose(remainder[0], remainder[1], rtol=0.1)  # an O(ε⁴) remainder

    def approximation(law):
        return np.asarray(law(stiffness, restitution, impact_velocity)) / scale

    hunt_crossley, lankarani_nikravesh, hu_guo, flores = map(approximation, APPROXIMATIONS)
    assert np.all(np.abs((hunt_crossley - exact) / epsilon**2 + 1.5) < 3 * epsilon)
    assert np.all(np.abs((lankarani_nikravesh - exact) / epsilon**2 + 2.25) < 3 * epsilon)
    assert np.all(np.abs((hu_guo - exact) / epsilon**3 - 0.15) < 3 * epsilon)
    assert np.all(np.abs(flores / exact - 16 / 15) < epsilon)


def _restitution_from_ode(mass, stiffness, exponent, hysteresis, impact_velocity):
    """Integrate m δ̈ + (μ δ̇ + k) δ^n = 0 ([Poursina 2020], eq. (10)) until δ returns to 0."""

    def rhs(_, state):
        penetration, rate = state
        power = np.sign(penetration) * np.abs(penetration) ** exponent
        return [rate, -(hysteresis * rate + stiffness) * power / mass]

    def separation(_, state):
        return state[0]

    separation.terminal = True
    separation.direction = -1.0
    solution = solve_ivp(
        rhs,
        (0.0, 10.0),
        [0.0, impact_velocity],
        method="DOP853",
        rtol=1e-12,
        atol=1e-20,
        events=separation,
    )
    assert solution.status == 1, "no separation"
    return -solution.y_events[0][0, 1] / impact_velocity


@pytest.mark.parametrize("exponent", [1.0, 1.5])
def test_exact_reproduces_restitution_in_the_impact_ode(exponent):
    mass, stiffness, impact_velocity = 0.17, 4.0e4, 1.3
    restitution = np.array([0.2, 0.5, 0.9])
    hysteresis = _exact(stiffness, restitution, impact_velocity)
    for target, mu in zip(restitution, hysteresis):
        outgoing = _restitution_from_ode(mass, stiffness, exponent, mu, impact_velocity)
        assert abs(outgoing - target) < 1e-7


@pytest.mark.parametrize("law", APPROXIMATIONS)
def test_approximate_factors_miss_the_restitution(law):
    mass, stiffness, impact_velocity, restitution = 0.17, 4.0e4, 1.3, 0.5
    mu = float(law(stiffness, restitution, impact_velocity))
    outgoing = _restitution_from_ode(mass, stiffness, 1.5, mu, impact_velocity)
    assert abs(outgoing - restitution) > 1e-3


def test_lankarani_nikravesh_law_is_accurate_only_near_one():
    # The LN μ differs from the exact one by 9ε²/4 (see the asymptotics above),
    # a restitution error of order ε², small at e = 0.99 only.
    mass, impact_velocity = 0.17, 1.3
    errors = []
    for restitution in (0.99, 0.5):
        law = damping_factors.lankarani_nikravesh_law(4.0e4, restitution, impact_velocity)
        assert isinstance(law, HuntCrossley)
        assert float(law.exponent) == 1.5
        outgoing = _restitution_from_ode(
            mass, float(law.stiffness), 1.5, float(law.hysteresis), impact_velocity
        )
        errors.append(abs(outgoing - restitution))
    assert errors[0] < 1e-3 < errors[1]


def test_exact_gradient_matches_finite_differences_and_both_limits():
    stiffness, impact_velocity, step = 5.0e5, 2.0, 1e-6
    restitution = np.array([0.3, 0.7, 0.95, 1.0, 1e-8])
    gradient = _batched(exact_restitution_gradient, stiffness, restitution, impact_velocity)
    inside = restitution[:3]
    upper = _exact(stiffness, inside + step, impact_velocity)
    lower = _exact(stiffness, inside - step, impact_velocity)
    np.testing.assert_allclose(gradient[:3], (upper - lower) / (2 * step), rtol=1e-6)
    # From μ v/k = 3ε/2 + O(ε²): dμ/de = −3k/(2v) at e = 1, finite and not NaN.
    np.testing.assert_allclose(gradient[3], -1.5 * stiffness / impact_velocity, rtol=1e-12)
    # As e → 0, 1 − d ≈ (1 + 1/e) exp(−1 − 1/e) vanishes, so μ → k/(e v): dμ/de → −k/(e² v).
    np.testing.assert_allclose(gradient[4], -stiffness / (1e-8**2 * impact_velocity), rtol=1e-12)


@pytest.mark.parametrize("law", APPROXIMATIONS + [damping_factors.exact])
@pytest.mark.parametrize(
    "arguments, name",
    [
        ((-1.0, 0.5, 1.0), "stiffness"),
        ((1.0, 0.0, 1.0), "restitution"),
        ((1.0, 1.2, 1.0), "restitution"),
        ((1.0, np.nan, 1.0), "restitution"),
        ((1.0, 0.5, 0.0), "impact_velocity"),
    ],
)
def test_bad_input_raises(law, arguments, name):
    with pytest.raises(ValueError, match=name):
        law(*arguments)
