"""Check: the derivatives of a shot on the full table with respect to the cue's strike and the table's
parameters, against central differences.

    python validation/shot_gradient.py [--shot readme|default] [--duration 0.4] [--rtols 1e-5 1e-7] [--reference-rtol 1e-10]
                                       [--steps 1e-4 1e-5 1e-6] [--parameters ball_restitution cloth_friction]
                                       [--bounded-tangent-errors] [--nose] [--cloth-damping-ratio ZETA]

The README's shot of ``diffimpact shot`` (the cue ball at (0.6, 0.1) m struck at 2 m/s along
``billiard.ghost_ball_aim`` for the yellow ball at (1.0, 0.4) m into the foot-left pocket, no spin; ``--shot
default``: the command's default shot, from the head spot at the yellow ball at (0.9, 0.3) m): central
differences of plain runs at ``--reference-rtol`` with the steps ``--steps`` (the speed in m/s, the aim in rad, the
spins in V/R, the table's ``--parameters`` (of ``table.TABLE_PARAMETERS``) relative to their values), then the
forward-mode Jacobian (``jax.jacfwd``, ``ForwardMode``) of both balls' centres (x, y) after ``--duration``
s (past the collision, before the yellow ball drops) with respect to the strike (``billiard.cue_strike``: speed,
aim, topspin and sidespin ratios) and the parameters: at the first of ``--rtols`` with ``table.settings`` as they
are (``contact_steps`` on the cushions only, no ``friction_steps``) and the steps set by the state's error alone
(``tangent_errors=False``), at each with ``friction_steps=True`` and ``contact_steps=True`` (every family's
friction and closed contacts bound the steps) and the state's error alone (``--bounded-tangent-errors``: the
tangents' errors too), and at each with ``table.settings`` and
the tangents' errors in the step-size control too (``simulate``'s default in forward mode; the directions, as in
``table.shot``'s sensitivity, each value's ratio to its size, 1 for a value of 0), each with its largest
difference from the last central differences by column (the parameters' columns as x ∂/∂x: m per relative
change). Compile and run times apart (first call and second). docs/results/shot.md, "`diffimpact shot`; a ball's slide
into rolling at the table's tolerance", "The shot's sensitivity to the table's parameters"; docs/design/derivatives.md,
"Forward-mode derivatives under the error control". ``--nose`` and ``--cloth-damping-ratio`` set the table as
``diffimpact shot``'s options do (the cushions at the nose height 7R/5; the cloth damped at ζ).
"""

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _errors
import diffimpact  # noqa: E402
import _errors  # noqa: E402
from diffimpact.multibody import ForwardMode, ReverseMode, simulate  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

