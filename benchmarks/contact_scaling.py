"""Benchmark: compile and run time of the break as the number of balls (and contacts) grows.

    python benchmarks/contact_scaling.py [--balls 2 4 8 16] [--duration 0.15] [--max-events 256]

The scene of ``diffimpact.scenes.billiard`` (Gismeros Moreno et al.'s balls,
cloth and ball–ball laws): the cue ball shot at 10.729 m/s along +x at a
triangle rack of ``balls − 1`` object balls (apex at x = 0.635 m, spacing
2R + α), every ball on the cloth, every pair of balls a contact: for 16 balls
16 ball–cloth and 120 ball–ball contacts, in two contact families. Reports
per ball count, in one run: contacts, compile time (first call minus the
best later call), run time, solver steps, events and the run time per step,
and the ratio of each compile time to the first's (goal of issue 11: 16
balls within 1.5× of 2 balls, ≤ 30 s). The simulated ``duration`` from the
shot (default 0.15 s) takes the cue ball into the rack (at ≈ 0.118 s).
"""

import argparse
import itertools

import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import Contact, Gravity, LagrangeMultipliers, Model, State, simulate
from diffimpact.scenes import billiard
from _timing import timed


def rack_centres(p, count):
    """The cue ball and ``count − 1`` object balls of a triangle rack, row by row (x, y), (count, 2)."""
    side = 2 * p.radius + p.spacing
    centres = [(p.cue_x, 0.0)]
    for row in itertools.count():
        for k in range(row + 1):
            if len(centres) == count:
                return np.array(centres)
            centres.append((p.rack_x + row * side * np.cos(np.pi / 6), (k - row / 2) * side))


def scene(p, count):
    """Model and initial state of the break with ``count`` balls."""
    pairs = [billiard.ball_pair(p, i, j) for i, j in itertools.combinations(range(count), 2)]
    model = Model(
        [billiard.ball(p, f"ball {k}") for k in range(count)],
        forces=[Gravity((0.0, 0.0, -p.gravity)), Contact.family(billiard.cloth(p, k) for k in range(count)),
                Contact.family(pairs)],
    )
    velocities = np.zeros((count, 2))
    velocities[0, 0] = p.speed
    return model, State(*billiard.ball_state(p, rack_centres(p, count), velocities))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--balls", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--duration", type=float, default=0.15)
    parser.add_argument("--max-events", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    p = billiard.Parameters()
    save_times = jnp.array([0.0, args.duration])
    print(f"{'balls':>5} {'contacts':>8} {'compile (s)':>11} {'× first':>7} {'run (s)':>8} {'steps':>6} "
          f"{'events':>6} {'µs/step':>8}")
    first = None
    for count in args.balls:
        model, state = scene(p, count)

        def run(model, state):
            return simulate(model, state, save_times, LagrangeMultipliers(), rtol=1e-3, atol=1e-6,
                            max_events=args.max_events, max_steps=1_000_000)

        total, best = timed(run, model, state, repeats=args.repeats)
        trajectory = run(model, state)
        compile_time = total - best
        first = first or compile_time
        steps, events = int(trajectory.steps), int(trajectory.events.count)
        contacts = count + count * (count - 1) // 2
        print(f"{count:5d} {contacts:8d} {compile_time:11.2f} {compile_time / first:7.2f} {best:8.3f} {steps:6d} "
              f"{events:6d} {1e6 * best / max(steps, 1):8.1f}", flush=True)


if __name__ == "__main__":
    main()
