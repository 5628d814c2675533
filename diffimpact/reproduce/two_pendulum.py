"""[Poursina 2020] §6, figs. 11–12: impacts of two pendulums with three impact models.

(a) eq. (50): Hertz + linear damper with the optimal damping of each impact;
(b) Hunt–Crossley, eq. (9), with the damping factor of eq. (16);
(c) instantaneous impacts with Newton's restitution (impulse–momentum).
The geometry is reconstructed in ``diffimpact.scenes.two_pendulum``.
"""

from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.io import figure, save_figure, write_csv
from diffimpact.multibody import AdaptiveSteps, LagrangeMultipliers, simulate
from diffimpact.scenes import two_pendulum as tp

LABELS = {"optimal": "eq. (50), optimal damping", "hunt_crossley": "Hunt–Crossley, eq. (16)", "newton": "Newton, impulse–momentum"}
STYLES = {"newton": "-", "optimal": "--", "hunt_crossley": ":"}
TOLERANCES = dict(rtol=1e-9, atol=1e-9)


def _run(p, kind, times, contact_history=False):
    return simulate(tp.model(p, kind), tp.initial_state(p), times, LagrangeMultipliers(),
                    steps=AdaptiveSteps(**TOLERANCES), contact_history=contact_history)


def _impacts(p, kind, events):
    """(onset time, s on rod 1, θ̇₁, θ̇₂ after the impact) per impact."""
    count = int(events.count)
    onsets = [i for i in range(count) if bool(events.onset[i])]
    rows = []
    for i in onsets:
        after = i if kind == "newton" else i + 1  # the impulse, or the separation event
        rates = np.asarray(tp.angular_velocities(events.v[after]))
        rows.append((float(events.t[i]), float(tp.contact_arc_length(p, events.q[i])), *rates))
    return rows


def run(out, quick=False):
    """Write ``two-pendulum.csv`` and ``two-pendulum.png`` under ``out``; return a summary.

    About 1.5 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    out = Path(out)
    p = tp.Parameters()
    times = jnp.linspace(0.0, tp.DURATION, 401 if quick else 1601)
    columns, impacts, contact = {"t_s": np.asarray(times)}, {}, {}
    for kind in tp.MODELS:
        trajectory = _run(p, kind, times)
        rates = np.asarray(tp.angular_velocities(trajectory.v))
        columns[f"theta1_dot_rad_per_s_{kind}"] = rates[:, 0]
        columns[f"theta2_dot_rad_per_s_{kind}"] = rates[:, 1]
        impacts[kind] = _impacts(p, kind, trajectory.events)
        if kind != "newton":
            # First contact, resolved on a fine grid between its onset and separation events.
            onset, separation = (float(x) for x in trajectory.events.t[:2])
            window = np.linspace(onset, separation, 60 if quick else 300)
            fine = _run(p, kind, jnp.asarray(np.union1d(np.asarray(times), window)), contact_history=True)
            inside = np.isin(np.asarray(fine.t), window)
            history = fine.contact_history[1]  # penetration (m) and normal force (N) at the saves inside it
            contact[kind] = (np.asarray(history.penetration[inside, 0]), np.asarray(history.normal_force[inside, 0]))
    write_csv(out / "two-pendulum.csv", columns)
    _plot(columns, contact, out / "two-pendulum.png")
    lines = ["Poursina and Nikravesh 2020 §6: two pendulums, e = 0.3, n = 3/2, k = 1e8 N/m^1.5, 8 s"]
    for kind in tp.MODELS:
        lines.append(f"{LABELS[kind]}: {len(impacts[kind])} impacts")
        for t, s, w1, w2 in impacts[kind]:
            lines.append(f"  t = {t:.5f} s at s = {s:.3f} m on rod 1: θ̇1+ = {w1:+.5f}, θ̇2+ = {w2:+.5f} rad/s")
    for kind, (penetration, force) in contact.items():
        lines.append(f"first contact, {LABELS[kind]}: max δ = {penetration.max():.3e} m, max f = {force.max():.1f} N")
    return "\n".join(lines)


def _plot(columns, contact, path):
    fig, axes = figure(1, 3)
    for k in (1, 2):
        ax = axes[0, k - 1]
        for kind in tp.MODELS:
            ax.plot(columns["t_s"], columns[f"theta{k}_dot_rad_per_s_{kind}"], STYLES[kind], label=LABELS[kind])
        ax.set(xlabel="t (s)", ylabel=f"θ̇{k} (rad/s)", title=f"fig. 11: θ̇{k}")
    axes[0, 0].legend(fontsize=7)
    ax = axes[0, 2]
    for kind, (penetration, force) in contact.items():
        ax.plot(penetration * 1e3, force, STYLES[kind], label=LABELS[kind])
    ax.set(xlabel="δ (mm)", ylabel="f (N)", title="fig. 12: first contact")
    ax.legend(fontsize=7)
    save_figure(fig, path)
