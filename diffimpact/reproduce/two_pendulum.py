"""[Poursina 2020] §6, figs. 11–12: impacts of two pendulums with three impact models.

(a) eq. (50): Hertz + linear damper with the optimal damping of each impact;
(b) Hunt–Crossley, eq. (9), with the damping factor of eq. (16);
(c) instantaneous impacts with Newton's restitution (impulse–momentum).
The geometry is reconstructed in ``diffimpact.scenes.two_pendulum``.
"""

from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import LagrangeMultipliers, simulate
from diffimpact.multibody.contact import resolve_at_onset
from diffimpact.reproduce._io import figure, save_figure, write_csv
from diffimpact.scenes import two_pendulum as tp

LABELS = {"optimal": "eq. (50), optimal damping", "hunt_crossley": "Hunt–Crossley, eq. (16)", "newton": "Newton, impulse–momentum"}
STYLES = {"newton": "-", "optimal": "--", "hunt_crossley": ":"}
TOLERANCES = dict(rtol=1e-9, atol=1e-9)


def _run(p, kind, times):
    return simulate(tp.model(p, kind), tp.initial_state(p), times, LagrangeMultipliers(), **TOLERANCES)


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
    """Write ``two-pendulum.csv`` and ``two-pendulum.png`` under ``out``; return a summary."""
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
            fine = _run(p, kind, jnp.asarray(np.union1d(np.asarray(times), window)))
            inside = np.isin(np.asarray(fine.t), window)
            contact[kind] = _contact_history(tp.model(p, kind), fine, inside)
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


def _contact_history(model, trajectory, inside):
    """Penetration (m) and contact force (N) at the saved states ``inside`` the first contact."""
    events = trajectory.events
    contact = resolve_at_onset(model, model.forces[1], events.q[0], events.v[0], events.t[0])
    split = lambda x: model.split(jnp.asarray(x))  # noqa: E731
    q, v = np.asarray(trajectory.q)[inside], np.asarray(trajectory.v)[inside]
    penetration = np.array([float(contact.penetration(split(x))[0]) for x in q])
    force = np.array([float(contact.normal_force(split(x), split(y))[0]) for x, y in zip(q, v)])
    return penetration, force


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
