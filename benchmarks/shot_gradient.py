"""Benchmark: the derivatives of a shot on the full table with respect to the cue's speed and aim, against central
differences.

    python benchmarks/shot_gradient.py [--duration 0.4] [--rtols 1e-5 1e-7] [--reference-rtol 1e-10]
                                       [--steps 1e-4 1e-5 1e-6]

The README's shot of ``diffimpact shot`` (the cue ball at (0.6, 0.1) m struck at 2 m/s along
``billiard.ghost_ball_aim`` for the yellow ball at (1.0, 0.4) m into the foot-left pocket, no spin): central
differences of plain runs at ``--reference-rtol`` with the steps ``--steps`` (the speed in m/s, the aim in rad, the
spins in V/R), then the forward-mode Jacobian (``jax.jacfwd``, ``diffrax.ForwardMode``) of both balls' centres
(x, y) after ``--duration`` s (past the collision, before the yellow ball drops) with respect to the strike
(``billiard.cue_strike``: speed, aim, topspin and sidespin ratios): at the first of ``--rtols`` with
``table.settings`` as they are (``contact_steps`` on the cushions only, no ``friction_steps``), and at each with
``friction_steps=True`` and ``contact_steps=True`` (every family's friction and closed contacts bound the steps),
each with its largest difference from the last central differences by column. Compile and run times apart (first call and second). docs/RESULTS.md, "`diffimpact shot`;
a ball's slide into rolling at the table's tolerance".
"""

import argparse
import time

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

CUE, BALL, POCKET, SPEED = (0.6, 0.1), (1.0, 0.4), "foot-left", 2.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.4, help="simulated time (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[table.SHOT_RTOL, 1e-7],
                        help="the derivatives' rtols (the first also with table.settings alone)")
    parser.add_argument("--reference-rtol", type=float, default=1e-10, help="the central differences' rtol")
    parser.add_argument("--steps", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6], help="the differences' steps")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, times = billiard.table_model(p, 2), table.save_times(args.duration)

    def final(strike, rtol, bounded, adjoint=None):
        # both balls' (x, y) at the end, from the strike (speed, aim (rad), topspin and sidespin ratios)
        velocity, spin = billiard.cue_strike(p, *strike)
        state = billiard.table_state(p, jnp.array([CUE, BALL]), jnp.stack([velocity, jnp.zeros(2)]),
                                     jnp.stack([spin, jnp.zeros(3)]))
        settings = table.settings(model, rtol)
        if bounded:
            settings.update(friction_steps=True, contact_steps=True)
        run = simulate(model, state, times, table.FORMULATION, max_events=table.MAX_EVENTS, adjoint=adjoint,
                       **settings)
        return run.q[-1].reshape(2, 7)[:, :2]

    strike = jnp.array([SPEED, billiard.ghost_ball_aim(p, CUE, BALL, POCKET), 0.0, 0.0])
    plain = eqx.filter_jit(lambda x: final(x, args.reference_rtol, False))
    print(f"both balls' (x, y) after {args.duration:g} s, d/d(speed (m/s), aim (rad), topspin, sidespin (V/R))")
    for step in args.steps:
        central = np.stack([(plain(strike.at[k].add(step)) - plain(strike.at[k].add(-step))) / (2 * step)
                            for k in range(4)], axis=-1)
        print(f"  central differences, rtol {args.reference_rtol:g}, step {step:g}\n" + _rows(central), flush=True)
    runs = [(args.rtols[0], False, "table.settings")]
    runs += [(rtol, True, "friction_steps and contact_steps on every family") for rtol in args.rtols]
    for rtol, bounded, label in runs:
        jacobian = eqx.filter_jit(jax.jacfwd(lambda x: final(x, rtol, bounded, diffrax.ForwardMode())))
        start = time.perf_counter()
        jax.block_until_ready(jacobian(strike))
        first = time.perf_counter() - start
        start = time.perf_counter()
        value = np.asarray(jax.block_until_ready(jacobian(strike)))
        run = time.perf_counter() - start
        off = np.abs(value - central).max(axis=(0, 1))
        print(f"  forward mode, rtol {rtol:g}, {label}: compile ≈ {first - run:.1f} s, run {run:.3f} s\n"
              + _rows(value) + "\n    largest |off| the last differences, by column: "
              + "  ".join(f"{x:.1e}" for x in off), flush=True)


def _rows(jacobian):
    return "\n".join(f"    {ball:<6} d{axis}: " + "  ".join(f"{x:+.6f}" for x in jacobian[b, a])
                     for b, ball in enumerate(("cue", "yellow")) for a, axis in enumerate("xy"))


if __name__ == "__main__":
    main()
