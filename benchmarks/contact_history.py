"""Benchmark: what ``simulate(..., contact_history=True)`` costs in compile and run time, side by side.

    python benchmarks/contact_history.py [--balls 2] [--saves 2 131] [--repeats 3]

The break of ``benchmarks/contact_scaling.py`` (the full table, three contact
families, rtol = 1e-3, atol = 1e-6, 0.13 s) run without and with the contact
histories, for each number of save times; the histories are evaluated at
every save time a segment reaches, so their run time grows with the saves.
Reports compile time (first call minus the best later call) and run time of
both and their ratios (with over without).
"""

import argparse

import jax.numpy as jnp

from diffimpact.multibody import AdaptiveSteps, ContactEvents, LagrangeMultipliers, simulate
from diffimpact.scenes import billiard
from _timing import timed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--balls", type=int, default=2)
    parser.add_argument("--saves", type=int, nargs="+", default=[2, 131])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state = billiard.table_model(p, args.balls), billiard.break_state(p, args.balls)
    print(f"{args.balls} balls; compile and run time without → with contact_history")
    print(f"{'saves':>5} {'compile (s)':>17} {'× ':>5} {'run (ms)':>17} {'× ':>5}")
    for saves in args.saves:
        save_times = jnp.linspace(0.0, 0.13, saves)
        compile_time, run_time = {}, {}
        for history in (False, True):
            def run(model, state):
                return simulate(model, state, save_times, LagrangeMultipliers(),
                                steps=AdaptiveSteps(rtol=1e-3, atol=1e-6), events=ContactEvents(max_events=400),
                                max_steps=1_000_000, contact_history=history)

            first, best = timed(run, model, state, repeats=args.repeats)
            compile_time[history], run_time[history] = first - best, best
        print(f"{saves:5d} {compile_time[False]:7.2f} → {compile_time[True]:7.2f} "
              f"{compile_time[True] / compile_time[False]:5.2f} {1e3 * run_time[False]:7.1f} → "
              f"{1e3 * run_time[True]:7.1f} {run_time[True] / run_time[False]:5.2f}", flush=True)


if __name__ == "__main__":
    main()
