"""Friction laws: direction, symmetry, behaviour at zero slip, published limits, validation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact  # noqa: F401  (enables float64)
from diffimpact.contact import Alciatore, Ambrosio, Coulomb, Stribeck, Threlfall
from diffimpact.io import data_file


NORMAL_FORCE = 2.5  # N

# Each law with its slope d(magnitude)/d|v| at |v| = 0, derived by hand from its formula:
# d tanh(v/v_reg)/dv = 1/v_reg, d(1 − exp(−3v/v0))/dv = 3/v0, Ambrósio is flat below v0.
LAWS = [
    (Coulomb(0.3, regularisation_speed=1e-3), 0.3 * NORMAL_FORCE / 1e-3),
    (Threlfall(0.2, tolerance_speed=0.01), 3 * 0.2 * NORMAL_FORCE / 0.01),
    (Ambrosio(0.14, 1e-4, 1e-3), 0.0),
    (Alciatore(regularisation_speed=1e-3), (9.951e-3 + 0.108) * NORMAL_FORCE / 1e-3),
    (Stribeck(0.4, 0.25, 0.8, 0.05, 1e-3), 0.4 * NORMAL_FORCE / 1e-3 + 0.8),
]
LAW_IDS = [type(law).__name__ for law, _ in LAWS]

SLIP_VELOCITIES = [
    np.array([-0.3]),
    np.array([0.003, -0.004]),
    np.array([2.0e-4, -1.0e-4, 2.0e-4]),
    np.array([1.5, 0.0, -2.0]),
]


@pytest.mark.parametrize("law, _", LAWS, ids=LAW_IDS)
@pytest.mark.parametrize("slip_velocity", SLIP_VELOCITIES, ids=lambda v: f"{v.size}d")
def test_force_opposes_slip_with_the_law_magnitude(law, _, slip_velocity):
    force = np.asarray(law(NORMAL_FORCE, slip_velocity))
    speed = np.linalg.norm(slip_velocity)
    magnitude = float(law.magnitude(NORMAL_FORCE, speed))
    assert magnitude >= 0.0
    np.testing.assert_allclose(force, -magnitude * slip_velocity / speed, rtol=1e-12)
    # Odd symmetry: reversing the slip reverses the force.
    np.testing.assert_allclose(law(NORMAL_FORCE, -slip_velocity), -force, rtol=1e-12)


@jax.jit
def _derivatives_at_rest(law):
    at_rest = jnp.zeros(3)

    def force(model, normal_force, slip_velocity):
        return model(normal_force, slip_velocity)

    return (
        force(law, NORMAL_FORCE, at_rest),
        jax.jacfwd(force, argnums=2)(law, NORMAL_FORCE, at_rest),
        jax.jacrev(force, argnums=2)(law, NORMAL_FORCE, at_rest),
        jax.jacrev(force, argnums=(0, 1))(law, NORMAL_FORCE, at_rest),
    )


@pytest.mark.parametrize("law, slope_at_rest", LAWS, ids=LAW_IDS)
def test_zero_slip_gives_zero_force_and_the_regularised_jacobian(law, slope_at_rest):
    force, forward, reverse, other_gradients = _derivatives_at_rest(law)
    assert np.all(np.asarray(force) == 0.0)
    # F ≈ −slope · v near rest, so the Jacobian is −slope · I, the same in both AD modes.
    np.testing.assert_allclose(forward, -slope_at_rest * np.eye(3), rtol=1e-12)
    np.testing.assert_allclose(reverse, forward, rtol=1e-12)
    # F(0) = 0 whatever the law's parameters and the normal force, so its gradients with respect to them are 0.
    assert all(np.all(np.asarray(leaf) == 0.0) for leaf in jax.tree_util.tree_leaves(other_gradients))


@pytest.mark.parametrize("law, slope_at_rest", LAWS, ids=LAW_IDS)
def test_largest_slope_is_the_largest_eigenvalue_of_the_force_jacobian(law, slope_at_rest):
    # −∂F/∂v, by autodiff of the force vector, against the law's two closed-form slopes (∂magnitude/∂|v| along
    # the slip, magnitude/|v| across it), at rest and at slips below, inside and above the laws' bands
    slips = [np.array([2e-5, -1e-5, 1e-5]), np.array([2e-4, -1e-4, 2e-4]), np.array([0.003, -0.004, 0.0]),
             np.array([1.5, 0.0, -2.0])]
    jacobian = jax.jit(jax.jacfwd(lambda v: law(NORMAL_FORCE, v)))
    for slip in slips:
        largest = np.max(np.linalg.eigvalsh(-np.asarray(jacobian(slip))))
        assert float(law.largest_slope(NORMAL_FORCE, np.linalg.norm(slip))) == pytest.approx(largest, rel=1e-10)
    assert float(law.largest_slope(NORMAL_FORCE, 0.0)) == pytest.approx(slope_at_rest, rel=1e-12, abs=1e-12)


# Each law's force without its zero-slip regularisation (N), at F_N = NORMAL_FORCE, as a function of |v|.
SLIDING = [
    lambda v: 0.3 * NORMAL_FORCE,
    lambda v: 0.2 * NORMAL_FORCE,
    lambda v: 0.14 * NORMAL_FORCE,
    lambda v: (9.951e-3 + 0.108 * np.exp(-1.088 * v)) * NORMAL_FORCE,
    lambda v: (0.25 + 0.15 * np.exp(-((v / 0.05) ** 2))) * NORMAL_FORCE + 0.8 * v,
]


@pytest.mark.parametrize("law, sliding", [(law, sliding) for (law, _), sliding in zip(LAWS, SLIDING)], ids=LAW_IDS)
def test_band_is_where_the_regularisation_acts(law, sliding):
    # ``simulate``'s ``friction_steps`` makes slips cross ±band in steps: the law must leave its sliding force
    # within it (at most 0.3 of it at band/10) and have reached it (to 1 %) at 5 band.
    band = float(law.band)
    for speed, low, high in ((0.1 * band, 0.0, 0.3), (5.0 * band, 0.99, 1.0 + 1e-12)):
        ratio = float(law.magnitude(NORMAL_FORCE, speed)) / sliding(speed)
        assert low <= ratio <= high, (speed, ratio)


@pytest.mark.parametrize("law, _", LAWS, ids=LAW_IDS)
def test_a_pulling_normal_force_loads_no_friction(law, _):
    """F_N < 0 (a damped contact pulling as its bodies separate) is taken as 0: the force of an unloaded contact
    (none, or Stribeck's viscous term alone), never a push along the slip (Coulomb gave +0.2 along it at
    F_N = −1)."""
    slip = jnp.array([1.0, 0.0])
    for speed in (0.0, 1e-4, 1.0):
        np.testing.assert_array_equal(law(-1.0, speed * slip), law(0.0, speed * slip))
        assert float(law(-1.0, speed * slip) @ slip) <= 0.0
        # the formula's continuation, which simulate integrates through a separation, is linear in F_N
        np.testing.assert_allclose(law.continued(-1.0, speed * slip) + law.continued(1.0, speed * slip),
                                   2 * law.continued(0.0, speed * slip), rtol=1e-14, atol=1e-15)
    # the derivative in F_N at 0 is the law's own: d/dF_N of the loaded part, μ(|v|) tanh(...) at F_N = 1 less
    # the unloaded part
    loaded = float(law.magnitude(1.0, 1.0) - law.magnitude(0.0, 1.0))
    assert float(jax.grad(lambda f: law(f, slip)[0])(0.0)) == pytest.approx(-loaded)


def test_jacobian_in_slip_matches_finite_differences():
    law = Stribeck(0.4, 0.25, 0.8, 0.05, 1e-3)
    slip_velocity = np.array([0.02, -0.01, 0.015])
    force = jax.jit(lambda v: law(NORMAL_FORCE, v))
    jacobian = np.asarray(jax.jit(jax.jacfwd(force))(slip_velocity))
    step = 1e-7
    columns = [
        (np.asarray(force(slip_velocity + step * unit)) - np.asarray(force(slip_velocity - step * unit)))
        / (2 * step)
        for unit in np.eye(3)
    ]
    np.testing.assert_allclose(jacobian, np.stack(columns, axis=1), rtol=1e-6, atol=1e-9)


def test_coulomb_limit_well_above_the_regularisation_speed():
    law = Coulomb(0.3, regularisation_speed=1e-4)
    assert float(law.magnitude(NORMAL_FORCE, 0.5)) == pytest.approx(0.3 * NORMAL_FORCE, rel=1e-14)


def test_threlfall_build_up_and_tolerance_speed():
    law = Threlfall(0.2, tolerance_speed=0.01)
    coulomb = 0.2 * NORMAL_FORCE
    # 1 − e^{−1} of μ F_N at v0/3, 1 − e^{−3} (95 %) at v0, μ F_N above v0.
    assert float(law.magnitude(NORMAL_FORCE, 0.01 / 3)) == pytest.approx(coulomb * (1 - np.exp(-1)))
    assert float(law.magnitude(NORMAL_FORCE, 0.01)) == pytest.approx(coulomb * (1 - np.exp(-3)))
    assert float(law.magnitude(NORMAL_FORCE, 0.0101)) == pytest.approx(coulomb, rel=1e-15)


def test_ambrosio_ramp_is_continuous_and_linear():
    v0, v1 = 1e-4, 1e-3
    law = Ambrosio(0.14, v0, v1)
    coulomb = 0.14 * NORMAL_FORCE
    speeds = np.array([0.5 * v0, v0 * (1 - 1e-9), v0 * (1 + 1e-9), v0 + 0.25 * (v1 - v0),
                       v0 + 0.5 * (v1 - v0), v1 * (1 - 1e-9), v1 * (1 + 1e-9), 10 * v1])
    magnitude = np.asarray(law.magnitude(NORMAL_FORCE, speeds))
    expected = coulomb * np.array([0.0, 0.0, 0.0, 0.25, 0.5, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(magnitude, expected, atol=1e-8 * coulomb)


def test_stribeck_limits():
    static, dynamic, viscous, transition = 0.4, 0.25, 0.8, 1.0
    law = Stribeck(static, dynamic, viscous, transition, regularisation_speed=1e-7)
    # v_reg ≪ v ≪ v_s: the static level; v ≫ v_s: the dynamic level plus viscous drag.
    slow, fast = 1e-4, 10.0
    assert float(law.magnitude(NORMAL_FORCE, slow)) == pytest.approx(
        static * NORMAL_FORCE + viscous * slow, rel=1e-7
    )
    assert float(law.magnitude(NORMAL_FORCE, fast)) == pytest.approx(
        dynamic * NORMAL_FORCE + viscous * fast, rel=1e-14
    )


def test_alciatore_published_coefficients():
    # [Gismeros Moreno 2022], eq. (3.8): μ(0) = 9.951e-3 + 0.108 ≈ 0.118 and μ → 9.951e-3 at high slip.
    law = Alciatore(regularisation_speed=1e-9)
    assert float(law.magnitude(1.0, 1e-6)) == pytest.approx(0.118, abs=5e-4)
    assert float(law.magnitude(1.0, 50.0)) == pytest.approx(9.951e-3, rel=1e-12)


def test_alciatore_curve_passes_through_marlows_points():
    # TP A.14 fits a + b exp(−c v) through Marlow's three measured points (data/marlow_ball_ball_friction.csv).
    data = np.genfromtxt(data_file("marlow_ball_ball_friction.csv"), delimiter=",", names=True)
    mu = Alciatore().coefficient(data["relative_sliding_speed_m_per_s"])
    np.testing.assert_allclose(mu, data["friction_coefficient"], atol=1e-4)


@pytest.mark.parametrize("law, _", LAWS, ids=LAW_IDS)
def test_vmap_over_normal_forces(law, _):
    normal_forces = jnp.array([0.0, 0.5, 2.0, 7.0])
    slip_velocity = jnp.array([0.003, -0.002])
    batched = jax.jit(jax.vmap(law, in_axes=(0, None)))(normal_forces, slip_velocity)
    one_by_one = np.stack([np.asarray(law(f, slip_velocity)) for f in normal_forces])
    np.testing.assert_allclose(batched, one_by_one, rtol=1e-14)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: Coulomb(-0.1), "coefficient"),
        (lambda: Coulomb(0.3, regularisation_speed=0.0), "regularisation_speed"),
        (lambda: Threlfall(np.nan), "coefficient"),
        (lambda: Threlfall(0.2, tolerance_speed=-0.01), "tolerance_speed"),
        (lambda: Ambrosio(0.2, 1e-3, 1e-4), "upper_tolerance_speed - lower_tolerance_speed"),
        (lambda: Ambrosio(0.2, 0.0, 1e-4), "lower_tolerance_speed"),
        (lambda: Alciatore(regularisation_speed=-1.0), "regularisation_speed"),
        (lambda: Stribeck(0.1, 0.2, 0.0, 0.01), "static_coefficient - dynamic_coefficient"),
        (lambda: Stribeck(0.3, -0.2, 0.0, 0.01), "dynamic_coefficient"),
        (lambda: Stribeck(0.3, 0.2, -1.0, 0.01), "viscous_coefficient"),
        (lambda: Stribeck(0.3, 0.2, 0.0, 0.0), "transition_speed"),
    ],
)
def test_bad_parameters_raise(build, name):
    with pytest.raises(ValueError, match=name):
        build()


def test_traced_parameter_order_is_checked():
    magnitude = jax.jit(lambda static: Stribeck(static, 0.2, 0.0, 0.01).magnitude(1.0, 1.0))
    assert float(magnitude(0.3)) == pytest.approx(0.2)
    with pytest.raises(Exception, match="static_coefficient - dynamic_coefficient"):
        magnitude(0.1)
