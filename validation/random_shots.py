"""Check: random shots on the full 16-ball table, for what any shot must keep.

    python validation/random_shots.py [--seed 1] [--shots 15] [--mode cue|many] [--duration 3]
                                      [--cloth-damping-ratio ZETA] [--max-steps N] [--spin-step ANGLE]
                                      [--rtol RTOL] [--reference RTOL] [--reference-time T] [--error-norm rms|max]
                                      [--contact-steps [FAMILY ...]] [--friction-steps [FAMILY ...]]
                                      [--cloth-located] [--nose]

Each shot places the 16 balls of ``billiard.RACK_BALLS`` at random on the
table (uniform, at least 2.05 R apart and clear of the cushions and
pockets) and runs it with ``reproduce break``'s settings
(``table.integrate``) for ``--duration`` s. ``--mode cue``: the cue ball
alone moves, at 0.5–10 m/s in a random direction, with top or back spin of
−1 to 1.2 times its rolling spin and side spin of ±1 times it; ``many``: the
cue ball at 1–12 m/s and each other ball, with probability 0.4, at 0.5–10 m/s,
every moving ball with a random spin of 0.7 times its rolling spin per
component. Each line: the run's time, accepted steps and contact events,
the energy at the start and end and its largest rise above an earlier value
(``table.energy_rise``), the largest overlap of two balls, the highest a
ball got above its resting height, the largest drift of the balls' Euler
parameters off unit length, pocketed balls (when, which pocket), balls
that flew off the table (``billiard.left_table``: when), and the ball–cushion onsets with how many of them
had the ball's centre above 2R (``cushion_hits_in_air``: the paper's cushion
faces have no top). A shot is marked BAD where its run failed (the
error's last line), a state was not finite, the energy rose by more than
rtol times its start (the break's rise at rtol = 1e-3 is 1.2e-4 of it, and
falls with rtol: docs/design/step-control.md, "The cushions' contacts resolved in
steps"), two balls overlapped by more
than 1 mm or the events reached ``max_events``. ``--max-steps`` bounds the
run's solver steps (default ``table.MAX_STEPS``), ``--spin-step`` sets
``AdaptiveSteps``' ``spin_step``, ``--baumgarte ALPHA`` Baumgarte's α = β
instead of ``table.FORMULATION``'s, ``--rtol`` the runs' rtol (atol = rtol/1000) instead of the table's 1e-3
(``diffimpact shot``'s is ``table.SHOT_RTOL``). ``--reference RTOL`` also runs each shot
at rtol = RTOL (atol = RTOL/1000) and reports how far the run is from it:
the largest error of a ball's centre (mm), velocity (m/s) and spin (rad/s),
at the end or at ``--reference-time`` s (a table of many collisions is
chaotic: late errors can be a collision that went the other way, and say
little of the integration). ``--error-norm max`` runs every shot with the
largest scaled error as the step control's norm (``AdaptiveSteps``' ``norm``);
``--contact-steps [FAMILY ...]`` bounds the steps by the closed contacts of
``all`` families, of those named, or with none named of none, instead of the
table's default (the cushions; ``_bounds``); ``--friction-steps [FAMILY ...]`` with
``simulate``'s ``friction_steps`` on the families named, or ``all``. ``--cloth-located`` locates
the cloth's onsets and separations (``table_model(p, cloth_located=True)``,
with 4 × ``MAX_EVENTS`` events allowed). ``--nose`` puts the cushions' contact at Mathavan et al.'s nose height
7R/5 (``table_model``'s ``nose_height``, as ``diffimpact shot --nose``).
docs/design/step-control.md, "Fast spins: a step turns a ball by at most a radian".
"""

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _bounds
import diffimpact  # noqa: E402
import _bounds  # noqa: E402
from diffimpact.multibody import Baumgarte, angular_velocity, simulate  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

MAX_EVENTS = 2000


def layout(rng, p):
    """16 centres, uniform on the table, at least 2.05 R apart, clear of the cushions and the pockets."""
    half_length, half_width = p.table_length / 2 - 1.2 * p.radius, p.table_width / 2 - 1.2 * p.radius
    while True:
        centres = np.column_stack([rng.uniform(-half_length, half_length, 16), rng.uniform(-half_width, half_width, 16)])
        apart = np.linalg.norm(centres[:, None] - centres[None], axis=-1) + np.eye(16)
        if apart.min() > 2.05 * p.radius and np.asarray(billiard.pocket_depth(p, centres)).max() < -p.radius:
            return centres


