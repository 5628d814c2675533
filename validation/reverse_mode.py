"""Check: reverse-mode derivatives through the cloth's friction on the table, against the closed form, and
what they hold in memory.

    python validation/reverse_mode.py [--duration 0.9] [--rtol 1e-5] [--resting X Y] [--max-events 2000]
                                      [--checkpoints default 64 4472]

``guard_rolling.py``'s shot: one ball struck at 2 m/s along +x from (−0.9, 0) m without spin slides on the paper's
cloth and rolls; ``--resting X Y`` puts a second ball at rest at (X, Y) m, which touches nothing but the cloth (the
closed form is the same). Its x after ``--duration`` s is differentiated by the speed v0 with ``jax.grad`` (reverse
mode, ``simulate``'s default ``ReverseMode()``) at ``--rtol`` with the table's settings otherwise (``--max-events``: the
slots of the scan of segments, default the table's ``MAX_EVENTS``; each slot holds its checkpoints), each run in a
process of its own, so that its peak resident memory is its own:

1. without ``friction_steps``: the derivative and how far it is off the closed form, or the error that refuses it;
2. with ``friction_steps=True``, a segment's solve keeping each of ``--checkpoints`` checkpoints
   (``ReverseMode(segment_checkpoints=N)``; ``default``: ``simulate``'s own,
   16; 4472 is diffrax's default for the table's ``max_steps`` of 10⁷, √(2 max_steps)):
   the derivative, the accepted steps, the first call (compile and run), the derivative's run and the forward
   run (best of 2 later calls each), and the peak resident memory.
"""

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _errors
import diffimpact  # noqa: E402
import _errors  # noqa: E402
from diffimpact.multibody import ReverseMode  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402
from guard_rolling import SPEED, START, closed_form, struck_x  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def one(args):
    """One run of the derivative (``--one``): a line of what it gave."""
    centres = [START] if args.resting is None else [START, tuple(args.resting)]
    p = billiard.Parameters()
    times = table.save_times(args.duration)
    exact, _ = closed_form(p, args.duration)
    options = {"max_events": args.max_events} | ({} if args.one == "plain" else {"friction_steps": True})
    if args.one not in ("plain", "default"):
        options["derivatives"] = ReverseMode(segment_checkpoints=int(args.one))
    derivative = eqx.filter_jit(jax.grad(lambda v: struck_x(p, centres, v, times, args.rtol, **options),
                                         has_aux=True))
    label = "without friction_steps" if args.one == "plain" else f"friction_steps, checkpoints {args.one}"
    start = time.perf_counter()
    try:
        value, steps = jax.block_until_ready(derivative(jnp.asarray(SPEED)))
    except eqx.EquinoxRuntimeError as error:
        print(f"  {label}: refused: {_errors.message(error)[:110]}...")
        return
    first = time.perf_counter() - start
    runs = []
    for fn in (derivative, eqx.filter_jit(lambda v: struck_x(p, centres, v, times, args.rtol, **options)[0])):
        fn(jnp.asarray(SPEED))
        seconds = []
        for _ in range(2):
            start = time.perf_counter()
            jax.block_until_ready(fn(jnp.asarray(SPEED)))
            seconds.append(time.perf_counter() - start)
        runs.append(min(seconds))
    print(f"  {label}: dx/dv0 = {float(value):+.6e} ({float(value) / exact - 1:+.1e} off), {int(steps)} steps; "
          f"first call {first:.1f} s, derivative {runs[0]:.2f} s, forward run {runs[1]:.3f} s; peak memory "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.9, help="simulated time (s)")
    parser.add_argument("--rtol", type=float, default=table.SHOT_RTOL, help="the runs' rtol (atol = rtol/1000)")
    parser.add_argument("--resting", type=float, nargs=2, metavar=("X", "Y"), help="a second ball at rest there")
    parser.add_argument("--max-events", type=int, default=table.MAX_EVENTS, help="simulate's max_events")
    parser.add_argument("--checkpoints", nargs="*", default=["default", "64", "4472"],
                        help="checkpoints of a segment's solve (default: simulate's)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # one run, in the process started for it
    args = parser.parse_args()
    if args.one:
        return one(args)
    exact, rolls = closed_form(billiard.Parameters(), args.duration)
    balls = "one ball" if args.resting is None else f"a ball beside one resting at {tuple(args.resting)} m"
    print(f"{balls}, the paper's cloth, rtol {args.rtol:g}, {args.duration:g} s (rolling from {rolls:.4f} s), "
          f"max_events {args.max_events}: dx/dv0 = {exact:.6f} in closed form; jax.grad (reverse mode):", flush=True)
    for case in ["plain"] + args.checkpoints:
        subprocess.run([sys.executable, __file__, *sys.argv[1:], "--one", case], check=True)


if __name__ == "__main__":
    main()
