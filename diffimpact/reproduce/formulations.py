"""[Gismeros Moreno 2022] §4.1, figs. 10–16: the break shot under the four formulations at two default time steps.

The paper compares the standard Lagrange multipliers, Baumgarte's
stabilisation, the augmented Lagrangian and the direct correction of Marqués
et al. (its §2.3) on its billiard model: the break of the first experiment
(cue ball and the first three balls of the rack, ``diffimpact.scenes.billiard``,
with gravity and the cloth's normal forces), run with Matlab's ODE integrator
at "default time steps" of 0.01 s and 0.00001 s. It reports the cue ball's
spurious motion off the x-axis, the symmetry axis of the shot (figs. 12–15: y
and ÿ), and the computing times (fig. 16).

Here the default time step is the largest step of the adaptive Tsit5
controller (``simulate(..., max_step=...)``), which the controller reduces
where the error demands it (at the contacts). The paper's tolerances are not
stated: Matlab's defaults (ode45: RelTol 1e-3, AbsTol 1e-6) are assumed, so
that the step limit matters. The only kinematic constraints of the model are
the four Euler-parameter normalisations, so ‖Φ‖ is the drift of the balls'
orientations off unit quaternions.

Recorded per formulation and step: the cue ball's y(t) and ÿ(t) (central
differences of the saved ẏ), ‖Φ‖ and ‖Φ̇‖, the mirror error max |y_blue +
y_red| (the two back balls must move symmetrically), the yellow ball's x(t)
(fig. 11: the paper finds it moving back after the break for this α, which
it checked against a non-smooth model and judged wrong) and the balls'
heights (fig. 10). The contact events of the last run go to
``formulations-events.csv`` (force, member: the contact is ``billiard.contact_names()[force][member]``).
CPU time is split into compile time (first call minus
second call at 0.01 s) and run time (a later call; the step limit is a traced
argument, so the small step reuses the compiled function); wall-clock with
``block_until_ready`` on one CPU device, so it depends on the machine and its
load. ``quick``: 0.15 s at steps of 0.01 s and 0.001 s.
"""

import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import simulate
from diffimpact.reproduce._io import figure, save_figure, write_csv, write_events
from diffimpact.reproduce.double_pendulum import COLOURS, FORMULATION_LABELS, FORMULATIONS
from diffimpact.scenes import billiard

#: Largest steps (s): the paper's two "default time steps".
STEPS = (1e-2, 1e-5)
QUICK_STEPS = (1e-2, 1e-3)
#: Simulated time (s): the cue ball reaches the rack at 0.114 s.
DURATION = 0.2
QUICK_DURATION = 0.15
#: Matlab's default tolerances (ode45), assumed for the paper's runs.
TOLERANCES = dict(rtol=1e-3, atol=1e-6)
#: Contact events and turning points of the balls' bounces on the cloth over ``DURATION``.
MAX_EVENTS = 100
CUE, YELLOW, BLUE, RED = range(4)


def step_tag(max_step):
    """Column-name tag of a step size, in microseconds: 0.01 s -> ``h10000us``."""
    return f"h{max_step * 1e6:g}us"


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    result.q.block_until_ready()
    return result, time.perf_counter() - start


def measure(name, steps, duration, times):
    """Run the break under formulation ``name`` at each step limit.

    Returns ``{max_step: (trajectory, run time (s))}`` and the compile time (s).
    """
    p = billiard.Parameters()
    model, state = billiard.model(p), billiard.initial_state(p)
    max_steps = int(np.ceil(duration / min(steps))) + 10_000
    run = lambda h: simulate(  # noqa: E731
        model, state, times, FORMULATIONS[name], max_step=h, max_steps=max_steps, max_events=MAX_EVENTS,
        **TOLERANCES,
    )
    _, first = _timed(lambda: run(steps[0]))
    results = {}
    for h in steps:
        results[h] = _timed(lambda: run(h))
    return results, max(first - results[steps[0]][1], 0.0)


