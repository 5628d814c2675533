"""The fit loop, its covariance and the robust losses on problems with known answers."""

import json
import warnings

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import diffimpact  # noqa: F401  (float64)
from fitting.fit import convergence_warnings, fit, gauss_newton_covariance, levenberg_marquardt
from fitting.parameters import Bounded, Free, Positive


class Line(eqx.Module):
    intercept: jnp.ndarray
    slope: jnp.ndarray


class Decay(eqx.Module):
    amplitude: jnp.ndarray
    rate: jnp.ndarray


LINE_SPEC = {"intercept": Free(), "slope": Free()}
X = np.linspace(0.0, 1.0, 30)
LINE_SIGMA = 0.05 + 0.1 * X  # m, per point
LINE_TRUTH = np.array([0.3, 1.7])
LINE_DATA = LINE_TRUTH[0] + LINE_TRUTH[1] * X + LINE_SIGMA * np.random.default_rng(1).normal(size=X.size)


def _line_residuals(data):
    return lambda p: p.intercept + p.slope * X - data


def _fit_line(data, **options):
    return fit(_line_residuals(data), Line(0.0, 0.0), LINE_SPEC, sigma=LINE_SIGMA, progress=False, **options)


@pytest.fixture(scope="module")
def line_fits():
    return {scaling: _fit_line(LINE_DATA, optimizer=optax.lbfgs(), absolute_sigma=scaling) for scaling in (True, False)}


def test_linear_fit_and_covariance_equal_the_closed_form(line_fits):
    design = np.column_stack([np.ones_like(X), X])
    weight = np.diag(LINE_SIGMA**-2)
    covariance = np.linalg.inv(design.T @ weight @ design)
    estimate = covariance @ design.T @ weight @ LINE_DATA
    chi_square = np.sum(((design @ estimate - LINE_DATA) / LINE_SIGMA) ** 2)
    absolute, scaled = line_fits[True], line_fits[False]
    np.testing.assert_allclose(absolute.values, estimate, rtol=1e-8)
    np.testing.assert_allclose(absolute.covariance, covariance, rtol=1e-8)
    np.testing.assert_allclose(scaled.covariance, chi_square / (X.size - 2) * covariance, rtol=1e-7)
    np.testing.assert_allclose(absolute.residuals, design @ estimate - LINE_DATA, atol=1e-9)
    np.testing.assert_allclose(absolute.correlation[0, 1], covariance[0, 1] / np.sqrt(covariance[0, 0] * covariance[1, 1]))
    assert absolute.covariance_scaling == "absolute" and scaled.covariance_scaling == "reduced chi-square"


def test_robust_losses_resist_an_outlier():
    data = LINE_DATA.copy()
    data[-1] += 40 * LINE_SIGMA[-1]
    fits = {loss: _fit_line(data, optimizer=optax.lbfgs(), loss=loss, absolute_sigma=True) for loss in ("squared", "huber", "cauchy")}
    deviation = {loss: np.abs(r.values - LINE_TRUTH) / r.standard_errors for loss, r in fits.items()}
    assert deviation["squared"].max() > 4.0
    assert deviation["huber"].max() < 3.0
    assert deviation["cauchy"].max() < 3.0
    # The robust fits leave the outlier where it is instead of bending the line towards it.
    assert fits["cauchy"].weighted_residuals[-1] < fits["squared"].weighted_residuals[-1] - 2.0


DECAY_TIMES = np.linspace(0.0, 3.0, 40)
DECAY_TRUTH = Decay(2.0, 1.3)
DECAY_SIGMA = 0.05
DECAY_DATA = 2.0 * np.exp(-1.3 * DECAY_TIMES) + DECAY_SIGMA * np.random.default_rng(7).normal(size=DECAY_TIMES.size)
DECAY_SPEC = {"amplitude": Positive(), "rate": Positive(transform="softplus")}


def _decay_residuals(p):
    return p.amplitude * jnp.exp(-p.rate * DECAY_TIMES) - DECAY_DATA


@pytest.fixture(scope="module")
def decay_fit():
    return fit(_decay_residuals, Decay(0.5, 4.0), DECAY_SPEC, sigma=DECAY_SIGMA, starts=3, progress=False)


