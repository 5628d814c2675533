"""A batch of four-ball breaks on every core: ``jax.lax.map`` on one CPU device against the same map sharded.

XLA's CPU client runs a program on one device, and a break's small kernels keep about one core busy, so a
``jax.lax.map`` over a batch uses one core of the machine. Started with ``--xla_force_host_platform_device_count``
(set here, before JAX starts, to ``--devices``; default: the machine's cores), the client has one device per
core, and ``fitting.sharding.sharded_map(..., batching="map")`` gives each device its slice of the batch to
``lax.map`` over, at the same time (``jax.shard_map``). Both maps are that function's, on the first device and
on all of them.

The breaks are ``break_gradient.py``'s (the four-ball break with cushions, ``reproduce break``'s settings), the
cue speed 10.729 (1 + 1e-3 k) m/s, k = 0 … ``--batch`` − 1, ``--duration`` s each. Printed: the single run
(compile, run), the map and the sharded map (compile, run, throughput against single runs), and the largest
difference of their coordinates (the break amplifies the round-off of two differently compiled programs).

    python benchmarks/break_batch.py [--batch 64] [--duration 1] [--devices N] [--repeats 1]
"""

import argparse
import functools
import os


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64, help="breaks in the batch")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated time of each break (s)")
    parser.add_argument("--devices", type=int, default=os.cpu_count(), help="CPU devices (default: the cores)")
    parser.add_argument("--max-events", type=int, default=200, help="simulate's max_events")
    parser.add_argument("--repeats", type=int, default=1, help="timed calls after the first")
    args = parser.parse_args()
    if args.batch < 1 or args.devices < 1 or args.batch % args.devices:
        parser.error(f"--batch ({args.batch}) must be a positive multiple of --devices ({args.devices})")
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + f" --xla_force_host_platform_device_count={args.devices}").strip()

    import jax
    import jax.numpy as jnp
    import numpy as np

    from _timing import timed
    from break_gradient import SPEED, _run
    from diffimpact.scenes import billiard
    from fitting.sharding import sharded_map

    p = billiard.Parameters()
    theta = jnp.array([p.ball_restitution, p.cloth_friction])

    def one(speed):
        return _run(theta, speed, args.duration, 1e-3, args.max_events).q

    speeds = SPEED * (1 + 1e-3 * jnp.arange(args.batch))
    single = jax.jit(one)
    first, single_time = timed(single, speeds[0], repeats=args.repeats)
    print(f"the four-ball break, {args.duration:g} s, {args.batch} cue speeds; {len(jax.devices())} CPU devices")
    print(f"single run: compile ≈ {first - single_time:.1f} s, run {single_time:.3f} s")

    devices = jax.devices()
    mapped = functools.partial(sharded_map, one, speeds, devices=devices[:1], batching="map")
    sharded = functools.partial(sharded_map, one, speeds, devices=devices, batching="map")
    results = {}
    for name, fn in (("lax.map, one device", mapped), (f"lax.map sharded over {len(devices)} devices", sharded)):

        def call(fn=fn, name=name):  # keeps the last timed call's coordinates
            results[name] = fn()
            return results[name]

        first, run_time = timed(call, repeats=args.repeats)
        print(f"{name}: compile ≈ {first - run_time:.1f} s, run {run_time:.3f} s, throughput "
              f"{args.batch * single_time / run_time:.2f}× single runs")
    (_, a), (_, b) = results.items()
    print(f"largest difference of q between the two: {np.abs(np.asarray(a) - np.asarray(b)).max():.2e} m")


if __name__ == "__main__":
    main()
