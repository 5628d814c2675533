"""[Gismeros Moreno 2022] §§4.2–4.3: the cut shot (figs. 17–19) and the cushion shot (figs. 20–21), beside the reference models.

``run_cushion`` (``billiards-cushion``):

* the straight shot of fig. 20: a pool ball at (1, 0.55) m shot at
  2.724 m/s along +y, without spin, into the long cushion at y = 0.635 m,
  0.2 s (Gismeros Moreno et al.'s plane cushion at centre height and undamped cloth);
* head-on impacts of a rolling snooker ball (Mathavan et al.'s ball,
  M = 0.1406 kg, R = 26.25 mm) at 0.25–3.5 m/s (fig. 21): the rebound speed
  right after the impact (at the cushion's separation event) of the compliant
  cushion at centre height (Gismeros Moreno et al.'s faces) and at the nose height 7R/5
  (``Cushion``), beside the rigid-cushion model of Mathavan et al. 2010
  (``diffimpact.impulse.mathavan_2010``) and their measured rebounds
  (``data/mathavan2010_cushion_rebound.csv``);
* oblique impacts, α = 5°…90° from the cushion line, without spin and
  rolling, at 0.5, 1.5 and 3 m/s: rebound speed and angle of both compliant
  cushions beside the Mathavan model.

The compliant cushions use Lankarani–Nikravesh with e = 0.98 and Ambrósio's
friction with μ = 0.14 ([Gismeros Moreno 2022] §3.3), and the cloth's sliding friction
μ_s = 0.212 of Mathavan et al.; the nose-height cushion runs on a cloth
damped at the critical ratio (``billiard.Parameters.cloth_damping_ratio``),
since on Gismeros Moreno et al.'s undamped cloth the cushion's push into the cloth comes
back as a jump. Each ball starts 2 mm before the cushion (rolling balls
roll there unchanged; a ball without spin slides those 2 mm).

``run_deflection`` (``billiards-deflection``): the second experiment. The
cue ball slides without spin at 3 mph from (0, 0) towards the object ball at
x = 0.635 m, and at 7 mph from (−0.635, 0) towards x = 0 (Gismeros Moreno et al.'s
positions), hitting it at the ball-hit fractions f ∈ {0.05, …, 0.95} (the
object ball sits 2R(1 − f) off the x-axis), with ball–ball friction
Threlfall μ = 0.06 (v0 = 0.01 m/s) or Alciatore's μ(v), for
``DEFLECTION_DURATION`` s. Recorded: the cut angle at the onset (line of
centres against the cue ball's velocity), the cue ball's final direction
against the aim line (deflection) beside eq. (4.1), and the object ball's
direction right after the impact against the line of centres (throw) beside
TP A.14 evaluated with the cue ball's speed and spin at the onset.
"""

from pathlib import Path

import jax.numpy as jnp
import numpy as np

from diffimpact.contact import Alciatore, Threlfall
from diffimpact.impulse import alciatore, mathavan_2010
from diffimpact.io import data_file, figure, save_figure, write_csv
from diffimpact.multibody import AdaptiveSteps, ContactEvents, LagrangeMultipliers, State, simulate
from diffimpact.scenes import billiard

MPH = 0.44704  # m/s
HEAD_ON_SPEEDS = np.linspace(0.25, 3.5, 14)
OBLIQUE_ANGLES_DEG = np.arange(5.0, 91.0, 5.0)
OBLIQUE_SPEEDS = np.array([0.5, 1.5, 3.0])
STRAIGHT_SHOT = dict(x=1.0, y=0.55, speed=2.724, duration=0.2)
GEOMETRIES = ("plane", "nose")
GEOMETRY_LABELS = {"plane": "compliant, faces at centre height (Gismeros Moreno et al. 2022)", "nose": "compliant, nose at 7R/5"}


