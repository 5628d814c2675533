"""Where a step of the 16-ball break goes: the XLA kernels it executes, what they are, and the floor under them.

On this 2-core CPU a step's time is mostly the dispatch of XLA's kernels (thunks), a fraction of a microsecond
each, so kernels per step measure a step's cost. Three runs under JAX's profiler (read from its xplane file, so
that nothing is truncated), each kernel counted and named by its HLO instruction in the compiled program:

1. **the break** of ``reproduce break`` (``table.integrate``'s settings) for ``--duration`` s: kernels per step,
   by kind (loop fusions, copies, concatenations, matrix products, control flow) and by the innermost Python
   frame recorded for the instruction;
2. **one evaluation** of the table's accelerations (``Baumgarte``, every contact family as the break starts),
   compiled on its own: the kernels the vector field costs each time the solver calls it;
3. **the floor**: the same 16 balls (bodies, Euler-parameter constraints, gravity; no contact) by ``simulate``
   with the same formulation, solver and tolerances, steps capped at ``--floor-step`` so that it takes about
   as many steps as the break: what diffrax's adaptive Tsit5 and the bodies alone cost a step, and one
   evaluation of its accelerations.
4. **fewer evaluations a step**: the whole break (``--solver-duration`` s, ``reproduce break``'s settings and
   ``MAX_EVENTS``) with Tsit5 (seven stages, six evaluations a step) and with the lower-order explicit solvers
   of ``--solvers`` (diffrax's ``Bosh3``: four stages, three evaluations a step; ``Heun``: two): steps, events,
   run time and µs a step, and where the run ends (energy, the cue ball's position); ``simulate`` called
   directly, as ``reproduce break`` calls it, then the Tsit5 run inside a ``jax.jit`` of the caller's, with the
   save times passed to it and with them a constant of the jitted function (closed over).

5. **a lower bound for the contacts**: the forces of the table's sphere contacts written out by hand for this
   count, in the form that gives XLA the fewest kernels (struct of arrays: one gather of both balls' rows for
   all 120 pairs, elementwise arithmetic, one scatter of the pair forces), with simplified physics: Hertz
   with a linear damper between the balls, Hertz on the cloth plane and on four plane walls, Coulomb friction
   regularised by tanh between the balls and on the cloth, no pockets, cushion polygons, Ambrósio band or exact
   sums. Not a model of the package: only how few kernels one evaluation of such contacts can be.

6. **where the processor's time goes** (``--perf SECONDS``): Linux ``perf`` samples the process while it runs
   part 1's break over and over, and the samples are shared out by library (the compiled kernels are XLA's
   JIT code; ``libm`` the C library's functions they call; ``libjax_common`` XLA's runtime, whose thunk
   executor dispatches the kernels and whose idle pool threads spin) and by function outside the JIT code.
   Kernel counts are not the whole cost: a kernel's own arithmetic, and the library functions it calls, count
   as well. Needs ``perf`` and ``kernel.perf_event_paranoid`` ≤ 2.

Run time: best of ``--repeats`` runs after compiling, outside the profiler (part 4: of 3).

    python benchmarks/step_profile.py [--duration 0.2] [--repeats 5] [--solver-duration 4] [--solvers Bosh3 Heun]
                                      [--perf 5]
"""

import argparse
import collections
import functools
import os
import re
import subprocess
import tempfile
import threading

import diffrax as dfx
import jax
import jax.numpy as jnp
import numpy as np

from _kernels import profile
from _timing import timed

from diffimpact.multibody import AdaptiveSteps, Gravity, Model, simulate
from diffimpact.multibody.integrate.solve import acceleration
from diffimpact.reproduce import table
from diffimpact.scenes import billiard