TIMING_COLUMNS = (
    "formulation", "max_step_s", "compile_s", "run_s", "steps", "events", "max_abs_y_cue_m",
    "max_abs_y_acceleration_cue_m_per_s2", "max_phi", "max_phi_dot_per_s", "max_mirror_error_m",
    "yellow_vx_end_m_per_s",
)


def run(out, quick=False, names=tuple(FORMULATIONS)):
    """Write ``formulations.csv``, ``formulations-timing.csv``, ``formulations-events.csv`` and ``formulations.png``.

    ``names`` selects formulations (keys of ``FORMULATIONS``); returns a summary.
    """
    unknown = set(names) - set(FORMULATIONS)
    if unknown or not names:
        raise ValueError(f"names must be a non-empty subset of {tuple(FORMULATIONS)}; got {names!r}")
    out = Path(out)
    steps = QUICK_STEPS if quick else STEPS
    duration = QUICK_DURATION if quick else DURATION
    times = jnp.linspace(0.0, duration, int(round(duration / 5e-4)) + 1)
    t = np.asarray(times)
    columns = {"t_s": t}
    timing = {key: [] for key in TIMING_COLUMNS}
    for index, name in enumerate(names):
        results, compile_time = measure(name, steps, duration, times)
        for h, (trajectory, run_time) in results.items():
            tag = step_tag(h)
            q, v = np.asarray(trajectory.q), np.asarray(trajectory.v)
            y_cue = billiard.position(q, CUE)[:, 1]
            y_acceleration = np.gradient(billiard.position(v, CUE)[:, 1], t)
            phi, phi_dot = np.asarray(trajectory.constraint_violation), np.asarray(trajectory.velocity_violation)
            mirror = np.abs(billiard.position(q, BLUE)[:, 1] + billiard.position(q, RED)[:, 1])
            columns[f"y_cue_m_{name}_{tag}"] = y_cue
            columns[f"y_acceleration_cue_m_per_s2_{name}_{tag}"] = y_acceleration
            columns[f"phi_{name}_{tag}"] = phi
            columns[f"phi_dot_per_s_{name}_{tag}"] = phi_dot
            columns[f"x_yellow_m_{name}_{tag}"] = billiard.position(q, YELLOW)[:, 0]
            for ball in (CUE, YELLOW):
                columns[f"z_{billiard.BALLS[ball]}_m_{name}_{tag}"] = billiard.position(q, ball)[:, 2]
            row = (index, h, compile_time, run_time, int(trajectory.steps), int(trajectory.events.count),
                   np.abs(y_cue).max(), np.abs(y_acceleration).max(), phi.max(), phi_dot.max(), mirror.max(),
                   billiard.position(v, YELLOW)[-1, 0])
            for key, value in zip(TIMING_COLUMNS, row):
                timing[key].append(value)
    write_csv(out / "formulations.csv", columns)
    write_csv(out / "formulations-timing.csv", timing)
    # the contact events of the last run (the last formulation at the smallest step)
    events = trajectory.events
    count = int(events.count)
    write_events(out / "formulations-events.csv", events)
    names_of_forces = billiard.contact_names()
    _plot(columns, timing, names, steps, out / "formulations.png")

    lines = [
        f"Gismeros Moreno et al. 2022 §4.1: the break (cue ball and three rack balls), {duration:g} s, adaptive Tsit5 "
        f"(rtol = {TOLERANCES['rtol']:g}, atol = {TOLERANCES['atol']:g}) with a largest step",
        "  formulation index: " + ", ".join(f"{i} = {name}" for i, name in enumerate(names)),
        f"  {'formulation':<22} {'step (s)':>8} {'max|y_cue| (m)':>14} {'max|ÿ_cue|':>10} {'max|Φ|':>9} "
        f"{'max|Φ̇| (1/s)':>12} {'mirror (m)':>10} {'yellow ẋ(end)':>13} {'steps':>6} {'events':>6} "
        f"{'compile (s)':>11} {'run (s)':>8}",
    ]
    for i in range(len(timing["max_step_s"])):
        name = names[int(timing["formulation"][i])]
        lines.append(
            f"  {FORMULATION_LABELS[name]:<22} {timing['max_step_s'][i]:8.0e} {timing['max_abs_y_cue_m'][i]:14.2e} "
            f"{timing['max_abs_y_acceleration_cue_m_per_s2'][i]:10.2e} {timing['max_phi'][i]:9.2e} "
            f"{timing['max_phi_dot_per_s'][i]:12.2e} {timing['max_mirror_error_m'][i]:10.2e} "
            f"{timing['yellow_vx_end_m_per_s'][i]:13.4f} {timing['steps'][i]:6d} {timing['events'][i]:6d} "
            f"{timing['compile_s'][i]:11.2f} {timing['run_s'][i]:8.2f}"
        )
    lines.append(f"  contact events ({FORMULATION_LABELS[names[-1]]}, step ≤ {steps[-1]:g} s):")
    for t_event, force, member, onset in zip(events.t[:count], events.contact[:count], events.member[:count],
                                             events.onset[:count]):
        name = names_of_forces[int(force)][int(member)]
        lines.append(f"    {float(t_event):.6f} s  {name:<14} {'onset' if onset else 'separation'}")
    return "\n".join(lines)


