"""Benchmark: what resolving the balls' landings on the cloth costs, against the energy rises they leave.

    python benchmarks/cloth_landings.py [--shots 0 1 2] [--rtol 1e-3] [--floors 1e-5 1e-6] [--repeats 3]

The table's cloth is not located (``billiard.table_cloth``: its onsets and separations end no segment, and the
solver steps through them). At rtol = 1e-3 three of ``random_shots.py``'s eight cue shots (seed 1) rise in energy
by more than rtol times their start, where no located contact is closed (docs/design/step-control.md, "The cushions'
contacts
resolved in steps"). This runs the 4-s break of ``diffimpact reproduce break`` and those cue shots (3 s) under

* **the package**: ``table.settings`` as they are;
* **cloth located**: ``billiard.table_model(p, cloth_located=True)`` (each onset and separation an event);
* **landings bounded, floor F**: the package's steps bounded further, in this process only, so that an
  approaching ball reaches the cloth in steps: h ≤ max(−δ, F)/(2 δ̇) over the cloth's open contacts that
  approach (δ̇ > 0), as the near distance's bound with F for d_n (``step_control.step_bound`` wrapped).

For each run: the run (each run compiled, then every run called in turn ``--repeats`` times, the best), accepted
steps, segments, located events, the largest energy rise above an earlier value (``table.energy_rise``), BAD where that exceeds
rtol·E(0) (``random_shots.py``'s test) and the run's time against the package's. The runs allow
``table.MAX_EVENTS`` events, the located cloth's twice that (each allowed event is a slot of the run's scan of
segments, and an unused slot costs about 30 µs: ``event_slots.py``).

docs/design/event-engine.md, "Pocketed balls out of the scene; the landings on the cloth".
"""

import argparse
import dataclasses
import functools
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import random_shots
from diffimpact.multibody import simulate
from diffimpact.multibody.integrate import events, step_control
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

PACKAGE_BOUND = step_control.step_bound


def landing_bound(floor):
    """``step_control.step_bound`` with the cloth's approaching open contacts' max(−δ, ``floor``)/(2 δ̇) added."""

    def bound(families, t, y, args, *rest):
        h = PACKAGE_BOUND(families, t, y, args, *rest)
        model, status = args.model, args.status
        q, v = (model.split(x) for x in y)
        for k, status_k in zip(families, status):
            if model.forces[k].located:
                continue
            penetration, rate = model.forces[k].penetration_rate(q, v)
            approaching = (status_k < events.REMOVED) & (penetration <= 0) & (rate > 0)
            lengths = jnp.maximum(-penetration, floor) / jnp.where(approaching, 2.0 * rate, 1.0)
            h = jnp.minimum(h, jnp.min(jnp.where(approaching, lengths, jnp.inf)))
        return h

    return bound


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=int, nargs="*", default=[0, 1, 2], help="random_shots.py's cue shots (seed 1)")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--floors", type=float, nargs="*", default=[1e-5, 1e-6], help="the landing bounds' floors (m)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    p = billiard.Parameters()
    model = billiard.table_model(p)
    rng = np.random.default_rng(1)
    shots = [random_shots.shot(rng, p, "cue") for _ in range(max(args.shots, default=-1) + 1)]
    cases = [("break, 4 s", billiard.break_state(p), 4.0)] + [
        (f"cue shot {k}, 3 s", billiard.table_state(p, *shots[k]), 3.0) for k in args.shots]
    # (the located cloth's events: the break's 2,623 onsets and separations, with room)
    settings = [("the package", model, PACKAGE_BOUND, table.MAX_EVENTS),
                ("cloth located", billiard.table_model(p, cloth_located=True), PACKAGE_BOUND, 2 * table.MAX_EVENTS)] + [
        (f"landings bounded, floor {floor:g} m", model, landing_bound(floor), table.MAX_EVENTS) for floor in args.floors]
    options = table.settings(model, args.rtol)
    print(f"{__doc__.splitlines()[0]}\nrtol = {args.rtol:g}, atol = {1e-3 * args.rtol:g}, {table.FORMULATION}")
    print(f"  {'case':<18} {'setting':<32} {'run (s)':>8} {'steps':>6} {'segments':>8} {'events':>6} {'rise (J)':>9}"
          f"      {'/ package':>9}")
    # each setting's runs compiled ahead of time under its bound (read when traced; the caches cleared, since
    # ``simulate`` is jitted inside), then all of them called in turns, so that a slower spell of the machine does
    # not fall on one setting
    runs, calls = {}, {}
    for name, m, bound, max_events in settings:
        step_control.step_bound = bound
        jax.clear_caches()
        params, static = eqx.partition(m, eqx.is_array)
        run_case = jax.jit(lambda params, state, times: simulate(
            eqx.combine(params, static), state, times, table.FORMULATION,
            **{**options, "events": dataclasses.replace(options["events"], max_events=max_events)}))
        for case, state, duration in cases:
            times = table.save_times(duration)
            calls[name, case] = functools.partial(run_case.lower(params, state, times).compile(), params, state, times)
            runs[name, case] = jax.block_until_ready(calls[name, case]())
    step_control.step_bound = PACKAGE_BOUND
    best = {}
    for _ in range(args.repeats):
        for key, call in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(call())
            best[key] = min(best.get(key, np.inf), time.perf_counter() - start)
    for name, *_ in settings:
        for case, *_ in cases:
            run = runs[name, case]
            rise = float(table.energy_rise(run.energy))
            bad = rise > args.rtol * float(run.energy[0])
            print(f"  {case:<18} {name:<32} {best[name, case]:8.3f} {int(run.steps):6d} {int(run.segments):8d} {int(run.events.count):6d} "
                  f"{rise:9.2e} {'BAD' if bad else 'ok ':<4} {best[name, case] / best[settings[0][0], case]:8.2f}×")


if __name__ == "__main__":
    main()
