"""Benchmark: the 16-ball break to rest on the rigid engine, beside pooltool's.

    python benchmarks/rigid_break.py [--repeats 5] [--pooltool-python PATH ...] [--perturbed 30]

Ours: ``diffimpact.billiards.rigid`` on ``rigid.pool.pool_table()`` (the WPA 9-ft table of
``diffimpact.scenes.billiard``: 18 nose segments, 24 jaw tips, 6 holes), the cue ball and the rack of
``billiard.rack``, the cue ball sliding at 10.70 m/s along +x without spin (the speed pooltool's stick gives at
V0 = 6.955 m/s hitting the ball's centre), ``rigid.Parameters``' ball and cloth (pooltool's defaults: μ_s = 0.2,
μ_r = 0.01, μ_sp = 0.0127), the ball–ball ``Frictionless(0.93)`` and the cushion's ``StickingFriction(0.98,
0.14)``. Printed: the compile time (the first call less the best later call), the run time (the best of
``--repeats`` later calls), the events by kind, and the overlap check: the smallest gap between two balls and
between a ball and the rubber (``ball_gaps``, ``cushion_gaps``) after every event and at 20,001 times of the shot.
With ``--perturbed N``, the same check on N breaks from perturbed starts (the cue ball moved up to 2 cm across the
table, aimed up to 0.03 rad off the axis at 3–12 m/s with a random spin of about 50 rad/s a component, each rack
ball moved up to 50 µm): how many overlap by more than 1e-12 m, the smallest gaps, the events.

pooltool: for each ``--pooltool-python`` (the Python of an environment with pooltool installed: it need not have
diffimpact), a child process runs ``_pooltool_break.py`` on the same centres and start, with the same ball and cloth
and e_b = 0.93, e_c = 0.98, f_c = 0.14 where its ``BallParams`` has them, its own default models and its pocket
table with the same 2.54 × 1.27 m playing surface (its own pockets and jaws). The child's HOME is a fresh folder,
so that no pooltool configuration of the user's (which another version may not read) plays a part. Printed: its
warm run time (the best of the later calls), its first call, its events by type, and ours / its warm run time.
The two simulate different models (pooltool's ball–ball friction and compliant cushion), so their events differ.
"""

import argparse
import json
import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import diffimpact

diffimpact.configure()  # float64 and the CPU cap, before any import that computes (_timing's)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from diffimpact.billiards import rigid  # noqa: E402
from diffimpact.billiards.rigid.pool import break_balls, pool_table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402
from _timing import timed  # noqa: E402

#: The cue ball's speed (m/s): pooltool 0.6's stick at V0 = 6.955 m/s, the cue ball hit at its centre.
SPEED = 10.70
#: Times at which the shot is checked for overlaps between its events.
CHECKS = 20001


def ours(repeats):
    """Our break: (compile s, run s, the shot, the parameters, the table)."""
    params, table = rigid.Parameters(), pool_table()
    balls = break_balls(params, speed=SPEED)
    engine = rigid.Engine(max_events=500)
    first, best = timed(lambda: rigid.simulate(balls, params, table, engine), repeats=repeats)
    return first - best, best, rigid.simulate(balls, params, table, engine), params, table


def overlaps(shot, params, table):
    """The smallest ball–ball and ball–rubber gaps (m) after every event and at ``CHECKS`` times of the shot."""
    count = int(shot.events)
    after = jax.tree.map(lambda x: x[:count + 1], shot.states)
    between = rigid.states_at(shot, params, jnp.linspace(0.0, float(shot.time[count]), CHECKS))
    return [(float(jnp.min(rigid.ball_gaps(states, params))), float(jnp.min(rigid.cushion_gaps(states, params,
                                                                                                   table))))
            for states in (after, between)]