def cushion_parameters(geometry, **changes):
    """Snooker ``billiard.Parameters`` of the cushion study (``billiard.snooker``, μ_s = 0.212).

    ``"nose"``: the cushion at 7R/5 on the snooker table's bed (cloth on
    slate). ``"plane"``: Gismeros Moreno et al.'s cushion faces on Gismeros Moreno et al.'s cloth
    (E = 10 MPa, undamped Hertz).
    """
    if geometry == "plane":
        paper = billiard.Parameters()
        changes = {"cloth_modulus": paper.cloth_modulus, "cloth_damping_ratio": paper.cloth_damping_ratio, **changes}
    return billiard.snooker(**changes)


def _compliant_rebounds(geometry, speeds, incidences, topspins):
    speeds, incidences, topspins = (jnp.asarray(x, dtype=float) for x in (speeds, incidences, topspins))
    return np.asarray(billiard.cushion_rebounds(cushion_parameters(geometry), speeds, incidences, topspins,
                                                jnp.zeros_like(speeds), nose=geometry == "nose",
                                                max_events=12 if geometry == "nose" else 64))


def _straight_shot():
    p = billiard.Parameters(cloth_damping_ratio=0.0)
    shot = STRAIGHT_SHOT
    q, v = billiard.ball_state(p, [[shot["x"], shot["y"]]], [[0.0, shot["speed"]]])
    times = jnp.linspace(0.0, shot["duration"], 401)
    model = billiard.cushion_model(p, None)
    return simulate(model, State(q, v), times, LagrangeMultipliers(),
                    steps=AdaptiveSteps(**billiard.shot_tolerances()), events=ContactEvents(max_events=64)), p


def run_cushion(out, quick=False):
    """Write ``billiards-cushion.csv``, ``billiards-cushion-shot.csv`` and ``billiards-cushion.png``; return a summary.

    About 1 min on a 2-core machine, compiling included (``quick``: about 25 s).
    """
    out = Path(out)
    head_on = HEAD_ON_SPEEDS[::4] if quick else HEAD_ON_SPEEDS
    angles = np.radians(OBLIQUE_ANGLES_DEG[2::6] if quick else OBLIQUE_ANGLES_DEG)
    oblique_speeds = OBLIQUE_SPEEDS[1:2] if quick else OBLIQUE_SPEEDS
    # every case of the study, head-on (rolling) then oblique (no spin and rolling)
    cases = [(v, np.pi / 2, 1.0) for v in head_on]
    cases += [(v, a, w) for w in (0.0, 1.0) for v in oblique_speeds for a in angles]
    speed, incidence, topspin = (np.array(c) for c in zip(*cases))
    columns = {"speed_m_per_s": speed, "incidence_deg": np.degrees(incidence), "topspin_ratio": topspin}
    p = cushion_parameters("nose")
    rigid = mathavan_2010.cushion_rebound(speed, incidence, topspin * speed / p.radius, mass=p.mass, radius=p.radius,
                                          cloth_friction=p.cloth_friction)
    columns["rebound_speed_m_per_s_mathavan"] = np.asarray(rigid.speed)
    columns["rebound_angle_deg_mathavan"] = np.degrees(np.asarray(rigid.angle))
    for geometry in GEOMETRIES:
        velocity = _compliant_rebounds(geometry, speed, incidence, topspin)
        columns[f"rebound_speed_m_per_s_{geometry}"] = np.hypot(velocity[:, 0], velocity[:, 1])
        columns[f"rebound_angle_deg_{geometry}"] = np.degrees(np.arctan2(-velocity[:, 1], velocity[:, 0]))
        columns[f"rebound_vz_m_per_s_{geometry}"] = velocity[:, 2]
    write_csv(out / "billiards-cushion.csv", columns)
    shot, shot_params = _straight_shot()
    q, v = np.asarray(shot.q), np.asarray(shot.v)
    write_csv(out / "billiards-cushion-shot.csv", {
        "t_s": np.asarray(shot.t), "y_m": q[:, 1], "z_m": q[:, 2], "vy_m_per_s": v[:, 1],
        "speed_m_per_s": np.linalg.norm(v[:, :2], axis=1),
    })
    measured = np.genfromtxt(data_file("mathavan2010_cushion_rebound.csv"), delimiter=",", names=True)
    _plot_cushion(columns, len(head_on), (q, v, np.asarray(shot.t)), measured, out / "billiards-cushion.png")
    return _cushion_summary(columns, len(head_on), shot, measured)


