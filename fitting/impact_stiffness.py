"""``impact-stiffness``: recover the stiffness k and restitution e of a Hertz contact from impact data.

Synthetic truth (seed 004 eq. (7)): a sphere of effective mass m = 0.17 kg
strikes at v = 2 m/s; f = c δ̇ + k δ^n with n = 1.5, k = 1e9 N/m^1.5 and the
damping c that gives restitution e = 0.6 (``diffimpact.optimal_damping``).
The fitted parameters are (k, e): the model maps them to c by the "improved"
closed form of optimal_damping (its restitution error, 3e-6 relative here, is
far below the data's uncertainties) and solves the impact with diffrax.

Two data sets, each from seeded Gaussian noise on the true simulation:

(a) a force–penetration history: force f(t) and penetration δ(t) sampled at
    ``SAMPLES`` equally spaced times over the true contact, with
    σ_f = ``FORCE_SIGMA`` and σ_δ = ``PENETRATION_SIGMA``. The model history
    (``MODEL_SAMPLES`` points over the model's own contact) is interpolated
    linearly at the data times; after the model's separation its force is 0. Weighted least squares; the covariance is
    scaled by the reduced χ² (which should come out near 1).
(b) the contact duration T and outgoing velocity (restitution e = v_out/v),
    with σ_T = ``DURATION_SIGMA`` and σ_e = ``RESTITUTION_SIGMA``: two data for
    two parameters, so the covariance uses the stated σ (``absolute_sigma``).

Both fits start from ``INITIAL_GUESS`` (k off by 3.3×, e = 0.8) and use Adam
(the ``fit`` default) on θ = (ln(k / 1e8 N/m^1.5), logit e) with forward-mode
Jacobians. L-BFGS (``optax.lbfgs()``) converges in fewer steps to the same
minimum, but its line search traces the simulation a second time and the
compilation takes 50–70 % longer than all the Adam steps together.
``run`` writes ``impact-stiffness.json`` (truth, fits, uncertainties),
``impact-stiffness.csv`` (history data beside the fit) and
``impact-stiffness.png`` (fit over data, residuals, loss histories).
"""

import time
from pathlib import Path

import diffrax as dfx
import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact.contact.normal import HertzLinearDamper
from diffimpact.impact.central import central_impact
from diffimpact.impact.damping import optimal_damping
from diffimpact.reproduce._io import figure, save_figure, write_csv, write_json
from fitting.fit import fit
from fitting.parameters import Positive, UnitInterval

NAME = "impact-stiffness"
MASS = 0.17  # kg
IMPACT_VELOCITY = 2.0  # m/s
EXPONENT = 1.5
#: Dense model history, interpolated at the data times (interpolation error ~0.05 N ≪ σ_f).
MODEL_SAMPLES = 256
#: History samples (full, quick).
SAMPLES = {False: 60, True: 30}
STARTS = {False: 3, True: 1}
FORCE_SIGMA = 20.0  # N, about 0.7 % of the peak force
PENETRATION_SIGMA = 2e-6  # m, about 1 % of the maximum penetration
DURATION_SIGMA = 3e-6  # s, about 1 % of the contact duration
RESTITUTION_SIGMA = 0.01
SEED = 2024
MAX_STEPS = 2000


class ImpactParameters(eqx.Module):
    """The fitted parameters: stiffness k (N/m^n) and restitution e."""

    stiffness: jnp.ndarray
    restitution: jnp.ndarray


TRUTH = ImpactParameters(stiffness=1e9, restitution=0.6)
INITIAL_GUESS = ImpactParameters(stiffness=3e8, restitution=0.8)
SPEC = {"stiffness": Positive(reference=1e8), "restitution": UnitInterval()}


def contact_law(params):
    """Hertz + linear damper with k from ``params`` and c giving restitution e (eq. (49), improved fit)."""
    damping = optimal_damping(MASS, IMPACT_VELOCITY, params.stiffness, EXPONENT, params.restitution, method="improved")
    return HertzLinearDamper(params.stiffness, EXPONENT, damping)


def simulate(params, history=0):
    """The central impact of the study (forward-mode differentiable)."""
    return central_impact(contact_law(params), MASS, IMPACT_VELOCITY, history=history, adjoint=dfx.ForwardMode())


def history_at(params, times):
    """Force (N) and penetration (m) at ``times`` (s), stacked as a (2, len(times)) array."""
    result = simulate(params, MODEL_SAMPLES)
    force = jnp.interp(times, result.time, result.force, right=0.0)
    penetration = jnp.interp(times, result.time, result.penetration)
    return jnp.stack([force, penetration])


def duration_and_restitution(params):
    """[contact duration T (s), restitution e] of the impact."""
    result = simulate(params)
    return jnp.stack([result.contact_duration, result.restitution])


HISTORY_SIGMA = np.array([[FORCE_SIGMA], [PENETRATION_SIGMA]])
SCALAR_SIGMA = np.array([DURATION_SIGMA, RESTITUTION_SIGMA])


def synthetic_data(quick=False):
    """Seeded noisy data from one true solve: history times, history (2, N) and [T, e], with the true values."""
    truth = simulate(TRUTH, SAMPLES[quick])
    true_history = np.stack([np.asarray(truth.force), np.asarray(truth.penetration)])
    true_scalars = np.array([float(truth.contact_duration), float(truth.restitution)])
    rng = np.random.default_rng(SEED)
    return {
        "times": np.asarray(truth.time),
        "true_history": true_history,
        "history": true_history + HISTORY_SIGMA * rng.normal(size=true_history.shape),
        "true_scalars": true_scalars,
        "scalars": true_scalars + SCALAR_SIGMA * rng.normal(size=2),
    }


