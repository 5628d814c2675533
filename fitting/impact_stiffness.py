"""``impact-stiffness``: recover the stiffness k and restitution e of a Hertz contact from impact data.

Synthetic truth ([Poursina 2020] eq. (7)): a sphere of effective mass m = 0.17 kg
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
``run(out, data=CSV)`` fits a user's force–penetration history instead (fit
(a) only; columns in ``SCHEMA``: ``t_s`` from contact onset, ``force_N``,
``penetration_m``, optional ``sigma_force_N``, ``sigma_penetration_m`` and
constant ``mass_kg``, ``impact_velocity_m_per_s``, which default to the
study's 0.17 kg and 2 m/s). Without σ columns each channel is weighted by 1 %
of its peak; as the covariance is scaled by the reduced χ², only the ratio of
the two σ matters then.
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
from diffimpact.io import figure, save_figure, write_csv, write_json
from fitting.data import Column, Schema, load_csv, time_order
from fitting.fit import convergence_warnings, fit
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


def contact_law(params, mass=MASS, impact_velocity=IMPACT_VELOCITY):
    """Hertz + linear damper with k from ``params`` and c giving restitution e (eq. (49), improved fit)."""
    damping = optimal_damping(mass, impact_velocity, params.stiffness, EXPONENT, params.restitution, method="improved")
    return HertzLinearDamper(params.stiffness, EXPONENT, damping)


def simulate(params, history=0, mass=MASS, impact_velocity=IMPACT_VELOCITY):
    """The central impact of the study (forward-mode differentiable)."""
    law = contact_law(params, mass, impact_velocity)
    return central_impact(law, mass, impact_velocity, history=history, adjoint=dfx.ForwardMode())


def history_at(params, times, mass=MASS, impact_velocity=IMPACT_VELOCITY):
    """Force (N) and penetration (m) at ``times`` (s), stacked as a (2, len(times)) array."""
    result = simulate(params, MODEL_SAMPLES, mass, impact_velocity)
    force = jnp.interp(times, result.time, result.force, right=0.0)
    penetration = jnp.interp(times, result.time, result.penetration)
    return jnp.stack([force, penetration])


def duration_and_restitution(params):
    """[contact duration T (s), restitution e] of the impact."""
    result = simulate(params)
    return jnp.stack([result.contact_duration, result.restitution])


HISTORY_SIGMA = np.array([[FORCE_SIGMA], [PENETRATION_SIGMA]])
SCALAR_SIGMA = np.array([DURATION_SIGMA, RESTITUTION_SIGMA])
#: Without σ columns a user's history is weighted by this fraction of each channel's peak (relative weights
#: only: the covariance is scaled by the reduced χ², i.e. by the observed scatter).
DEFAULT_RELATIVE_SIGMA = 0.01
SCHEMA = Schema(
    NAME,
    (
        Column("t_s", "s", "time since contact onset (δ = 0 at t = 0)", minimum=0.0),
        Column("force_N", "N", "normal contact force"),
        Column("penetration_m", "m", "penetration δ (noisy values may dip below 0)"),
        Column("sigma_force_N", "N", "standard uncertainty of force_N", minimum=0.0, exclusive_minimum=True,
               optional=True),
        Column("sigma_penetration_m", "m", "standard uncertainty of penetration_m", minimum=0.0,
               exclusive_minimum=True, optional=True),
        Column("mass_kg", "kg", f"effective mass, the same on every row (default {MASS})", minimum=0.0,
               exclusive_minimum=True, optional=True),
        Column("impact_velocity_m_per_s", "m/s", f"approach speed, the same on every row (default {IMPACT_VELOCITY})",
               minimum=0.0, exclusive_minimum=True, optional=True),
    ),
)


def load_data(path, drop_bad_rows=False):
    """A user's force–penetration history from ``path`` (``SCHEMA``), in time order; returns (data, LoadReport).

    ``data`` has ``times``, ``history`` (2, N), ``sigma`` (2, N), ``mass``,
    ``impact_velocity`` and ``source``; σ defaults to ``DEFAULT_RELATIVE_SIGMA``
    of each channel's largest magnitude.
    """
    columns, report = load_csv(path, SCHEMA, drop_bad_rows=drop_bad_rows)
    order = time_order(path, columns["t_s"])
    times = columns["t_s"][order]
    if times.size < 3:
        raise ValueError(f"{path}: a history needs at least 3 rows to fit 2 parameters, got {times.size}")
    history = np.stack([columns["force_N"][order], columns["penetration_m"][order]])
    sigma = np.empty_like(history)
    for row, (name, values) in enumerate((("sigma_force_N", history[0]), ("sigma_penetration_m", history[1]))):
        default = DEFAULT_RELATIVE_SIGMA * np.max(np.abs(values))
        if default == 0 and name not in columns:
            raise ValueError(f"{path}: column {name.removeprefix('sigma_')} is zero everywhere; give {name}")
        sigma[row] = columns[name][order] if name in columns else default
    data = {"times": times, "history": history, "sigma": sigma, "source": str(path)}
    for key, name, default in (("mass", "mass_kg", MASS), ("impact_velocity", "impact_velocity_m_per_s", IMPACT_VELOCITY)):
        values = columns.get(name, np.array([default]))
        if np.ptp(values) > 0:
            raise ValueError(f"{path}: {name} must be the same on every row, got {values.min():g} … {values.max():g}")
        data[key] = float(values[0])
    return data, report


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
        # Per point, as a user's file gives it: both then share one compiled fit step.
        "sigma": np.broadcast_to(HISTORY_SIGMA, true_history.shape).copy(),
        "true_scalars": true_scalars,
        "scalars": true_scalars + SCALAR_SIGMA * rng.normal(size=2),
    }


def _history_residuals(data, params):
    times, history, mass, impact_velocity = data
    return history_at(params, times, mass, impact_velocity) - history


def fit_history(data, quick=False, progress=True):
    """Fit (k, e) to a force–penetration history ``data`` (``synthetic_data`` or ``load_data``)."""
    # A module-level residual with the data as arguments: repeated fits reuse the compiled step.
    arguments = (jnp.asarray(data["times"]), jnp.asarray(data["history"]), jnp.asarray(data.get("mass", MASS)),
                 jnp.asarray(data.get("impact_velocity", IMPACT_VELOCITY)))
    return fit(eqx.Partial(_history_residuals, arguments), INITIAL_GUESS, SPEC, sigma=data.get("sigma", HISTORY_SIGMA),
               max_steps=MAX_STEPS, starts=STARTS[quick], progress=progress)


def _scalar_residuals(scalars, params):
    return duration_and_restitution(params) - scalars


def study(quick=False, progress=True):
    """Both fits on the synthetic data; returns ``(data, history_fit, scalar_fit)``."""
    data = synthetic_data(quick)
    common = dict(max_steps=MAX_STEPS, starts=STARTS[quick], progress=progress)
    history_fit = fit_history(data, quick, progress)
    scalar_fit = fit(
        eqx.Partial(_scalar_residuals, data["scalars"]),
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


def write_outputs(out_dir, data, history_fit, scalar_fit=None, report=None):
    """Write the JSON, CSV and PNG of the study into ``out_dir``; returns their paths.

    With a user's history (``load_data``) there is no truth and no scalar fit
    (``scalar_fit=None``); ``report`` is its ``LoadReport``.
    """
    out_dir = Path(out_dir)
    mass, velocity = data.get("mass", MASS), data.get("impact_velocity", IMPACT_VELOCITY)
    fitted_history = np.asarray(history_at(history_fit.params, data["times"], mass, velocity))
    synthetic = "true_history" in data
    if synthetic:
        record = {
            "truth": {"stiffness": TRUTH.stiffness, "restitution": TRUTH.restitution, "exponent": EXPONENT,
                      "mass": MASS, "impact_velocity": IMPACT_VELOCITY},
            "sigma": {"force_N": FORCE_SIGMA, "penetration_m": PENETRATION_SIGMA,
                      "contact_duration_s": DURATION_SIGMA, "restitution": RESTITUTION_SIGMA},
            "seed": SEED,
            "data_contact_duration_and_restitution": data["scalars"].tolist(),
            "fit_force_penetration_history": _fit_record(history_fit),
            "fit_contact_duration_and_restitution": _fit_record(scalar_fit),
        }
    else:
        record = {
            "data": data["source"] if report is None else report.file,
            "model": {"exponent": EXPONENT, "mass": mass, "impact_velocity": velocity},
            "load_report": None if report is None else report.to_dict(),
            "fit_force_penetration_history": history_fit.to_dict(),
        }
    json_path = write_json(out_dir / f"{NAME}.json", record)
    columns = {
        "time_s": data["times"],
        "force_data_N": data["history"][0],
        "force_fit_N": fitted_history[0],
        "penetration_data_m": data["history"][1],
        "penetration_fit_m": fitted_history[1],
    }
    if synthetic:
        columns = {**dict(list(columns.items())[:3]), "force_true_N": data["true_history"][0],
                   **dict(list(columns.items())[3:]), "penetration_true_m": data["true_history"][1]}
    csv_path = write_csv(out_dir / f"{NAME}.csv", columns)
    png_path = save_figure(_plot(data, fitted_history, history_fit, scalar_fit), out_dir / f"{NAME}.png")
    return json_path, csv_path, png_path


def _plot(data, fitted_history, history_fit, scalar_fit):
    fig, axes = figure(2, 2)
    time_ms = 1e3 * data["times"]
    force_sigma = np.broadcast_to(data.get("sigma", HISTORY_SIGMA), data["history"].shape)[0]
    ax = axes[0, 0]
    ax.errorbar(time_ms, data["history"][0], yerr=force_sigma, fmt=".", ms=3, label="data")
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
    if scalar_fit is not None:
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


def run(out_dir, quick=False, data=None, drop_bad_rows=False, progress=True):
    """Run the study (or fit the history in the CSV ``data``); write ``impact-stiffness.json`` (values, standard
    errors, correlations), ``impact-stiffness.csv`` and ``impact-stiffness.png`` into ``out_dir``; return a summary.

    About 1 min on a 2-core machine, compiling included (``quick``: about 30 s).
    """
    start = time.perf_counter()
    if data is not None:
        samples, report = load_data(data, drop_bad_rows)
        history_fit = fit_history(samples, quick, progress)
        paths = write_outputs(out_dir, samples, history_fit, None, report)
        lines = [report.summary(), f"{NAME}: m = {samples['mass']:g} kg, v = {samples['impact_velocity']:g} m/s, "
                 f"n = {EXPONENT}; force–penetration history of {samples['times'].size} samples"]
        lines.append(f"fit: loss {history_fit.loss:.4g}, {history_fit.steps} steps, converged={history_fit.converged}, "
                     f"covariance {history_fit.covariance_scaling} (s² = {history_fit.residual_variance:.3g})")
        for name, value, error in zip(history_fit.names, history_fit.values, history_fit.standard_errors):
            lines.append(f"  {name:>11s} = {value:.6g} ± {error:.2g}")
        lines.append(f"  correlation(k, e) = {history_fit.correlation[0, 1]:+.3f}")
        lines += convergence_warnings({"the fit of the force–penetration history": history_fit.converged})
        lines.append(f"wrote {', '.join(str(p) for p in paths)} in {time.perf_counter() - start:.1f} s")
        return "\n".join(lines)
    data, history_fit, scalar_fit = study(quick, progress)
    paths = write_outputs(out_dir, data, history_fit, scalar_fit)
    lines = [f"{NAME}: m = {MASS} kg, v = {IMPACT_VELOCITY} m/s, n = {EXPONENT}, truth k = {TRUTH.stiffness:g} "
             f"N/m^1.5, e = {TRUTH.restitution}"]
    lines += _describe(f"(a) force–penetration history ({SAMPLES[quick]} samples)", history_fit)
    lines += _describe("(b) contact duration + restitution", scalar_fit)
    lines += convergence_warnings({"fit (a), of the force–penetration history": history_fit.converged,
                                   "fit (b), of the contact duration and restitution": scalar_fit.converged})
    lines.append(f"wrote {', '.join(str(p) for p in paths)} in {time.perf_counter() - start:.1f} s")
    return "\n".join(lines)
