"""Benchmark: a ball rolling and hopping on the cloth: what each of ``friction_steps``' two bounds does there.

    python benchmarks/rolling_hop.py [--passage-step C] [--friction-step C] [--cloth-damping-ratio ZETA]
                                     [--duration 0.3] [--lift 2e-5] [--rtols 1e-3 1e-6 1e-8]
                                     [--project-tangents THETA] [--tangent-errors] [--guard FACTOR]

One ball on the full table (``billiard.table_model(p, balls=1)``) at
(−0.6, 0) m, rolling along +x at v0 = 1 m/s (``rolling_spin``), started
``--lift`` m above its resting height: on the paper's undamped cloth
(``--cloth-damping-ratio 0``) it bounces on the cloth's Hertz law for the
whole run, and since the contact point's lever R − δ/2 moves with the
depth δ, the slip of a ball that rolls moves inside the cloth's friction
band (Ambrósio: no friction below v0 = 1e-4 m/s, the full μ above v1 =
1e-3 m/s) at every hop. ``reproduce break``'s settings (``table.settings``,
``FORMULATION``) with ``friction_steps``, at each rtol of ``--rtols``
(atol = 1e-3 rtol): the accepted steps, and the forward-mode derivative
(``jax.jvp``, ``diffrax.ForwardMode``) of the ball's x after ``--duration``
s with respect to v0, against central differences of runs at rtol = 1e-10
(relative steps 1e-4 and 1e-5; the second is the reference). The steps are
the state's error's alone (``tangent_errors=False``), those the bounds
were made for.
``--passage-step C`` and ``--friction-step C`` set ``AdaptiveSteps``'
``passage_step`` and ``friction_step`` (``inf``: that
bound left out). docs/design/step-control.md, "Where the bounded break's steps go".
``--project-tangents THETA`` runs the derivatives with the design of
``_tangent_projection.py`` (the slips' tangents that relax faster than
THETA/h projected after each step of length h; a design tried, not the
package's); the central differences are of the package's runs.
``--tangent-errors`` runs the derivatives as ``simulate``'s forward mode
does by default: the tangents' errors in the step-size control and the
passages' bound (``tangent_errors=True``), without ``friction_steps``; with
``--project-tangents`` it measures whether the projection shortens those
steps.
``--guard FACTOR`` sets ``ForwardMode``'s ``friction_guard`` (a differentiated
run stops at a step with h λ_F beyond FACTOR stability intervals; ``inf``:
no guard, the derivative as the steps give it; the tangent projection at
rtol 1e-3 needs it).
"""

import argparse
import dataclasses

import jax
import jax.numpy as jnp

import _bounds
from _tangent_projection import ProjectedTangents
from break_gradient import _or_failure
from diffimpact.multibody import ReverseMode, State, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

SPEED = 1.0
CENTRE = (-0.6, 0.0)
#: Relative steps of the central differences; the last is the reference.
STEPS = (1e-4, 1e-5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _bounds.add_options(parser)
    parser.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA",
                        help="the cloth damped at this ratio (0: the paper's undamped Hertz cloth)")
    parser.add_argument("--duration", type=float, default=0.3, help="simulated time (s)")
    parser.add_argument("--lift", type=float, default=2e-5, help="start above the resting height (m)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-3, 1e-6, 1e-8])
    parser.add_argument("--project-tangents", type=float, default=None, metavar="THETA",
                        help="the derivatives with the slips' stiff tangents projected (_tangent_projection.py)")
    parser.add_argument("--tangent-errors", action="store_true",
                        help="the derivatives under the tangents' errors (forward mode's default), no friction_steps")
    args = parser.parse_args()
    bounds = _bounds.steps(args)
    p = dataclasses.replace(billiard.Parameters(), cloth_damping_ratio=args.cloth_damping_ratio)
    model = billiard.table_model(p, balls=1)

    formulation = table.FORMULATION
    if args.project_tangents is not None:
        formulation = ProjectedTangents(formulation.alpha, formulation.beta, args.project_tangents)

    def run(v0, rtol, forward=False, formulation=table.FORMULATION, tangent_errors=False):
        velocity = jnp.stack([v0, 0.0])
        q, v = billiard.ball_state(p, jnp.array([CENTRE]), velocity[None], billiard.rolling_spin(p, velocity)[None])
        settings = _bounds.settings(args, model, rtol=rtol, max_events=20)
        settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=not tangent_errors)
        derivatives = _bounds.forward_mode(args, tangent_errors=tangent_errors) if forward else ReverseMode()
        trajectory = simulate(model, State(q.at[2].add(args.lift), v), jnp.stack([0.0, args.duration]),
                              formulation, derivatives=derivatives, **settings)
        return trajectory.q[-1, 0], trajectory.steps

    forward = jax.jit(run)
    derivative = jax.jit(lambda v0, rtol: jax.jvp(lambda x: run(x, rtol, True, formulation,
                                                                         args.tangent_errors),
                                                  (v0,), (1.0,)))
    print(f"one ball rolling at {SPEED} m/s from {CENTRE} m, started {args.lift:g} m high, "
          f"{args.duration:g} s, cloth damping ratio {args.cloth_damping_ratio:g}; friction_steps with "
          f"friction_step = {bounds.friction_step:g}, passage_step = {bounds.passage_step:g}"
          + ("" if args.project_tangents is None else f"; tangents projected at h λ > {args.project_tangents:g}")
          + f"; friction_guard = {_bounds.forward_mode(args).friction_guard:g}"
          + ("; derivatives under the tangents' errors, without friction_steps" if args.tangent_errors else ""))
    differences = [(float(forward(SPEED * (1 + h), 1e-10)[0]) - float(forward(SPEED * (1 - h), 1e-10)[0]))
                   / (2 * h * SPEED) for h in STEPS]
    print("  central differences at rtol 1e-10: " + ", ".join(
        f"relative step {h:g}: dx/dv0 = {d:.8f}" for h, d in zip(STEPS, differences)))
    for rtol in args.rtols:
        print(f"  rtol {rtol:g}: ", end="")
        result = _or_failure(derivative, SPEED, rtol)
        if result[0] is None:
            continue
        (_, steps), (slope, _) = result
        error = abs(float(slope) - differences[-1]) / abs(differences[-1])
        print(f"{int(steps)} steps, forward mode dx/dv0 = {float(slope):.8g} "
              f"(relative difference {error:.1e})")


if __name__ == "__main__":
    main()