def shot(rng, p, mode):
    """A random shot's (centres, velocities, spins)."""
    centres = layout(rng, p)
    if mode == "many":
        speeds = rng.uniform(0.5, 10.0, 16) * (rng.uniform(size=16) < 0.4)
        speeds[0] = rng.uniform(1.0, 12.0)
        spins = rng.normal(0.0, 1.0, (16, 3)) * 0.7 * speeds[:, None] / p.radius
    else:
        speeds = np.zeros(16)
        speeds[0] = rng.uniform(0.5, 10.0)
    angles = rng.uniform(0.0, 2 * np.pi, 16)
    velocities = speeds[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])
    if mode != "many":
        rolling = np.asarray(billiard.rolling_spin(p, velocities[0]))
        spins = np.zeros((16, 3))
        spins[0] = rng.uniform(-1.0, 1.2) * rolling + [0.0, 0.0, rng.uniform(-1.0, 1.0) * speeds[0] / p.radius]
    return centres, velocities, spins


def cushion_hits_in_air(p, run):
    """(onsets, of them with the ball's centre above 2R) of ``run``'s ball–cushion onsets: the paper's vertical faces
    (``Cushion``, ``nose_height=None``) have no top, so a ball in the air meets them at any height, where a real
    cushion's nose is at 1.27 R (WPA: 63.5 % of the ball's diameter)."""
    events = run.events
    count = int(events.count)
    family, member, onset = (np.asarray(x[:count]) for x in (events.contact, events.member, events.onset))
    hits = np.flatnonzero((family == billiard.TABLE_FORCES.index("ball–cushion")) & onset)
    balls = member[hits] // len(billiard.CUSHIONS)  # the family runs ball by ball, each against the six cushions
    heights = np.asarray(events.q)[hits].reshape(len(hits), 16, 7)[np.arange(len(hits)), balls, 2]
    return len(hits), int((heights > 2 * p.radius).sum())


