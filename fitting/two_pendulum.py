"""``two-pendulum``: identify e and k of the eq. (50) contact from the angular velocities of [Poursina 2020] §6.

The system is ``diffimpact.scenes.two_pendulum`` (m₁ = 1 kg, m₂ = 0.2 kg,
L₁ = 6 m, L₂ = 4 m, a = 2 m, released at rest from θ₁ = π/12, θ₂ = −π/2 at
t = 0) with the optimal-damping contact of eq. (50): f = c δ̇ + k δ^n, n = 3/2,
c = c_opt(m, v, k, n, e) set at each onset from the effective mass and the
approach speed (``OptimalDamping``, ``"improved"`` closed form of c_opt, used
for the data and the model alike). The fitted parameters are the restitution
e (``UnitInterval``, logit) and the stiffness k (``Positive``, log, reference
1e8 N/m^1.5); n stays at 3/2.

Synthetic data (the truth e = 0.3, k = 1e8 N/m^1.5 of the paper): θ̇₁(t) and
θ̇₂(t) from the contact-event simulation (``LagrangeMultipliers``,
rtol = atol = 1e-9) plus seeded Gaussian noise σ = ``RATE_SIGMA`` = 0.01 rad/s
(seed ``SEED``), sampled

* uniformly at ``SAMPLE_RATE`` over the horizon (8 s with three impacts; the
  quick mode 1.6 s with the first impact at t ≈ 1.142 s), and
* in a burst of ``BURST_SAMPLES`` samples every ``BURST_SPACING`` = 25 µs from
  0.1 ms before each true contact onset, which spans the ≈ 0.38 ms contact
  (a triggered high-rate acquisition).

What the data can tell: eq. (50) is built so that the impact restitutes e
whatever k is, so the velocities after an impact depend on e and hardly on k
(k sets the contact duration, ∝ k^(−2/5), and so the ms-scale shape of the
velocity jump). From the uniform samples alone k is not identifiable
(∂θ̇/∂ln k ≈ 4e-4 rad/s after the first impact, 25× below σ); the bursts
resolve the jump and pin k. ``run`` reports both parameters with their
Gauss–Newton standard errors (scaled by the reduced χ²) and correlation.

The model residual is ``rates(params, t) − data`` with reverse-mode Jacobians
(the simulation's diffrax adjoint is reverse-mode only); the compiled step is
shared by every fit of the same data shape (``fitting.fit``). Starts from
e = 0.45, k = 3e8 N/m^1.5 (records longer than 1.6 s: first the samples up to
1.6 s, then all, see ``fit_rates``) with ``fitting.fit.levenberg_marquardt`` (Adam needs
hundreds of steps, each a reverse-mode Jacobian).

``run(out, quick, data=CSV)`` fits a user's file instead (columns in
``SCHEMA``: ``t_s``, ``theta1_dot_rad_per_s``, ``theta2_dot_rad_per_s``,
optional ``sigma_rad_per_s``), which must be a run of the same system released
from the same state at t = 0. Outputs: ``two-pendulum.json`` (truth, noise,
fit, standard errors, correlation), ``two-pendulum.csv`` (data beside the fit)
and ``two-pendulum.png`` (fit over data, a zoom on the first impact,
residuals, loss history).
"""

import time
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact.io import figure, save_figure, write_csv, write_json
from diffimpact.multibody import AdaptiveSteps, ContactEvents, ForwardMode, LagrangeMultipliers, simulate
from diffimpact.scenes import two_pendulum as tp
from fitting.data import Column, Schema, load_csv, time_order
from fitting.fit import convergence_warnings, fit, levenberg_marquardt
from fitting.parameters import Positive, UnitInterval

