"""[Sypniewska-Kamińska 2017], section 4 and figs. 5–7: the double pendulum, with and without the obstacle.

(a) Without the obstacle: eq. (3) in minimal coordinates against the
    absolute-coordinate model under the four formulations of [Gismeros Moreno 2022] §2.3
    (angle differences, energy drift), and the energy at ψ₁ = ψ₂ = 0 against the
    paper's −40.007 J.
(b) With the floor at D = 0.9 m: compliant disk–floor collisions with
    restitution 0.9 and Coulomb friction μ = 0 and μ = 0.15 (the paper's two
    simulations), and the paper's own model, rigid impacts by Routh's method
    (``dp.simulate_routh``), for both. Energy over time (fig. 5) and the
    angular velocities of both links (figs. 6–7), the number of collisions and
    the energy level after each.

The modelling choices for the obstacle are in ``diffimpact.scenes.double_pendulum``.
The paper does not state its simulated time; we run 6 s (3 s with ``quick``)
and list every collision time so the counts can be read for any duration.
In the paper's own model (Routh) 6 s gives its counts, six collisions for
μ = 0 and ten for μ = 0.15; so does any duration in [5.854 s, 6.022 s), and
no other.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import (
    AdaptiveSteps,
    AugmentedLagrangian,
    Baumgarte,
    ContactEvents,
    DirectCorrection,
    LagrangeMultipliers,
    simulate,
)
from diffimpact.io import figure, save_figure, write_csv
from diffimpact.scenes import double_pendulum as dp

#: Simulated time with the obstacle (s); the paper does not state its own (see the module docstring).
DURATION = 6.0
#: Simulated time of the comparison without the obstacle (s).
FREE_DURATION = 5.0
#: Numbers stated in [Sypniewska-Kamińska 2017] §4: collisions "in time of simulation".
PAPER_COLLISIONS = {0.0: 6, 0.15: 10}
FORMULATIONS = {
    "lagrange": LagrangeMultipliers(),
    "baumgarte": Baumgarte(),
    "augmented": AugmentedLagrangian(),
    "direct": DirectCorrection(),
}
FORMULATION_LABELS = {
    "lagrange": "Lagrange multipliers",
    "baumgarte": "Baumgarte (α = β = 5)",
    "augmented": "augmented Lagrangian",
    "direct": "direct correction",
}
TOLERANCES = dict(rtol=1e-10, atol=1e-10)
COLOURS = {"minimal": "black", "lagrange": "tab:blue", "baumgarte": "tab:orange", "augmented": "tab:green",
           "direct": "tab:red"}
OBSTACLE_TOLERANCES = dict(rtol=1e-9, atol=1e-9)
#: Cases of ``obstacle_case``: compliant contact, and the rigid Newton impact (μ = 0 only) of ``simulate``.
CASES = ("mu0", "mu0p15", "rigid_mu0")
#: Cases of the reproduction: compliant contact and Sypniewska-Kamińska et al.'s (2017) Routh impacts (``dp.simulate_routh``).
STUDY_CASES = ("mu0", "mu0p15", "routh_mu0", "routh_mu0p15")
# Case names go into CSV column names: no "." (NumPy's genfromtxt drops it from names).
LABELS = {"mu0": "μ = 0, compliant", "mu0p15": "μ = 0.15, compliant", "rigid_mu0": "μ = 0, rigid (Newton, e = 0.9)",
          "routh_mu0": "μ = 0, Routh (rigid, k = 0.9)", "routh_mu0p15": "μ = 0.15, Routh (rigid, k = 0.9)"}
STYLES = {"mu0": dict(color="black"), "mu0p15": dict(color="red"),
          "rigid_mu0": dict(color="tab:blue", linestyle="--", linewidth=0.9),
          "routh_mu0": dict(color="tab:gray", linestyle="--", linewidth=0.9),
          "routh_mu0p15": dict(color="tab:orange", linestyle="--", linewidth=0.9)}


def _wrapped(angle):
    return np.arctan2(np.sin(angle), np.cos(angle))


def free_comparison(p, times):
    """Part (a): per formulation, |ψ − ψ_minimal| (rad, (len(t), 2)) and E − E₀ (J)."""
    psi0, dpsi0 = jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES)
    psi_minimal, dpsi_minimal = dp.simulate_minimal(p, psi0, dpsi0, times, **TOLERANCES)
    energy_minimal = np.asarray([float(dp.minimal_energy(p, a, b)) for a, b in zip(psi_minimal, dpsi_minimal)])
    model, state = dp.model(p), dp.initial_state(p)
    results = {"minimal": (np.zeros((len(times), 2)), energy_minimal - energy_minimal[0])}
    for name, formulation in FORMULATIONS.items():
        run = simulate(model, state, times, formulation, steps=AdaptiveSteps(**TOLERANCES))
        difference = np.abs(_wrapped(np.asarray(dp.angles(run.q)) - np.asarray(psi_minimal)))
        energy = np.asarray(run.energy)
        results[name] = (difference, energy - energy[0])
    return results


def obstacle_case(p, case, times, max_events):
    """Part (b): the trajectory of one case (see ``CASES``) and its model."""
    friction = 0.15 if case == "mu0p15" else 0.0
    model = dp.obstacle_model(p, dp.Obstacle(friction=friction), rigid=case == "rigid_mu0")
    run = simulate(model, dp.initial_state(p), times, LagrangeMultipliers(),
                   steps=AdaptiveSteps(**OBSTACLE_TOLERANCES), events=ContactEvents(max_events=max_events))
    return model, run


def collisions(p, case, run):
    """Per collision: onset time (s), pendulum energy before and after it (J), ψ̇ after it (rad/s).

    The energy is kinetic plus gravitational (the elastic energy of the contact
    excluded). "Before" is taken at the onset event and "after" at the
    separation event; for the rigid case, whose events store the state after
    the impulse, "before" is the level after the previous collision (or E(0)),
    since no force does work between collisions.
    """
    events = run.events
    count = int(events.count)
    rows = []
    level = float(run.energy[0])
    for i in range(count):
        if not bool(events.onset[i]):
            continue
        rigid = case == "rigid_mu0"
        after = i if rigid else i + 1
        if after >= count:  # still in contact at the end of the run
            continue
        before_energy = level if rigid else float(dp.energy(p, events.q[i], events.v[i]))
        after_energy = level = float(dp.energy(p, events.q[after], events.v[after]))
        rates = np.asarray(dp.angular_velocities(events.v[after]))
        rows.append((float(events.t[i]), before_energy, after_energy, *rates))
    return np.array(rows).reshape(-1, 5)


def _routh_run(p, obstacle, times, max_collisions):
    """``dp.simulate_routh`` with the pendulum's energy: ψ, ψ̇ and E (J) at ``times``, the collision rows, and
    E before and after each collision."""
    psi, dpsi, rows = dp.simulate_routh(p, obstacle, times, max_collisions)
    energy = jax.vmap(lambda a, b: dp.minimal_energy(p, a, b))
    angles = jnp.asarray(rows[:, 1:3])
    return (psi, dpsi, np.asarray(energy(jnp.asarray(psi), jnp.asarray(dpsi))), rows,
            np.asarray(energy(angles, jnp.asarray(rows[:, 3:5]))), np.asarray(energy(angles, jnp.asarray(rows[:, 5:7]))))


def routh_case(p, case, times, max_collisions):
    """Sypniewska-Kamińska et al.'s (2017) model for ``routh_mu0`` / ``routh_mu0p15``: energy (J), ψ̇ (rad/s), gap (m) at ``times``
    and the collision table of ``collisions``."""
    obstacle = dp.Obstacle(friction=0.15 if case.endswith("0p15") else 0.0)
    psi, dpsi, energy, rows, before, after = _routh_run(p, obstacle, times, max_collisions)
    table = np.column_stack([rows[:, 0], before, after, rows[:, 5:7]])
    return energy, dpsi, np.asarray(dp.gap(p, obstacle, jnp.asarray(psi))), table


def run(out, quick=False):
    """Write ``double-pendulum.csv``, ``double-pendulum-collisions.csv``,
    ``double-pendulum-free.csv`` and ``double-pendulum.png`` under ``out``; return a summary.

    About 1.5 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    out = Path(out)
    p = dp.Parameters()
    lines = []

    # (a) without the obstacle
    free_duration = 2.0 if quick else FREE_DURATION
    free_times = jnp.linspace(0.0, free_duration, 201 if quick else 501)
    free = free_comparison(p, free_times)
    zero = jnp.zeros(2)
    equilibrium_minimal = float(dp.minimal_energy(p, zero, zero))
    rest = dp.initial_state(p, zero, zero)
    equilibrium_absolute = float(dp.energy(p, rest.q, rest.v))
    lines.append(f"(a) no obstacle, {free_duration:g} s, rtol = atol = 1e-10: absolute coordinates vs eq. (3)")
    lines.append(f"  {'formulation':<22} {'max|Δψ1| (rad)':>15} {'max|Δψ2| (rad)':>15} {'max|E−E0| (J)':>14}")
    for name, (difference, energy_error) in free.items():
        label = "minimal (eq. (3))" if name == "minimal" else FORMULATION_LABELS[name]
        d1, d2 = (f"{x:15.2e}" for x in difference.max(axis=0)) if name != "minimal" else ("", "")
        lines.append(f"  {label:<22} {d1:>15} {d2:>15} {np.abs(energy_error).max():14.2e}")
    lines.append(
        f"  energy at ψ1 = ψ2 = 0: {equilibrium_minimal:.4f} J (eq. (3)), {equilibrium_absolute:.4f} J "
        f"(absolute); paper: about {dp.EQUILIBRIUM_ENERGY} J"
    )

    # (b) with the obstacle
    duration = 3.0 if quick else DURATION
    times = jnp.linspace(0.0, duration, 1501 if quick else 3001)
    obstacle = dp.Obstacle()
    columns = {"t_s": np.asarray(times)}
    table = {}
    for case in STUDY_CASES:
        if case.startswith("routh"):
            energy, rates, gaps, table[case] = routh_case(p, case, times, max_collisions=40)
        else:
            model, trajectory = obstacle_case(p, case, times, max_events=24 if quick else 64)
            energy, rates = np.asarray(trajectory.energy), np.asarray(dp.angular_velocities(trajectory.v))
            gaps = np.asarray(dp.gap(p, obstacle, dp.angles(trajectory.q)))
            table[case] = collisions(p, case, trajectory)
        columns[f"energy_J_{case}"] = energy
        columns[f"psi1_dot_rad_per_s_{case}"] = rates[:, 0]
        columns[f"psi2_dot_rad_per_s_{case}"] = rates[:, 1]
        columns[f"gap_m_{case}"] = gaps
    write_csv(out / "double-pendulum.csv", columns)
    collision_columns = {"case_mu": [], "routh": [], "index": [], "t_onset_s": [], "energy_before_J": [],
                         "energy_after_J": [], "psi1_dot_after_rad_per_s": [], "psi2_dot_after_rad_per_s": []}
    for case in STUDY_CASES:
        for k, row in enumerate(table[case]):
            collision_columns["case_mu"].append(0.15 if case.endswith("0p15") else 0.0)
            collision_columns["routh"].append(1.0 if case.startswith("routh") else 0.0)
            collision_columns["index"].append(k + 1)
            for name, value in zip(list(collision_columns)[3:], row):
                collision_columns[name].append(value)
    write_csv(out / "double-pendulum-collisions.csv", collision_columns)
    free_columns = {"t_s": np.asarray(free_times)}
    for name, (difference, energy_error) in free.items():
        if name != "minimal":
            free_columns[f"abs_dpsi1_rad_{name}"] = difference[:, 0]
            free_columns[f"abs_dpsi2_rad_{name}"] = difference[:, 1]
        free_columns[f"energy_error_J_{name}"] = energy_error
    write_csv(out / "double-pendulum-free.csv", free_columns)
    _plot(columns, free_columns, out / "double-pendulum.png")

    energy0 = float(columns["energy_J_mu0"][0])
    lines.append(
        f"(b) floor at D = {float(obstacle.distance):g} m, e = {float(obstacle.restitution):g}, "
        f"K = {float(obstacle.stiffness):.0e} N/m^1.5, {duration:g} s; E(0) = {energy0:.4f} J"
    )
    for case in STUDY_CASES:
        rows = table[case]
        paper = PAPER_COLLISIONS[0.15 if case.endswith("0p15") else 0.0]
        paper_text = f" (paper: {paper} in its unstated simulated time)"
        lines.append(f"  {LABELS[case]}: {len(rows)} collisions in {duration:g} s{paper_text}")
        for k, (t, before, after, w1, w2) in enumerate(rows, 1):
            lines.append(f"    {k:2d}: t = {t:.4f} s, E {before:8.3f} -> {after:8.3f} J, "
                         f"ψ̇1+ = {w1:+.3f}, ψ̇2+ = {w2:+.3f} rad/s")
    first = {case: table[case][0, 1] - table[case][0, 2] for case in STUDY_CASES if len(table[case])}
    lines.append("  first-collision energy loss (J): " + ", ".join(f"{first[c]:.3f} ({LABELS[c]})" for c in first)
                 + "; paper: much larger with friction")
    for mu, key in (("0", "mu0"), ("0.15", "mu0p15")):
        compliant, routh = table[key], table[f"routh_{key}"]
        # With friction the two part after the first collision, so only that one compares like with like.
        n = min(len(compliant), len(routh), 1 if mu == "0.15" else len(routh))
        if n:
            dt_max = np.max(np.abs(compliant[:n, 0] - routh[:n, 0]))
            de_max = np.max(np.abs(compliant[:n, 2] - routh[:n, 2]))
            lines.append(f"  compliant vs Routh, μ = {mu}, first {n} collisions: |Δt| ≤ {dt_max * 1e3:.2f} ms, "
                         f"|ΔE after| ≤ {de_max:.3f} J")
    return "\n".join(lines)


