"""[Gismeros Moreno 2022] §4.1, figs. 10–16: the four-ball break on the table, 3 s, under the four formulations; Table 3's α sweep.

The paper's first experiment: the cue ball shot at 10.729 m/s along +x at the
first three balls of the rack, on the table with its cushions, integrated by
Matlab's ODE integrator for 3 s (its analysis times were 3 s and 4 s) at
"default time steps" of 0.01 s and 0.00001 s. Here the scene is
``billiard.table_model(p, balls=4)`` from ``billiard.break_state(p, balls=4)``
(cloth with the pockets' holes, gravity, the six ball pairs, the six
cushions; α = 2.1325735e-4 m, the "random" arrangement the paper used to
compare the formulations), run as ``table.integrate`` runs the 16-ball break:
adaptive Tsit5 with contact events and the near distance, rtol = 1e-3 and
atol = 1e-6 (Matlab's ode45 defaults, assumed: the paper does not state its
tolerances, and with tight ones the step limit would not matter; ode45 takes
the largest scaled error, ``simulate`` diffrax's root mean square, which on
the table makes the same rtol looser: docs/design/table-settings.md, "A ball's inertia under a drift of |p|"). The
"default time step" is the largest step of the controller
(``AdaptiveSteps(max_step=...)``), which it reduces where the error demands.

Two studies, each compiled once per formulation (the step limit, the state
and the values of the save times are traced; every run saves at ``SAVES``
times):

* **Formulations** (figs. 12–16): the standard Lagrange multipliers,
  Baumgarte's stabilisation, the augmented Lagrangian and the direct
  correction (``double_pendulum.FORMULATIONS``), each for ``DURATION`` = 3 s
  at the default step 0.01 s (the paper's run; ``formulations.csv``, one
  column set per formulation) and over the first ``WINDOW`` = 0.2 s (the
  break: the cue ball reaches the rack at 0.114 s, no ball a cushion before
  0.21 s) at 1e-5 s (``formulations-small-step.csv``). At 1e-5 s the whole
  3 s is 300,000 steps: it is run for ``LONG_SMALL_STEP`` (the Lagrange
  multipliers) alone, a timing row without saved columns; the other three
  would add about as much each again. Recorded: the balls' centres; the
  cue ball's ÿ (central differences of the saved ẏ; figs. 13, 15);
  ‖Φ‖ and ‖Φ̇‖ (the only kinematic constraints are the four Euler-parameter
  normalisations, so ‖Φ‖ is the drift of the orientations off unit
  quaternions); the mirror error |x_blue − x_red| + |y_blue + y_red| (the
  rack and the shot are symmetric about y = 0). ``formulations-timing.csv``
  has a row per run: compile time (first call minus second call of the 3-s
  run at 0.01 s) and run time (the second call, or the only one) apart,
  wall-clock with ``block_until_ready`` on one CPU device (it depends on the
  machine and its load), steps, segments, events, the largest drift and
  mirror error, the yellow ball's x and ẋ at the end, and how many balls were
  pocketed (``billiard.pocketed``). The contact events of each formulation's
  3-s run go to ``formulations-events-<name>.csv`` (force, member and the
  contact's name, ``billiard.table_contact_names(4)[force][member]``).
  ``formulations.png``: y, ÿ, ‖Φ‖ and the yellow ball's x at both steps,
  and the run and compile times (fig. 16).
* **α sweep** (Table 3, figs. 10–11): the rack's spacing α (neighbouring
  centres d = 2R + α apart, fig. 9) set to each of ``ALPHAS``, 3 s at the
  0.01-s step under ``SWEEP_FORMULATION``, Baumgarte's stabilisation: the
  paper ran its "first model" (the one of fig. 10) with it. Table 3's values
  are not in our copy of the paper. Its text says the first four values
  "were set to determine the minimum precision of the model", names
  10⁻⁶ m and the random 2.1325735 × 10⁻⁴ m, and says α should lie in
  10⁻⁹–10⁻⁷ m; **assumed** here: α ∈ {1e-9, 1e-8, 1e-7, 1e-6,
  2.1325735e-4} m. Recorded (``formulations-alpha.csv``): the rise of the
  cue and yellow balls above their resting heights, z − z(0) (fig. 10: the
  paper's balls rose for small α as they rolled, hardly at all for the
  random α), and the yellow ball's x (fig. 11: with α = 1e-6 the yellow
  ball struck the red and blue ones at t ≈ 0.7 s; with the random α it moved
  back, −x, after the break, which a non-smooth model showed to be wrong);
  one row per α in ``formulations-alpha-summary.csv``;
  ``formulations-alpha.png``. The model is our fine-tuned one (gravity and
  the cloth's normal forces in, as in the paper's comparison of
  formulations), not the paper's first model, whose differences the text
  does not give.

``quick``: ``QUICK_DURATION`` (0.3 s: the break and the back balls' first
cushion) at 0.01 s, the window ``QUICK_WINDOW`` at 1e-3 s, no 3-s run at the
small step, and ``QUICK_ALPHAS``.
"""

