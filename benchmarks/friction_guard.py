"""A guard tried for derivatives through stiff friction without ``friction_steps``: tangents poisoned (NaN).

Not part of the package. Without ``friction_steps`` an explicit solver's steps may be longer than the friction's
stability allows (h λ_F beyond the solver's stability interval on the negative real axis); the run stays right,
its derivatives grow without bound and come out silently wrong. This design leaves every step of the motion as
it is and, through a ``jax.custom_jvp`` identity on each step's end state, multiplies the state's tangent by NaN
where the step was unstable for the friction (h λ_F, λ_F the largest of the bodies' summed
``Contact.slip_rates`` at the step's start, as ``friction_steps`` computes it, beyond the interval: 3.5 for
Tsit5). Plain runs compute nothing more (the identity's value is the state); a differentiated run computes the
rates once a step. The multiplication is linear in the tangent, so reverse mode, which differentiates the same
rule while going back, gets NaN as well.

What it cannot see: a slip that passes through a law's band inside one step (``friction_steps``' second bound),
where λ_F at the step's start is that of the dead zone or the sliding law.

The four-ball break of ``break_gradient.py`` (Tsit5, forward mode or ``--reverse``), the cue ball's final x with
respect to (ball–ball e, cloth μ), guarded and not, without and with ``friction_steps``:

    python benchmarks/friction_guard.py [--durations 0.15 3] [--rtols 1e-3 1e-8] [--reverse] [--factor 1]
"""

import argparse
import sys

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from _tangent_projection import with_tangent
from break_gradient import SPEED, _or_failure, _run
from diffimpact.multibody import Baumgarte
from diffimpact.multibody.formulations import WrappedSolver
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

simulate_module = sys.modules["diffimpact.multibody.simulate"]  # the package exports the function of that name


class GuardedSolver(WrappedSolver):
    """Wrap a diffrax solver so that a step unstable for the friction (h λ_F > ``limit``) poisons the tangents."""

    limit: float = eqx.field(static=True)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(terms, t0, t1, y0, args, solver_state,
                                                                          made_jump)

        def guarded(model, y1, dy1, y0, h):
            q, v = (model.split(x) for x in y0)
            rate = simulate_module._friction_rate(model, simulate_module._contact_indices(model), q, v)
            unstable = h * rate > self.limit
            return jax.tree.map(lambda dy: dy * jnp.where(unstable, jnp.nan, 1.0), dy1)

        y1 = with_tangent(y1, args, guarded, y0, t1 - t0)
        return y1, y_error, dense_info, solver_state, result


class Guarded(Baumgarte):
    """Baumgarte's formulation with the solver wrapped by ``GuardedSolver`` at ``factor`` times the solver's
    stability interval."""

    factor: float = eqx.field(static=True)

    def __init__(self, alpha, beta, factor=1.0):
        super().__init__(alpha, beta)
        self.factor = factor

    def wrap_solver(self, model, solver):
        return GuardedSolver(solver, self.factor * simulate_module._stability_interval(solver))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=float, nargs="+", default=[0.15, 3.0], help="simulated times (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-3, 1e-8])
    parser.add_argument("--reverse", action="store_true", help="reverse mode (jax.jacrev, simulate's default adjoint)")
    parser.add_argument("--factor", type=float, default=1.0, help="the guard at this many stability intervals")
    args = parser.parse_args()
    p = billiard.Parameters()
    theta = jnp.array([p.ball_restitution, p.cloth_friction])
    plain = table.FORMULATION
    guarded = Guarded(plain.alpha, plain.beta, args.factor)

    def gradient(formulation, duration, rtol, steps):
        def cue(x):
            run = _run(x, SPEED, duration, rtol, 200, None if args.reverse else diffrax.ForwardMode(), steps,
                       formulation=formulation)
            return run.q[-1, 0], run.steps

        return jax.jit((jax.jacrev if args.reverse else jax.jacfwd)(cue, has_aux=True))(theta)

    print(f"the four-ball break, Tsit5, {'reverse' if args.reverse else 'forward'} mode: dx/d(e, μ) of the cue "
          f"ball's final x, guard at h λ_F > "
          f"{args.factor * simulate_module._stability_interval(diffrax.Tsit5()):.4g}")
    for duration in args.durations:
        for rtol in args.rtols:
            for steps in (False, True):
                print(f"  {duration:g} s, rtol {rtol:g}, friction_steps={steps!s:5s}:")
                for name, formulation in (("unguarded", plain), ("guarded", guarded)):
                    print(f"    {name:9s} ", end="", flush=True)
                    derivative, count = _or_failure(gradient, formulation, duration, rtol, steps)
                    if derivative is not None:
                        print(f"{np.array2string(np.asarray(derivative), precision=5)} ({int(count)} steps)")
                jax.clear_caches()


if __name__ == "__main__":
    main()