def _plot(columns, free_columns, path):
    fig, axes = figure(2, 3, width=4.6)
    t = columns["t_s"]
    titles = {"energy_J": "fig. 5: mechanical energy", "psi1_dot_rad_per_s": "fig. 6: ψ̇1 of rod OA",
              "psi2_dot_rad_per_s": "fig. 7: ψ̇2 of the second part"}
    ylabels = {"energy_J": "E (J)", "psi1_dot_rad_per_s": "ψ̇1 (rad/s)", "psi2_dot_rad_per_s": "ψ̇2 (rad/s)"}
    for ax, quantity in zip(axes[0], titles):
        for case in STUDY_CASES:
            ax.plot(t, columns[f"{quantity}_{case}"], label=LABELS[case], **STYLES[case])
        ax.set(xlabel="t (s)", ylabel=ylabels[quantity], title=titles[quantity])
    axes[0, 0].axhline(dp.EQUILIBRIUM_ENERGY, color="gray", linestyle=":", linewidth=0.8,
                       label="E at ψ1 = ψ2 = 0 (−40.007 J)")
    axes[0, 0].legend(fontsize=7)
    tf = free_columns["t_s"]
    ax = axes[1, 0]
    for name in FORMULATIONS:
        ax.semilogy(tf, np.maximum(free_columns[f"abs_dpsi2_rad_{name}"], 1e-16), label=FORMULATION_LABELS[name],
                    color=COLOURS[name], linewidth=0.9)
    ax.set(xlabel="t (s)", ylabel="|ψ2 − ψ2,eq.(3)| (rad)", title="(a) no obstacle: vs minimal coordinates")
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    for name in ("minimal", *FORMULATIONS):
        label = "minimal, eq. (3)" if name == "minimal" else FORMULATION_LABELS[name]
        ax.semilogy(tf, np.maximum(np.abs(free_columns[f"energy_error_J_{name}"]), 1e-16), label=label,
                    color=COLOURS[name], linewidth=0.9)
    ax.set(xlabel="t (s)", ylabel="|E − E(0)| (J)", title="(a) no obstacle: energy drift")
    ax.legend(fontsize=7)
    ax = axes[1, 2]
    for case in STUDY_CASES:
        ax.plot(t, columns[f"gap_m_{case}"] * 1e3, label=LABELS[case], **STYLES[case])
    ax.axhline(0.0, color="gray", linewidth=0.6)
    ax.set(xlabel="t (s)", ylabel="f (mm)", title="(b) gap f of eq. (7), disk to floor")
    ax.legend(fontsize=7, loc="upper right")
    save_figure(fig, path)