import dataclasses
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.io import figure, save_figure, write_csv, write_events
from diffimpact.reproduce import table
from diffimpact.reproduce.double_pendulum import COLOURS, FORMULATION_LABELS, FORMULATIONS
from diffimpact.scenes import billiard

#: Largest steps (s): the paper's two "default time steps" (quick: 0.01 s and 1e-3 s).
STEPS, QUICK_STEPS = (1e-2, 1e-5), (1e-2, 1e-3)
#: Simulated time of the paper's run (s); quick: the break and the first cushion contacts.
DURATION, QUICK_DURATION = 3.0, 0.3
#: Simulated time at the small step (s): the break.
WINDOW, QUICK_WINDOW = 0.2, 0.15
#: The formulation also run for ``DURATION`` at the small step (not in quick runs).
LONG_SMALL_STEP = "lagrange"
#: Save times per run: the same number in every run, so that one compilation serves them all.
SAVES = 1501
#: Contact events allowed in a run (the 3-s runs have 30–46; an unused slot costs about 30 µs: ``table.MAX_EVENTS``).
MAX_EVENTS = 500
#: Matlab's CPU times for this break (s), [Gismeros Moreno 2022] §4.1: the fine-tuned model with the random α, and
#: the model with the cloth's normal forces and gravity at the low α.
MATLAB_SECONDS = (440.0, 15_500.0)
#: Rack spacings α of Table 3 (m): assumed, see the module docstring; the last is the paper's "random" one.
ALPHAS = (1e-9, 1e-8, 1e-7, 1e-6, 2.1325735e-4)
QUICK_ALPHAS = (1e-7, 2.1325735e-4)
#: End of the break (s): the balls' first collisions are over by 0.116 s (the cue ball reaches the rack at 0.114 s).
AFTER_BREAK = 0.2
#: Formulation of the α sweep: the paper's "first model" ran under Baumgarte's stabilisation.
SWEEP_FORMULATION = "baumgarte"
BALLS = 4
CUE, YELLOW, BLUE, RED = range(BALLS)
#: Index of the ball–cushion family in ``billiard.table_model``'s forces.
CUSHION_FORCE = billiard.TABLE_FORCES.index("ball–cushion")


def step_tag(max_step):
    """Tag of a step size, in microseconds: 0.01 s -> ``h10000us``."""
    return f"h{max_step * 1e6:g}us"


def alpha_state(alpha, p=None):
    """The four-ball break (``billiard.break_state``) with the rack's spacing α = ``alpha`` (m)."""
    p = billiard.Parameters() if p is None else p
    return billiard.break_state(dataclasses.replace(p, spacing=alpha), balls=BALLS)


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    result.q.block_until_ready()
    return result, time.perf_counter() - start


def series(trajectory):
    """Saved series of a run: every ball's centre, the cue ball's ÿ, ‖Φ‖, ‖Φ̇‖ and the blue/red mirror error."""
    t, q, v = np.asarray(trajectory.t), np.asarray(trajectory.q), np.asarray(trajectory.v)
    columns = {}
    for ball, name in enumerate(billiard.BALLS):
        for axis, label in enumerate("xyz"):
            columns[f"{label}_{name}_m"] = billiard.position(q, ball)[:, axis]
    columns["y_acceleration_cue_m_per_s2"] = np.gradient(billiard.position(v, CUE)[:, 1], t)
    columns["phi"] = np.asarray(trajectory.constraint_violation)
    columns["phi_dot_per_s"] = np.asarray(trajectory.velocity_violation)
    blue, red = billiard.position(q, BLUE), billiard.position(q, RED)
    columns["mirror_error_m"] = np.abs(blue[:, 0] - red[:, 0]) + np.abs(blue[:, 1] + red[:, 1])
    return columns


