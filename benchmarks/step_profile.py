"""Where a step of the 16-ball break goes: the XLA kernels it executes, by the source function that made them.

The break of ``reproduce break`` (``table.integrate``'s settings) for ``--duration`` s is run once under JAX's
profiler; every kernel (thunk) that XLA's CPU runtime executed is counted and attributed to the innermost
Python frame recorded for its HLO instruction in the compiled program. On this 2-core CPU a step's time is
mostly these kernels' dispatch (a fraction of a microsecond each), so kernels per step measure a step's cost.

First with ``Model.constraint`` evaluating each constraint on its own (as before), then as it is.
Second part: ``Model.constraint`` as it evaluates a run of ``EulerParameters`` (one vectorised expression,
``EulerParameters.residuals``) against one constraint at a time (as before), each compiled in turn in one
process, ``--rounds`` times alternating: run time (best of 5), steps, and whether the motions agree to the bit.

    python benchmarks/step_profile.py [--duration 0.2] [--rounds 4]
"""

import argparse
import collections
import glob
import re
import tempfile
import time

import jax
import jax.numpy as jnp
from jax.profiler import ProfileData

from diffimpact.multibody.model import Model
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


def profile(model, state, times):
    run = jax.jit(lambda m, s: table.integrate(m, s, times, 400).steps)
    steps = int(run(model, state))
    where = frames(run.lower(model, state).compile().as_text())
    directory = tempfile.mkdtemp()
    jax.profiler.start_trace(directory)
    run(model, state).block_until_ready()
    jax.profiler.stop_trace()
    data = ProfileData.from_file(glob.glob(f"{directory}/plugins/profile/*/*.xplane.pb")[0])
    kernels = collections.Counter()
    for plane in data.planes:
        for line in plane.lines:
            if "XLAEigen" in line.name:
                kernels.update(where.get(event.name, "(no frame)") for event in line.events
                               if not event.name.startswith("end: ") and event.name != "ThunkExecutor::Execute")
    return steps, kernels


def one_at_a_time(self, q, t):
    """``Model.constraint`` as before: each constraint evaluated on its own."""
    parts = [c(self.split(q), t) for c in self.constraints]
    return jnp.concatenate(parts) if parts else jnp.zeros(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state = billiard.table_model(p), billiard.break_state(p)
    times = jnp.linspace(0.0, args.duration, 3)
    grouped = Model.constraint
    Model.constraint = one_at_a_time
    steps, kernels = profile(model, state, times)
    print(f"16-ball break, {args.duration:g} s, each constraint on its own: {steps} steps, "
          f"{sum(kernels.values()) / steps:.0f} kernels per step, of which "
          f"{sum(n for w, n in kernels.items() if 'EulerParameters' in w) / steps:.0f} from EulerParameters")
    Model.constraint = grouped
    jax.clear_caches()
    steps, kernels = profile(model, state, times)
    total = sum(kernels.values())
    print(f"16-ball break, {args.duration:g} s: {steps} steps, {total} kernels executed, {total / steps:.0f} per step")
    for where, count in kernels.most_common(20):
        print(f"  {count / steps:7.1f} per step  {where}")

    times = table.save_times(args.duration)
    print(f"\nModel.constraint, the break for {args.duration:g} s (best of 5 runs after compiling):")
    motions = {}
    for _ in range(args.rounds):
        for name, constraint in (("one at a time", one_at_a_time), ("EulerParameters grouped", grouped)):
            Model.constraint = constraint
            jax.clear_caches()
            table.integrate(model, state, times, 400).q.block_until_ready()
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                run = table.integrate(model, state, times, 400)
                run.q.block_until_ready()
                best = min(best, time.perf_counter() - start)
            motions[name] = run.q
            print(f"  {name:24s} {best:.3f} s, {int(run.steps)} steps, {1e6 * best / int(run.steps):.0f} µs/step")
    Model.constraint = grouped
    a, b = motions.values()
    print(f"  largest difference of the saved coordinates: {float(jnp.abs(a - b).max()):.1e}")


if __name__ == "__main__":
    main()
