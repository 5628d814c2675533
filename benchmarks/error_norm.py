"""Benchmark: the adaptive steps' error norm at table scale, diffrax's root mean square against the largest error.

    python benchmarks/error_norm.py [--repeats 3]

``simulate``'s step-size control scales each coordinate's and velocity's error estimate by atol + rtol |y_i| and
takes a norm of the scaled errors (``AdaptiveSteps``' ``norm``): diffrax's root mean square (the default), or the
largest (``optimistix.max_norm``, as Matlab's ``ode45``, whose rtol = 1e-3 the paper's runs used). The table has
16 balls, 224 scaled errors; the root mean square averages a collision's two balls with the other fourteen. With
each norm, ``reproduce break``'s settings (``table.settings``, ``table.FORMULATION``, atol = rtol/1000):

1. **one collision**: shot 1 of ``random_shots.py`` (seed 1: the cue ball alone moves, 2.4 m/s, spinning), whose
   cue ball meets ball 6 of ``billiard.RACK_BALLS`` at 0.1124 s and leaves it 0.36 ms later: the largest error of the
   two balls' velocities at 0.12 s against a run at rtol = 1e-10, and the accepted steps to 0.12 s;
2. **the break's first 0.3 s** (eleven collisions, ``table.QUICK_DURATION``): the largest error of a ball's
   centre, velocity and spin at 0.3 s against a run at rtol = 1e-9, and the steps;
3. **the 4-s break** at the table's rtol = 1e-3: steps and run time (best of ``--repeats``; compiled first).

docs/design/table-settings.md, "A ball's inertia under a drift of |p|".
"""

import argparse
import dataclasses
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import _bounds
import random_shots
from diffimpact.multibody import simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

#: Shot of ``random_shots.py`` (seed 1) and the ball its cue ball meets first, and the time after that collision
SHOT, STRUCK, AFTER = 1, 6, 0.12
RTOLS = {"rms": (1e-3, 1e-4, 1e-5, 1e-6, 1e-7), "max": (1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7)}


def outcome(run, at=-1):
    """Centres (16, 3), velocities (16, 3) and spins (16, 3) at save time ``at`` of ``run``."""
    q, v = run.q[at].reshape(16, 7), run.v[at].reshape(16, 7)
    return np.asarray(q[:, :3]), np.asarray(v[:, :3]), np.asarray(random_shots.ball_spins(q, v))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed 4-s breaks after the first, per norm")
    args = parser.parse_args()
    p = billiard.Parameters()
    model = billiard.table_model(p)
    rng = np.random.default_rng(1)
    shot = [random_shots.shot(rng, p, "cue") for _ in range(SHOT + 1)][SHOT]
    shot_state, break_state = billiard.table_state(p, *shot), billiard.break_state(p)

    @eqx.filter_jit
    def run(state, times, rtol, norm=_bounds.NORMS["rms"]):
        settings = table.settings(model, rtol)
        settings["steps"] = dataclasses.replace(settings["steps"], norm=norm)
        return simulate(model, state, times, table.FORMULATION, **settings)

    collision_times, quick_times, break_times = jnp.array([0.0, AFTER]), table.save_times(0.3), table.save_times(4.0)
    collision_reference = outcome(run(shot_state, collision_times, 1e-10))
    quick_reference = outcome(run(break_state, quick_times, 1e-9))
    print("the 16-ball table, reproduce break's settings, atol = rtol/1000; references with the root mean square")
    for name, norm in _bounds.NORMS.items():
        print(f"\n{name} norm")
        print(f"  {'rtol':>6s} | collision: {'steps':>5s} {'velocity':>9s} | 0.3-s break: {'steps':>5s} {'centre':>9s} "
              f"{'velocity':>9s} {'spin':>9s}")
        for rtol in RTOLS[name]:
            collision = run(shot_state, collision_times, rtol, norm)
            velocity = outcome(collision)[1][[0, STRUCK]] - collision_reference[1][[0, STRUCK]]
            quick = run(break_state, quick_times, rtol, norm)
            errors = [np.abs(x - y).max() for x, y in zip(outcome(quick), quick_reference)]
            print(f"  {rtol:6.0e} |            {int(collision.steps):5d} {np.abs(velocity).max():9.2e} |              "
                  f"{int(quick.steps):5d} {errors[0]:9.2e} {errors[1]:9.2e} {errors[2]:9.2e}", flush=True)
        full = jax.block_until_ready(run(break_state, break_times, table.TOLERANCES["rtol"], norm))
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            jax.block_until_ready(run(break_state, break_times, table.TOLERANCES["rtol"], norm))
            seconds.append(time.perf_counter() - start)
        print(f"  4-s break at rtol {table.TOLERANCES['rtol']:g}: {int(full.steps)} steps, {int(full.segments)} segments, "
              f"run {min(seconds):.3f} s (best of {args.repeats}), {1e6 * min(seconds) / int(full.steps):.0f} µs/step; "
              f"energy {float(full.energy[0]):.4f} → {float(full.energy[-1]):.4f} J")
    print("\n(centre, velocity, spin: the largest error of any ball's, m, m/s, rad/s; collision: of the two balls' "
          f"velocities at {AFTER} s)")


if __name__ == "__main__":
    main()