def summarise(p, trajectory, columns):
    """One run's numbers: steps, segments, events, largest |y_cue|, |ÿ_cue|, ‖Φ‖, ‖Φ̇‖, mirror error, yellow x and ẋ
    at the end, the energy at the start and the end and its largest rise (``table.energy_rise``), and the balls
    pocketed (``billiard.pocketed``)."""
    dropped = billiard.pocketed(p, trajectory, balls=BALLS)
    energy = np.asarray(trajectory.energy)
    return dict(
        steps=int(trajectory.steps), segments=int(trajectory.segments), events=int(trajectory.events.count),
        max_abs_y_cue_m=np.abs(columns["y_cue_m"]).max(),
        max_abs_y_acceleration_cue_m_per_s2=np.abs(columns["y_acceleration_cue_m_per_s2"]).max(),
        max_phi=columns["phi"].max(), max_phi_dot_per_s=columns["phi_dot_per_s"].max(),
        max_mirror_error_m=columns["mirror_error_m"].max(), x_yellow_end_m=columns["x_yellow_m"][-1],
        yellow_vx_end_m_per_s=billiard.position(np.asarray(trajectory.v), YELLOW)[-1, 0],
        energy_start_J=energy[0], energy_end_J=energy[-1],
        max_energy_rise_J=table.energy_rise(energy), pocketed=len(dropped), dropped=dropped,
    )


TIMING_COLUMNS = (
    "formulation", "max_step_s", "duration_s", "compile_s", "run_s", "steps", "segments", "events",
    "max_abs_y_cue_m", "max_abs_y_acceleration_cue_m_per_s2", "max_phi", "max_phi_dot_per_s", "max_mirror_error_m",
    "x_yellow_end_m", "yellow_vx_end_m_per_s", "energy_start_J", "energy_end_J", "max_energy_rise_J", "pocketed",
)
ALPHA_COLUMNS = (
    "alpha_m", "run_s", "steps", "segments", "events", "max_z_rise_cue_m", "max_z_rise_yellow_m", "x_yellow_end_m",
    "yellow_back_onsets_break", "yellow_back_onsets_later", "first_later_yellow_back_onset_s", "max_phi",
    "max_mirror_error_m", "energy_end_J", "max_energy_rise_J", "pocketed",
)


def _check_names(names):
    unknown = set(names) - set(FORMULATIONS)
    if unknown or not names:
        raise ValueError(f"names must be a non-empty subset of {tuple(FORMULATIONS)}; got {names!r}")