def sampled(run, seconds):
    """Shares of ``perf``'s samples of this process while ``run()`` repeats for ``seconds``: two Counters of
    fractions, by library and by (library, function) outside the JIT code."""
    path = os.path.join(tempfile.mkdtemp(), "perf.data")
    record = subprocess.Popen(["perf", "record", "-q", "-F", "4999", "-p", str(os.getpid()), "-o", path, "--",
                               "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()
    threading.Thread(target=lambda: (record.wait(), done.set()), daemon=True).start()
    while not done.is_set():
        run()
    if record.returncode != 0:
        raise RuntimeError(f"perf record failed: {record.stderr.read().decode().strip()}")
    script = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym,dso"], capture_output=True, text=True,
                            check=True).stdout
    by_library, by_function = collections.Counter(), collections.Counter()
    for line in script.splitlines():
        match = re.match(r"\s*[0-9a-f]+\s+(.*)\((.*)\)\s*$", line)
        if match:
            function, library = match.group(1).strip(), os.path.basename(match.group(2))
            library = "XLA's JIT code" if re.match(r"perf-\d+\.map$|\[JIT\]", library) else library
            by_library[library] += 1
            if library != "XLA's JIT code":
                by_function[library, function.split("(")[0][:70]] += 1
    total = sum(by_library.values())
    return ({k: n / total for k, n in by_library.items()}, {k: n / total for k, n in by_function.items()}, total)


def hand_written_contacts(p):
    """Part 5's forces on 16 spheres, (3, 16) from positions, velocities and spins (3, 16) each (module docstring)."""
    count, radius, stiffness, damping, exponent, friction = 16, p.radius, 1e9, 1e3, 1.5, 0.1
    first, second = np.triu_indices(count, 1)

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    def hertz(depth, rate=0.0):
        deep = jnp.where(depth > 0, depth, 0.0) ** exponent
        return jnp.where(depth > 0, (stiffness + damping * rate) * deep, 0.0)

    def forces(x, v, w):
        rows = jnp.concatenate([x, v, w])
        on_i, on_j = rows[:, first], rows[:, second]
        offset = [on_j[a] - on_i[a] for a in range(3)]
        distance = jnp.sqrt(sum(o * o for o in offset))
        normal = [o / distance for o in offset]
        slide = [on_j[3 + a] - on_i[3 + a] for a in range(3)]
        rate = -sum(s * n for s, n in zip(slide, normal))
        push = hertz(2 * radius - distance, rate)
        turn = cross([on_i[6 + a] + on_j[6 + a] for a in range(3)], normal)
        slip = [s + radius * t + rate * n for s, t, n in zip(slide, turn, normal)]
        speed = jnp.sqrt(sum(s * s for s in slip) + 1e-30)
        drag = friction * push * jnp.tanh(speed / 1e-3) / speed
        pair = jnp.stack([push * n - drag * s for n, s in zip(normal, slip)])
        total = jnp.zeros((3, count)).at[:, np.concatenate([second, first])].add(jnp.concatenate([pair, -pair], 1))
        cloth = hertz(radius - x[2])
        slip_x, slip_y = v[0] - radius * w[1], v[1] + radius * w[0]
        speed = jnp.sqrt(slip_x**2 + slip_y**2 + 1e-30)
        drag = friction * cloth * jnp.tanh(speed / 1e-3) / speed
        walls = [hertz(x[a] + radius - half) - hertz(radius - half - x[a])
                 for a, half in ((0, p.table_length / 2), (1, p.table_width / 2))]
        return total + jnp.stack([-drag * slip_x - walls[0], -drag * slip_y - walls[1], cloth])

    return jax.jit(forces)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.2, help="simulated time (s)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after compiling (best kept)")
    parser.add_argument("--floor-step", type=float, default=1.7e-4, help="largest step of the floor's run (s)")
    parser.add_argument("--solver-duration", type=float, default=4.0, help="simulated time of part 4 (s)")
    parser.add_argument("--solvers", nargs="*", default=["Bosh3", "Heun"], help="diffrax solvers beside Tsit5")
    parser.add_argument("--perf", type=float, default=0.0, metavar="SECONDS",
                        help="part 6: sample part 1's break with Linux perf for this long (0: skip)")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state = billiard.table_model(p), billiard.break_state(p)
    times = jnp.linspace(0.0, args.duration, 3)

    break_steps = jax.jit(lambda m, s, times=times: table.integrate(m, s, times, 400).steps)  # times bound now
    count = int(break_steps(model, state))
    by_frame, by_kind = profile(break_steps, model, state)
    _, seconds = timed(break_steps, model, state, repeats=args.repeats)
    total = sum(by_kind.values())
    print(f"1. the 16-ball break, {args.duration:g} s: {count} steps, {total / count:.0f} kernels a step, "
          f"{1e6 * seconds / count:.0f} µs a step (best of {args.repeats}: {seconds:.3f} s)")
    for kind, n in by_kind.most_common():
        print(f"  {n / count:7.1f} a step  {kind}")
    print("  by source (innermost frame):")
    for where, n in by_frame.most_common(20):
        print(f"  {n / count:7.1f} a step  {where}")

    q, v = state.q, state.v
    evaluation = jax.jit(lambda m, q, v: acceleration(table.FORMULATION, m, q, v, 0.0))
    by_frame, by_kind = profile(evaluation, model, q, v)
    print(f"\n2. one evaluation of the table's accelerations (every family as the break starts): "
          f"{sum(by_kind.values())} kernels")
    for where, n in by_frame.most_common(12):
        print(f"  {n:5d}  {where}")

    gravity = next(force for force in model.forces if isinstance(force, Gravity))
    free = Model(model.bodies, model.constraints, [gravity])
    floor = jax.jit(lambda m, s: simulate(m, s, times, table.FORMULATION,
                                          steps=AdaptiveSteps(**table.TOLERANCES, max_step=args.floor_step),
                                          max_steps=table.MAX_STEPS).steps)
    count = int(floor(free, state))
    _, by_kind = profile(floor, free, state)
    _, seconds = timed(floor, free, state, repeats=args.repeats)
    print(f"\n3. the floor: the 16 balls without contacts, {args.duration:g} s, steps ≤ {args.floor_step:g} s: "
          f"{count} steps, {sum(by_kind.values()) / count:.0f} kernels a step, {1e6 * seconds / count:.0f} µs a step "
          f"(best of {args.repeats}: {seconds:.3f} s)")
    _, by_kind = profile(evaluation, free, q, v)
    print(f"   one evaluation of its accelerations: {sum(by_kind.values())} kernels")

    print(f"\n4. the break, {args.solver_duration:g} s, by solver (simulate called as reproduce break calls it), "
          f"and with Tsit5 inside the caller's jax.jit:")
    times = table.save_times(args.solver_duration)

    def simulated(m, s, save_times=times, solver=dfx.Tsit5()):
        return simulate(m, s, save_times, table.FORMULATION, solver=solver, **table.settings(m))

    runs = [(name, functools.partial(simulated, solver=getattr(dfx, name)())) for name in ["Tsit5"] + args.solvers]
    in_jit = jax.jit(simulated)
    runs += [("Tsit5 in jax.jit", lambda m, s: in_jit(m, s, times)),  # the save times an argument
             ("Tsit5 in jax.jit, save times a constant", jax.jit(lambda m, s: simulated(m, s)))]
    for name, run in runs:
        result = run(model, state)
        _, seconds = timed(lambda m, s: run(m, s).q, model, state, repeats=3)
        steps, energy = int(result.steps), np.asarray(result.energy)
        print(f"  {name:39s} {steps:6d} steps, {int(result.events.count)} events, run {seconds:.3f} s, "
              f"{1e6 * seconds / steps:.0f} µs a step; energy {energy[0]:.4f} → {energy[-1]:.4f} J, "
              f"cue ball ends at ({float(result.q[-1, 0]):.4f}, {float(result.q[-1, 1]):.4f}) m")

    rows = jnp.asarray(np.random.default_rng(0).normal(size=(3, 3, 16)))
    _, by_kind = profile(hand_written_contacts(p), *rows)
    print(f"\n5. the table's sphere contacts written out by hand (simplified, struct of arrays): "
          f"{sum(by_kind.values())} kernels an evaluation")

    if args.perf > 0:
        by_library, by_function, total = sampled(lambda: break_steps(model, state).block_until_ready(), args.perf)
        print(f"\n6. where the processor's time goes: perf, {total} samples of the 16-ball break "
              f"({args.duration:g} s) run for {args.perf:g} s, every thread:")
        for library, share in sorted(by_library.items(), key=lambda x: -x[1]):
            if share >= 0.001:
                print(f"  {100 * share:5.1f} %  {library}")
        print("  outside the JIT code, by function:")
        for (library, function), share in sorted(by_function.items(), key=lambda x: -x[1])[:15]:
            print(f"  {100 * share:5.1f} %  {library}: {function}")


if __name__ == "__main__":
    main()