#: ``--shot``'s shots: (cue ball, object ball, pocket), struck at ``table.SHOT_SPEED`` without spin. "readme": the
#: README's; "default": ``diffimpact shot``'s defaults (over its 4 s the yellow ball drops, the cue ball rebounds
#: from the foot cushion and hops on the cloth).
SHOTS = {"readme": ((0.6, 0.1), (1.0, 0.4), "foot-left"),
         "default": ((billiard.Parameters().cue_x, 0.0), table.SHOT_BALLS[0], table.SHOT_POCKET)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shot", choices=tuple(SHOTS), default="readme",
                        help="the README's shot (default) or diffimpact shot's default one")
    parser.add_argument("--duration", type=float, default=0.4, help="simulated time (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[table.SHOT_RTOL, 1e-7],
                        help="the derivatives' rtols (the first also with table.settings alone)")
    parser.add_argument("--reference-rtol", type=float, default=1e-10, help="the central differences' rtol")
    parser.add_argument("--steps", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6],
                        help="the differences' steps (relative to the value for the table's parameters)")
    parser.add_argument("--parameters", nargs="*", default=["ball_restitution", "cloth_friction"],
                        choices=[name for name, _ in table.TABLE_PARAMETERS], metavar="NAME",
                        help="the table's parameters to differentiate by besides the strike (table.TABLE_PARAMETERS)")
    parser.add_argument("--bounded-tangent-errors", action="store_true",
                        help="the runs with both bounds also with the tangents' errors in the step-size control")
    parser.add_argument("--nose", action="store_true", help="the cushions at the nose height 7R/5")
    parser.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA",
                        help="the cloth damped at ζ (default 0, the paper's)")
    args = parser.parse_args()
    cue, ball, pocket = SHOTS[args.shot]
    p = billiard.Parameters(cloth_damping_ratio=args.cloth_damping_ratio)
    nose_height = p.nose_height() if args.nose else None
    times = table.save_times(args.duration)

    def final(values, rtol, bounded, derivatives=ReverseMode()):
        # both balls' (x, y) at the end, from the strike (speed, aim (rad), topspin and sidespin ratios) and the
        # table's parameters
        table_p = dataclasses.replace(p, **dict(zip(args.parameters, values[4:])))
        model = billiard.table_model(table_p, 2, nose_height)
        velocity, spin = billiard.cue_strike(table_p, *values[:4])
        state = billiard.table_state(table_p, jnp.array([cue, ball]), jnp.stack([velocity, jnp.zeros(2)]),
                                     jnp.stack([spin, jnp.zeros(3)]), nose_height)
        settings = table.settings(model, rtol)
        if bounded:
            settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=True, contact_steps=True)
        run = simulate(model, state, times, table.FORMULATION, derivatives=derivatives, **settings)
        return run.q[-1].reshape(2, 7)[:, :2], run.steps

    values = jnp.array([table.SHOT_SPEED, billiard.ghost_ball_aim(p, cue, ball, pocket), 0.0, 0.0,
                        *(getattr(p, name) for name in args.parameters)])
    scale = np.r_[np.ones(4), [getattr(p, name) for name in args.parameters]]  # the parameters' columns as x ∂/∂x
    plain = eqx.filter_jit(lambda x: final(x, args.reference_rtol, False)[0])
    print(f"cushions at {'the nose height' if args.nose else 'the centre height'}, cloth damping ratio "
          f"{args.cloth_damping_ratio:g}; both balls' (x, y) after {args.duration:g} s, "
          "d/d(speed (m/s), aim (rad), topspin, sidespin (V/R)"
          + "".join(f", {name}" for name in args.parameters) + "; the table's as x d/dx, m per relative change)")
    for step in args.steps:
        steps = step * np.r_[np.ones(4), scale[4:]]
        central = np.stack([(plain(values.at[k].add(h)) - plain(values.at[k].add(-h))) / (2 * h)
                            for k, h in enumerate(steps)], axis=-1)
        print(f"  central differences, rtol {args.reference_rtol:g}, step {step:g}\n" + _rows(central * scale),
              flush=True)
    runs = [(args.rtols[0], False, False, "table.settings, the state's error alone (tangent_errors=False)")]
    runs += [(rtol, True, args.bounded_tangent_errors,
              "friction_steps and contact_steps on every family, "
              + ("the tangents' errors too" if args.bounded_tangent_errors else "the state's error alone"))
             for rtol in args.rtols]
    runs += [(rtol, False, True, "table.settings, the tangents' errors too (simulate's default)") for rtol in args.rtols]
    # differentiated as ``table.shot``'s sensitivity is: by each value's ratio to its size
    sizes = table.direction_scales(values)
    for rtol, bounded, tangents, label in runs:
        forward = ForwardMode(tangent_errors=tangents)
        jacobian = eqx.filter_jit(jax.jacfwd(lambda u: final(u * sizes, rtol, bounded, forward), has_aux=True))
        start = time.perf_counter()
        try:
            jax.block_until_ready(jacobian(values / sizes))
        except eqx.EquinoxRuntimeError as error:  # the friction guard's: the derivative would be wrong
            print(f"  forward mode, rtol {rtol:g}, {label}: stopped: {_errors.message(error).split(':')[0]}",
                  flush=True)
            continue
        first = time.perf_counter() - start
        start = time.perf_counter()
        value, steps = jax.block_until_ready(jacobian(values / sizes))
        run = time.perf_counter() - start
        value = np.asarray(value) / sizes
        off = np.abs(value - central).max(axis=(0, 1)) * scale
        print(f"  forward mode, rtol {rtol:g}, {label}: compile ≈ {first - run:.1f} s, run {run:.3f} s, "
              f"{int(steps)} steps\n"
              + _rows(value * scale) + "\n    largest |off| the last differences, by column: "
              + "  ".join(f"{x:.1e}" for x in off), flush=True)


def _rows(jacobian):
    return "\n".join(f"    {ball:<6} d{axis}: " + "  ".join(f"{x:+.6f}" for x in jacobian[b, a])
                     for b, ball in enumerate(("cue", "yellow")) for a, axis in enumerate("xy"))


if __name__ == "__main__":
    main()