NAME = "two-pendulum"
METHOD = "improved"
TOLERANCE = 1e-9
#: Events the simulation may meet: 8 s hold three impacts (an onset and a separation each) and the turning points
#: of the gap between them, which also end segments (10 at the truth); more room for the fits' trial parameters.
MAX_EVENTS = 16
HORIZON = {False: tp.DURATION, True: 1.6}  # s
#: Longer records are first fitted up to here (the first impact at 1.142 s), see ``fit_rates``.
FIRST_WINDOW = 1.6  # s
SAMPLE_RATE = {False: 50.0, True: 25.0}  # Hz
BURST_SAMPLES = 24
BURST_SPACING = 25e-6  # s
BURST_LEAD = 1e-4  # s before the onset
RATE_SIGMA = 0.01  # rad/s
SEED = 2025
MAX_STEPS = 40
#: |∂loss/∂θ| at which to stop: with the curvature of this problem (σ_θ ≈ 0.005) θ is then within 1e-7 of the minimum.
GTOL = 1e-3
#: One optimiser object: repeated fits reuse the compiled step. Each step costs a forward-mode
#: Jacobian (two tangents through one solve; `python benchmarks/fit_speed.py` measures it against
#: reverse mode), so Levenberg–Marquardt's few steps beat Adam's hundreds.
OPTIMIZER = levenberg_marquardt()
SCHEMA = Schema(
    NAME,
    (
        Column("t_s", "s", "time since release from θ₁ = π/12, θ₂ = −π/2 at rest", minimum=0.0, maximum=tp.DURATION,
               exclusive_minimum=True),
        Column("theta1_dot_rad_per_s", "rad/s", "angular velocity of rod 1 (6 m, 1 kg), counter-clockwise", -50.0, 50.0),
        Column("theta2_dot_rad_per_s", "rad/s", "angular velocity of rod 2 (4 m, 0.2 kg), counter-clockwise", -50.0, 50.0),
        Column("sigma_rad_per_s", "rad/s", "standard uncertainty of both rates (default 0.01)", minimum=0.0,
               exclusive_minimum=True, optional=True),
    ),
)


class ContactParameters(eqx.Module):
    """The fitted parameters: stiffness k (N/m^1.5) and restitution e of eq. (50)."""

    stiffness: jnp.ndarray
    restitution: jnp.ndarray


TRUTH = ContactParameters(stiffness=1e8, restitution=0.3)
INITIAL_GUESS = ContactParameters(stiffness=3e8, restitution=0.45)
SPEC = {"stiffness": Positive(reference=1e8), "restitution": UnitInterval()}


def simulate_rates(params, times):
    """The trajectory of the system with contact ``params``, saved at ``times`` (s, increasing, > 0)."""
    p = tp.Parameters(stiffness=params.stiffness, restitution=params.restitution)
    return simulate(tp.model(p, "optimal", METHOD), tp.initial_state(p), times, LagrangeMultipliers(),
                    steps=AdaptiveSteps(rtol=TOLERANCE, atol=TOLERANCE), events=ContactEvents(max_events=MAX_EVENTS),
                    derivatives=ForwardMode())


@eqx.filter_jit
def rates(params, times):
    """θ̇₁, θ̇₂ (rad/s) at ``times``, shaped (len(times), 2)."""
    return tp.angular_velocities(simulate_rates(params, times).v)


def _residuals(data, params):
    times, observed = data
    return rates(params, times) - observed


def sample_times(quick=False, onsets=()):
    """Uniform samples over the horizon plus a burst after each onset time (s), sorted."""
    horizon = HORIZON[quick]
    uniform = np.arange(1, int(round(horizon * SAMPLE_RATE[quick])) + 1) / SAMPLE_RATE[quick]
    bursts = [onset - BURST_LEAD + BURST_SPACING * np.arange(BURST_SAMPLES) for onset in onsets if onset < horizon]
    return np.unique(np.concatenate([uniform, *bursts]))


def true_onsets(quick=False):
    """Contact onset times (s) of the truth within the horizon."""
    events = eqx.filter_jit(simulate_rates)(TRUTH, jnp.array([HORIZON[quick]])).events
    count = int(events.count)
    return [float(events.t[i]) for i in range(count) if bool(events.onset[i])]


def synthetic_data(quick=False):
    """Seeded noisy θ̇₁, θ̇₂ at the truth: times, true and noisy rates (N, 2), σ (N, 2), onsets."""
    onsets = true_onsets(quick)
    times = sample_times(quick, onsets)
    true_rates = np.asarray(rates(TRUTH, jnp.asarray(times)))
    noise = RATE_SIGMA * np.random.default_rng(SEED).normal(size=true_rates.shape)
    return {"times": times, "true_rates": true_rates, "rates": true_rates + noise,
            "sigma": np.full_like(true_rates, RATE_SIGMA), "onsets": onsets, "source": "synthetic",
            "sample_rate": SAMPLE_RATE[quick], "horizon": HORIZON[quick]}


def load_data(path, drop_bad_rows=False):
    """A user's θ̇₁, θ̇₂ samples from ``path`` (``SCHEMA``), in time order; returns (data, LoadReport)."""
    columns, report = load_csv(path, SCHEMA, drop_bad_rows=drop_bad_rows)
    order = time_order(path, columns["t_s"])
    times = columns["t_s"][order]
    if times.size < 2:
        raise ValueError(f"{path}: the fit of k and e needs at least 2 rows (2 angular velocities each, for 2 "
                         f"parameters), got {times.size}")
    observed = np.column_stack([columns["theta1_dot_rad_per_s"], columns["theta2_dot_rad_per_s"]])[order]
    sigma = columns.get("sigma_rad_per_s", np.full(times.size, RATE_SIGMA))[order]
    data = {"times": times, "rates": observed, "sigma": np.column_stack([sigma, sigma]), "true_rates": None,
            "onsets": [], "source": str(path)}
    return data, report