def run_routh(out, quick=False):
    """[Sypniewska-Kamińska 2017] figs. 5–9 by its own model, rigid impacts through ``diffimpact.impulse.routh``,
    μ = 0 and 0.15.

    Writes ``routh-double-pendulum.csv`` (energy, ψ̇₁, ψ̇₂ and the joint forces
    R, P at O and H, V at A between collisions, ``dp.joint_reactions``),
    ``routh-double-pendulum-collisions.csv`` (time, energy before and after,
    and the arrangement of Fig. 4 at each collision) and
    ``routh-double-pendulum.png``; returns a summary.

    About 15 s on a 2-core machine, compiling included (``quick``: about 10 s).
    """
    out = Path(out)
    p = dp.Parameters()
    duration = 3.0 if quick else DURATION
    times = jnp.linspace(0.0, duration, 1501 if quick else 3001)
    reactions = jax.jit(jax.vmap(lambda t, psi, dpsi: dp.joint_reactions(p, t, psi, dpsi)))
    columns, collision_columns = {"t_s": np.asarray(times)}, {}
    lines = [f"Sypniewska-Kamińska et al. 2017 §4 by Routh's method (diffimpact.impulse.routh), k = 0.9, {duration:g} s"]
    for mu in (0.0, 0.15):
        key = "mu0p15" if mu else "mu0"
        psi, dpsi, energy, rows, before, after = _routh_run(p, dp.Obstacle(friction=mu), times, max_collisions=40)
        forces = np.asarray(reactions(times, jnp.asarray(psi), jnp.asarray(dpsi)))
        columns.update({f"energy_J_{key}": energy, f"psi1_dot_rad_per_s_{key}": dpsi[:, 0],
                        f"psi2_dot_rad_per_s_{key}": dpsi[:, 1]})
        columns.update({f"{name}_N_{key}": forces[:, i] for i, name in enumerate("RPHV")})
        for name, values in (("mu", np.full(len(rows), mu)), ("index", np.arange(1, len(rows) + 1)),
                             ("t_s", rows[:, 0]), ("energy_before_J", before), ("energy_after_J", after),
                             ("fig4_case", rows[:, 7])):
            collision_columns.setdefault(name, []).extend(values)
        cases = "".join("abcde"[int(c)] for c in rows[:, 7])
        lines.append(f"  μ = {mu:g}: {len(rows)} collisions (paper: {PAPER_COLLISIONS[mu]} in its run), energy "
                     f"{energy[0]:.3f} → {energy[-1]:.3f} J, Fig. 4 arrangements {cases}")
        lines.append(f"    first collision at {rows[0, 0]:.4f} s: {before[0]:.3f} → {after[0]:.3f} J")
    write_csv(out / "routh-double-pendulum.csv", columns)
    write_csv(out / "routh-double-pendulum-collisions.csv", collision_columns)
    _plot_routh(columns, out / "routh-double-pendulum.png")
    return "\n".join(lines)


