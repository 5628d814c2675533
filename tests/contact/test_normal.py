"""Normal force laws: formulas, contact logic, limits, gradients at contact onset, validation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import quad

import diffimpact  # noqa: F401  (enables float64)
from diffimpact.contact import Hertz, HertzLinearDamper, HuntCrossley, KelvinVoigt

STIFFNESS, EXPONENT, DAMPING, HYSTERESIS = 2.0e6, 1.5, 40.0, 0.6

# Each law with its formula written independently in NumPy ([Poursina 2020] eqs. (54), (6), (7), (9)).
LAWS = [
    (KelvinVoigt(STIFFNESS, DAMPING), lambda d, r: STIFFNESS * d + DAMPING * r),
    (Hertz(STIFFNESS, EXPONENT), lambda d, r: STIFFNESS * d**EXPONENT),
    (
        HertzLinearDamper(STIFFNESS, EXPONENT, DAMPING),
        lambda d, r: DAMPING * r + STIFFNESS * d**EXPONENT,
    ),
    (
        HuntCrossley(STIFFNESS, EXPONENT, HYSTERESIS),
        lambda d, r: (HYSTERESIS * r + STIFFNESS) * d**EXPONENT,
    ),
]
LAW_IDS = [type(law).__name__ for law, _ in LAWS]

# A grid through separation: penetrations of both signs, compression and restitution rates.
PENETRATION, RATE = np.meshgrid(np.linspace(-1e-3, 1e-3, 9), np.linspace(-5.0, 5.0, 7))


@pytest.mark.parametrize("law, formula", LAWS, ids=LAW_IDS)
def test_force_matches_the_published_formula(law, formula):
    penetration = np.array([1e-6, 3e-5, 4e-4, 2e-3])
    rate = np.array([-2.0, 0.5, 3.0, -0.1])
    np.testing.assert_allclose(law.force(penetration, rate), formula(penetration, rate), rtol=1e-13)


@pytest.mark.parametrize("law, formula", LAWS, ids=LAW_IDS)
def test_contact_force_is_compressive_and_vanishes_out_of_contact(law, formula):
    contact = np.asarray(law(PENETRATION, RATE))
    assert np.all(contact >= 0.0)
    assert np.all(contact[PENETRATION <= 0] == 0.0)
    inside = PENETRATION > 0
    expected = np.maximum(formula(PENETRATION[inside], RATE[inside]), 0.0)
    np.testing.assert_allclose(contact[inside], expected, rtol=1e-13)


def test_odd_continuation_for_negative_penetration():
    law = Hertz(STIFFNESS, EXPONENT)
    penetration = np.array([1e-5, 2e-4])
    np.testing.assert_allclose(law.force(-penetration, 0.0), -law.force(penetration, 0.0), rtol=1e-15)


def test_special_cases_reduce_to_simpler_laws():
    hunt_crossley = HuntCrossley(STIFFNESS, EXPONENT, 0.0)
    np.testing.assert_allclose(
        hunt_crossley(PENETRATION, RATE), Hertz(STIFFNESS, EXPONENT)(PENETRATION, RATE), rtol=1e-15
    )
    linear_damper = HertzLinearDamper(STIFFNESS, 1.0, DAMPING)
    np.testing.assert_allclose(
        linear_damper(PENETRATION, RATE), KelvinVoigt(STIFFNESS, DAMPING)(PENETRATION, RATE), rtol=1e-15
    )


def _hunt_crossley_force(penetration, rate, stiffness, exponent, *, clipped):
    law = HuntCrossley(stiffness, exponent, HYSTERESIS)
    return law(penetration, rate) if clipped else law.force(penetration, rate)


@jax.jit
def _gradients(penetration, rate):
    """Gradients of the contact force and of the formula w.r.t. δ, δ̇, k and n."""
    return [
        jax.grad(_hunt_crossley_force, argnums=(0, 1, 2, 3))(
            penetration, rate, STIFFNESS, EXPONENT, clipped=clipped
        )
        for clipped in (True, False)
    ]


@pytest.mark.parametrize("rate", [-1.0, 0.0, 2.0])
def test_gradients_at_contact_onset_are_finite_and_zero(rate):
    # With n > 1 the force (μ δ̇ + k) δ^n and all its first derivatives vanish at δ = 0.
    for gradients in _gradients(0.0, rate):
        np.testing.assert_array_equal(np.asarray(gradients), 0.0)


def test_gradients_inside_contact_match_finite_differences():
    point = np.array([2e-4, -0.7, STIFFNESS, EXPONENT])
    gradients = np.asarray(_gradients(point[0], point[1])[0])
    # The force is linear in δ̇, so a large step there avoids cancellation against k δ^n.
    steps = np.abs(point) * np.array([1e-6, 1e-2, 1e-6, 1e-6])
    for index, step in enumerate(steps):
        shift = np.zeros(4)
        shift[index] = step
        upper = _hunt_crossley_force(*(point + shift), clipped=True)
        lower = _hunt_crossley_force(*(point - shift), clipped=True)
        np.testing.assert_allclose(gradients[index], (upper - lower) / (2 * step), rtol=1e-7)


def test_jit_and_vmap_over_stiffness():
    stiffness = jnp.array([1e3, 1e6, 1e9])
    penetration, rate = 2e-4, -0.3
    batched = jax.jit(
        jax.vmap(lambda k: HuntCrossley(k, EXPONENT, HYSTERESIS)(penetration, rate))
    )(stiffness)
    expected = (HYSTERESIS * rate + np.asarray(stiffness)) * penetration**EXPONENT
    np.testing.assert_allclose(batched, expected, rtol=1e-14)


@pytest.mark.parametrize("exponent", [1.0, 1.5, 2.0])
def test_hertz_work_integral(exponent):
    # Energy stored at maximum penetration δ_m: ∫_0^δm k δ^n dδ = k δm^{n+1}/(n+1).
    law = Hertz(STIFFNESS, exponent)
    force = jax.jit(lambda d: law(d, 0.0))
    maximum_penetration = 3e-4
    work, _ = quad(lambda d: float(force(d)), 0.0, maximum_penetration, epsabs=0.0, epsrel=1e-12)
    expected = STIFFNESS * maximum_penetration ** (exponent + 1) / (exponent + 1)
    np.testing.assert_allclose(work, expected, rtol=1e-10)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: KelvinVoigt(0.0, DAMPING), "stiffness"),
        (lambda: KelvinVoigt(STIFFNESS, -1.0), "damping"),
        (lambda: Hertz(-STIFFNESS), "stiffness"),
        (lambda: Hertz(np.nan), "stiffness"),
        (lambda: Hertz(STIFFNESS, 0.0), "exponent"),
        (lambda: HertzLinearDamper(STIFFNESS, EXPONENT, -DAMPING), "damping"),
        (lambda: HertzLinearDamper(STIFFNESS, np.nan, DAMPING), "exponent"),
        (lambda: HuntCrossley(np.inf, EXPONENT, HYSTERESIS), "stiffness"),
        (lambda: HuntCrossley(STIFFNESS, EXPONENT, -HYSTERESIS), "hysteresis"),
    ],
)
def test_bad_parameters_raise(build, name):
    with pytest.raises(ValueError, match=name):
        build()


def test_traced_negative_stiffness_raises():
    force = jax.jit(lambda k: Hertz(k, EXPONENT)(1e-4, 0.0))
    assert float(force(STIFFNESS)) > 0
    with pytest.raises(Exception, match="stiffness"):
        force(-STIFFNESS)


@pytest.mark.parametrize("exponent", [0.8, 1.0, 1.5])
def test_free_surface_solves_the_law_without_the_body(exponent):
    """x_s(τ) of ``free_surface`` against SciPy's integration of c ẋ + k xⁿ = 0 (f = 0 after separation)."""
    from scipy.integrate import solve_ivp

    from diffimpact.contact.normal import free_surface

    law = HertzLinearDamper(STIFFNESS, exponent, DAMPING)
    residual = 2e-4
    rate_constant = STIFFNESS / DAMPING * residual ** (exponent - 1.0)  # 1/s; flat after 5/r for n = 0.8
    times = np.linspace(0.0, 8.0 / rate_constant, 41)
    reference = solve_ivp(
        lambda t, x: -STIFFNESS / DAMPING * np.maximum(x, 0.0) ** exponent,
        (0.0, times[-1]), [residual], t_eval=times, rtol=1e-12, atol=1e-18,
    ).y[0]
    surface, rate = jax.vmap(lambda t: free_surface(law, residual, t))(jnp.asarray(times))
    np.testing.assert_allclose(np.asarray(surface), np.maximum(reference, 0.0), rtol=1e-8, atol=1e-14)
    # the zone deforms at ẋ = −(k/c) xⁿ, and the law's force on it vanishes
    np.testing.assert_allclose(np.asarray(law.force(surface, rate)), 0.0, atol=1e-9)
    assert float(surface[-1]) < 0.2 * residual  # it has recovered over the window
    # no residual, or a law that separates at δ = 0: flat at once
    assert float(free_surface(law, 0.0, 1e-4)[0]) == 0.0
    assert float(free_surface(Hertz(STIFFNESS, exponent), residual, 1e-4)[0]) == 0.0