def run(out, quick=False, names=tuple(FORMULATIONS)):
    """Write the files of the module docstring (``formulations*.csv``, ``formulations.png``,
    ``formulations-alpha.png``).

    ``names`` selects formulations (keys of ``FORMULATIONS``); returns a summary.

    About 2.5 min on a 2-core machine, compiling included (``quick``: about 1.5 min).
    """
    _check_names(names)
    out = Path(out)
    p = billiard.Parameters()
    model = billiard.table_model(p, balls=BALLS)
    state = billiard.break_state(p, balls=BALLS)
    large, small = QUICK_STEPS if quick else STEPS
    duration, window = (QUICK_DURATION, QUICK_WINDOW) if quick else (DURATION, WINDOW)
    times, window_times = jnp.linspace(0.0, duration, SAVES), jnp.linspace(0.0, window, SAVES)

    def integrate(name, state, times, max_step):
        return _timed(lambda: table.integrate(model, state, times, MAX_EVENTS, FORMULATIONS[name], max_step))

    # runs: (name, max_step, duration) -> (columns, summary, compile (s), run (s))
    runs, events = {}, {}
    for name in names:
        _, first = integrate(name, state, times, large)
        trajectory, run_time = integrate(name, state, times, large)
        compile_time = max(first - run_time, 0.0)
        columns = series(trajectory)
        runs[name, large, duration] = (columns, summarise(p, trajectory, columns), compile_time, run_time)
        events[name] = trajectory.events
        write_events(out / f"formulations-events-{name}.csv", trajectory.events, billiard.table_contact_names(BALLS))
        trajectory, run_time = integrate(name, state, window_times, small)
        columns = series(trajectory)
        runs[name, small, window] = (columns, summarise(p, trajectory, columns), compile_time, run_time)
        if name == LONG_SMALL_STEP and not quick:
            print(f"  {FORMULATION_LABELS[name]}: {duration:g} s at steps of at most {small:g} s ...", flush=True)
            trajectory, run_time = integrate(name, state, times, small)
            columns = series(trajectory)
            runs[name, small, duration] = (None, summarise(p, trajectory, columns), compile_time, run_time)

    for (h, span), path in (((large, duration), "formulations.csv"), ((small, window), "formulations-small-step.csv")):
        t = np.asarray(times if span == duration else window_times)
        write_csv(out / path, {"t_s": t, **{f"{key}_{name}": values for name in names
                                           for key, values in runs[name, h, span][0].items()}})
    timing = {key: [] for key in TIMING_COLUMNS}
    for (name, h, span), (_, summary, compile_time, run_time) in runs.items():
        row = dict(summary, formulation=names.index(name), max_step_s=h, duration_s=span, compile_s=compile_time,
                   run_s=run_time)
        for key in TIMING_COLUMNS:
            timing[key].append(row[key])
    write_csv(out / "formulations-timing.csv", timing)
    _plot(runs, names, ((large, duration), (small, window)), np.asarray(times), np.asarray(window_times),
          out / "formulations.png")

    alphas = QUICK_ALPHAS if quick else ALPHAS
    sweep = alpha_sweep(p, model, alphas, times, lambda state: integrate(SWEEP_FORMULATION, state, times, large))
    write_csv(out / "formulations-alpha.csv", {"t_s": np.asarray(times), **sweep["columns"]})
    write_csv(out / "formulations-alpha-summary.csv", sweep["summary"])
    _plot_alpha(np.asarray(times), sweep["columns"], alphas, out / "formulations-alpha.png")
    return _report(runs, names, events, sweep["summary"], duration, large)


def alpha_sweep(p, model, alphas, times, integrate):
    """Table 3: the break from ``alpha_state(α)`` for each α of ``alphas``, run by ``integrate(state)``.

    Returns ``{"columns": …, "summary": …}``: z − z(0) of the cue and yellow balls and the yellow ball's x per α
    (tag ``a<index>``), and a row per α (``ALPHA_COLUMNS``).
    """
    columns, summary = {}, {key: [] for key in ALPHA_COLUMNS}
    pair_names = billiard.table_contact_names(BALLS)[billiard.TABLE_FORCES.index("ball–ball")]
    yellow_back = [k for k, name in enumerate(pair_names) if name.split("–")[0] == "yellow"]  # with blue, red
    for index, alpha in enumerate(alphas):
        trajectory, run_time = integrate(alpha_state(alpha, p))
        saved = series(trajectory)
        rise = {ball: saved[f"z_{ball}_m"] - saved[f"z_{ball}_m"][0] for ball in ("cue", "yellow")}
        columns[f"z_rise_cue_m_a{index}"] = rise["cue"]
        columns[f"z_rise_yellow_m_a{index}"] = rise["yellow"]
        columns[f"x_yellow_m_a{index}"] = saved["x_yellow_m"]
        events = trajectory.events
        count = int(events.count)
        force, member = np.asarray(events.contact[:count]), np.asarray(events.member[:count])
        onset, t_event = np.asarray(events.onset[:count]), np.asarray(events.t[:count])
        # the yellow ball's onsets with the blue and red balls, in the break and later (fig. 11's second strike)
        yellow = (force == billiard.TABLE_FORCES.index("ball–ball")) & np.isin(member, yellow_back) & onset
        later = t_event[yellow & (t_event > AFTER_BREAK)]
        numbers = summarise(p, trajectory, saved)
        row = dict(alpha_m=alpha, run_s=run_time, steps=numbers["steps"], segments=numbers["segments"],
                   events=numbers["events"], max_z_rise_cue_m=rise["cue"].max(), max_z_rise_yellow_m=rise["yellow"].max(),
                   x_yellow_end_m=numbers["x_yellow_end_m"],
                   yellow_back_onsets_break=int(np.count_nonzero(yellow)) - len(later),
                   yellow_back_onsets_later=len(later),
                   first_later_yellow_back_onset_s=later[0] if len(later) else np.nan, max_phi=numbers["max_phi"],
                   max_mirror_error_m=numbers["max_mirror_error_m"], energy_end_J=numbers["energy_end_J"],
                   max_energy_rise_J=numbers["max_energy_rise_J"], pocketed=numbers["pocketed"])
        for key in ALPHA_COLUMNS:
            summary[key].append(row[key])
    return {"columns": columns, "summary": summary}


