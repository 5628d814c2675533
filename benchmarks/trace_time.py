"""Where the 16-ball break's compile goes: JAX's tracing and lowering, then XLA, with and without the jitted accelerations.

``simulate`` evaluates the formulation's accelerations through
``integrate.solve.acceleration``, an ``equinox.filter_jit`` whose cache serves every trace
of the vector field after the first: diffrax traces a solve's vector field
several times (five for Tsit5 with an event), and with ``max_closed``'s
sizes (the table's (4, 16, 48)) there is one vector field per size. This
lowers ``reproduce break``'s simulate (``table.integrate``'s settings,
``--duration`` s, saves every 2 ms) in one process, JAX's caches cleared
before each, ``--rounds`` times each way, alternating (the first lowering
of a process pays for some of JAX's own start): as ``simulate`` does, and with ``integrate.solve.acceleration``
replaced by the plain call (every trace traces the accelerations again,
as before). For each: how many times the accelerations were traced, the
time to trace and lower, XLA's compile time, and the lines of the lowered
program. (First, the time to build the table and the break's start,
``billiard.table_model`` and ``break_state``, op by op.) Then the time of
``simulate``'s checks of the concrete start
(``check_initial_state``, ``_check_contacts_at_start``), each compiled as one
program, against the same operations run op by op (each compiling a
small program of its own the first time), as before.

    python benchmarks/trace_time.py [--duration 0.3] [--rounds 2]
"""

import argparse
import sys
import time

import equinox as eqx
import jax
import numpy as np

from diffimpact.multibody import Baumgarte, simulate
from diffimpact.multibody.integrate import accelerations as closed, events
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

simulation = sys.modules["diffimpact.multibody.simulate"]
TRACES = [0]


class Counted(Baumgarte):
    """``table.FORMULATION`` that counts the traces of its accelerations."""

    def acceleration(self, model, q, v, t):
        TRACES[0] += 1
        return super().acceleration(model, q, v, t)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=table.QUICK_DURATION, help="simulated time (s)")
    parser.add_argument("--rounds", type=int, default=2, help="times each row is run, alternating")
    args = parser.parse_args()
    p = billiard.Parameters()
    start = time.perf_counter()
    model = billiard.table_model(p)
    built = time.perf_counter()
    state = billiard.break_state(p)
    print(f"first in this process: billiard.table_model {built - start:.1f} s, break_state "
          f"{time.perf_counter() - built:.1f} s (op by op)")
    times = table.save_times(args.duration)
    formulation = Counted(table.FORMULATION.alpha, table.FORMULATION.beta)
    jitted = closed.acceleration
    print(f"16-ball break, {args.duration:g} s, reproduce break's settings (max_closed "
          f"{table.settings(model)['events'].sizes})")
    print(f"{'accelerations':>28} {'traces':>6} {'trace + lower (s)':>17} {'XLA (s)':>8} {'lines':>7}")
    rows = (("jitted (simulate's)", jitted), ("traced at every call", lambda f, m, q, v, t: f.acceleration(m, q, v, t)))
    for label, acceleration in rows * args.rounds:
        jax.clear_caches()
        closed.acceleration = acceleration
        TRACES[0] = 0

        def run(model, state):
            return simulate(model, state, times, formulation,
                            **table.settings(model, max_events=table.QUICK_MAX_EVENTS)).q

        start = time.perf_counter()
        lowered = eqx.filter_jit(run).lower(model, state)
        traced = time.perf_counter()
        lowered.compile()
        compiled = time.perf_counter()
        print(f"{label:>28} {TRACES[0]:6d} {traced - start:17.1f} {compiled - traced:8.1f} "
              f"{len(lowered.as_text().splitlines()):7d}", flush=True)
    closed.acceleration = jitted

    # simulate's checks of a concrete start (constraints, their Jacobian's rank, the impact laws' contacts open, the
    # overlaps):
    # compiled in one program each, as simulate does, against op by op, as before
    def op_by_op():
        model.constraint(state.q, state.t), model.constraint_velocity(state.q, state.v, state.t)
        np.asarray(model.jacobian(state.q, state.t))
        for k in events.contact_families(model):
            contact = model.forces[k]
            penetration, rate = contact.penetration_rate(model.split(state.q), model.split(state.v))
            np.asarray(events.starts_closed(penetration, rate))
            np.asarray(penetration / contact.geometry.radius_scale)

    def compiled():
        simulation.check_initial_state(model, state)
        simulation._check_contacts_at_start(model, state)

    print("\nsimulate's checks of the start (first call, JAX's caches cleared):")
    for label, checks in (("compiled (simulate's)", compiled), ("op by op", op_by_op)) * args.rounds:
        jax.clear_caches()
        start = time.perf_counter()
        checks()
        print(f"{label:>28} {time.perf_counter() - start:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
