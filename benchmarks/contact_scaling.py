"""Benchmark: compile and run time of the break on the full table as the number of balls (and contacts) grows.

    python benchmarks/contact_scaling.py [--balls 2 4 8 16] [--duration 0.13] [--max-events 400]

The table of ``diffimpact.scenes.billiard.table_model`` (Gismeros Moreno et
al.'s balls, cloth and ball–ball laws; six cushions and six pockets): the
cue ball shot at 10.729 m/s along +x at the first ``balls − 1`` balls of the
rack (``break_state``). Every ball is on the cloth, every pair of balls and
every ball with each cushion is a contact: for 16 balls 16 ball–cloth, 120
ball–ball and 96 ball–cushion contacts in three contact families. Reports
per ball count, in one run: contacts, compile time (first call minus a
later call), run time, solver steps, events and the run time per step, and
each compile time over the first's. Tolerances are the formulations study's (Matlab's
defaults, rtol = 1e-3, atol = 1e-6). The simulated ``duration`` from the
shot (default 0.13 s) takes the cue ball into the rack (at ≈ 0.114 s).
"""

import argparse

import jax.numpy as jnp

import diffimpact
from diffimpact.multibody import AdaptiveSteps, ContactEvents, LagrangeMultipliers, simulate
from diffimpact.scenes import billiard
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--balls", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--duration", type=float, default=0.13)
    parser.add_argument("--max-events", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    p = billiard.Parameters()
    save_times = jnp.array([0.0, args.duration])
    print(f"{'balls':>5} {'contacts':>8} {'compile (s)':>11} {'× first':>7} {'run (s)':>8} {'steps':>6} "
          f"{'events':>6} {'µs/step':>8}")
    first = None
    for count in args.balls:
        model, state = billiard.table_model(p, count), billiard.break_state(p, count)

        def run(model, state):
            return simulate(model, state, save_times, LagrangeMultipliers(), steps=AdaptiveSteps(rtol=1e-3, atol=1e-6),
                            events=ContactEvents(max_events=args.max_events), max_steps=1_000_000)

        total, best = timed(run, model, state, repeats=args.repeats)
        trajectory = run(model, state)
        compile_time = total - best
        first = first or compile_time
        steps, events = int(trajectory.steps), int(trajectory.events.count)
        contacts = sum(force.count for force in model.forces[1:])
        print(f"{count:5d} {contacts:8d} {compile_time:11.2f} {compile_time / first:7.2f} {best:8.3f} {steps:6d} "
              f"{events:6d} {1e6 * best / max(steps, 1):8.1f}", flush=True)


if __name__ == "__main__":
    main()