def _report(runs, names, events, sweep, duration, large):
    lines = [
        f"Gismeros Moreno et al. 2022 §4.1: the four-ball break on the table (six cushions), adaptive Tsit5 "
        f"(rtol = {table.TOLERANCES['rtol']:g}, atol = {table.TOLERANCES['atol']:g}) with a largest step",
        f"  {'formulation':<22} {'step (s)':>8} {'t (s)':>5} {'compile (s)':>11} {'run (s)':>8} "
        + " ".join(f"{f'Matlab {m:g} s':>13}" for m in MATLAB_SECONDS)
        + f" {'steps':>7} {'segments':>8} {'events':>6} {'max|y_cue|':>10} {'max|Φ|':>9} {'max|Φ̇| (1/s)':>12} "
          f"{'mirror (m)':>10} {'yellow x(end)':>13} {'E0, E(end) (J)':>15} {'E rise (J)':>10} pocketed",
    ]
    for (name, h, span), (_, s, compile_time, run_time) in runs.items():
        dropped = ", ".join(f"{ball} ({pocket}, {t:.3f} s)" for t, ball, pocket in s["dropped"]) or "none"
        lines.append(
            f"  {FORMULATION_LABELS[name]:<22} {h:8.0e} {span:5.2g} {compile_time:11.1f} {run_time:8.2f} "
            + " ".join(f"{m / run_time:12.0f}×" for m in MATLAB_SECONDS)
            + f" {s['steps']:7d} {s['segments']:8d} {s['events']:6d} {s['max_abs_y_cue_m']:10.2e} "
              f"{s['max_phi']:9.2e} {s['max_phi_dot_per_s']:12.2e} {s['max_mirror_error_m']:10.2e} "
              f"{s['x_yellow_end_m']:13.4f} {s['energy_start_J']:7.3f} {s['energy_end_J']:7.3f} "
              f"{s['max_energy_rise_J']:10.2e} {dropped}"
        )
    lines.append("  (Matlab columns: Matlab's time / our run time.)")
    contact_names = billiard.table_contact_names(BALLS)
    name = names[0]
    ev = events[name]
    count = int(ev.count)
    kept = [k for k in range(count) if int(ev.contact[k]) != billiard.TABLE_FORCES.index("cloth")]
    lines.append(f"  ball–ball and ball–cushion events ({FORMULATION_LABELS[name]}, {duration:g} s, step ≤ {large:g} s; "
                 f"{count - len(kept)} cloth events not listed):")
    for k in kept:
        lines.append(f"    {float(ev.t[k]):.6f} s  {contact_names[int(ev.contact[k])][int(ev.member[k])]:<28} "
                     f"{'onset' if bool(ev.onset[k]) else 'separation'}")
    lines.append(f"  α sweep (Table 3, α assumed), {FORMULATION_LABELS[SWEEP_FORMULATION]}, {duration:g} s, "
                 f"step ≤ {large:g} s:")
    lines.append(f"  {'α (m)':>13} {'run (s)':>8} {'steps':>6} {'events':>6} {'cue rise (mm)':>13} "
                 f"{'yellow rise (mm)':>16} {'yellow x(end)':>13} {'Y–B/R break':>11} {'Y–B/R later':>11} {'first (s)':>9} "
                 f"{'max|Φ|':>9} {'mirror (m)':>10} {'E(end) (J)':>10} {'E rise (J)':>10} {'pocketed':>8}")
    for k, alpha in enumerate(sweep["alpha_m"]):
        lines.append(
            f"  {alpha:13.8g} {sweep['run_s'][k]:8.2f} {sweep['steps'][k]:6d} {sweep['events'][k]:6d} "
            f"{1e3 * sweep['max_z_rise_cue_m'][k]:13.3f} {1e3 * sweep['max_z_rise_yellow_m'][k]:16.3f} "
            f"{sweep['x_yellow_end_m'][k]:13.4f} {sweep['yellow_back_onsets_break'][k]:11d} "
            f"{sweep['yellow_back_onsets_later'][k]:11d} {sweep['first_later_yellow_back_onset_s'][k]:9.3f} "
            f"{sweep['max_phi'][k]:9.2e} "
            f"{sweep['max_mirror_error_m'][k]:10.2e} {sweep['energy_end_J'][k]:10.3f} "
            f"{sweep['max_energy_rise_J'][k]:10.2e} {sweep['pocketed'][k]:8d}"
        )
    lines.append(f"  (yellow x starts at {billiard.Parameters().rack_x:g} m; Y–B/R: the yellow ball's onsets with the "
                 f"blue and red balls up to {AFTER_BREAK:g} s and later, and the first later one)")
    return "\n".join(lines)


