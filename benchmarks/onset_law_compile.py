"""What a law set at each onset costs a compiled ``simulate``: the exact optimal damping beside a fixed law.

The bounce of ``compile_flags.py`` (a 0.5-kg disc at 2 m/s onto the ground, Hertz exponent 1.5, k = 1e7 N/m^1.5,
``LagrangeMultipliers``, 41 save times over 0.02 s), with the ground's law ``OptimalDamping(k, 1.5, 0.6)`` (the
exact method: ĉ(n, e) by Newton iterations through an event-terminated solve) or a fixed ``HertzLinearDamper``
(c = 50 N s/m). Each law in a fresh process (XLA's caches are per process), and in each:

1. building the ``Contact`` (its active law of unit mass and speed is computed then);
2. ``simulate`` called on the concrete model: the first call (compiling) and the best of three later calls;
3. in a second fresh process, ``jax.jit`` of a function that builds nothing and calls ``simulate`` on its
   (traced) arguments, as a fit's loss does: tracing and lowering (``.lower``), then XLA (``.compile``).

    python benchmarks/onset_law_compile.py
"""

import json
import sys
import time

from _processes import measured

LAWS = ("fixed", "optimal")


def child(law, traced):
    import jax
    import jax.numpy as jnp

    from diffimpact.contact.normal import HertzLinearDamper
    from diffimpact.multibody import (CirclePlane, Contact, LagrangeMultipliers, Model, OptimalDamping,
                                      PlanarBody, State, simulate)

    mass, radius = 0.5, 0.05
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), radius)
    start = time.perf_counter()
    contact = Contact(ground, OptimalDamping(1e7, 1.5, 0.6) if law == "optimal" else HertzLinearDamper(1e7, 1.5, 50.0))
    built = time.perf_counter() - start
    model = Model([PlanarBody(mass, 0.5 * mass * radius**2)], (), (contact,))
    state = State([0.0, radius + 0.01, 0.0], [0.0, -2.0, 0.0])
    times = jnp.linspace(0.0, 0.02, 41)
    if traced:
        bounce = jax.jit(lambda m, s: simulate(m, s, times, LagrangeMultipliers()).events.v)
        start = time.perf_counter()
        lowered = bounce.lower(model, state)
        lowering = time.perf_counter() - start
        start = time.perf_counter()
        lowered.compile()
        return {"lower": lowering, "xla": time.perf_counter() - start}

    def run():
        start = time.perf_counter()
        simulate(model, state, times, LagrangeMultipliers()).events.v.block_until_ready()
        return time.perf_counter() - start

    first = run()
    return {"build": built, "first": first, "later": min(run() for _ in range(3))}


def main():
    if len(sys.argv) == 3:
        print(json.dumps(child(sys.argv[1], sys.argv[2] == "traced")))
        return
    results = {}
    for law in LAWS:
        for mode in ("concrete", "traced"):
            results.setdefault(law, {}).update(measured(__file__, [law, mode], f"{law}, {mode}"))
    print(f"{'ground law':24s} {'Contact(...)':>12s} {'simulate: 1st call':>19s} {'later':>8s} "
          f"{'jit: lower':>11s} {'XLA':>7s}")
    names = {"fixed": "HertzLinearDamper", "optimal": "OptimalDamping (exact)"}
    for law, r in results.items():
        print(f"{names[law]:24s} {r['build']:10.2f} s {r['first']:17.2f} s {r['later']:6.3f} s "
              f"{r['lower']:9.2f} s {r['xla']:5.2f} s")


if __name__ == "__main__":
    main()
