"""Events at scale: the 16-ball break with every open gap's turning points watched, and with ``near_distance``.

Both runs in one process, with ``reproduce break``'s settings otherwise
(``diffimpact.reproduce.table``: ``table.FORMULATION``, Baumgarte at α = β =
20, rtol = 1e-3, atol = 1e-6, saves every 2 ms). For each: compile and run
time apart (``_timing.timed``), accepted steps, integration segments, the
contact events by family, the largest rise of the energy above its earlier
maximum and the largest drift of the balls' Euler parameters, max | |p| − 1 |.
``--cloth-damping`` sets the cloth's damping ratio
(``billiard.Parameters.cloth_damping_ratio``; 0 is the paper's undamped
Hertz cloth); ``--formulation lagrange`` runs the Lagrange multipliers
instead (their drift: ``diffimpact.reproduce.table``'s docstring).

    python benchmarks/break_events.py --duration 4 --repeats 1
"""

import argparse

import numpy as np

from _timing import timed
from diffimpact.multibody import LagrangeMultipliers, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=table.QUICK_DURATION, help="simulated time (s)")
    parser.add_argument("--near", type=float, default=table.NEAR_DISTANCE, help="near distance d_n (m)")
    parser.add_argument("--cloth-damping", type=float, default=0.0, help="the cloth's damping ratio")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs after the first call")
    parser.add_argument("--formulation", choices=("table", "lagrange"), default="table",
                        help="table.FORMULATION (Baumgarte, α = β = 20) or the Lagrange multipliers")
    args = parser.parse_args()
    formulation = table.FORMULATION if args.formulation == "table" else LagrangeMultipliers()
    p = billiard.Parameters(cloth_damping_ratio=args.cloth_damping)
    model, state, times = billiard.table_model(p), billiard.break_state(p), table.save_times(args.duration)
    print(f"16-ball break, {args.duration:g} s, cloth damping ratio {args.cloth_damping:g}, "
          f"{type(formulation).__name__}")
    print(f"{'near distance':>14} {'compile (s)':>11} {'run (s)':>8} {'steps':>7} {'segments':>8} {'events':>6}  "
          "cloth / ball–ball / ball–cushion onsets  energy rise (J)  max | |p| − 1 |")
    runs, last = {}, {}
    for near in (None, args.near):
        def run():
            last["run"] = simulate(model, state, times, formulation, max_events=table.MAX_EVENTS,
                                   max_steps=table.MAX_STEPS, near_distance=near, **table.TOLERANCES)
            return last["run"].q

        first, best = timed(run, repeats=args.repeats)
        trajectory = last["run"]
        events = trajectory.events
        count = int(events.count)
        family, onset = np.asarray(events.contact[:count]), np.asarray(events.onset[:count])
        onsets = " / ".join(str(int(np.sum((family == k) & onset))) for k in (1, 2, 3))
        label = "all gaps" if near is None else f"{near:g} m"
        print(f"{label:>14} {first - best:11.1f} {best:8.2f} {int(trajectory.steps):7d} {int(trajectory.segments):8d} "
              f"{count:6d}  {onsets:>39}  {table.energy_rise(trajectory.energy):15.2e}  "
              f"{table.euler_drift(trajectory.q):.2e}")
        runs[label] = best
    (a, ta), (b, tb) = runs.items()
    print(f"run time {b} / {a}: {tb / ta:.2f}")


if __name__ == "__main__":
    main()
