"""Seed 000 §4.1, figs. 12–16 (planar analogue): constraint drift and CPU time of the four formulations.

The paper compares the standard Lagrange multipliers, Baumgarte's
stabilisation, the augmented Lagrangian and the direct correction of Marqués
et al. (its §2.3) on a 3-D billiard model run with Matlab's ODE integrator at
"default time steps" of 0.01 s and 0.00001 s, reporting the spurious motion of
a ball that should stay on the x-axis (figs. 12–15) and the computing times
(fig. 16). The billiard model itself (spatial bodies, cloth and ball–ball
contacts) is not built here yet; the analogue is the double pendulum of
seed 002 without the obstacle (two planar bodies, two revolute joints: four
constraint equations; ``diffimpact.scenes.double_pendulum``), run for 3 s from
the paper's initial state of seed 002 §4.

The runs use fixed steps (``simulate(..., dt=...)``, Tsit5) of the paper's
two sizes, 0.01 s and 0.00001 s (``quick``: 0.01 s and 0.001 s over 1 s), so
that the step is the one compared. Recorded per formulation and step: the
position and velocity constraint violations ‖Φ‖, ‖Φ̇‖ over time (the drift
the stabilisations exist to remove), the energy error (the motion conserves
energy: the analogue of the ball's spurious y-motion), the largest angle
error against eq. (3) of seed 002 in minimal coordinates (adaptive, rtol =
atol = 1e-12), and the CPU time split into compile time (first call minus
second call at the large step) and run time (second call; one call at the
small step, which reuses the compiled function since the step is a traced
argument). Times are wall-clock with ``block_until_ready``, on one CPU
device, and depend on the machine and its load.
"""

import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import simulate
from diffimpact.reproduce._io import figure, save_figure, write_csv
from diffimpact.reproduce.double_pendulum import COLOURS, FORMULATION_LABELS, FORMULATIONS, _wrapped
from diffimpact.scenes import double_pendulum as dp

#: Fixed step sizes (s): the paper's two "default time steps".
STEPS = (1e-2, 1e-5)
QUICK_STEPS = (1e-2, 1e-3)
DURATION = 3.0
QUICK_DURATION = 1.0


def step_tag(dt):
    """Column-name tag of a step size, in microseconds: 0.01 s -> ``dt10000us``."""
    return f"dt{dt * 1e6:g}us"


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    result.q.block_until_ready()
    return result, time.perf_counter() - start


def measure(name, steps, duration, times):
    """Run formulation ``name`` at each fixed step.

    Returns ``{dt: (trajectory, run time (s))}`` and the compile time (s).
    """
    p = dp.Parameters()
    model, state = dp.model(p), dp.initial_state(p)
    max_steps = int(np.ceil(duration / min(steps))) + 16
    run = lambda dt: simulate(model, state, times, FORMULATIONS[name], dt=dt, max_steps=max_steps)  # noqa: E731
    _, first = _timed(lambda: run(steps[0]))
    results = {}
    for dt in steps:
        results[dt] = _timed(lambda: run(dt))
    return results, max(first - results[steps[0]][1], 0.0)