def _subset(data, keep):
    return {**data, "times": data["times"][keep], "rates": data["rates"][keep], "sigma": data["sigma"][keep]}


def fit_rates(data, quick=False, progress=True):
    """Fit (k, e) to ``data`` (``synthetic_data`` or ``load_data``); returns (FitResult, first-window FitResult or None).

    A record longer than ``FIRST_WINDOW`` is fitted in two stages: first its
    samples up to ``FIRST_WINDOW`` (the first impact), from ``INITIAL_GUESS``;
    then the whole record from that result. From a poor start the later
    impacts, whose times shift with e, trap the fit of the whole record in a
    local minimum (from e = 0.45 it stalled at 100× the final loss).
    """
    start, first = INITIAL_GUESS, None
    early = data["times"] <= FIRST_WINDOW
    if data["times"][-1] > FIRST_WINDOW and np.count_nonzero(early) > 2:
        first = _fit_from(_subset(data, early), INITIAL_GUESS, progress)
        start = first.params
    return _fit_from(data, start, progress), first


def _fit_from(data, start, progress):
    return fit(
        eqx.Partial(_residuals, (jnp.asarray(data["times"]), jnp.asarray(data["rates"]))),
        start,
        SPEC,
        sigma=data["sigma"],
        optimizer=OPTIMIZER,
        max_steps=MAX_STEPS,
        gtol=GTOL,
        ftol=1e-9,
        jacobian="fwd",
        progress=progress,
    )


def deviations(result):
    """(fitted − true) / standard error, per parameter."""
    truth = np.array([TRUTH.stiffness, TRUTH.restitution])
    return (result.values - truth) / result.standard_errors


def study(quick=False, progress=True, data=None, drop_bad_rows=False):
    """Data (synthetic, or a user's file ``data``) and the fit; returns (data, result, first-window result, report).

    The first-window result and the report are None when not applicable (see ``fit_rates``).
    """
    report = None
    if data is None:
        samples = synthetic_data(quick)
    else:
        samples, report = load_data(data, drop_bad_rows)
    result, first = fit_rates(samples, quick, progress)
    return samples, result, first, report


def write_outputs(out_dir, data, result, first=None, report=None):
    """``two-pendulum.json``, ``.csv`` and ``.png`` in ``out_dir``; returns their paths."""
    out = Path(out_dir)
    fitted = np.asarray(rates(result.params, jnp.asarray(data["times"])))
    synthetic = data["true_rates"] is not None
    record = {
        "system": "Poursina and Nikravesh 2020 §6: m1 = 1 kg, m2 = 0.2 kg, L1 = 6 m, L2 = 4 m, a = 2 m, n = 1.5, released at rest "
                  "from θ1 = π/12, θ2 = −π/2; contact eq. (50), c_opt by the improved closed form",
        "data": data["source"] if report is None else report.file,
        "samples": int(data["times"].size),
        "fit": result.to_dict(),
        "first_window_fit": None if first is None else {"up_to_s": FIRST_WINDOW, **first.to_dict()},
    }
    if synthetic:
        record.update({
            "truth": {"stiffness": TRUTH.stiffness, "restitution": TRUTH.restitution},
            "noise": {"sigma_rad_per_s": RATE_SIGMA, "seed": SEED},
            "sampling": {"horizon_s": data["horizon"], "uniform_rate_Hz": data["sample_rate"],
                         "burst_samples": BURST_SAMPLES, "burst_spacing_s": BURST_SPACING,
                         "burst_start_before_onset_s": BURST_LEAD, "true_onsets_s": data["onsets"]},
            "deviation_in_standard_errors": dict(zip(result.names, deviations(result).tolist())),
        })
    if report is not None:
        record["load_report"] = report.to_dict()
    json_path = write_json(out / f"{NAME}.json", record)
    columns = {
        "t_s": data["times"],
        "theta1_dot_data_rad_per_s": data["rates"][:, 0],
        "theta1_dot_fit_rad_per_s": fitted[:, 0],
        "theta2_dot_data_rad_per_s": data["rates"][:, 1],
        "theta2_dot_fit_rad_per_s": fitted[:, 1],
        "sigma_rad_per_s": data["sigma"][:, 0],
    }
    if synthetic:
        columns["theta1_dot_true_rad_per_s"] = data["true_rates"][:, 0]
        columns["theta2_dot_true_rad_per_s"] = data["true_rates"][:, 1]
    csv_path = write_csv(out / f"{NAME}.csv", columns)
    png_path = save_figure(_plot(data, fitted, result), out / f"{NAME}.png")
    return json_path, csv_path, png_path


