"""Events at scale: the 16-ball break watching every open gap, with ``near_distance``, ``max_closed`` and the cloth's hops.

Five runs in one process, each of one change more:

1. every open gap's turning points watched, every member's force summed, the cloth's onsets and separations
   located as events (``Contact(..., located=True)``, every hop of a ball two events);
2. only the turning points of gaps under the near distance (``--near``);
3. each segment's accelerations summing only the closed contacts' forces (``max_closed``: at most
   ``billiard.max_closed()`` = 48 members of the ball–ball and ball–cushion families instead of 120 and 96);
4. the cloth's onsets and separations not located (``billiard.table_cloth``: the solver steps through them);
5. ``max_closed`` at the table's sizes (``table.settings``: (4, 16, 48), each segment summing the least that
   holds its closed members): ``diffimpact reproduce break``'s run.

``reproduce break``'s settings otherwise (``diffimpact.reproduce.table``:
``table.FORMULATION``, Baumgarte at α = β = 20, rtol = 1e-3, atol = 1e-6,
saves every 2 ms). For each: compile and run time apart
(``_timing.timed``), accepted steps, integration segments, the contact
events by family, the largest rise of the energy above an earlier value (``table.energy_rise``)
and the largest drift of the balls' Euler parameters, max | |p| − 1 |.
``--cloth-damping`` sets the cloth's damping ratio
(``billiard.Parameters.cloth_damping_ratio``; 0 is the paper's undamped
Hertz cloth); ``--formulation lagrange`` runs the Lagrange multipliers
instead (their drift: ``diffimpact.reproduce.table``'s docstring).

    python benchmarks/break_events.py --duration 4 --repeats 1
"""

import argparse

import equinox as eqx
import jax
import numpy as np

from _timing import timed
from diffimpact.multibody import Contact, LagrangeMultipliers, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard
from diffimpact.scenes.billiard import TABLE_FORCES

#: Events allowed in every row: the located cloth's hops make about 2,900 in 4 s (``table.MAX_EVENTS``, 2,000, is
#: for the unlocated cloth; each unused slot costs about 30 µs, so the last row runs a little slower than ``reproduce
#: break``).
MAX_EVENTS = 16_000


def _located(family):
    """The contact ``family`` with its onsets and separations located (``Contact``'s ``located``)."""
    first = lambda tree: jax.tree.map(lambda x: x[0], tree)  # noqa: E731 (a member's arrays without the family axis)
    members = (family.member(k) for k in range(family.count))
    return Contact.family(Contact(first(c.geometry), first(c.law), first(c.friction)) for c in members)


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
    cloth = TABLE_FORCES.index("cloth")
    located = eqx.tree_at(lambda m: m.forces[cloth], model, _located(model.forces[cloth]))
    print(f"{'near distance':>14} {'forces of':>14} {'cloth':>11} {'compile (s)':>11} {'run (s)':>8} {'steps':>7} "
          f"{'µs/step':>7} {'segments':>8} {'events':>6}  cloth / ball–ball / ball–cushion onsets  energy rise (J)  "
          "max | |p| − 1 |")
    most, sizes = billiard.max_closed(), table.settings(model)["events"].sizes
    runs, last = [], {}
    for near, max_closed, cloth_located in ((None, None, True), (args.near, None, True), (args.near, most, True),
                                            (args.near, most, False), (args.near, sizes, False)):
        def run():
            settings = table.settings(model, max_events=MAX_EVENTS)
            settings["events"] = dataclasses.replace(settings["events"], near_distance=near, max_closed=max_closed)
            last["run"] = simulate(located if cloth_located else model, state, times, formulation, **settings)
            return last["run"].q

        first, best = timed(run, repeats=args.repeats)
        trajectory = last["run"]
        events = trajectory.events
        count, steps = int(events.count), int(trajectory.steps)
        family, onset = np.asarray(events.contact[:count]), np.asarray(events.onset[:count])
        onsets = " / ".join(str(int(np.sum((family == k) & onset))) for k in (1, 2, 3))
        label = ("all gaps" if near is None else f"{near:g} m",
                 "all members" if max_closed is None else "≤ " + "/".join(map(str, np.atleast_1d(max_closed)))
                 + " closed", "located" if cloth_located else "not located")
        print(f"{label[0]:>14} {label[1]:>14} {label[2]:>11} {first - best:11.1f} {best:8.2f} {steps:7d} "
              f"{1e6 * best / steps:7.0f} {int(trajectory.segments):8d} {count:6d}  {onsets:>39}  "
              f"{table.energy_rise(trajectory.energy):15.2e}  {table.euler_drift(trajectory.q):.2e}")
        runs.append((", ".join(label), best, steps))
    (a, ta, sa) = runs[0]
    for b, tb, sb in runs[1:]:
        print(f"{b} / {a}: run time {tb / ta:.2f}, time per step {(tb / sb) / (ta / sa):.2f}")


if __name__ == "__main__":
    main()
