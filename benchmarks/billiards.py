"""Benchmark: the 16-ball break in MuJoCo beside ours, in one run.

    python benchmarks/billiards.py [--duration 4.0] [--repeats 1] [--timestep 1e-4] [--mujoco-only] [--error-norm max]

The same break on both sides: the cue ball and the 15-ball rack of
``diffimpact.scenes.billiard`` (``Parameters()``: R = 28.575 mm, m = 0.17 kg,
J = 5.5e-5 kg m²; the centres of ``rack``), the cue ball sliding without spin
at 10.729 m/s along +x (``break_state``), ``duration`` seconds of it.

* **MuJoCo** (model built here as an MJCF string): the balls as free bodies
  with sphere geoms, the cloth a plane z = 0, four walls (planes) on the
  boundary of the 2.54 × 1.27 m playing surface, where our cushion noses lie
  (they touch a ball at its centre's height, as ours in ``table_model``). No
  pockets (MuJoCo's planes have no holes). Run with the ``implicitfast`` and
  the ``RK4`` integrators at dt = 1e-4 s (``--timestep``), an ``mj_step``
  loop. Compile (``MjModel.from_xml_string``) and run are timed apart (the
  best of ``--repeats`` runs); the run is then repeated, recording every
  step, for the checks.
* **Ours**: ``billiard.table_model`` + ``break_state`` through
  ``simulate`` with the settings of ``diffimpact reproduce break``
  (``diffimpact.reproduce.table.integrate``: ``table.FORMULATION``, rtol =
  1e-3, atol = 1e-6, saves every 2 ms, its event budget for 4 s, or for
  the quick 0.3 s when ``duration`` ≤ 0.3 s); compile and run apart as in
  ``_timing.timed`` (compile = first call − best later call). Twice: on the
  paper's undamped Hertz cloth (``reproduce break``'s), and on the cloth
  damped critically for a resting ball (``Parameters(cloth_damping_ratio=1)``,
  Hunt–Crossley), as MuJoCo's cloth is. The undamped cloth keeps every
  ball that gets a vertical push hopping for the rest of the run, each hop
  two contact events and three integration segments; the damped one does
  not, and is the like-for-like comparison with MuJoCo's damped contacts.

What maps between the two models (``mujoco_model``, ``contact_laws``):
masses, inertias, radius, start, gravity; the sliding μ of each pair (the
cloth and the walls carry a higher ``priority`` than the balls, so theirs
is used against a ball: cloth 0.2, cushion 0.14; ball–ball 0.06); each
normal law as a linear spring–damper in MuJoCo's direct form (solref =
(−k, −b), per unit mass) that lasts as long as our Hertz contact (ball–ball
at the break's 10.7 m/s: 0.25 ms; ball–cushion at 2 m/s: 4.7 ms), at least
``MIN_CONTACT_STEPS`` steps (so ball–ball 0.4 ms at dt = 1e-4 s), damped at
the ratio that gives our restitution (0.93, 0.98) for a linear spring.
What does not: our normal laws are Hertz (δ^3/2) with Lankarani–Nikravesh
damping, MuJoCo's are linear in δ with its soft-constraint impedance
(``solimp``, default); Alciatore's speed-dependent ball–ball μ(v) is one
constant (Threlfall's 0.06); MuJoCo's friction is a soft constraint with a
pyramidal cone (its default) against our regularised Coulomb friction
(Ambrósio's); our cloth is Hertz (undamped, or Hunt–Crossley damped
critically at rest), MuJoCo's is a linear spring with the stiffness of ours
at rest, damped critically; our six cushions have
pockets and jaws, MuJoCo's four walls are planes. The script measures
MuJoCo's restitution in a head-on ball–ball and ball–wall test (at dt, the
step resolves a short contact in few steps and moves it) and checks
MuJoCo's break physically: the energy must only fall, the rack spread, no
ball centre pass a wall and no two centres come closer than R.
``--error-norm max`` (``_bounds``' options) runs ours under the largest
scaled error as the step control's norm, Matlab ``ode45``'s, instead of
diffrax's root mean square (docs/design/table-settings.md, "The energy check").
"""

