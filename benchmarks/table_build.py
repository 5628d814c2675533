"""Building the table once a kind: ``billiard.table_model`` against its contacts built one by one.

``table_model`` builds each contact family from one contact of each kind
(``Contact.for_bodies``: one ball–cloth contact, one ball pair, the six
cushions' contacts), where it used to build every contact and stack them
(``Contact.family`` of 16 + 120 + 96 contacts for 16 balls), each checking
its law's and geometry's parameters. The two give the same model (the
leaves, byte for byte: ``tests/scenes/test_table_model.py``). For each
``--balls``, in one process, alternating:

1. **op by op**: the time to build the model outside any trace (best of
   ``--rounds``, after a round that compiles the operations).
2. **traced**: ``jax.jit`` of the break (``break_state``, ``table.integrate``'s
   settings, ``--duration`` s) as a function of the cloth's friction
   coefficient and the ball–ball restitution, the model built inside (as a
   gradient with respect to a material parameter builds it): the equations
   of the traced program (``jax.make_jaxpr``, every sub-program counted once),
   the time to trace and lower it, and XLA's compile time; and, for scale,
   the same run with the model built outside and passed in.

    python benchmarks/table_build.py [--balls 4 16] [--duration 0.05] [--rounds 2]
"""

import argparse
import dataclasses
import itertools
import time

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact.multibody import Contact, Gravity, Model, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard


def one_by_one(p, balls):
    """``table_model(p, balls)`` as it was built: every contact constructed, then stacked by family."""
    count, cushions = len(billiard.RACK_BALLS[:balls]), billiard.table_cushions(p)
    families = [Contact.family(billiard.table_cloth(p, i) for i in range(count)),
                Contact.family(billiard.ball_pair(p, i, j) for i, j in itertools.combinations(range(count), 2)),
                Contact.family(billiard.cushion(p, i, cushions[k]) for i in range(count)
                               for k in range(len(billiard.CUSHIONS)))]
    return Model([billiard.ball(p, name) for name in billiard.RACK_BALLS[:balls]],
                 forces=[Gravity((0.0, 0.0, -p.gravity)), *families])


BUILDS = {"table_model": billiard.table_model, "one by one": one_by_one}


def _equations(jaxpr, seen):
    """Equations of ``jaxpr`` and of its sub-programs, each program counted once."""
    if id(jaxpr) in seen:
        return 0
    seen.add(id(jaxpr))
    total = len(jaxpr.eqns)
    for equation in jaxpr.eqns:
        for param in equation.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    total += _equations(inner, seen)
    return total


def _run(model, state, duration):
    return simulate(model, state, jnp.stack([0.0, duration]), table.FORMULATION,
                    **table.settings(model, max_events=50)).q[-1]


def _compiled(fn, *args):
    """(equations, trace and lower (s), XLA compile (s)) of ``jax.jit(fn)(*args)``."""
    jax.clear_caches()
    equations = _equations(jax.make_jaxpr(fn)(*args).jaxpr, set())
    jax.clear_caches()
    start = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    traced = time.perf_counter()
    lowered.compile()
    return equations, traced - start, time.perf_counter() - traced


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--balls", type=int, nargs="+", default=[4, 16], help="table sizes (balls)")
    parser.add_argument("--duration", type=float, default=0.05, help="simulated time of the traced run (s)")
    parser.add_argument("--rounds", type=int, default=2, help="times each row is run, alternating")
    args = parser.parse_args()
    p = billiard.Parameters()
    theta = jnp.array([p.cloth_friction, p.ball_restitution])
    for balls in args.balls:
        state = billiard.break_state(p, balls=balls)
        built, compiled = {name: [] for name in BUILDS}, {name: [] for name in BUILDS}
        for _ in range(args.rounds + 1):  # (the first round compiles the operations of both: not counted)
            for name, build in BUILDS.items():
                start = time.perf_counter()
                jax.block_until_ready(jax.tree.leaves(build(p, balls)))
                built[name].append(time.perf_counter() - start)
        for _ in range(args.rounds):
            for name, build in BUILDS.items():
                def inside(theta, build=build):
                    q = dataclasses.replace(p, cloth_friction=theta[0], ball_restitution=theta[1])
                    return _run(build(q, balls), billiard.break_state(q, balls=balls), args.duration)

                compiled[name].append(_compiled(inside, theta))
        outside = _compiled(lambda params, static: _run(eqx.combine(params, static), state, args.duration),
                            *eqx.partition(billiard.table_model(p, balls), eqx.is_inexact_array))
        print(f"{balls} balls: " + ", ".join(f"{force.count} {name}" for name, force in
                                         zip(billiard.TABLE_FORCES[1:], billiard.table_model(p, balls).forces[1:])))
        for name in BUILDS:
            equations, trace, xla = (min(column) for column in zip(*compiled[name]))
            print(f"  {name:12s} op by op {min(built[name][1:]):6.2f} s; built in the traced run: {equations:6d} "
                  f"equations, trace and lower {trace:5.2f} s, XLA {xla:5.2f} s (best of {args.rounds})")
        equations, trace, xla = outside
        print(f"  {'built outside':12s} {'':18s}  passed to the traced run: {equations:6d} equations, trace and "
              f"lower {trace:5.2f} s, XLA {xla:5.2f} s")


if __name__ == "__main__":
    main()
