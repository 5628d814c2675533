"""Benchmark: ``simulate``'s friction guard on the four-ball break, at several thresholds and without it.

    python benchmarks/friction_guard.py [--durations 0.15 3] [--rtols 1e-3 1e-8] [--reverse] [--factors 5 1 inf]

Without ``friction_steps`` an explicit solver's steps may be longer than the friction's stability allows (h λ_F
beyond the solver's stability interval on the negative real axis); the run stays right, its derivatives grow
without bound. ``simulate`` then stops a differentiated run (``FrictionGuard``) at an accepted step whose h λ_F is
beyond ``ForwardMode``'s ``friction_guard`` stability intervals (5; 3.507 each for Tsit5). Each factor of
``--factors`` is the ``friction_guard`` of the runs that follow (``inf``: no guard, the derivatives as the steps
give them).

The four-ball break of ``break_gradient.py`` (Tsit5, forward mode, or reverse mode with ``--reverse``, where the
guard is not used: ``simulate`` refuses a reverse-mode derivative through friction without ``friction_steps``),
the cue ball's final x with respect to (ball–ball e, cloth μ), at each duration and rtol, without and with
``friction_steps``: the derivatives and steps, or the error that stopped the run. The steps are the state's error's
alone (``tangent_errors=False``): where the tangents' errors, forward mode's default, set them the guard is off.
"""

import argparse

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from break_gradient import SPEED, _or_failure, _run
from diffimpact.multibody import ForwardMode
from diffimpact.multibody.integrate.step_control import stability_interval
from diffimpact.scenes import billiard


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[0.15, 3.0], help="simulated times (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-3, 1e-8])
    parser.add_argument("--reverse", action="store_true", help="reverse mode (jax.jacrev, simulate's default)")
    parser.add_argument("--factors", type=float, nargs="+", default=[ForwardMode().friction_guard, np.inf],
                        help="ForwardMode's friction_guard of the runs (inf: no guard)")
    args = parser.parse_args()
    p = billiard.Parameters()
    theta = jnp.array([p.ball_restitution, p.cloth_friction])

    def gradient(duration, rtol, steps, factor):
        def cue(x):
            # (the steps the state's error sets: with the tangents' errors, forward mode's default, no guard)
            run = _run(x, SPEED, duration, rtol, 200, not args.reverse, steps, tangent_errors=False,
                       options=argparse.Namespace(guard=factor))
            return run.q[-1, 0], run.steps

        return jax.jit((jax.jacrev if args.reverse else jax.jacfwd)(cue, has_aux=True))(theta)

    print(f"the four-ball break, Tsit5, {'reverse' if args.reverse else 'forward'} mode: dx/d(e, μ) of the cue "
          f"ball's final x; friction_guard in stability intervals of {stability_interval(diffrax.Tsit5()):.4g}")
    for duration in args.durations:
        for rtol in args.rtols:
            for steps in (False, True):
                print(f"  {duration:g} s, rtol {rtol:g}, friction_steps={steps!s:5s}:")
                for factor in args.factors:
                    print(f"    friction_guard = {factor:<4g} ", end="", flush=True)
                    derivative, count = _or_failure(gradient, duration, rtol, steps, factor)
                    if derivative is not None:
                        print(f"{np.array2string(np.asarray(derivative), precision=5)} ({int(count)} steps)")
                    jax.clear_caches()


if __name__ == "__main__":
    main()