def test_exponential_decay_recovers_the_truth_within_its_standard_errors(decay_fit):
    truth = np.array([DECAY_TRUTH.amplitude, DECAY_TRUTH.rate])
    assert decay_fit.converged
    assert np.all(np.abs(decay_fit.values - truth) < 3 * decay_fit.standard_errors)
    assert 0.5 < decay_fit.residual_variance < 1.6
    assert decay_fit.loss_history[-1] < 1e-2 * decay_fit.loss_history[0]
    assert decay_fit.start_losses.shape == (3,) and decay_fit.loss == pytest.approx(decay_fit.start_losses.min())


def test_standard_errors_propagate_through_the_transforms(decay_fit):
    theta_errors = np.sqrt(np.diag(decay_fit.unconstrained_covariance))
    amplitude, rate = decay_fit.values
    softplus_slope = 1.0 / (1.0 + np.exp(-decay_fit.unconstrained[1]))  # d softplus(θ)/dθ = sigmoid(θ)
    np.testing.assert_allclose(decay_fit.standard_errors, [amplitude * theta_errors[0], softplus_slope * theta_errors[1]])


def test_lbfgs_and_a_list_of_starts_reach_the_same_minimum(decay_fit):
    result = fit(
        _decay_residuals, Decay(0.5, 4.0), DECAY_SPEC, sigma=DECAY_SIGMA, optimizer=optax.lbfgs(),
        starts=[Decay(0.5, 4.0), Decay(5.0, 0.1)], progress=False,
    )
    assert result.gradient_norm < 1e-6
    np.testing.assert_allclose(result.values, decay_fit.values, rtol=1e-5)
    np.testing.assert_allclose(result.standard_errors, decay_fit.standard_errors, rtol=1e-4)


def test_levenberg_marquardt_reaches_the_same_minimum_in_few_steps(decay_fit):
    result = fit(_decay_residuals, Decay(0.5, 4.0), DECAY_SPEC, sigma=DECAY_SIGMA, optimizer=levenberg_marquardt(),
                 max_steps=60, progress=False)
    assert result.converged and result.steps < 40 < decay_fit.steps
    np.testing.assert_allclose(result.values, decay_fit.values, rtol=1e-5)
    # A rejected step leaves θ in place, so the loss never rises.
    assert np.all(np.diff(result.loss_history) <= 1e-12 * result.loss_history[0])


def test_result_is_written_as_json(decay_fit, tmp_path):
    path = decay_fit.to_json(tmp_path / "fit.json")
    record = json.loads(path.read_text())
    assert record["parameters"]["rate"]["value"] == pytest.approx(decay_fit.value("rate")[0])
    assert len(record["residuals"]) == DECAY_TIMES.size
    assert [p.name for p in tmp_path.iterdir()] == ["fit.json"]  # no temporary left behind


@pytest.mark.parametrize(
    "options, match",
    [
        ({"loss": "l1"}, "loss must be one of"),
        ({"jacobian": "central"}, "jacobian must be one of"),
        ({"sigma": -1.0}, "sigma must be > 0"),
        ({"starts": 0}, "starts must be >= 1"),
        ({"max_steps": 0}, "max_steps must be > 0"),
    ],
)
def test_bad_options_raise(options, match):
    with pytest.raises(ValueError, match=match):
        fit(_decay_residuals, DECAY_TRUTH, DECAY_SPEC, progress=False, **options)


def test_scaled_covariance_needs_more_data_than_parameters():
    with pytest.raises(ValueError, match="absolute_sigma=True"):
        fit(lambda p: p.amplitude - jnp.array([1.0, 2.0]), DECAY_TRUTH, DECAY_SPEC, progress=False)


def test_covariance_of_an_unseen_direction_is_infinite_and_leaves_the_others_finite():
    # z depends on a + b only (the direction a − b is unseen) and on c: var c = 1/Σ J_c² = 1/5, no NaN.
    jacobian = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        covariance = gauss_newton_covariance(jacobian, np.ones(4))
    assert np.all(np.isinf(np.diag(covariance)[:2]))
    assert covariance[2, 2] == pytest.approx(0.2) and np.all(covariance[2, :2] == 0.0)