import argparse
import time

import jax.numpy as jnp
import mujoco
import numpy as np

import diffimpact
import _bounds
from diffimpact.multibody import simulate
from diffimpact.reproduce import table as reproduction
from diffimpact.scenes import billiard
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation

TIMESTEP = 1e-4
INTEGRATORS = ("implicitfast", "RK4")
#: Threlfall's constant ball–ball μ (Alciatore's μ(v) falls from 0.118 at rest to 0.02 at 2 m/s of slip).
BALL_FRICTION = 0.06
#: Shortest contact MuJoCo is given, in steps: shorter ones are not resolved at dt = 1e-4 s.
MIN_CONTACT_STEPS = 4
#: Our two cloths: the paper's undamped Hertz cloth, and Hunt–Crossley damped critically (as MuJoCo's), by
#: ``billiard.Parameters.cloth_damping_ratio``.
CLOTHS = {"undamped cloth (the paper's)": 0.0, "cloth damped critically (as MuJoCo's)": 1.0}


def _damping_ratio(restitution):
    """ζ of a linear spring–damper that rebounds with ``restitution``: e = exp(−ζπ/√(1 − ζ²))."""
    log = np.log(restitution)
    return -log / np.sqrt(np.pi**2 + log**2)


def _hertz_duration(stiffness, mass, speed):
    """Duration of an undamped Hertz impact f = K δ^3/2 at ``speed`` (s): 3.2145 (m/K)^(2/5) v^(−1/5)."""
    return 3.2145 * (mass / stiffness) ** 0.4 * speed ** -0.2


def _solref(duration, restitution, timestep):
    """MuJoCo's direct solref (−k, −b) (per unit mass) of a contact lasting ``duration`` with ``restitution``."""
    duration = max(duration, MIN_CONTACT_STEPS * timestep)
    zeta = _damping_ratio(restitution)
    omega = np.pi / (duration * np.sqrt(1 - zeta**2))
    return -omega**2, -2 * zeta * omega


def contact_laws(p, timestep=TIMESTEP):
    """solref per contact kind of ``mujoco_model``, from our laws of ``p``.

    Ball–ball: Hertz's duration at the break's speed (m* = m/2); ball–wall:
    at 2 m/s (a ball after the break); both floored at ``MIN_CONTACT_STEPS``
    steps, with the damping ratio of our restitution. Cloth: the stiffness of
    our Hertz cloth at the resting deflection, ω² = 3g/(2δ_s), damped
    critically.
    """
    speed = float(p.speed)
    ball = _solref(_hertz_duration(float(p.ball_stiffness()), p.mass / 2, speed), p.ball_restitution, timestep)
    wall = _solref(_hertz_duration(float(p.cushion_stiffness()), p.mass, 2.0), p.cushion_restitution, timestep)
    omega = np.sqrt(1.5 * p.gravity / float(p.static_deflection()))
    return {"ball": ball, "wall": wall, "cloth": (-omega**2, -2 * omega)}


