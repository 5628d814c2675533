"""The central-impact solver against closed forms, identities of [Poursina 2020] and finite differences."""

import math
import re

import diffrax as dfx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact as di
from diffimpact.contact import Hertz, HertzLinearDamper, HuntCrossley, KelvinVoigt
from diffimpact.contact.damping_factors import exact as exact_hysteresis
from diffimpact.impact.kelvin_voigt import kelvin_voigt_restitution, kelvin_voigt_separation_time


@pytest.fixture(scope="module")
def hld_restitution():
    """e_out(c, k, n, m, v) of the Hertz + linear damper law, jitted once."""
    return jax.jit(lambda c, k, n, m, v: di.central_impact(HertzLinearDamper(k, n, c), m, v).restitution)


@pytest.mark.parametrize("damping_ratio", [0.1, 0.5, 0.7071, 0.95, 1.0, 1.3, 4.0])
def test_kelvin_voigt_matches_closed_form(damping_ratio):
    # Both branches of [Poursina 2020] eq. (55) (corrected over-damped branch), m = 2 kg, k = 3e4 N/m.
    m, k = 2.0, 3e4
    c = damping_ratio * 2 * math.sqrt(k * m)
    result = di.central_impact(KelvinVoigt(k, c), m, 1.5)
    assert abs(float(result.restitution) - float(kelvin_voigt_restitution(damping_ratio))) < 1e-9


@pytest.mark.parametrize("exponent", [1.0, 1.5, 2.0])
def test_hertz_is_elastic_with_closed_form_penetration_and_duration(exponent):
    m, v, k = 0.17, 2.0, 1e8
    result = di.central_impact(Hertz(k, exponent), m, v)
    # eq. (27): maximum penetration of the undamped Hertz contact.
    delta_max = ((exponent + 1) * m * v**2 / (2 * k)) ** (1 / (exponent + 1))
    # Duration from energy conservation (eq. (26)): 2 δm/v ∫0^1 (1 − u^p)^(−1/2) du, p = n + 1.
    p = exponent + 1
    integral = math.gamma(1 + 1 / p) * math.gamma(0.5) / math.gamma(1 / p + 0.5)
    assert abs(float(result.restitution) - 1) < 1e-8
    assert float(result.max_penetration) == pytest.approx(delta_max, rel=1e-9)
    assert float(result.contact_duration) == pytest.approx(2 * delta_max / v * integral, rel=1e-8)
    assert abs(float(result.separation_penetration)) < 1e-12 * delta_max


def test_zero_force_separation_penetration_is_eq_51():
    m, v, k, n, c = 1.3, 0.7, 5e6, 1.5, 40.0
    result = di.central_impact(HertzLinearDamper(k, n, c), m, v, history=200)
    e = float(result.restitution)
    # eq. (51): at separation c ˢδ̇ + k ˢδ^n = 0 with ˢδ̇ = −e v.
    assert float(result.separation_penetration) == pytest.approx((v * c * e / k) ** (1 / n), rel=1e-8)
    assert 0 < float(result.separation_penetration) < float(result.max_penetration)
    # History: starts at (0, v), ends at separation with zero force; the force never pulls.
    assert float(result.penetration[0]) == 0 and float(result.penetration_rate[0]) == pytest.approx(v)
    assert abs(float(result.force[-1])) < 1e-8 * float(result.force.max())
    assert float(result.force.min()) > -1e-8 * float(result.force.max())


def test_energy_balance_eq_12():
    m, v, k, n, c = 1.0, 1.0, 1.0, 1.5, 0.4
    result = di.central_impact(HertzLinearDamper(k, n, c), m, v, history=4001)
    # ½ m v² (1 − e²) = ∮ f dδ = ∫ f δ̇ dt over the contact.
    power = np.asarray(result.force * result.penetration_rate)
    t = np.asarray(result.time)
    work = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t))
    loss = 0.5 * m * v**2 * (1 - float(result.restitution) ** 2)
    assert work == pytest.approx(loss, rel=1e-5)


def test_hunt_crossley_with_exact_factor_reproduces_restitution():
    m, v, k, n = 0.5, 3.0, 1e7, 1.5
    for e in (0.3, 0.8):
        law = HuntCrossley(k, n, exact_hysteresis(k, e, v))
        assert float(di.central_impact(law, m, v).restitution) == pytest.approx(e, rel=1e-8)


POINT = [0.3, 2.0, 1.4, 0.8, 1.7]  # c, k, n, m, v


