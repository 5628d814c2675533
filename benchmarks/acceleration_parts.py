"""Where one evaluation of the 16-ball table's accelerations goes: its parts, timed, and its fused loops.

The accelerations are timed summing the forces of every member of each contact family, and, as ``simulate``
does with the table's ``max_closed`` (``table.settings``), of the closed members of the ball–ball and
ball–cushion families gathered once per segment, at each of its sizes: 4, 16 and 48 of each family (a
segment sums the least size that holds its closed members).

Each part is timed inside a compiled loop of ``--evaluations`` (no dispatch), with the model's float
parameters as arguments of the compiled function, as inside ``simulate`` (its integer body indices are
constants there too), at a perturbed break state with every ball on the cloth (``saddle_point.perturbed_break``); the best of ``--repeats``
loops. Also the number of fused loops (XLA's ``fusion`` operations) of one compiled evaluation of the
accelerations, which on the CPU each cost a call of their own.

    python benchmarks/acceleration_parts.py
"""

import argparse
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import AdaptiveSteps, LagrangeMultipliers
from diffimpact.multibody.integrate import accelerations as closed, events, step_control
from diffimpact.reproduce import table
from saddle_point import perturbed_break


def per_evaluation(part, params, static, q, v, evaluations, repeats):
    """Best time (s) of one ``part(model, q, v)`` over ``repeats`` compiled loops of ``evaluations``."""
    @jax.jit
    def loop(params, q, v):
        def body(i, total):
            model = eqx.combine(params, static)
            out = part(model, q + 1e-30 * total, v + 1e-30 * total)
            return total + 1e-30 * jnp.sum(jnp.asarray(jax.tree.leaves(out)[0]))
        return jax.lax.fori_loop(0, evaluations, body, 0.0)

    loop(params, q, v).block_until_ready()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        loop(params, q, v).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best / evaluations


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    model, state, q, v = perturbed_break()
    t = state.t
    formulation = LagrangeMultipliers()
    families = events.contact_families(model)
    # as inside ``simulate``: a contact is engaged while closed (here: while the bodies overlap), and each
    # segment's accelerations take only the closed members of the larger families (``max_closed``, the table's
    # ``billiard.max_closed``: 48 of the 120 pairs and of the 96 ball–cushion contacts), gathered once per segment
    for k in families:
        overlap = model.forces[k].penetration(model.split(q)) > 0
        model = eqx.tree_at(lambda m: m.forces[k].engaged, model, overlap.astype(float))
    sizes = table.settings(model)["events"].sizes
    closed_only, _, _ = closed.closed_members(model, families, sizes)
    gathered = closed.gathered(model, families, sizes)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    zeros = tuple(jnp.zeros(model.forces[k].count) for k in families)
    status = tuple(jnp.zeros(model.forces[k].count, int) for k in families)

    def args_of(m):  # the segment's args of simulate: statuses, rest speed, the break's near distance, step hint
        return events.SegmentArgs(m, status, zeros, zeros, 1e-8, table.NEAR_DISTANCE, 0.0, m, 0)

    def accelerations(m, q, v):
        return formulation.acceleration(m, q, v, t)

    parts = [  # (name, part, the model it runs on)
        ("accelerations, every member", accelerations, model),
        *((f"accelerations, closed only, {size} of each", lambda m, q, v, i=i: closed.accelerations(
            formulation, m, i, gathered, sizes, q, v, t), closed_only) for i, size in enumerate(sizes)),
        ("  generalised forces", lambda m, q, v: m.generalized_force(q, v, t), model),
        ("    cloth (16)", lambda m, q, v: jnp.asarray(m.forces[1](m.bodies, m.split(q), m.split(v), t)), model),
        ("    ball pairs (120)", lambda m, q, v: jnp.asarray(m.forces[2](m.bodies, m.split(q), m.split(v), t)), model),
        ("    ball–cushion (96)", lambda m, q, v: jnp.asarray(m.forces[3](m.bodies, m.split(q), m.split(v), t)), model),
        ("event function", lambda m, q, v: events.event_values(families, t, (q, v), args_of(m))[0], model),
        ("near distance's and spins' step bound",
         lambda m, q, v: step_control.step_bound(families, t, (q, v), args_of(m), True, None, None, 0.0,
                                                 AdaptiveSteps().spin_step), model),
    ]
    print(f"16-ball table, one evaluation (best of {args.repeats} compiled loops of {args.evaluations})")
    for name, part, on in parts:
        seconds = per_evaluation(part, *eqx.partition(on, eqx.is_inexact_array), q, v, args.evaluations, args.repeats)
        print(f"  {name:30s} {1e6 * seconds:8.1f} µs")
    compiled = jax.jit(lambda params, q, v: formulation.acceleration(eqx.combine(params, static), q, v, t))
    text = compiled.lower(params, q, v).compile().as_text()
    entry = text[text.index("ENTRY"):]
    print(f"  fused loops in one compiled evaluation of the accelerations: {entry.count(' fusion(')}")


if __name__ == "__main__":
    main()
