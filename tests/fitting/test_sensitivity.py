"""Jacobians and normalised sensitivities against closed forms and finite differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact  # noqa: F401  (float64)
from fitting import impact_stiffness
from fitting.sensitivity import check_against_finite_differences, jacobian, normalised_sensitivity


class PowerLaw(eqx.Module):
    coefficient: jnp.ndarray
    power: jnp.ndarray


X = jnp.array([0.5, 2.0, 7.0])


def _power_law_in_x(params):
    return params.coefficient * X**params.power


def _power_law_in_p(params):
    return 3.0 * params.power ** jnp.array([0.5, -1.2, 2.0])


def test_normalised_sensitivity_of_a_power_law_is_its_exponent():
    params = PowerLaw(2.5, 1.7)
    # y = a p^b with p the fitted parameter: ∂ln y/∂ln p = b for every output.
    np.testing.assert_allclose(normalised_sensitivity(_power_law_in_p, params, ["power"])[:, 0], [0.5, -1.2, 2.0])
    # and ∂ln y/∂ln a = 1 for a coefficient.
    np.testing.assert_allclose(normalised_sensitivity(_power_law_in_x, params, ["coefficient"])[:, 0], 1.0)


def test_jacobian_shape_and_values():
    params = PowerLaw(2.5, 1.7)
    result = jacobian(_power_law_in_x, params, ["coefficient", "power"], mode="fwd")
    assert result.shape == (3, 2)
    np.testing.assert_allclose(result[:, 1], 2.5 * X**1.7 * jnp.log(X))


@jax.custom_jvp
def _wrong_square(x):
    return x**2


_wrong_square.defjvp(lambda primals, tangents: (primals[0] ** 2, 3.0 * primals[0] * tangents[0]))


def test_finite_difference_check_detects_a_wrong_derivative():
    params = PowerLaw(2.5, 1.7)
    assert check_against_finite_differences(_power_law_in_x, params, ["coefficient", "power"]) < 1e-7
    wrong = check_against_finite_differences(lambda p: _wrong_square(p.power) * X, params, ["power"])
    assert wrong == pytest.approx(0.5, rel=1e-6)


def test_impact_jacobian_matches_central_differences():
    # Contact duration and restitution of the impact-stiffness study with respect to k and e.
    discrepancy = check_against_finite_differences(
        impact_stiffness.duration_and_restitution, impact_stiffness.TRUTH, ["stiffness", "restitution"], mode="fwd",
        relative_step=1e-5,
    )
    assert discrepancy < 1e-5


def test_unknown_mode_raises():
    with pytest.raises(ValueError, match="mode must be one of"):
        jacobian(_power_law_in_x, PowerLaw(1.0, 1.0), ["power"], mode="central")