def test_rank_rtol_reports_a_direction_seen_only_at_the_jacobians_accuracy_as_not_identified():
    # y = a b x + δ a x²: with δ = 1e-13 (a model whose Jacobian is rank one but for the round-off of a long
    # computation) the direction along a b = const has a singular value about 1e-13 of the other, above NumPy's
    # round-off rule for 30 points (30 ε = 7e-15): a finite, meaningless standard error, unless rank_rtol
    # says the Jacobian is no more exact than that.
    data = 0.3 * 1.7 * X

    def residuals(p):
        return p.intercept * p.slope * X + 1e-13 * p.intercept * X**2 - data

    results = [fit(residuals, Line(0.5, 1.0), LINE_SPEC, sigma=0.01, absolute_sigma=True,
                   optimizer=levenberg_marquardt(), max_steps=50, progress=False, rank_rtol=rank_rtol)
               for rank_rtol in (None, 1e-9)]
    singular = results[1].singular_values()
    assert 30 * np.finfo(float).eps < singular[1] / singular[0] < 1e-9
    assert np.all(np.isfinite(results[0].standard_errors))
    assert np.all(np.isinf(results[1].standard_errors))
    # a b = const: a and b anticorrelated, as far as the finite (meaningless) errors say too
    np.testing.assert_array_equal(results[1].correlation, [[1.0, -1.0], [-1.0, 1.0]])
    np.testing.assert_allclose(results[0].correlation, [[1.0, -1.0], [-1.0, 1.0]], atol=1e-6)
    assert all(line.endswith("(not identified by these data)") for line in results[1].summary().splitlines())
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match=r"rank_rtol must be in \(0, 1\)"):
            fit(residuals, Line(0.5, 1.0), LINE_SPEC, progress=False, rank_rtol=bad)


def test_a_slope_pulled_out_of_its_range_is_reported_at_the_bound():
    # The data's slope is 1.7; confined to (0, 1) the fit runs to the end at 1, the intercept stays inside.
    result = fit(_line_residuals(LINE_DATA), Line(0.0, 0.5), {"intercept": Free(), "slope": Bounded(0.0, 1.0)},
                 sigma=LINE_SIGMA, optimizer=levenberg_marquardt(), max_steps=60, progress=False)
    assert result.values[1] > 0.999
    assert result.at_bound.tolist() == [False, True]
    lines = result.summary().splitlines()
    assert "±" in lines[0] and "at an end of its range" in lines[1]


def test_a_sigma_that_does_not_fit_the_residuals_names_both_shapes():
    with pytest.raises(ValueError, match=rf"^sigma must broadcast to the shape of the residuals: sigma has shape "
                                         rf"\(3,\), the residuals \({DECAY_TIMES.size},\)$"):
        fit(_decay_residuals, DECAY_TRUTH, DECAY_SPEC, sigma=np.ones(3), progress=False)


def test_residuals_that_are_not_finite_name_the_parameters_where_they_are():
    with pytest.raises(ValueError, match=r"^residual_fn: the residuals are not finite at the start "
                                         r"\(amplitude = 0\.5, rate = 4\); the model must give finite residuals"):
        fit(lambda p: _decay_residuals(p) * jnp.nan, Decay(0.5, 4.0), DECAY_SPEC, progress=False)
    # finite at the start, not on the way to the truth (rate < 3.9): the fit stops there
    with pytest.raises(ValueError, match=r"^residual_fn: the residuals are not finite at the end of the fit "
                                         r"\(amplitude = [0-9.]+, rate = 3\.[0-8]"):
        fit(lambda p: _decay_residuals(p) + jnp.where(p.rate < 3.9, jnp.nan, 0.0), Decay(0.5, 4.0), DECAY_SPEC,
            progress=False)


def test_a_fit_that_did_not_converge_is_one_warning_line():
    assert convergence_warnings({"the fit a": True, "the fit b": False}) == [
        "warning: the fit b did not converge (no tolerance met); its values and standard errors are not reliable"]
