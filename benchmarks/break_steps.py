"""Benchmark: where in time the four-ball break's steps fall, with and without ``friction_steps``.

    python benchmarks/break_steps.py [--cloth-damping-ratio ZETA] [--no-friction-steps] [--duration 3]

The four-ball break of ``break_gradient.py`` (``billiard.table_model(p,
balls=4)``, ``break_state``, ``reproduce break``'s settings, max_events
200), run to successive end times with one compiled program (the end time
is traced): a run's steps before its end do not depend on where it ends,
so the differences of the accepted steps give the steps of each window.
Windows of 5 ms over the rack's impact (0.1–0.2 s), 50 ms to 1 s, then
0.5 s. Each window lists the contact events in it (``on``/``off``, then the
family: 1 the cloth, 2 the ball pairs, 3 the cushions; the time in s).
docs/design/step-control.md, "Where the bounded break's steps go".
"""

import argparse
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

BALLS = 4
MAX_EVENTS = 200


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA",
                        help="the cloth damped at this ratio (0: the paper's undamped Hertz cloth)")
    parser.add_argument("--no-friction-steps", action="store_true", help="the plain run")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time (s)")
    args = parser.parse_args()
    p = dataclasses.replace(billiard.Parameters(), cloth_damping_ratio=args.cloth_damping_ratio)
    model, state = billiard.table_model(p, balls=BALLS), billiard.break_state(p, balls=BALLS)

    @jax.jit
    def run(end):
        settings = table.settings(model, max_events=MAX_EVENTS)
        settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=not args.no_friction_steps)
        trajectory = simulate(model, state, jnp.stack([0.0, end]), table.FORMULATION, **settings)
        return trajectory.steps, trajectory.events

    total, events = run(args.duration)
    count = int(events.count)
    listed = [(float(t), int(k), bool(on)) for t, k, on in
              zip(np.asarray(events.t[:count]), np.asarray(events.contact[:count]), np.asarray(events.onset[:count]))]
    print(f"the four-ball break, {args.duration:g} s, cloth damping ratio {args.cloth_damping_ratio:g}, "
          f"{'plain' if args.no_friction_steps else 'friction_steps'}: {int(total)} steps, {count} contact events")
    ends = np.concatenate([np.arange(0.1, 0.2, 0.005), np.arange(0.2, 1.0, 0.05), np.arange(1.0, 10.0, 0.5)])
    ends = np.append(ends[ends < args.duration - 1e-9], args.duration)
    before, start = 0, 0.0
    for end in ends:
        steps = int(run(float(end))[0])
        inside = " ".join(f"{'on' if on else 'off'}{k}@{t:.4f}" for t, k, on in listed if start < t <= end)
        print(f"  {start:5.3f}–{end:5.3f} s: {steps - before:6d} steps  {inside}")
        before, start = steps, end


if __name__ == "__main__":
    main()
