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
   run time and µs a step, and where the run ends (energy, the cue ball's position).

Run time: best of ``--repeats`` runs after compiling, outside the profiler (part 4: of 3).

    python benchmarks/step_profile.py [--duration 0.2] [--repeats 5] [--solver-duration 4] [--solvers Bosh3 Heun]
"""

import argparse
import collections
import glob
import re
import tempfile
import time

import diffrax as dfx
import jax
import jax.numpy as jnp
import numpy as np
from jax.profiler import ProfileData

from diffimpact.multibody import Gravity, Model, simulate
from diffimpact.multibody.simulate import _acceleration
from diffimpact.reproduce import table
from diffimpact.scenes import billiard


def frames(text):
    """Each instruction name of the compiled HLO ``text`` → "file:function" of its innermost recorded frame."""
    def section(name, following):
        start = text.index(f"\n{name}\n") + len(name) + 2
        return text[start:text.index(f"\n{following}\n", start)].strip().splitlines()

    files = dict(line.split(" ", 1) for line in section("FileNames", "FunctionNames"))
    functions = dict(line.split(" ", 1) for line in section("FunctionNames", "FileLocations"))
    locations = {}
    for line in section("FileLocations", "StackFrames"):
        key, rest = line.split(" ", 1)
        fields = dict(re.findall(r"(\w+)=(\d+)", rest))
        file = files[fields["file_name_id"]].strip('"').split("site-packages/")[-1].split("diffimpact/")[-1]
        locations[key] = f"{file}:{functions[fields['function_name_id']].strip(chr(34))}"
    stack = dict(re.findall(r"\n(\d+) \{file_location_id=(\d+) parent_frame_id=\d+\}", text))
    return {name: locations[stack[frame]] for name, frame in
            re.findall(r"\n\s*(?:ROOT )?%([\w.\-]+) = .*stack_frame_id=(\d+)", text)}


def kinds(text):
    """Each instruction name of the compiled HLO ``text`` → its opcode (a fusion's with its kind, e.g. fusion:kLoop)."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = .*? ([a-z][\w-]*)\(", line)
        if match:
            opcode = match.group(2)
            if opcode == "fusion":
                opcode += ":" + (re.search(r"kind=(\w+)", line) or [None, "?"])[1]
            found[match.group(1)] = opcode
    return found


def profile(run, *args):
    """The kernels that one call of the jitted ``run(*args)`` executes: two Counters, by Python frame and by kind."""
    run(*args).block_until_ready()
    text = run.lower(*args).compile().as_text()
    where, kind = frames(text), kinds(text)
    directory = tempfile.mkdtemp()
    jax.profiler.start_trace(directory)
    run(*args).block_until_ready()
    jax.profiler.stop_trace()
    data = ProfileData.from_file(glob.glob(f"{directory}/plugins/profile/*/*.xplane.pb")[0])
    by_frame, by_kind = collections.Counter(), collections.Counter()
    for plane in data.planes:
        for line in plane.lines:
            if line.name.startswith("tf_XLA"):  # XLA's threads (its Eigen pool and the PjRt client's)
                names = [event.name for event in line.events if not event.name.startswith(
                    ("end: ", "ThunkExecutor::", "ThreadpoolListener::"))]
                by_frame.update(where.get(name, "(no frame)") for name in names)
                by_kind.update(kind.get(name, "?") for name in names)
    return by_frame, by_kind


def best_time(run, *args, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run(*args).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.2, help="simulated time (s)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs after compiling (best kept)")
    parser.add_argument("--floor-step", type=float, default=1.7e-4, help="largest step of the floor's run (s)")
    parser.add_argument("--solver-duration", type=float, default=4.0, help="simulated time of part 4 (s)")
    parser.add_argument("--solvers", nargs="*", default=["Bosh3", "Heun"], help="diffrax solvers beside Tsit5")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state = billiard.table_model(p), billiard.break_state(p)
    times = jnp.linspace(0.0, args.duration, 3)

    steps = jax.jit(lambda m, s: table.integrate(m, s, times, 400).steps)
    count = int(steps(model, state))
    by_frame, by_kind = profile(steps, model, state)
    seconds = best_time(steps, model, state, repeats=args.repeats)
    total = sum(by_kind.values())
    print(f"1. the 16-ball break, {args.duration:g} s: {count} steps, {total / count:.0f} kernels a step, "
          f"{1e6 * seconds / count:.0f} µs a step (best of {args.repeats}: {seconds:.3f} s)")
    for kind, n in by_kind.most_common():
        print(f"  {n / count:7.1f} a step  {kind}")
    print("  by source (innermost frame):")
    for where, n in by_frame.most_common(20):
        print(f"  {n / count:7.1f} a step  {where}")

    q, v = state.q, state.v
    evaluation = jax.jit(lambda m, q, v: _acceleration(table.FORMULATION, m, q, v, 0.0))
    by_frame, by_kind = profile(evaluation, model, q, v)
    print(f"\n2. one evaluation of the table's accelerations (every family as the break starts): "
          f"{sum(by_kind.values())} kernels")
    for where, n in by_frame.most_common(12):
        print(f"  {n:5d}  {where}")

    gravity = next(force for force in model.forces if isinstance(force, Gravity))
    free = Model(model.bodies, model.constraints, [gravity])
    floor = jax.jit(lambda m, s: simulate(m, s, times, table.FORMULATION, max_step=args.floor_step,
                                          max_steps=table.MAX_STEPS, **table.TOLERANCES).steps)
    count = int(floor(free, state))
    _, by_kind = profile(floor, free, state)
    seconds = best_time(floor, free, state, repeats=args.repeats)
    print(f"\n3. the floor: the 16 balls without contacts, {args.duration:g} s, steps ≤ {args.floor_step:g} s: "
          f"{count} steps, {sum(by_kind.values()) / count:.0f} kernels a step, {1e6 * seconds / count:.0f} µs a step "
          f"(best of {args.repeats}: {seconds:.3f} s)")
    _, by_kind = profile(evaluation, free, q, v)
    print(f"   one evaluation of its accelerations: {sum(by_kind.values())} kernels")

    print(f"\n4. the break, {args.solver_duration:g} s, by solver:")
    times = table.save_times(args.solver_duration)
    for name in ["Tsit5"] + args.solvers:
        solver = getattr(dfx, name)()
        run = jax.jit(lambda m, s: simulate(m, s, times, table.FORMULATION, max_events=table.MAX_EVENTS, solver=solver,
                                            **table.settings(m)))
        result = run(model, state)
        seconds = best_time(lambda m, s: run(m, s).q, model, state, repeats=3)
        steps, energy = int(result.steps), np.asarray(result.energy)
        print(f"  {name:6s} {steps:6d} steps, {int(result.events.count)} events, run {seconds:.3f} s, "
              f"{1e6 * seconds / steps:.0f} µs a step; energy {energy[0]:.4f} → {energy[-1]:.4f} J, "
              f"cue ball ends at ({float(result.q[-1, 0]):.4f}, {float(result.q[-1, 1]):.4f}) m")


if __name__ == "__main__":
    main()