def _cushion_summary(columns, head_on, shot, measured):
    lines = ["Gismeros Moreno et al. 2022 §4.3: ball–cushion impacts (snooker ball, e = 0.98, μ = 0.14, μ_s = 0.212)",
             f"  head-on, rolling: {'V (m/s)':>8} {'Mathavan':>9} {'plane':>9} {'nose':>9}   rebound/V"]
    for k in range(head_on):
        v = columns["speed_m_per_s"][k]
        ratios = [columns[f"rebound_speed_m_per_s_{m}"][k] / v for m in ("mathavan", *GEOMETRIES)]
        lines.append(f"                    {v:8.3f} " + " ".join(f"{r:9.4f}" for r in ratios))
    ratio = measured["rebound_speed_m_per_s"] / measured["incident_speed_m_per_s"]
    slow = measured["incident_speed_m_per_s"] < 2.5
    lines.append(f"  measured rebound/V: {ratio[slow].mean():.4f} (mean below 2.5 m/s), "
                 f"{ratio[~slow].mean():.4f} (above)")
    events = shot.events
    count = int(events.count)
    onsets = [float(events.t[i]) for i in range(count) if int(events.contact[i]) == billiard.CUSHION_FORCE and bool(events.onset[i])]
    lines.append(f"  straight shot (fig. 20): cushion contact at t = {onsets[0]:.4f} s; speed after it "
                 f"{float(np.linalg.norm(np.asarray(shot.v)[-1, :2])):.3f} m/s at t = {STRAIGHT_SHOT['duration']} s")
    return "\n".join(lines)


def _plot_cushion(columns, head_on, shot, measured, path):
    fig, axes = figure(2, 3, width=4.2)
    colours = {"mathavan": "k", "plane": "tab:blue", "nose": "tab:red"}
    labels = {"mathavan": "Mathavan et al. 2010 (rigid cushion)", **GEOMETRY_LABELS}
    ax = axes[0, 0]
    speed = columns["speed_m_per_s"][:head_on]
    for model in ("mathavan", *GEOMETRIES):
        ax.plot(speed, columns[f"rebound_speed_m_per_s_{model}"][:head_on] / speed, "-o", ms=3, color=colours[model],
                label=labels[model])
    ax.plot(measured["incident_speed_m_per_s"], measured["rebound_speed_m_per_s"] / measured["incident_speed_m_per_s"],
            "s", mfc="none", color="tab:green", label="measured (Mathavan et al. 2010, fig. 7)")
    ax.axvline(2.5, color="gray", lw=0.6, ls=":")
    ax.set(xlabel="incident speed V (m/s)", ylabel="rebound speed / V", title="fig. 21: head-on, rolling ball")
    ax.legend(fontsize=6)
    # oblique impacts: one panel per spin and quantity, a line style per speed (the rigid model's outputs scale
    # with V, so its lines would coincide: one is drawn)
    oblique = slice(head_on, None)
    speeds = np.unique(columns["speed_m_per_s"][oblique])
    styles = dict(zip(speeds, ("-", "--", ":")))
    for row, (key, unit) in enumerate((("rebound_speed_m_per_s", "rebound speed / V"),
                                       ("rebound_angle_deg", "rebound angle from the cushion (°)"))):
        for column, topspin in enumerate((0.0, 1.0)):
            ax = axes[row, 1 + column]
            for model in ("mathavan", *GEOMETRIES):
                for v in speeds[:1] if model == "mathavan" else speeds:
                    chosen = (columns["topspin_ratio"][oblique] == topspin) & (columns["speed_m_per_s"][oblique] == v)
                    values = columns[f"{key}_{model}"][oblique][chosen]
                    if row == 0:
                        values = values / v
                    ax.plot(columns["incidence_deg"][oblique][chosen], values, styles[v], color=colours[model],
                            lw=1.0, label="mathavan, any V" if model == "mathavan" else f"{model}, V = {v:g} m/s")
            if row == 1:
                ax.plot([0, 90], [0, 90], color="gray", lw=0.5, ls="-.", label="specular (α)")
            ax.set(xlabel="incidence α from the cushion (°)", ylabel=unit,
                   title=f"oblique, {'rolling' if topspin else 'no spin'}: {unit.split(' /')[0].split(' from')[0]}")
            ax.legend(fontsize=5, ncol=2)
    q, v, t = shot
    ax = axes[1, 0]
    ax.plot(t, q[:, 1], color="tab:blue", label="y (m)")
    ax.set(xlabel="t (s)", ylabel="y (m)", title="fig. 20: straight shot at 2.724 m/s, cloth of Gismeros Moreno et al. 2022")
    twin = ax.twinx()
    twin.plot(t, np.linalg.norm(v[:, :2], axis=1), color="tab:orange", label="speed (m/s)")
    twin.set_ylabel("horizontal speed (m/s)")
    ax.legend(loc="lower left", fontsize=7)
    twin.legend(loc="lower right", fontsize=7)
    save_figure(fig, path)