def perturbed(count, params, table):
    """``count`` breaks from perturbed starts (module docstring): a line of their overlaps and events."""
    rng = np.random.default_rng(0)
    engine = rigid.Engine(max_events=1000)
    start = np.asarray(billiard.rack(billiard.Parameters()))
    worst, events, overlapping, pocketed = [0.0, 0.0], [], 0, 0
    for _ in range(count):
        centres = start + np.concatenate([[[0.0, rng.uniform(-0.02, 0.02)]], rng.uniform(-5e-5, 5e-5, (15, 2))])
        aim, speed = rng.uniform(-0.03, 0.03), rng.uniform(3.0, 12.0)
        velocity = np.zeros((16, 2))
        velocity[0] = speed * np.array([np.cos(aim), np.sin(aim)])
        spin = np.zeros((16, 3))
        spin[0] = rng.normal(scale=50.0, size=3)
        shot = rigid.simulate(rigid.ball_states(params, centres, velocity, spin), params, table, engine)
        gaps = [min(pair) for pair in zip(*overlaps(shot, params, table), strict=True)]
        worst = [min(a, b) for a, b in zip(worst, gaps, strict=True)]
        overlapping += min(gaps) < -1e-12
        events.append(int(shot.events))
        pocketed += int(np.sum(np.asarray(shot.states.motion[int(shot.events)]) == rigid.POCKETED))
    return (f"{count} perturbed breaks: {overlapping} overlap by more than 1e-12 m; smallest gaps (m) ball–ball "
            f"{worst[0]:.1e}, ball–rubber {worst[1]:.1e}; {min(events)}–{max(events)} events, {pocketed} balls "
            f"pocketed in all")


def pooltool(python, repeats, params):
    """pooltool's break in a child process of ``python``: the JSON of ``_pooltool_break.py``."""
    p = billiard.Parameters()
    setup = {"centres": np.asarray(billiard.rack(p)).tolist(), "length": p.table_length, "width": p.table_width,
             "speed": SPEED, "repeats": repeats,
             "ball": {"m": params.mass, "R": params.radius, "u_s": params.sliding_friction,
                      "u_r": params.rolling_friction, "u_sp_proportionality": params.spinning_friction / params.radius,
                      "g": params.gravity, "e_b": 0.93, "e_c": 0.98, "f_c": 0.14}}
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run([python, str(Path(__file__).with_name("_pooltool_break.py")), json.dumps(setup)],
                              capture_output=True, text=True, env={**os.environ, "HOME": home}, check=False)
    if done.returncode:
        raise RuntimeError(f"{python} could not run pooltool's break:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls after the first (default 5)")
    parser.add_argument("--pooltool-python", action="append", default=[],
                        help="the Python of an environment with pooltool (repeat for several)")
    parser.add_argument("--perturbed", type=int, default=0, help="breaks from perturbed starts to check (default 0)")
    args = parser.parse_args()

    compile_time, run, shot, params, table = ours(args.repeats)
    count = int(shot.events)
    kinds = Counter(rigid.EVENT_NAMES[int(k)] for k in shot.kind[1:count + 1])
    pocketed = int(np.sum(np.asarray(shot.states.motion[count]) == rigid.POCKETED))
    print(f"ours (diffimpact.billiards.rigid): compile {compile_time:.2f} s, run {run * 1e3:.1f} ms (best of "
          f"{args.repeats}), {count} events ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
          f"{float(shot.time[count]):.2f} s of play, {pocketed} balls pocketed, {run / count * 1e6:.0f} µs an event")
    (ball_after, rubber_after), (ball_between, rubber_between) = overlaps(shot, params, table)
    print(f"  smallest gaps (m): ball–ball {ball_after:.1e} after the events, {ball_between:.1e} at {CHECKS} times; "
          f"ball–rubber {rubber_after:.1e} and {rubber_between:.1e}")

    if args.perturbed:
        print(perturbed(args.perturbed, params, table))

    for python in args.pooltool_python:
        result = pooltool(python, args.repeats, params)
        best = min(result["times"][1:])
        events = {kind: n for kind, n in result["events"].items() if kind != "none"}
        unused = f"; its BallParams has no {', '.join(result['unused'])}" if result["unused"] else ""
        print(f"pooltool {result['version']} ({python}): run {best * 1e3:.1f} ms (best of {args.repeats}; first call "
              f"{result['times'][0]:.2f} s), {sum(events.values())} events "
              f"({', '.join(f'{n} {k}' for k, n in sorted(events.items()))}), {result['duration']:.2f} s of play"
              f"{unused}")
        print(f"  ours / pooltool {result['version']}: run {run / best:.2f}")


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