def run(out, quick=False, names=tuple(FORMULATIONS)):
    """Write ``formulations.csv``, ``formulations-timing.csv`` and ``formulations.png`` under ``out``.

    ``names`` selects formulations (keys of ``FORMULATIONS``); returns a summary.
    """
    unknown = set(names) - set(FORMULATIONS)
    if unknown or not names:
        raise ValueError(f"names must be a non-empty subset of {tuple(FORMULATIONS)}; got {names!r}")
    out = Path(out)
    steps = QUICK_STEPS if quick else STEPS
    duration = QUICK_DURATION if quick else DURATION
    times = jnp.linspace(0.0, duration, 101 if quick else 301)
    p = dp.Parameters()
    psi_reference, _ = dp.simulate_minimal(
        p, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES), times, rtol=1e-12, atol=1e-12
    )
    columns = {"t_s": np.asarray(times)}
    timing = {key: [] for key in ("formulation", "dt_s", "compile_s", "run_s", "max_phi_m", "max_phi_dot_m_per_s",
                                  "max_energy_error_J", "max_angle_error_rad")}
    for index, name in enumerate(names):
        results, compile_time = measure(name, steps, duration, times)
        for dt, (trajectory, run_time) in results.items():
            tag = step_tag(dt)
            phi, phi_dot = np.asarray(trajectory.constraint_violation), np.asarray(trajectory.velocity_violation)
            energy = np.asarray(trajectory.energy)
            angle_error = np.abs(_wrapped(np.asarray(dp.angles(trajectory.q)) - np.asarray(psi_reference)))
            columns[f"phi_m_{name}_{tag}"] = phi
            columns[f"phi_dot_m_per_s_{name}_{tag}"] = phi_dot
            columns[f"energy_error_J_{name}_{tag}"] = energy - energy[0]
            for key, value in zip(timing, (index, dt, compile_time, run_time, phi.max(), phi_dot.max(),
                                           np.abs(energy - energy[0]).max(), angle_error.max())):
                timing[key].append(value)
    write_csv(out / "formulations.csv", columns)
    write_csv(out / "formulations-timing.csv", timing)
    _plot(columns, timing, names, steps, out / "formulations.png")

    lines = [
        f"seed 000 §4.1 analogue: double pendulum of seed 002 (no obstacle), {duration:g} s, fixed-step Tsit5",
        "  formulation index: " + ", ".join(f"{i} = {name}" for i, name in enumerate(names)),
        f"  {'formulation':<22} {'dt (s)':>7} {'max|Φ| (m)':>11} {'max|Φ̇| (m/s)':>13} {'max|ΔE| (J)':>11} "
        f"{'max|Δψ| (rad)':>13} {'compile (s)':>11} {'run (s)':>8}",
    ]
    for i in range(len(timing["dt_s"])):
        name = names[int(timing["formulation"][i])]
        lines.append(
            f"  {FORMULATION_LABELS[name]:<22} {timing['dt_s'][i]:7.0e} {timing['max_phi_m'][i]:11.2e} "
            f"{timing['max_phi_dot_m_per_s'][i]:13.2e} {timing['max_energy_error_J'][i]:11.2e} "
            f"{timing['max_angle_error_rad'][i]:13.2e} {timing['compile_s'][i]:11.2f} {timing['run_s'][i]:8.3f}"
        )
    return "\n".join(lines)


def _plot(columns, timing, names, steps, path):
    fig, axes = figure(len(steps), 4, width=4.0)
    t = columns["t_s"]
    panels = (("phi_m", r"$\|\Phi\|$ (m)"), ("phi_dot_m_per_s", r"$\|\dot\Phi\|$ (m/s)"),
              ("energy_error_J", "|E − E(0)| (J)"))
    for row, dt in enumerate(steps):
        for col, (key, label) in enumerate(panels):
            ax = axes[row, col]
            for name in names:
                values = np.abs(columns[f"{key}_{name}_{step_tag(dt)}"])
                ax.semilogy(t, np.maximum(values, 1e-18), label=FORMULATION_LABELS[name], color=COLOURS[name],
                            linewidth=0.9)
            ax.set(xlabel="t (s)", ylabel=label, title=f"{label.split(' (')[0]}, dt = {dt:g} s")
        axes[row, 0].legend(fontsize=7)
    # Fig. 16 analogue: run time per step size, and compile time.
    formulation = np.asarray(timing["formulation"], dtype=int)
    dts = np.asarray(timing["dt_s"])
    x = np.arange(len(names))
    ax = axes[0, 3]
    width = 0.8 / len(steps)
    for k, dt in enumerate(steps):
        chosen = dts == dt
        ax.bar(x[formulation[chosen]] + (k - (len(steps) - 1) / 2) * width, np.asarray(timing["run_s"])[chosen],
               width, label=f"dt = {dt:g} s")
    ax.set_yscale("log")
    ax.set(ylabel="run time (s)", title="fig. 16: CPU time (second call)")
    ax.set_xticks(x, [FORMULATION_LABELS[n].split(" (")[0].replace(" ", "\n", 1) for n in names], fontsize=7)
    ax.legend(fontsize=7)
    ax = axes[1, 3] if len(steps) > 1 else None
    if ax is not None:
        chosen = dts == steps[0]
        ax.bar(x[formulation[chosen]], np.asarray(timing["compile_s"])[chosen], 0.5, color="gray")
        ax.set(ylabel="compile time (s)", title="compile time (first − second call)")
        ax.set_xticks(x, [FORMULATION_LABELS[n].split(" (")[0].replace(" ", "\n", 1) for n in names], fontsize=7)
    save_figure(fig, path)