def _plot(columns, timing, names, steps, path):
    fig, axes = figure(len(steps), 5, width=3.6)
    t = columns["t_s"]
    panels = (
        ("y_cue_m", "cue ball y (m)", "figs. 12/14", False),
        ("y_acceleration_cue_m_per_s2", "cue ball ÿ (m/s²)", "figs. 13/15", False),
        ("phi", r"$\|\Phi\|$ (Euler parameters)", "drift", True),
        ("x_yellow_m", "yellow ball x (m)", "fig. 11", False),
    )
    for row, h in enumerate(steps):
        for col, (key, label, source, log) in enumerate(panels):
            ax = axes[row, col]
            for name in names:
                values = columns[f"{key}_{name}_{step_tag(h)}"]
                plot = ax.semilogy if log else ax.plot
                plot(t, np.maximum(np.abs(values), 1e-18) if log else values, label=FORMULATION_LABELS[name],
                     color=COLOURS[name], linewidth=0.9)
            ax.set(xlabel="t (s)", ylabel=label, title=f"{source}, step ≤ {h:g} s")
        axes[row, 0].legend(fontsize=7)
    # Fig. 16: run time per step limit (top) and compile time (bottom).
    formulation = np.asarray(timing["formulation"], dtype=int)
    limits = np.asarray(timing["max_step_s"])
    x = np.arange(len(names))
    ticks = [FORMULATION_LABELS[n].split(" (")[0].replace(" ", "\n", 1) for n in names]
    ax = axes[0, 4]
    width = 0.8 / len(steps)
    for k, h in enumerate(steps):
        chosen = limits == h
        ax.bar(x[formulation[chosen]] + (k - (len(steps) - 1) / 2) * width, np.asarray(timing["run_s"])[chosen],
               width, label=f"step ≤ {h:g} s")
    ax.set_yscale("log")
    ax.set(ylabel="run time (s)", title="fig. 16: CPU time (later call)")
    ax.set_xticks(x, ticks, fontsize=7)
    ax.legend(fontsize=7)
    if len(steps) > 1:
        ax = axes[1, 4]
        chosen = limits == steps[0]
        ax.bar(x[formulation[chosen]], np.asarray(timing["compile_s"])[chosen], 0.5, color="gray")
        ax.set(ylabel="compile time (s)", title="compile time (first − second call)")
        ax.set_xticks(x, ticks, fontsize=7)
    save_figure(fig, path)