@pytest.fixture(scope="module")
def hld_gradient(hld_restitution):
    return jax.grad(hld_restitution, argnums=(0, 1, 2, 3, 4))(*POINT)


@pytest.mark.parametrize("argnum", range(5))
def test_gradient_matches_central_differences(hld_restitution, hld_gradient, argnum, central_difference):
    grad = float(hld_gradient[argnum])
    fd = central_difference(hld_restitution, POINT, argnum)
    assert grad == pytest.approx(fd, rel=1e-6)


def test_forward_mode_adjoint_gives_the_same_derivative(hld_gradient):
    fwd = jax.jacfwd(
        lambda c: di.central_impact(HertzLinearDamper(2.0, 1.4, c), 0.8, 1.7, adjoint=dfx.ForwardMode()).restitution
    )(0.3)
    assert float(fwd) == pytest.approx(float(hld_gradient[0]), rel=1e-9)


def test_broadcasting_over_parameters(hld_restitution):
    stiffness = jnp.array([1.0, 10.0, 100.0])
    mass = jnp.array([[1.0], [2.0]])
    result = di.central_impact(HertzLinearDamper(stiffness, 1.5, 0.3), mass, 1.0)
    assert result.restitution.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            single = hld_restitution(0.3, stiffness[j], 1.5, mass[i, 0], 1.0)
            assert float(result.restitution[i, j]) == pytest.approx(float(single), rel=1e-12)


def test_heavily_over_damped_kelvin_voigt_matches_closed_form():
    # Damping ratios far above critical, down to e = 2.5e-21, and the tester's KelvinVoigt(1e6, 1e7), m = 0.2 kg,
    # v = 3 m/s (ξ = 1.1e4). The body is stopped within ≈ m v/c and separates at zero force with the creep speed.
    k = np.array([3e4, 3e4, 3e4, 3e4, 1e6])
    m = np.array([2.0, 2.0, 2.0, 2.0, 0.2])
    xi = np.array([10.0, 1e3, 1e6, 1e10, 1e7 / (2 * math.sqrt(1e6 * 0.2))])
    result = di.central_impact(KelvinVoigt(k, xi * 2 * np.sqrt(k * m)), m, np.array([1.5, 1.5, 1.5, 1.5, 3.0]))
    assert bool(np.all(result.separated))
    np.testing.assert_allclose(result.restitution, kelvin_voigt_restitution(xi), rtol=1e-10)
    np.testing.assert_allclose(result.contact_duration, kelvin_voigt_separation_time(xi, k, m), rtol=1e-10)


# Hertz + linear damper far above critical (k, n, c, m, v): the tester's c = 1e9 N s/m at m = 0.2 kg, and m = 1e-9 kg.
HEAVY = np.array([[1e8, 1.5, 1e9, 0.2, 3.0], [1e8, 1.5, 1e3, 1e-9, 3.0], [1.0, 1.0, 1e6, 1.0, 1.0], [1.0, 2.0, 1e5, 1.0, 1.0]])


def heavy_impact(rows):
    k, n, c, m, v = rows.T
    return di.central_impact(HertzLinearDamper(k, n, c), m, v)


def test_heavily_damped_hertz_separates_at_the_creep_speed():
    # In units of the damping time m/c and length m v/c, x'' + x' + ε x^n = 0 with ε = k m^n v^(n−1)/c^(n+1):
    # x stops at 1 − O(ε ln 1/ε) and creeps back at x' = −ε x^n until the force vanishes (eq. (20)), when x'' = 0.
    # So e = ε x_s^n with x_s = 1 − O(ε ln(1/ε)): e/ε → 1, and ˢδ → m v/c.
    k, n, c, m, v = HEAVY.T
    eps = k * m**n * v ** (n - 1) / c ** (n + 1)
    result = heavy_impact(HEAVY)
    assert bool(np.all(result.separated))
    deficit = 1 - np.asarray(result.restitution) / eps
    assert np.all((deficit > 0) & (deficit < 3 * n * eps * np.log(1 / eps)))
    np.testing.assert_allclose(result.max_penetration, m * v / c, rtol=1e-10)
    # eq. (51): c ˢδ̇ + k ˢδ^n = 0 with ˢδ̇ = −e v.
    np.testing.assert_allclose(result.separation_penetration, (v * c * result.restitution / k) ** (1 / n), rtol=1e-10)


