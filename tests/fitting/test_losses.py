"""Robust losses and their IRLS weights against their closed forms."""

import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact  # noqa: F401  (float64)
from fitting.losses import cauchy, huber, irls_weights, loss_function, squared, weighted_residuals

Z = jnp.array([-40.0, -2.5, -0.3, 0.0, 1e-3, 0.9, 3.0])
SCALE = 1.5


def test_weighted_residuals_divide_by_sigma():
    np.testing.assert_allclose(weighted_residuals(jnp.array([2.0, -3.0]), jnp.array([0.5, 3.0])), [4.0, -1.0])


def test_huber_is_quadratic_inside_the_scale_and_linear_beyond():
    inside = np.abs(Z) <= SCALE
    np.testing.assert_allclose(huber(Z, SCALE)[inside], squared(Z)[inside])
    np.testing.assert_allclose(huber(Z, SCALE)[~inside], SCALE * (np.abs(Z[~inside]) - SCALE / 2))


def test_cauchy_matches_squared_for_small_residuals():
    small = jnp.array([1e-4, -3e-4])
    np.testing.assert_allclose(cauchy(small, SCALE), squared(small), rtol=1e-7)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("squared", lambda z: np.ones_like(z)),
        ("huber", lambda z: np.minimum(1.0, SCALE / np.abs(np.where(z == 0, 1.0, z)))),
        ("cauchy", lambda z: 1.0 / (1.0 + (z / SCALE) ** 2)),
    ],
)
def test_irls_weights_closed_forms(name, expected):
    weights = irls_weights(loss_function(name, SCALE), Z)
    np.testing.assert_allclose(weights, expected(np.asarray(Z)), rtol=1e-12)


def test_unknown_loss_and_bad_scale_raise():
    with pytest.raises(ValueError, match="loss must be one of"):
        loss_function("l1")
    with pytest.raises(ValueError, match="loss_scale"):
        loss_function("huber", 0.0)