def mujoco_model(p, centres, integrator, timestep=TIMESTEP):
    """MJCF of balls at ``centres`` (x, y) on the cloth inside four walls on the playing surface's boundary."""
    laws = contact_laws(p, timestep)
    half_length, half_width = p.table_length / 2, p.table_width / 2

    def solref(kind):
        return f'solref="{laws[kind][0]:.6g} {laws[kind][1]:.6g}"'

    walls = [((half_length, 0), (-1, 0)), ((-half_length, 0), (1, 0)), ((0, half_width), (0, -1)),
             ((0, -half_width), (0, 1))]
    wall_geoms = "\n".join(
        f'    <geom name="wall{k}" type="plane" size="0 0 1" pos="{x} {y} 0" zaxis="{nx} {ny} 0" '
        f'friction="{p.cushion_friction} 0 0" {solref("wall")} priority="1"/>'
        for k, ((x, y), (nx, ny)) in enumerate(walls))
    balls = "\n".join(
        f'    <body name="{name}" pos="{float(x)!r} {float(y)!r} {p.radius!r}">\n'
        f'      <freejoint/>\n'
        f'      <inertial pos="0 0 0" mass="{p.mass}" diaginertia="{p.inertia} {p.inertia} {p.inertia}"/>\n'
        f'      <geom type="sphere" size="{p.radius}" friction="{BALL_FRICTION} 0 0" {solref("ball")}/>\n'
        f'    </body>'
        for name, (x, y) in zip(billiard.RACK_BALLS, np.asarray(centres)))
    return f"""<mujoco model="break">
  <option timestep="{timestep}" integrator="{integrator}" gravity="0 0 {-p.gravity}"/>
  <default><geom condim="3"/></default>
  <worldbody>
    <geom name="cloth" type="plane" size="0 0 1" friction="{p.cloth_friction} 0 0" {solref("cloth")} priority="1"/>
{wall_geoms}
{balls}
  </worldbody>
</mujoco>"""


def _start(model, data, p, velocities):
    """Balls at rest, touching the cloth (z = R: MuJoCo finds its own resting depth), but for ``velocities``
    (x, y) (m/s), no spin (``break_state``)."""
    mujoco.mj_resetData(model, data)
    data.qvel[:] = 0.0
    for k, (vx, vy) in enumerate(np.asarray(velocities)):
        data.qvel[6 * k: 6 * k + 2] = vx, vy


def energy(p, qpos, qvel):
    """Kinetic + gravitational energy of the balls (J), zero at z = 0 as ours (no elastic energy of the contacts)."""
    qvel = qvel.reshape(-1, 6)
    kinetic = 0.5 * p.mass * (qvel[:, :3] ** 2).sum() + 0.5 * p.inertia * (qvel[:, 3:] ** 2).sum()
    return float(kinetic + p.mass * p.gravity * qpos.reshape(-1, 7)[:, 2].sum())


def measured_restitution(p, integrator, timestep=TIMESTEP):
    """MuJoCo's head-on restitution: ball on ball at the break's speed, ball on the foot wall at 2 m/s.

    −(relative normal velocity after the contact) / (before it), read at the steps just before the first
    contact and just after the last.
    """
    results = {}
    cases = {"ball": ([(0.0, 0.0), (2 * p.radius + 1e-3, 0.0)], [(p.speed, 0.0), (0.0, 0.0)]),
             "wall": ([(p.table_length / 2 - p.radius - 1e-3, 0.0)], [(2.0, 0.0)])}
    for kind, (centres, velocities) in cases.items():
        model = mujoco.MjModel.from_xml_string(mujoco_model(p, centres, integrator, timestep))
        data = mujoco.MjData(model)
        _start(model, data, p, velocities)
        first_ball = model.body_geomadr[1]  # geoms: the cloth, the four walls, then the balls

        def normal_speed():
            return data.qvel[0] - data.qvel[6] if kind == "ball" else data.qvel[0]

        def touching():
            pairs = [sorted((c.geom1, c.geom2)) for c in data.contact[: data.ncon]]
            return any(a >= first_ball if kind == "ball" else 0 < a < first_ball for a, _ in pairs)

        before = normal_speed()
        touched = False
        for _ in range(int(0.05 / timestep)):
            mujoco.mj_step(model, data)
            if touching():
                touched = True
            elif touched:
                break
            else:
                before = normal_speed()
        results[kind] = -normal_speed() / before
    return results


