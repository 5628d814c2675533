"""Repeated fits of one problem structure reuse the compiled step of ``fitting.fit``."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import diffimpact  # noqa: F401  (float64)
from fitting.fit import fit
from fitting.parameters import Free, Positive

TRACES = []
TIMES = np.linspace(0.0, 2.0, 25)


class Decay(eqx.Module):
    amplitude: jnp.ndarray
    rate: jnp.ndarray


def _residuals(data, params):
    TRACES.append(1)  # Python side effect: runs only while JAX traces
    return params.amplitude * jnp.exp(-params.rate * TIMES) - data


def _data(seed, amplitude=2.0, rate=1.3):
    return amplitude * np.exp(-rate * TIMES) + 0.01 * np.random.default_rng(seed).normal(size=TIMES.size)


def test_same_structure_with_new_data_start_and_sigma_is_not_traced_again():
    spec = {"amplitude": Free(), "rate": Positive()}
    first = fit(eqx.Partial(_residuals, _data(0)), Decay(1.0, 1.0), spec, sigma=0.01, progress=False)
    traced = len(TRACES)
    assert traced > 0
    second = fit(eqx.Partial(_residuals, _data(1, 3.0, 0.7)), Decay(2.5, 0.5), spec, sigma=0.02, progress=False)
    # The residual shape check traces once more; the step (with its Jacobian and optimiser) is not recompiled.
    assert len(TRACES) - traced <= 1
    np.testing.assert_allclose(first.values, [2.0, 1.3], rtol=0.02)
    np.testing.assert_allclose(second.values, [3.0, 0.7], rtol=0.02)
    # A different structure (another transform) compiles its own step and still fits.
    third = fit(eqx.Partial(_residuals, _data(2)), Decay(1.0, 1.0), {"amplitude": Positive(), "rate": Positive()},
                sigma=0.01, progress=False)
    np.testing.assert_allclose(third.values, [2.0, 1.3], rtol=0.02)
