"""What tying the segments' carry to the inputs saves in compiling derivatives and batches of ``simulate``.

``simulate`` runs its segments in a ``lax.scan``. Differentiating or
batching a scan, JAX finds which parts of its carry have nonzero tangents (or
a batch axis) by a fixpoint: it linearises, JVPs or batches the whole body
once per round, until no part is added. The carry starts with zero tangents
in the state and gains them one segment later, and in the laws set at onsets
one more: three rounds. ``simulate`` ties the carry to its inputs
(``_depending_on``), so that one round finds them all. This compiles the same
programs with the tie (as ``simulate`` does) and without it (``_depending_on``
replaced by the identity), alternating, ``--rounds`` times each, JAX's caches
cleared before each, in one process:

- **ball, reverse**: ``jax.grad`` of a ball's rebound speed off Hertz ground
  with a linear damper w.r.t. the stiffness (as
  ``tests/multibody/test_contact.py``'s reverse-mode test, 0.2 s, 8 events);
- **ball, forward**: ``jax.jvp`` of the same with ``ForwardMode()``;
- **ball, vmap**: the same rebound for four stiffnesses under ``jax.vmap``;
- **four-ball break, jacfwd**: ``benchmarks/break_gradient.py``'s gradient
  (the cue ball's final (x, y) w.r.t. the ball–ball restitution and the
  cloth's friction, forward mode) over ``--break-duration`` s; XLA's compile
  of it only with ``--compile-break`` (a minute or more).

For each: JAX's tracing and lowering, XLA's compile, the run (best of three
after the first), and the largest difference of the outputs from the first
row's (the tie changes no value: 0).

    python benchmarks/derivative_trace.py [--rounds 2] [--break-duration 0.15] [--compile-break]
"""

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from break_gradient import SPEED, _cue_xy, _run
from diffimpact.contact.normal import HertzLinearDamper
from diffimpact.multibody import (CirclePlane, Contact, ContactEvents, ForwardMode, Gravity, LagrangeMultipliers, Model,
                                  PlanarBody, ReverseMode, State, simulate)
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

simulation = sys.modules["diffimpact.multibody.integrate.segments"]
MASS, RADIUS, STIFFNESS = 0.5, 0.05, 1e6


def rebound(stiffness, derivatives=ReverseMode()):
    """The ball's rebound speed off the ground (first separation), dropped at 2 m/s from 1 cm under gravity."""
    ball = PlanarBody(MASS, 0.5 * MASS * RADIUS**2, name="ball")
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), RADIUS)
    model = Model([ball], (), (Gravity((0.0, -9.81)), Contact(ground, HertzLinearDamper(stiffness, 1.5, 5.0))))
    state = State(jnp.array([0.0, RADIUS + 0.01, 0.0]), jnp.array([0.0, -2.0, 0.0]))
    run = simulate(model, state, jnp.linspace(0.0, 0.2, 41), LagrangeMultipliers(), events=ContactEvents(max_events=8),
                   derivatives=derivatives)
    return run.events.v[1, 1]


def break_jacobian(theta, duration):
    def cue(x):
        return _cue_xy(_run(x, SPEED, duration, table.TOLERANCES["rtol"], 40, True))

    return jax.jacfwd(cue)(theta)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="times each row is compiled, alternating")
    parser.add_argument("--break-duration", type=float, default=0.15, help="simulated time of the break (s)")
    parser.add_argument("--compile-break", action="store_true", help="also XLA-compile and run the break's jacfwd")
    args = parser.parse_args()
    p = billiard.Parameters()
    programs = {
        "ball, reverse": (jax.grad(rebound), (STIFFNESS,), True),
        "ball, forward": (lambda k: jax.jvp(lambda x: rebound(x, ForwardMode()), (k,), (1.0,)),
                          (STIFFNESS,), True),
        "ball, vmap": (jax.vmap(rebound), (STIFFNESS * jnp.array([0.5, 1.0, 2.0, 4.0]),), True),
        "four-ball break, jacfwd": (break_jacobian,
                                    (jnp.array([p.ball_restitution, p.cloth_friction]), args.break_duration),
                                    args.compile_break),
    }
    tied = simulation._depending_on
    ways = (("tied (simulate's)", tied), ("not tied", lambda tree, anchor: tree))
    print(f"{'program':>24} {'carry':>18} {'trace + lower (s)':>17} {'XLA (s)':>8} {'run (ms)':>9} {'difference':>10}")
    first = {}
    for name, (fn, arguments, compile_it) in programs.items():
        for _ in range(args.rounds):
            for label, way in ways:
                jax.clear_caches()
                simulation._depending_on = way
                start = time.perf_counter()
                lowered = jax.jit(fn).trace(*arguments).lower()
                traced = time.perf_counter()
                row = f"{name:>24} {label:>18} {traced - start:17.1f}"
                if compile_it:
                    compiled = lowered.compile()
                    xla = time.perf_counter() - traced
                    out = jax.block_until_ready(compiled(*arguments))
                    runs = []
                    for _ in range(3):
                        start = time.perf_counter()
                        jax.block_until_ready(compiled(*arguments))
                        runs.append(time.perf_counter() - start)
                    leaves = [np.asarray(x) for x in jax.tree.leaves(out)]
                    reference = first.setdefault(name, leaves)
                    difference = max(float(np.max(np.abs(a - b))) for a, b in zip(leaves, reference, strict=True))
                    row += f" {xla:8.1f} {1e3 * min(runs):9.2f} {difference:10.1e}"
                print(row, flush=True)
    simulation._depending_on = tied


if __name__ == "__main__":
    main()