def study(quick=False, progress=True):
    """Both fits on the synthetic data; returns ``(data, history_fit, scalar_fit)``."""
    data = synthetic_data(quick)
    common = dict(max_steps=MAX_STEPS, starts=STARTS[quick], progress=progress)
    history_fit = fit(
        lambda p: history_at(p, data["times"]) - data["history"], INITIAL_GUESS, SPEC, sigma=HISTORY_SIGMA, **common
    )
    scalar_fit = fit(
        lambda p: duration_and_restitution(p) - data["scalars"],
        INITIAL_GUESS,
        SPEC,
        sigma=SCALAR_SIGMA,
        absolute_sigma=True,
        **common,
    )
    return data, history_fit, scalar_fit


def deviations(result):
    """(fitted − true) / standard error, per parameter."""
    truth = np.array([TRUTH.stiffness, TRUTH.restitution])
    return (result.values - truth) / result.standard_errors


def _fit_record(result):
    record = result.to_dict()
    record["deviation_in_standard_errors"] = dict(zip(result.names, deviations(result).tolist()))
    return record


def write_outputs(out_dir, data, history_fit, scalar_fit):
    """Write the JSON, CSV and PNG of the study into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    fitted_history = np.asarray(history_at(history_fit.params, data["times"]))
    json_path = write_json(
        out_dir / f"{NAME}.json",
        {
            "truth": {"stiffness": TRUTH.stiffness, "restitution": TRUTH.restitution, "exponent": EXPONENT,
                      "mass": MASS, "impact_velocity": IMPACT_VELOCITY},
            "sigma": {"force_N": FORCE_SIGMA, "penetration_m": PENETRATION_SIGMA,
                      "contact_duration_s": DURATION_SIGMA, "restitution": RESTITUTION_SIGMA},
            "seed": SEED,
            "data_contact_duration_and_restitution": data["scalars"].tolist(),
            "fit_force_penetration_history": _fit_record(history_fit),
            "fit_contact_duration_and_restitution": _fit_record(scalar_fit),
        },
    )
    csv_path = write_csv(
        out_dir / f"{NAME}.csv",
        {
            "time_s": data["times"],
            "force_data_N": data["history"][0],
            "force_fit_N": fitted_history[0],
            "force_true_N": data["true_history"][0],
            "penetration_data_m": data["history"][1],
            "penetration_fit_m": fitted_history[1],
            "penetration_true_m": data["true_history"][1],
        },
    )
    png_path = save_figure(_plot(data, fitted_history, history_fit, scalar_fit), out_dir / f"{NAME}.png")
    return json_path, csv_path, png_path


def _plot(data, fitted_history, history_fit, scalar_fit):
    fig, axes = figure(2, 2)
    time_ms = 1e3 * data["times"]
    ax = axes[0, 0]
    ax.errorbar(time_ms, data["history"][0], yerr=FORCE_SIGMA, fmt=".", ms=3, label="data")
    ax.plot(time_ms, fitted_history[0], label="fit")
    ax.set(xlabel="time (ms)", ylabel="force (N)", title="(a) force history")
    ax.legend()
    ax = axes[0, 1]
    ax.plot(1e6 * data["history"][1], data["history"][0], ".", ms=3, label="data")
    ax.plot(1e6 * fitted_history[1], fitted_history[0], label="fit")
    ax.set(xlabel="penetration (µm)", ylabel="force (N)", title="(a) force–penetration")
    ax.legend()
    ax = axes[1, 0]
    weighted = history_fit.weighted_residuals.reshape(2, -1)
    ax.plot(time_ms, weighted[0], "o", ms=3, label="force")
    ax.plot(time_ms, weighted[1], "s", ms=3, label="penetration")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set(xlabel="time (ms)", ylabel="residual / σ", title="(a) weighted residuals")
    ax.legend()
    ax = axes[1, 1]
    ax.semilogy(history_fit.loss_history, label="(a) history")
    ax.semilogy(scalar_fit.loss_history, label="(b) T and e")
    ax.set(xlabel="Adam step", ylabel="loss Σρ(z)", title="loss history (best start)")
    ax.legend()
    return fig


def _describe(label, result):
    lines = [f"{label}: loss {result.loss:.4g}, {result.steps} steps, converged={result.converged}, "
             f"covariance {result.covariance_scaling} (s² = {result.residual_variance:.3g})"]
    for name, value, error, deviation in zip(result.names, result.values, result.standard_errors, deviations(result)):
        truth = getattr(TRUTH, name)
        lines.append(f"  {name:>11s} = {value:.6g} ± {error:.2g}  (truth {truth:g}, {deviation:+.2f} σ)")
    lines.append(f"  correlation(k, e) = {result.correlation[0, 1]:+.3f}")
    return lines


def run(out_dir, quick=False, progress=True):
    """Run the study, write its files into ``out_dir`` and return a text summary."""
    start = time.perf_counter()
    data, history_fit, scalar_fit = study(quick, progress)
    paths = write_outputs(out_dir, data, history_fit, scalar_fit)
    lines = [f"{NAME}: m = {MASS} kg, v = {IMPACT_VELOCITY} m/s, n = {EXPONENT}, truth k = {TRUTH.stiffness:g} "
             f"N/m^1.5, e = {TRUTH.restitution}"]
    lines += _describe(f"(a) force–penetration history ({SAMPLES[quick]} samples)", history_fit)
    lines += _describe("(b) contact duration + restitution", scalar_fit)
    lines.append(f"wrote {', '.join(str(p) for p in paths)} in {time.perf_counter() - start:.1f} s")
    return "\n".join(lines)