def _plot(data, fitted, result):
    fig, axes = figure(2, 2)
    t = data["times"]
    ax = axes[0, 0]
    for k, colour in ((0, "C0"), (1, "C1")):
        ax.plot(t, data["rates"][:, k], ".", ms=2.5, color=colour, label=f"θ̇{k + 1} data")
        ax.plot(t, fitted[:, k], "-", lw=1, color=colour, alpha=0.8, label=f"θ̇{k + 1} fit")
    ax.set(xlabel="t (s)", ylabel="angular velocity (rad/s)", title="fit over data")
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    first = _first_contact(data, fitted)
    window = (t > first - 3e-4) & (t < first + 1e-3)
    for k, colour in ((0, "C0"), (1, "C1")):
        ax.errorbar(1e3 * (t[window] - first), data["rates"][window, k], yerr=data["sigma"][window, k], fmt=".",
                    ms=3, color=colour, label=f"θ̇{k + 1} data")
        ax.plot(1e3 * (t[window] - first), fitted[window, k], "-", lw=1, color=colour, label=f"θ̇{k + 1} fit")
    ax.set(xlabel=f"t − {first:.5f} s (ms)", ylabel="angular velocity (rad/s)", title="first impact (burst samples)")
    ax.legend(fontsize=7)
    ax = axes[1, 0]
    weighted = result.weighted_residuals.reshape(-1, 2)
    ax.plot(t, weighted[:, 0], "o", ms=2, label="θ̇1")
    ax.plot(t, weighted[:, 1], "s", ms=2, label="θ̇2")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set(xlabel="t (s)", ylabel="residual / σ", title="weighted residuals")
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    ax.semilogy(result.loss_history)
    ax.set(xlabel="Levenberg–Marquardt step", ylabel="loss Σρ(z)", title="loss history")
    return fig


def _first_contact(data, fitted):
    if data["onsets"]:
        return data["onsets"][0]
    jumps = np.abs(np.diff(fitted[:, 1]))
    return float(data["times"][int(np.argmax(jumps))])


def run(out_dir, quick=False, data=None, drop_bad_rows=False, progress=True):
    """Run the study (or fit ``data``); write ``two-pendulum.json``, ``two-pendulum.csv`` and ``two-pendulum.png`` into
    ``out_dir``; return a text summary.

    About 1.5 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    start = time.perf_counter()
    samples, result, first, report = study(quick, progress, data, drop_bad_rows)
    paths = write_outputs(out_dir, samples, result, first, report)
    lines = [report.summary()] if report is not None else [
        f"{NAME}: synthetic θ̇1, θ̇2 over {HORIZON[quick]:g} s ({len(samples['onsets'])} impact(s)), "
        f"σ = {RATE_SIGMA} rad/s, seed {SEED}, {samples['times'].size} samples "
        f"({SAMPLE_RATE[quick]:g} Hz + {BURST_SAMPLES} every {1e6 * BURST_SPACING:g} µs at each impact); "
        f"truth k = {TRUTH.stiffness:g} N/m^1.5, e = {TRUTH.restitution}"]
    if first is not None:
        lines.append(f"stage 1, samples up to {FIRST_WINDOW:g} s: k = {first.values[0]:.6g} ± {first.standard_errors[0]:.2g}, "
                     f"e = {first.values[1]:.6g} ± {first.standard_errors[1]:.2g} ({first.steps} steps); then all samples:")
    lines.append(f"fit: loss {result.loss:.4g}, {result.steps} steps, converged={result.converged}, "
                 f"covariance {result.covariance_scaling} (s² = {result.residual_variance:.3g})")
    truth = {"stiffness": TRUTH.stiffness, "restitution": TRUTH.restitution}
    for name, value, error in zip(result.names, result.values, result.standard_errors):
        note = f"  (truth {truth[name]:g}, {(value - truth[name]) / error:+.2f} σ)" if report is None else ""
        lines.append(f"  {name:>11s} = {value:.6g} ± {error:.2g}{note}")
    lines.append(f"  correlation(k, e) = {result.correlation[0, 1]:+.3f}")
    flags = {"the fit of all samples": result.converged}
    if first is not None:
        flags[f"stage 1, the fit of the samples up to {FIRST_WINDOW:g} s,"] = first.converged
    lines += convergence_warnings(flags)
    lines.append(f"wrote {', '.join(str(p) for p in paths)} in {time.perf_counter() - start:.1f} s")
    return "\n".join(lines)