# --- the cut shot ([Gismeros Moreno 2022] §4.2) ----------------------------------------------------

FRACTIONS = np.array([0.05, 0.125, 0.25, 0.5, 0.75, 0.875, 0.95])
#: Shot speed (mph) -> Gismeros Moreno et al.'s (cue ball x, object ball x) (m).
SEED_POSITIONS = {3: (0.0, 0.635), 7: (-0.635, 0.0)}
FRICTIONS = {"threlfall": Threlfall(0.06, 0.01), "alciatore": Alciatore()}
FRICTION_LABELS = {"threlfall": "Threlfall μ = 0.06", "alciatore": "Alciatore μ(v)"}
DEFLECTION_DURATION = 1.5  # s: the cue ball hits by 0.5 s and rolls again within 0.5 s after


def deflection_parameters(**changes):
    """Gismeros Moreno et al.'s (2022) pool ``billiard.Parameters`` on a cloth damped at the critical ratio.

    On Gismeros Moreno et al.'s undamped cloth the vertical part of the ball–ball friction
    (the cue ball's topspin slides its contact point up or down) makes the
    balls bounce on the cloth without end (more than 24 events within 0.6 s);
    Gismeros Moreno et al. froze the balls' heights for the same reason (§4.1).
    """
    return billiard.Parameters(**{"cloth_damping_ratio": 1.0, **changes})


