"""Benchmark: the derivatives of a shot on the full table with respect to the cue's speed and aim, against central
differences.

    python benchmarks/shot_gradient.py [--duration 0.4] [--rtol 1e-5] [--reference-rtol 1e-10]
                                       [--steps 1e-4 1e-5 1e-6]

The README's shot of ``diffimpact shot`` (the cue ball at (0.6, 0.1) m struck at 2 m/s along
``billiard.ghost_ball_aim`` for the yellow ball at (1.0, 0.4) m into the foot-left pocket, no spin): the
forward-mode Jacobian (``jax.jacfwd``, ``diffrax.ForwardMode``) of the yellow ball's centre (x, y) after
``--duration`` s (past its collision with the cue ball, before it drops) with respect to (speed, aim), at
``--rtol`` with ``table.settings`` as they are (``contact_steps`` on the cushions only, no ``friction_steps``), and
with ``friction_steps=True`` and ``contact_steps=True`` (every family's friction and closed contacts bound the
steps); beside central differences of plain runs at ``--reference-rtol`` with relative steps ``--steps`` (the speed
in m/s, the aim in rad). Compile and run times apart (first call and second). docs/RESULTS.md, "`diffimpact shot`;
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
    parser.add_argument("--rtol", type=float, default=table.SHOT_RTOL, help="the derivatives' rtol")
    parser.add_argument("--reference-rtol", type=float, default=1e-10, help="the central differences' rtol")
    parser.add_argument("--steps", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6], help="the differences' steps")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, times = billiard.table_model(p, 2), table.save_times(args.duration)

    def yellow(x, rtol, bounded, adjoint=None):
        velocity, spin = billiard.cue_strike(p, x[0], x[1])
        state = billiard.table_state(p, jnp.array([CUE, BALL]), jnp.stack([velocity, jnp.zeros(2)]),
                                     jnp.stack([spin, jnp.zeros(3)]))
        settings = table.settings(model, rtol)
        if bounded:
            settings.update(friction_steps=True, contact_steps=True)
        run = simulate(model, state, times, table.FORMULATION, max_events=table.MAX_EVENTS, adjoint=adjoint,
                       **settings)
        return run.q[-1].reshape(2, 7)[1, :2]

    x0 = jnp.array([SPEED, billiard.ghost_ball_aim(p, CUE, BALL, POCKET)])
    print(f"the yellow ball's (x, y) after {args.duration:g} s, d/d(speed, aim), forward mode at rtol {args.rtol:g}")
    for bounded, label in ((False, "table.settings"), (True, "friction_steps and contact_steps on every family")):
        jacobian = eqx.filter_jit(jax.jacfwd(lambda x: yellow(x, args.rtol, bounded, diffrax.ForwardMode())))
        start = time.perf_counter()
        jax.block_until_ready(jacobian(x0))
        first = time.perf_counter() - start
        start = time.perf_counter()
        value = np.asarray(jax.block_until_ready(jacobian(x0)))
        run = time.perf_counter() - start
        print(f"  {label}: compile ≈ {first - run:.1f} s, run {run:.3f} s\n" + _rows(value), flush=True)
    plain = eqx.filter_jit(lambda x: yellow(x, args.reference_rtol, False))
    for step in args.steps:
        columns = [(plain(x0 + jnp.zeros(2).at[k].set(step)) - plain(x0 - jnp.zeros(2).at[k].set(step))) / (2 * step)
                   for k in range(2)]
        print(f"  central differences, rtol {args.reference_rtol:g}, step {step:g}\n"
              + _rows(np.asarray(jnp.stack(columns, axis=1))), flush=True)


def _rows(matrix):
    return "\n".join(f"    d{axis}: {row[0]:+.6f} m per m/s, {row[1]:+.6f} m per rad" for axis, row in zip("xy", matrix))


if __name__ == "__main__":
    main()