def run_mujoco(p, duration, integrator, timestep=TIMESTEP, repeats=1):
    """Compile time, run time (the best of ``repeats`` runs, as ours), steps and the recorded run (centres per
    step, energy per step) of MuJoCo's break."""
    xml = mujoco_model(p, billiard.rack(p), integrator, timestep)
    start = time.perf_counter()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    compile_time = time.perf_counter() - start
    velocities = np.zeros((len(billiard.RACK_BALLS), 2))
    velocities[0, 0] = p.speed
    steps = int(round(duration / timestep))
    step = mujoco.mj_step
    run_time = np.inf
    for _ in range(repeats):
        _start(model, data, p, velocities)
        start = time.perf_counter()
        for _ in range(steps):
            step(model, data)
        run_time = min(run_time, time.perf_counter() - start)
    # the same run again (MuJoCo is deterministic), recording every step for the checks
    _start(model, data, p, velocities)
    centres, energies = np.empty((steps + 1, len(velocities), 3)), np.empty(steps + 1)
    for k in range(steps + 1):
        if k:
            step(model, data)
        centres[k], energies[k] = data.qpos.reshape(-1, 7)[:, :3], energy(p, data.qpos, data.qvel)
    return compile_time, run_time, steps, centres, energies


def check(p, centres, energies):
    """Lines of the physical checks of a MuJoCo run (``centres`` and kinetic + gravitational ``energies`` per step).

    The energy left out is the contacts' elastic energy, so the sum dips during a contact and rises again as
    the contact gives its energy back: it must not rise above its earlier maximum (ours, which counts the
    elastic energy, is held to more: ``table.energy_rise``, no rise above any earlier value). A ball leaves the
    table if its centre passes a wall (its edge may press into the wall by the contact's compliance); it passes
    through another if two centres come closer than R.
    """
    rise = max(float((energies[1:] - np.maximum.accumulate(energies)[:-1]).max()), 0.0)
    rack = centres[:, 1:, :2]
    spread = np.linalg.norm(rack - rack.mean(axis=1, keepdims=True), axis=2).mean(axis=1)
    limits = np.array([p.table_length, p.table_width]) / 2
    inside = np.abs(centres[:, :, :2]).max(axis=(0, 1)) - limits  # < 0: every centre inside the walls
    i, j = np.triu_indices(centres.shape[1], 1)
    closest = float(np.linalg.norm(centres[:, i] - centres[:, j], axis=2).min())
    heights = centres[:, :, 2]

    def verdict(ok):
        return "ok" if ok else "FAILS"

    return [
        f"energy {energies[0]:.4f} J → {energies[-1]:.4f} J; largest rise above its earlier maximum "
        f"{rise:.3f} J ({100 * rise / energies[0]:.1f} %): only falls: {verdict(rise == 0)}",
        f"rack spread (mean distance of the 15 rack balls from their centroid) {1e3 * spread[0]:.1f} → "
        f"{1e3 * spread[-1]:.1f} mm: spreads: {verdict(spread[-1] > 2 * spread[0])}",
        f"deepest a ball's edge presses into a wall {1e3 * (inside.max() + p.radius):.2f} mm; every centre "
        f"inside the walls: {verdict(inside.max() < 0)}; centre height {1e3 * heights.min():.2f}–"
        f"{1e3 * heights.max():.2f} mm (R = {1e3 * p.radius:.2f} mm)",
        f"largest ball–ball overlap {1e3 * (2 * p.radius - closest):.2f} mm (closest centres "
        f"{1e3 * closest:.2f} mm): no ball passes through another: {verdict(closest > p.radius)}",
    ]


