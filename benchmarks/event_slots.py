"""What unused event slots cost: the 16-ball break at several ``max_events``, in one process.

``simulate`` runs its segments in a ``lax.scan`` of ``max_events + 1`` (and
the save windows') slots, those after the run's end skipped by a
``lax.cond``, and allocates each slot's event record. The 4-s break of
``diffimpact reproduce break`` (``table.integrate``'s settings) has about
150 events since the cloth's hops are not located, so most slots are
unused. For each ``--max-events`` (each compiled apart: the scan's length
is static): compile and run time (``_timing.timed``, best of ``--repeats``
later calls), steps and segments (the same in every row: the slots change
no arithmetic), and the run time per unused slot against the smallest.

    python benchmarks/event_slots.py [--duration 4] [--max-events 500 2000 16000] [--repeats 3]
"""

import argparse

from _timing import timed
from diffimpact.multibody import simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=table.DURATION, help="simulated time (s)")
    parser.add_argument("--max-events", type=int, nargs="+", default=[500, 2000, 16000])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after the first call")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state, times = billiard.table_model(p), billiard.break_state(p), table.save_times(args.duration)
    print(f"16-ball break, {args.duration:g} s, reproduce break's settings")
    print(f"{'max_events':>10} {'compile (s)':>11} {'run (s)':>8} {'steps':>6} {'segments':>8} {'µs per unused slot':>18}")
    rows = []
    for max_events in sorted(args.max_events):
        last = {}

        def run():
            last["run"] = simulate(model, state, times, table.FORMULATION,
                                   **table.settings(model, max_events=max_events))
            return last["run"].q

        first, best = timed(run, repeats=args.repeats)
        trajectory = last["run"]
        rows.append((max_events, best))
        (fewest, base) = rows[0]
        per_slot = "" if max_events == fewest else f"{1e6 * (best - base) / (max_events - fewest):18.1f}"
        print(f"{max_events:10d} {first - best:11.1f} {best:8.3f} {int(trajectory.steps):6d} "
              f"{int(trajectory.segments):8d} {per_slot}", flush=True)


if __name__ == "__main__":
    main()
