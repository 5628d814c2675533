"""What the test suite's XLA flags cost and buy: compile time against run time, against XLA's default.

The test suite turns XLA's CPU fusion emitters off (``--xla_cpu_use_fusion_emitters=false``) and has LLVM generate
code without optimisation (``--xla_backend_optimization_level=0``), both set in ``tests/conftest.py``: its time is
mostly compiling. Users keep XLA's default. This measures the trade, each setting in a process of its own (XLA
reads its flags once, when JAX's CPU backend starts), in one run:

1. **compile** of a small ``simulate``: a ball of 0.5 kg bouncing off an optimally damped ground (Hertz
   exponent 1.5, k = 1e7 N/m^1.5, e = 0.6, 2 m/s, 41 save times, ``LagrangeMultipliers``), as the tests
   compile many: tracing (``jax.jit(...).lower``) and XLA (``.compile()``) apart;
2. **the 16-ball break** for ``--duration`` s with ``reproduce break``'s settings (``table.integrate``):
   compile (first call − best later call) and run (best of ``--repeats``), and whether its saved
   coordinates are the same to the bit under every setting.

    python benchmarks/compile_flags.py [--duration 0.5] [--repeats 2]
"""

import argparse
import hashlib
import json
import time

import numpy as np

from _processes import measured

FUSION_OFF = "--xla_cpu_use_fusion_emitters=false"
FLAGS = {
    "XLA's default": "",
    "fusion emitters off": FUSION_OFF,
    "and LLVM at -O0 (the tests)": f"{FUSION_OFF} --xla_backend_optimization_level=0",
}


def measure(duration, repeats):
    """The child: times of this process's XLA flags, as a dict."""
    import jax
    import jax.numpy as jnp

    from _timing import timed
    from diffimpact.multibody import (CirclePlane, Contact, LagrangeMultipliers, Model, OptimalDamping,
                                      PlanarBody, State, simulate)
    from diffimpact.reproduce import table
    from diffimpact.scenes import billiard

    mass, radius = 0.5, 0.05
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), radius)
    model = Model([PlanarBody(mass, 0.5 * mass * radius**2)], (), (Contact(ground, OptimalDamping(1e7, 1.5, 0.6)),))
    state = State([0.0, radius + 0.01, 0.0], [0.0, -2.0, 0.0])
    bounce = jax.jit(lambda m, s: simulate(m, s, jnp.linspace(0.0, 0.02, 41), LagrangeMultipliers()).events.v)
    start = time.perf_counter()
    lowered = bounce.lower(model, state)
    traced = time.perf_counter()
    lowered.compile()
    compiled = time.perf_counter()

    p = billiard.Parameters()
    table_model, break_state = billiard.table_model(p), billiard.break_state(p)
    times = jnp.linspace(0.0, duration, 3)
    saved = []

    def run():  # keeps the last timed call's coordinates
        saved[:] = [table.integrate(table_model, break_state, times, 1500).q]
        return saved[0]

    first, best = timed(run, repeats=repeats)
    return {"trace": traced - start, "xla": compiled - traced, "break compile": first - best, "break run": best,
            "break q": hashlib.sha256(np.asarray(saved[0]).tobytes()).hexdigest()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.5, help="simulated time of the break (s)")
    parser.add_argument("--repeats", type=int, default=2, help="timed break runs after the first call")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.duration, args.repeats)))
        return
    results = {}
    for name, flags in FLAGS.items():
        results[name] = measured(__file__, [f"--child={flags}", "--duration", str(args.duration),
                                            "--repeats", str(args.repeats)], name, flags)
    default, *_ = results.values()
    print(f"{'':34s} {'bounce: trace':>14s} {'XLA':>8s} {f'break {args.duration:g} s: compile':>22s} {'run':>8s}")
    for name, r in results.items():
        print(f"{name:34s} {r['trace']:12.2f} s {r['xla']:6.2f} s {r['break compile']:20.2f} s {r['break run']:6.3f} s")
    same = all(r["break q"] == default["break q"] for r in results.values())
    print(f"the break's saved coordinates under every setting: {'the same to the bit' if same else 'DIFFER'}")
    for name, r in list(results.items())[1:]:
        print(f"{name} / default: bounce XLA {r['xla'] / default['xla']:.2f}×, break compile "
              f"{r['break compile'] / default['break compile']:.2f}×, break run {r['break run'] / default['break run']:.2f}×")


if __name__ == "__main__":
    main()