def ball_spins(q, v):
    """Every ball's angular velocity (rad/s), (16, 3), from one state's q and v."""
    return jax.vmap(angular_velocity)(q.reshape(16, 7), v.reshape(16, 7))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shots", type=int, default=15)
    parser.add_argument("--mode", choices=("cue", "many"), default="cue")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time (s)")
    parser.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA")
    parser.add_argument("--max-steps", type=int, default=table.MAX_STEPS)
    parser.add_argument("--baumgarte", type=float, default=None, metavar="ALPHA",
                        help="Baumgarte's α = β (1/s) instead of table.FORMULATION's")
    parser.add_argument("--rtol", type=float, default=None,
                        help="the runs' rtol (atol = rtol/1000) instead of table.settings' 1e-3")
    parser.add_argument("--reference", type=float, default=None, metavar="RTOL",
                        help="also run each shot at rtol = RTOL, atol = RTOL/1000, and report the errors against it")
    parser.add_argument("--reference-time", type=float, default=None, metavar="T",
                        help="time (s) of the errors against the reference run (default: the end)")
    _bounds.add_options(parser)
    _bounds.add_contact_steps(parser)
    _bounds.add_friction_steps(parser)
    parser.add_argument("--cloth-located", action="store_true", help="locate the cloth's onsets and separations")
    parser.add_argument("--nose", action="store_true", help="the cushions at the nose height 7R/5")
    args = parser.parse_args()
    p = dataclasses.replace(billiard.Parameters(), cloth_damping_ratio=args.cloth_damping_ratio)
    nose_height = p.nose_height() if args.nose else None
    model = billiard.table_model(p, nose_height=nose_height, cloth_located=args.cloth_located)
    max_events = 4 * MAX_EVENTS if args.cloth_located else MAX_EVENTS
    settings = dict(_bounds.settings(args, model, max_events=max_events), max_steps=args.max_steps)
    if args.rtol is not None:
        settings["steps"] = dataclasses.replace(settings["steps"], rtol=args.rtol, atol=1e-3 * args.rtol)
    formulation = table.FORMULATION if args.baumgarte is None else Baumgarte(args.baumgarte, args.baumgarte)
    run = eqx.filter_jit(lambda state, times, rtol, atol: simulate(
        model, state, times, formulation,
        **dict(settings, steps=dataclasses.replace(settings["steps"], rtol=rtol, atol=atol))))
    times = table.save_times(args.duration)
    at = len(times) - 1 if args.reference_time is None else int(np.argmin(np.abs(np.asarray(times) - args.reference_time)))
    rng = np.random.default_rng(args.seed)
    print(f"{args.shots} random shots ({args.mode}), seed {args.seed}, {args.duration:g} s each, cloth damping ratio "
          f"{args.cloth_damping_ratio:g}, cushions at {'the nose height' if args.nose else 'the centre height'}, "
          f"Baumgarte α = β = {float(formulation.alpha):g}, rtol {settings['steps'].rtol:g}, "
          f"max_steps {args.max_steps}; "
          "the first run's time includes compiling")
    bad = 0
    for k in range(args.shots):
        centres, velocities, spins = shot(rng, p, args.mode)
        state = billiard.table_state(p, centres, velocities, spins, nose_height)
        start = time.perf_counter()
        try:
            result = jax.block_until_ready(run(state, times, settings["steps"].rtol, settings["steps"].atol))
        except Exception as error:  # noqa: BLE001 (a benchmark reports every failure and goes on)
            bad += 1
            last = [line for line in str(error).splitlines() if "Error" in line][-1:]
            print(f"  {k:3d} BAD  failed after {time.perf_counter() - start:.1f} s: {last}; cue ball at "
                  f"{np.round(centres[0], 4).tolist()} m, {np.round(velocities[0], 3).tolist()} m/s, spinning at "
                  f"{np.round(spins[0], 1).tolist()} rad/s", flush=True)
            continue
        seconds = time.perf_counter() - start
        q = np.asarray(result.q).reshape(len(times), 16, 7)
        energy = np.asarray(result.energy)
        rise = table.energy_rise(energy)
        centre = q[:, :, :3]
        apart = np.linalg.norm(centre[:, :, None] - centre[:, None], axis=-1) + np.eye(16)
        overlap = np.max(2 * p.radius - apart)
        drift = table.euler_drift(q)
        pocketed = billiard.pocketed(p, result)
        flew = [f"{ball} {t:.3f} s" for t, ball in billiard.left_table(p, result)]
        events = int(result.events.count)
        in_air = cushion_hits_in_air(p, result)
        failed = (not np.isfinite(q).all() or rise > settings["steps"].rtol * energy[0] or overlap > 1e-3
                  or events >= max_events)
        bad += failed
        print(f"  {k:3d} {'BAD ' if failed else 'ok  '} run {seconds:6.2f} s, {int(result.steps):6d} steps, "
              f"{events:4d} events, energy {energy[0]:6.3f} → {energy[-1]:6.3f} J (rise {rise:.1e}), "
              f"overlap {1e3 * overlap:6.3f} mm, highest {1e3 * table.highest_hop(p, times, centre)[1]:7.1f} mm, "
              f"drift {drift:.1e}, pocketed {[f'{ball} {t:.3f} s {pocket}' for t, ball, pocket in pocketed]}, "
              f"flew off {flew}, cushion onsets {in_air[0]} ({in_air[1]} in the air)", flush=True)
        if args.reference is not None:
            reference = run(state, times, args.reference, 1e-3 * args.reference)
            errors = [np.abs(np.asarray(x[at]).reshape(16, -1) - np.asarray(y[at]).reshape(16, -1)).max(axis=0)
                      for x, y in ((result.q, reference.q), (result.v, reference.v))]
            spin = np.abs(np.asarray(ball_spins(result.q[at], result.v[at]) - ball_spins(reference.q[at], reference.v[at]))).max()
            print(f"        against rtol {args.reference:g} ({int(reference.steps)} steps) at {float(times[at]):g} s: "
                  f"centre {1e3 * errors[0][:3].max():.3g} mm, velocity {errors[1][:3].max():.3g} m/s, "
                  f"spin {spin:.3g} rad/s", flush=True)
    print(f"{bad} of {args.shots} shots BAD")


if __name__ == "__main__":
    main()