def run_deflection(out, quick=False):
    """Write ``billiards-deflection.csv`` and ``billiards-deflection.png``; return a summary.

    About 1.5 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    out = Path(out)
    fractions = FRACTIONS[1::2] if quick else FRACTIONS
    p = deflection_parameters()
    mph = np.repeat(np.array(list(SEED_POSITIONS), dtype=float), len(fractions))
    fraction = np.tile(fractions, len(SEED_POSITIONS))
    cue_x = np.array([SEED_POSITIONS[int(m)][0] for m in mph])
    object_x = np.array([SEED_POSITIONS[int(m)][1] for m in mph])
    cut = np.asarray(alciatore.cut_angle(fraction))
    columns = {key: [] for key in ("friction", "speed_mph", "fraction", "cut_angle_deg", "deflection_deg",
                                   "deflection_eq41_deg", "throw_deg", "throw_tpa14_deg", "cue_speed_at_impact_m_per_s",
                                   "cue_slip_end_m_per_s")}
    for index, (name, friction) in enumerate(FRICTIONS.items()):
        outcome = billiard.cut_shots(p, friction, *(jnp.asarray(x) for x in (mph * MPH, cut, cue_x, object_x)),
                                     jnp.full(len(mph), DEFLECTION_DURATION), rolling=False)
        outcome = {k: np.asarray(x) for k, x in outcome.items()}
        columns["friction"].append(np.full(len(mph), index))
        columns["speed_mph"].append(mph)
        columns["fraction"].append(fraction)
        columns["cut_angle_deg"].append(np.degrees(outcome["cut"]))
        columns["deflection_deg"].append(np.degrees(outcome["deflection"]))
        columns["deflection_eq41_deg"].append(np.degrees(np.asarray(alciatore.deflection_angle(outcome["cut"]))))
        columns["throw_deg"].append(np.degrees(outcome["throw"]))
        columns["throw_tpa14_deg"].append(np.degrees(outcome["throw_tpa14"]))
        columns["cue_speed_at_impact_m_per_s"].append(outcome["cue_speed_at_impact"])
        columns["cue_slip_end_m_per_s"].append(outcome["cue_slip_end"])
    columns = {k: np.concatenate(v) for k, v in columns.items()}
    write_csv(out / "billiards-deflection.csv", columns)
    _plot_deflection(columns, out / "billiards-deflection.png")
    lines = ["Gismeros Moreno et al. 2022 §4.2: cut shots, cue ball sliding without spin from the paper's positions "
             f"({DEFLECTION_DURATION:g} s); friction 0 = Threlfall μ = 0.06, 1 = Alciatore μ(v)",
             f"  {'friction':>8} {'mph':>4} {'f':>6} {'cut (°)':>8} {'defl. (°)':>9} {'eq. 4.1':>8} {'throw (°)':>9} "
             f"{'TP A.14':>8} {'v at hit':>8} {'slip end':>9}"]
    for k in range(len(columns["friction"])):
        lines.append(
            f"  {list(FRICTIONS)[int(columns['friction'][k])]:>8} {columns['speed_mph'][k]:4.0f} {columns['fraction'][k]:6.3f} "
            f"{columns['cut_angle_deg'][k]:8.2f} {columns['deflection_deg'][k]:9.2f} {columns['deflection_eq41_deg'][k]:8.2f} "
            f"{columns['throw_deg'][k]:9.3f} {columns['throw_tpa14_deg'][k]:8.3f} {columns['cue_speed_at_impact_m_per_s'][k]:8.3f} "
            f"{columns['cue_slip_end_m_per_s'][k]:9.1e}")
    return "\n".join(lines)


def _plot_deflection(columns, path):
    fig, axes = figure(1, 2, width=4.6)
    lines = {3: "-", 7: "--"}
    # Threlfall wide with open markers underneath, Alciatore thin with small filled ones on top: where the two
    # frictions give the same deflection both stay visible
    looks = {"threlfall": dict(color="tab:blue", lw=3.0, alpha=0.6, marker="o", ms=7, mfc="none"),
             "alciatore": dict(color="tab:red", lw=1.0, marker=".", ms=5)}
    fine = np.linspace(0.02, 0.98, 97)
    axes[0, 0].plot(fine, np.degrees(np.asarray(alciatore.deflection_angle(alciatore.cut_angle(fine)))), "k:", lw=1.5,
                    label="eq. (4.1), rolling cue ball")
    for index, name in enumerate(FRICTIONS):
        for mph, line in lines.items():
            chosen = (columns["friction"] == index) & (columns["speed_mph"] == mph)
            axes[0, 0].plot(columns["fraction"][chosen], columns["deflection_deg"][chosen], ls=line, **looks[name],
                            label=f"{FRICTION_LABELS[name]}, {mph} mph")
            axes[0, 1].plot(columns["cut_angle_deg"][chosen], columns["throw_deg"][chosen], ls=line, **looks[name],
                            label=f"simulated, {FRICTION_LABELS[name]}, {mph} mph")
            if name == "alciatore":
                axes[0, 1].plot(columns["cut_angle_deg"][chosen], columns["throw_tpa14_deg"][chosen],
                                {3: ":", 7: "-."}[mph], lw=1.5, color="k",
                                label=f"TP A.14 (Alciatore μ(v)) at the simulated impact, {mph} mph")
    axes[0, 0].set(xlabel="ball-hit fraction f", ylabel="cue ball deflection (°)",
                   title="fig. 19: cue ball deflection against the aim line")
    axes[0, 1].set(xlabel="cut angle at impact (°)", ylabel="object ball throw (°)",
                   title="object ball throw against the line of centres")
    for ax in axes[0]:
        ax.legend(fontsize=6)
    save_figure(fig, path)