def run_ours(p, duration, repeats, args):
    """Compile time, run time, steps and events of our break (``reproduce break``'s settings, with ``_bounds``'
    options ``args``)."""
    model, state = billiard.table_model(p), billiard.break_state(p)
    times = reproduction.save_times(duration)
    max_events = (reproduction.QUICK_MAX_EVENTS if duration <= reproduction.QUICK_DURATION
                  else reproduction.MAX_EVENTS)

    runs = []
    settings = _bounds.settings(args, model, max_events=max_events)

    def solve(model, state):
        runs.append(simulate(model, state, times, reproduction.FORMULATION, **settings))
        return runs[-1]

    total, best = timed(solve, model, state, repeats=repeats)
    trajectory = runs[-1]  # the last timed call's (a 4-s break takes minutes per call)
    return total - best, best, int(trajectory.steps), int(trajectory.events.count), trajectory, max_events


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=reproduction.DURATION)
    parser.add_argument("--repeats", type=int, default=1,
                        help="later calls of ours and runs of MuJoCo's (the best is the run time)")
    parser.add_argument("--timestep", type=float, default=TIMESTEP, help="MuJoCo's dt (s)")
    parser.add_argument("--mujoco-only", action="store_true", help="leave ours out")
    _bounds.add_options(parser)
    args = parser.parse_args()
    p, dt = billiard.Parameters(), args.timestep
    print(f"the 16-ball break, {args.duration:g} s at {p.speed} m/s; MuJoCo {mujoco.__version__}, dt = {dt:g} s")
    print("MuJoCo's contacts (solref = −k, −b per unit mass): "
          + ", ".join(f"{kind} ({k:.4g}, {b:.4g})" for kind, (k, b) in contact_laws(p, dt).items()))
    rows = {}
    for integrator in INTEGRATORS:
        e = measured_restitution(p, integrator, dt)
        compile_time, run_time, steps, centres, energies = run_mujoco(p, args.duration, integrator, dt, args.repeats)
        rows[integrator] = (compile_time, run_time, steps)
        print(f"\nMuJoCo {integrator}: compile {compile_time * 1e3:.1f} ms, run {run_time:.3f} s, {steps} steps, "
              f"{1e6 * run_time / steps:.1f} µs/step")
        print(f"  head-on restitution: ball–ball {e['ball']:.3f} (ours {p.ball_restitution}), ball–wall "
              f"{e['wall']:.3f} (ours {p.cushion_restitution})")
        for line in check(p, centres, energies):
            print("  " + line)
    if args.mujoco_only:
        return

    ours = {}
    for label, damping in CLOTHS.items():
        p_ours = billiard.Parameters(cloth_damping_ratio=damping)
        print(f"\nours (diffimpact reproduce break's settings), {label}, {1 + args.repeats} calls ...", flush=True)
        compile_time, run_time, steps, events, trajectory, max_events = run_ours(p_ours, args.duration,
                                                                                 args.repeats, args)
        energy_ours = np.asarray(trajectory.energy)
        dropped = billiard.pocketed(p_ours, trajectory)
        print(f"ours: compile ≈ {compile_time:.2f} s, run {run_time:.3f} s, {steps} solver steps in "
              f"{int(trajectory.segments)} segments, {events} contact events (max_events {max_events}), "
              f"{1e6 * run_time / steps:.1f} µs/step")
        print(f"  energy {energy_ours[0]:.4f} J → {energy_ours[-1]:.4f} J (saved every "
              f"{reproduction.SAVE_INTERVAL * 1e3:g} ms; largest rise above an earlier value "
              f"{reproduction.energy_rise(energy_ours):.2e} J); pocketed: "
              + (", ".join(ball for _, ball, _ in dropped) or "none"))
        ours[label] = (compile_time, run_time, steps)
    print("\nratios ours / MuJoCo (same run):")
    for label, (compile_time, run_time, steps) in ours.items():
        print(f"  ours, {label}:")
        for integrator, (mj_compile, mj_run, mj_steps) in rows.items():
            print(f"    {integrator:>12}: run time {run_time / mj_run:.1f}×, cost per step "
                  f"{(run_time / steps) / (mj_run / mj_steps):.0f}× ({steps} against {mj_steps} steps), "
                  f"compile {compile_time / mj_compile:.0f}×")


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
