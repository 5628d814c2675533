"""Benchmark: one compliant ball–cushion impact, one cut shot, and an iteration of each billiards fit.

    python benchmarks/billiards_fits.py [--repeats 3]

In one run, on the shipped data:

(a) one compliant cushion impact (``billiard.cushion_rebounds``, nose height,
    head-on rolling at 1 m/s), compile and run time apart, beside the rigid
    Mathavan model of the same impact (``mathavan_2010.cushion_rebound``);
(b) one cut shot to the balls' separation (``billiard.cut_shots``, rolling
    cue ball at 1.5 m/s, half-ball hit);
(c) one fit iteration (residuals and their forward-mode Jacobian, the step
    ``fitting.fit`` runs) of the ``cushion`` compliant fit (12 shots, three
    parameters) and of the ``deflection`` fit (5 shots, two parameters).

The fits' forward-mode Jacobians run with the tangents' errors in the
step-size control (``ForwardMode``'s default), under which the friction guard
is off.

Compile time is the first call minus the best later call (``_timing.timed``).
The whole fits (``diffimpact fit cushion``, ``diffimpact fit deflection``)
are timed by the CLI; see docs/results/fits.md.
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
from _timing import timed
from diffimpact.contact import Alciatore
from diffimpact.impulse import mathavan_2010
from diffimpact.scenes import billiard
from fitting import cushion, deflection, linearise

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    p = billiard.snooker()
    one = jnp.ones(1)
    first, run = timed(lambda: billiard.cushion_rebounds(p, one, one * jnp.pi / 2, one, 0 * one), repeats=args.repeats)
    print(f"(a) compliant cushion impact, 1 m/s head-on rolling: compile ≈ {first - run:.2f} s, run {run * 1e3:.2f} ms")
    rigid_impact = jax.jit(lambda v: mathavan_2010.cushion_rebound(v, np.pi / 2, v / p.radius, mass=p.mass,
                                                                   radius=p.radius).velocity)
    rigid_first, rigid = timed(lambda: rigid_impact(jnp.asarray(1.0)), repeats=args.repeats)
    print(f"    rigid Mathavan model, same impact, jitted: compile ≈ {rigid_first - rigid:.2f} s, run {rigid * 1e3:.3f} ms "
          f"= 1/{run / rigid:.0f} of the compliant run")
    cut = jnp.asarray([np.pi / 6])
    first, run = timed(lambda: billiard.cut_shots(p, Alciatore(), 1.5 * one, cut, -0.02 - 2 * p.radius * jnp.cos(cut),
                                                  0 * one, (0.02 / 1.5 + 0.005) * one)["cue_rolling"],
                       repeats=args.repeats)
    print(f"(b) cut shot to the separation, 1.5 m/s, half-ball: compile ≈ {first - run:.2f} s, run {run * 1e3:.2f} ms")
    shots, _ = cushion.load_data()
    slow = cushion.subset(shots, shots["speed"] < cushion.RIGID_LIMIT)
    residual_fn = cushion.residual_function("compliant", slow)
    first, run = timed(lambda: linearise(residual_fn, cushion.COMPLIANT_START, cushion.COMPLIANT_SPEC,
                                         sigma=cushion._sigma(slow), optimizer=cushion.OPTIMIZER),
                       repeats=args.repeats)
    print(f"(c) cushion fit iteration ({slow['speed'].size} shots, 3 parameters): compile ≈ {first - run:.1f} s, "
          f"run {run:.3f} s")
    cuts, _ = deflection.load_data()
    residual_fn = deflection.residual_function(cuts)
    first, run = timed(lambda: linearise(residual_fn, deflection.START, deflection.SPEC, sigma=deflection.SPEED_SIGMA,
                                         optimizer=deflection.OPTIMIZER), repeats=args.repeats)
    print(f"    deflection fit iteration ({cuts['speed'].size} shots, 2 parameters): compile ≈ {first - run:.1f} s, "
          f"run {run:.3f} s")


if __name__ == "__main__":
    main()