def _plot(runs, names, spans, t_long, t_window, path):
    fig, axes = figure(len(spans), 5, width=3.6)
    panels = (
        ("y_cue_m", "cue ball y (m)", ("fig. 12", "fig. 14"), False),
        ("y_acceleration_cue_m_per_s2", "cue ball ÿ (m/s²)", ("fig. 13", "fig. 15"), False),
        ("phi", r"$\|\Phi\|$ (Euler parameters)", ("drift", "drift"), True),
        ("x_yellow_m", "yellow ball x (m)", ("fig. 11", "fig. 11"), False),
    )
    for row, (h, span) in enumerate(spans):
        t = t_long if row == 0 else t_window
        for col, (key, label, sources, log) in enumerate(panels):
            ax = axes[row, col]
            for name in names:
                values = runs[name, h, span][0][key]
                plot = ax.semilogy if log else ax.plot
                plot(t, np.maximum(np.abs(values), 1e-18) if log else values, label=FORMULATION_LABELS[name],
                     color=COLOURS[name], linewidth=0.9)
            ax.set(xlabel="t (s)", ylabel=label, title=f"{sources[row]}, step ≤ {h:g} s")
        axes[row, 0].legend(fontsize=7)
    # Fig. 16: run time of every run (top) and compile time (bottom).
    x = np.arange(len(names))
    ticks = [FORMULATION_LABELS[n].split(" (")[0].replace(" ", "\n", 1) for n in names]
    ax = axes[0, 4]
    keys = sorted({(h, span) for _, h, span in runs}, key=lambda k: (-k[0], k[1]))
    width = 0.8 / len(keys)
    for k, (h, span) in enumerate(keys):
        chosen = [i for i, name in enumerate(names) if (name, h, span) in runs]
        ax.bar(x[chosen] + (k - (len(keys) - 1) / 2) * width, [runs[names[i], h, span][3] for i in chosen], width,
               label=f"{span:g} s, step ≤ {h:g} s")
    ax.set_yscale("log")
    ax.set(ylabel="run time (s)", title="fig. 16: CPU time (later call)")
    ax.set_xticks(x, ticks, fontsize=7)
    ax.legend(fontsize=7)
    ax = axes[1, 4]
    ax.bar(x, [runs[(name, *spans[0])][2] for name in names], 0.5, color="gray")
    ax.set(ylabel="compile time (s)", title="compile time (first − second call)")
    ax.set_xticks(x, ticks, fontsize=7)
    save_figure(fig, path)


def _plot_alpha(t, columns, alphas, path):
    fig, axes = figure(1, 3, width=4.2)
    colours = [f"C{k}" for k in range(len(alphas))]
    panels = (("z_rise_cue_m", 1e3, "cue ball z − z(0) (mm)", "fig. 10: cue ball"),
              ("z_rise_yellow_m", 1e3, "yellow ball z − z(0) (mm)", "fig. 10: yellow ball"),
              ("x_yellow_m", 1.0, "yellow ball x (m)", "fig. 11: yellow ball x"))
    for ax, (key, scale, label, title) in zip(axes[0], panels):
        for k, alpha in enumerate(alphas):
            ax.plot(t, scale * columns[f"{key}_a{k}"], color=colours[k], linewidth=0.8, label=f"α = {alpha:.8g} m")
        ax.set(xlabel="t (s)", ylabel=label, title=f"{title} ({FORMULATION_LABELS[SWEEP_FORMULATION]})")
    axes[0, 2].legend(fontsize=7)
    save_figure(fig, path)