def test_unresolvable_rebound_is_an_error_naming_what_to_change(hld_restitution):
    # e = c^−2 = 1e-90 for m = v = k = 1, n = 1: below what MAX_STEPS resolves.
    rows = HEAVY.copy()
    rows[2] = [1.0, 1.0, 1e45, 1.0, 1.0]
    message = (
        r"central_impact found no separation within 4096 solver steps per phase for 1 of 4 impacts \(first at index "
        r"\(2,\)\): the rebound is too slow to resolve \(restitution below about 1e-75, i.e. damping far above "
        r"critical\) or the law never lets go; reduce the law's damping, or call under jax.jit to get NaN with "
        r"separated=False instead"
    )
    with pytest.raises(ValueError, match=message):
        heavy_impact(rows)
    # Under jit: NaN, as documented.
    assert math.isnan(float(hld_restitution(1e45, 1.0, 1.0, 1.0, 1.0)))


@pytest.mark.parametrize(
    "mass, velocity, name", [(0.0, 1.0, "mass"), (-1.0, 1.0, "mass"), (1.0, float("nan"), "impact_velocity")]
)
def test_bad_input_names_the_parameter(mass, velocity, name):
    with pytest.raises(ValueError, match=name):
        di.central_impact(Hertz(1.0), mass, velocity)


REAL = "must be a real number or an array of real numbers, got "


@pytest.mark.parametrize(
    "law, mass, velocity, error, message",
    [
        (Hertz(1e8), True, 3.0, TypeError, "mass " + REAL + "bool True"),
        (Hertz(1e8), "0.2", 3.0, TypeError, "mass " + REAL + "str '0.2'"),
        (Hertz(1e8), 0.2, 3.0 + 1j, TypeError, "impact_velocity " + REAL + "complex (3+1j)"),
        (Hertz(np.full(2, 1e8)), np.full(3, 0.2), 3.0, ValueError,
         "shapes do not broadcast together: law.stiffness (2,), law.exponent (), mass (3,), impact_velocity ()"),
        (Hertz(1e8), 0.2, np.array([]), ValueError, "impact_velocity must not be empty; got shape (0,)"),
    ],
)
def test_malformed_input_is_refused_by_name(law, mass, velocity, error, message):
    with pytest.raises(error, match=re.escape(message)):
        di.central_impact(law, mass, velocity)


@pytest.mark.parametrize(
    "history, error, message",
    [(True, TypeError, "history must be an int >= 0, got bool True"),
     (5.0, TypeError, "history must be an int >= 0, got float 5.0"),
     (-1, ValueError, "history must be an int >= 0, got -1")],
)
def test_bad_history_is_refused(history, error, message):
    with pytest.raises(error, match=re.escape(message)):
        di.central_impact(Hertz(1.0), 1.0, 1.0, history=history)


def test_numpy_integer_history_is_an_int():
    # Same call as test_zero_force_separation_penetration_is_eq_51 (shares its compilation).
    law = HertzLinearDamper(5e6, 1.5, 40.0)
    result = di.central_impact(law, 1.3, 0.7, history=np.int64(200))
    assert result.penetration.shape == (200,)
    np.testing.assert_array_equal(result.force, di.central_impact(law, 1.3, 0.7, history=200).force)


def test_bad_input_under_jit_raises_at_run_time():
    with pytest.raises(Exception, match="mass"):
        jax.jit(lambda m: di.central_impact(Hertz(1.0), m, 1.0).restitution)(-1.0).block_until_ready()


def test_law_type_is_checked():
    with pytest.raises(TypeError, match="NormalForceLaw"):
        di.central_impact(lambda d, v: d, 1.0, 1.0)


def test_hunt_crossley_gradient_matches_the_exact_relation_of_eq_19():
    # For Hunt–Crossley, e depends on μv/k only (eqs. (18)–(19)); the implicit derivative of the
    # exact factor gives de/dμ independently of the ODE solve. δ^n is not smooth where this law
    # separates (δ = 0), which limits the solve's gradient to 3.4e-6 here at the default tolerances.
    m, v, k, n, e = 0.2, 3.0, 1e8, 1.5, 0.5
    mu = float(exact_hysteresis(k, e, v))
    de_dmu_exact = 1.0 / float(jax.grad(exact_hysteresis, argnums=1)(k, e, v))
    restitution = lambda hysteresis: di.central_impact(HuntCrossley(k, n, hysteresis), m, v).restitution  # noqa: E731
    assert float(restitution(mu)) == pytest.approx(e, rel=1e-8)
    assert float(jax.grad(restitution)(mu)) == pytest.approx(de_dmu_exact, rel=1e-5)