def _plot_routh(columns, path):
    fig, axes = figure(2, 3)
    t = columns["t_s"]
    panels = [("energy_J", "mechanical energy E (J)", "Fig. 5: energy"),
              ("psi1_dot_rad_per_s", "ψ̇₁ (rad/s)", "Fig. 6: angular velocity of OA"),
              ("psi2_dot_rad_per_s", "ψ̇₂ (rad/s)", "Fig. 7: angular velocity of link 2"),
              (("R_N", "P_N"), "force at O (N)", "Fig. 8: joint O, R (dotted) and P (solid)"),
              (("H_N", "V_N"), "force at A (N)", "Fig. 9: joint A, H (dotted) and V (solid)")]
    for axis, (names, ylabel, title) in zip(axes.flat, panels):
        # μ = 0 drawn wider underneath: the two runs coincide until the first collision
        for key, colour, width, label in (("mu0", "black", 2.2, "μ = 0"), ("mu0p15", "red", 0.9, "μ = 0.15")):
            if isinstance(names, str):
                axis.plot(t, columns[f"{names}_{key}"], color=colour, lw=width, label=label)
            else:
                axis.plot(t, columns[f"{names[0]}_{key}"], color=colour, lw=0.5 * width, ls=":",
                          label=f"{label}, {names[0][0]}")
                axis.plot(t, columns[f"{names[1]}_{key}"], color=colour, lw=width, label=f"{label}, {names[1][0]}")
        axis.set_xlabel("time t (s)")
        axis.set_ylabel(ylabel)
        axis.set_title(title, fontsize=9)
        axis.legend(fontsize=7)
    axes.flat[-1].axis("off")
    fig.suptitle("Double pendulum and rough obstacle by Routh's method (Sypniewska-Kamińska et al. 2017 §4; between collisions only: "
                 "the impulsive joint forces at collisions are not drawn)", fontsize=9)
    save_figure(fig, path)
