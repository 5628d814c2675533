"""Where the test suite's time goes: JAX's tracing, lowering and XLA's compiles, by program and by test.

A pytest plugin and its summary. Loaded into a test run, it records every
compile event JAX reports (``jax.monitoring``: the trace, the lowering to
MLIR and XLA's compile of each program, with the program's name) with the
test that caused it, one file per process (xdist workers included) in
``$SUITE_COMPILES_DIR`` (default: ``suite-compiles`` in the system's
temporary directory). Run as a script, it sums them: the time of each kind,
the programs by name, and the small programs a test compiles operation by
operation (eager ``jax.numpy`` calls outside any ``jit``: XLA compiles each
new operation, shape and dtype once per process), by test file and by the
innermost line of the package and of the tests that asked for them. It also
times Python's full (generation-2) garbage collections (``gc.callbacks``),
which walk the whole heap of a worker, and sums them by process, with each
process's peak resident memory. And it records every call of ``simulate``'s
compiled functions (``_simulate_events``, ``_simulate``) made outside any
trace, by the structure of its arguments: a call whose structure is that of an
earlier call of the same process, with other shapes (the save times) or other
static values (``max_events``), compiles a program of its own; the summary
lists such calls with what differs, the compiles a test could share.

    rm -rf /tmp/suite-compiles
    PYTHONPATH=benchmarks python -m pytest -q -m "not slow" -n 2 --dist loadfile -p suite_compiles
    python benchmarks/suite_compiles.py [--top 20]

A program inside another's trace (an ``equinox.filter_jit`` called in a
``jit``) is traced within the outer trace, so the trace times overlap; the
compile times do not.
"""

import argparse
import collections
import gc
import importlib
import json
import os
import pathlib
import resource
import tempfile
import time
import traceback

DIRECTORY = pathlib.Path(os.environ.get("SUITE_COMPILES_DIR", pathlib.Path(tempfile.gettempdir()) / "suite-compiles"))
KINDS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "XLA",
}
#: An XLA compile shorter than this (s) counts as a small program (an operation run eagerly, mostly).
SMALL = 0.2
#: The kinds of a full garbage collection's record and of the process's peak memory (GB).
GC, PEAK = "full gc", "peak memory"
#: The kind of a record of a call of ``simulate``'s compiled functions (the arguments' structure, as JSON).
CALL = "simulate call"
#: The compiled functions of ``diffimpact.multibody.simulate`` whose calls are recorded.
SIMULATE = ("_simulate_events", "_simulate")


def _plugin():
    import jax
    import pytest

    DIRECTORY.mkdir(parents=True, exist_ok=True)
    out = open(DIRECTORY / f"{os.getpid()}.tsv", "w")  # noqa: SIM115 (open for the process's life)
    current = ["(outside any test)"]

    def listener(event, duration, **kwargs):
        if event in KINDS:
            where = _callers() if KINDS[event] == "XLA" and duration < SMALL else ""
            out.write(f"{current[0]}\t{KINDS[event]}\t{duration:.4f}\t{kwargs.get('fun_name', '')}\t{where}\n")
            out.flush()

    jax.monitoring.register_event_duration_secs_listener(listener)
    started = [0.0]

    def collection(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                out.write(f"{current[0]}\t{GC}\t{time.perf_counter() - started[0]:.4f}\t\t\n")

    gc.callbacks.append(collection)
    _record_simulate_calls(out, current)

    class Plugin:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            current[0] = item.nodeid
            yield

        def pytest_sessionfinish(self, session):
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # (Linux: kB)
            out.write(f"(session end)\t{PEAK}\t{peak:.2f}\t\t\n")
            out.flush()

    return Plugin()


def _record_simulate_calls(out, current):
    """Wrap ``simulate``'s compiled functions so that each call outside any trace writes its arguments'
    structure: the tree, and each leaf as its shape and dtype (an array) or its ``repr`` (a static value)."""
    import equinox as eqx
    import jax

    module = importlib.import_module("diffimpact.multibody.simulate")
    for name in SIMULATE:
        def recorded(*args, _compiled=getattr(module, name), _name=name):
            leaves, tree = jax.tree_util.tree_flatten(args)
            if not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):  # (traced: part of another program)
                described = [f"{leaf.dtype}{list(leaf.shape)}" if eqx.is_array(leaf) else repr(leaf)[:80]
                             for leaf in leaves]
                record = json.dumps({"tree": str(hash(str(tree))), "leaves": described})
                out.write(f"{current[0]}\t{CALL}\t0\t{_name}\t{record}\n")
            return _compiled(*args)

        setattr(module, name, recorded)


def _shareable(processes):
    """The recorded calls whose tree is an earlier distinct call's of the same process: (test, function, the
    earlier call's test, [(earlier leaf, this leaf)]) for each, fewest differences first."""
    found = []
    for records in processes:
        seen = {}
        for test, _, _, name, record in records:
            call = json.loads(record)
            key = (name, call["tree"], tuple(call["leaves"]))
            if key in seen:
                continue
            earlier = [(other, [(a, b) for a, b in zip(leaves, call["leaves"]) if a != b])
                       for (other_name, tree, leaves), other in seen.items()
                       if other_name == name and tree == call["tree"] and len(leaves) == len(call["leaves"])]
            if earlier:
                other, differences = min(earlier, key=lambda pair: len(pair[1]))
                found.append((test, name, other, differences))
            seen[key] = test
    return sorted(found, key=lambda row: len(row[3]))


def _callers():
    """The innermost frames of the running code in the package (``diffimpact/``, ``fitting/``) and in ``tests/``,
    as ``path:line``, separated by a space (``-`` for none): who asked for a small program."""
    found = {"package": "-", "tests": "-"}
    for frame in reversed(traceback.extract_stack()):
        path = pathlib.Path(frame.filename).as_posix()
        for part, key in (("/diffimpact/", "package"), ("/fitting/", "package"), ("/tests/", "tests")):
            if part in path and found[key] == "-" and "/site-packages/" not in path:
                found[key] = f"{part.strip('/')}/{path.split(part, 1)[1]}:{frame.lineno}"
        if found["tests"] != "-":
            break
    return f"{found['package']} {found['tests']}"


def pytest_configure(config):
    config.pluginmanager.register(_plugin(), "suite_compiles_recorder")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=20, help="rows of each table")
    args = parser.parse_args()
    files = [[line.split("\t") for line in path.read_text().splitlines()] for path in DIRECTORY.glob("*.tsv")]
    full_collections = [[float(duration) for _, kind, duration, _, _ in process if kind == GC] for process in files]
    peaks = [[float(size) for _, kind, size, _, _ in process if kind == PEAK] for process in files]
    calls = [[record for record in process if record[1] == CALL] for process in files]
    processes = [[record for record in process if record[1] not in (GC, PEAK, CALL)] for process in files]
    rows = [(test, kind, float(duration), name.removeprefix("jit(").removesuffix(")"))
            for records in processes for test, kind, duration, name, _ in records]
    if not rows:
        raise SystemExit(f"no records in {DIRECTORY}: run the suite with -p suite_compiles first (see --help)")
    seconds, count = collections.Counter(), collections.Counter()
    for _, kind, duration, _ in rows:
        seconds[kind] += duration
        count[kind] += 1
    print(f"{len(processes)} processes; " + ", ".join(
        f"{kind} {seconds[kind]:.1f} s ({count[kind]} programs)" for kind in KINDS.values()))
    print("full garbage collections by process: " + "; ".join(
        f"{len(durations)} in {sum(durations):.1f} s" for durations in full_collections))
    print("peak memory (resident) by process: " + "; ".join(f"{max(sizes):.1f} GB" for sizes in peaks if sizes))
    # a program: the trace and lowering of a name, then its XLA compile (in that order in each process); the
    # compile decides whether it is small
    small_time, small_count, by_file, by_caller = 0.0, 0, collections.Counter(), collections.Counter()
    for records in processes:
        pending = collections.defaultdict(float)
        for test, kind, duration, name, where in records:
            pending[name] += float(duration)
            if kind == "XLA":
                total = pending.pop(name)
                if float(duration) < SMALL:
                    small_time += total
                    small_count += 1
                    by_file[test.split("::")[0]] += total
                    by_caller[where] += total
    print(f"small programs (XLA < {SMALL} s): {small_count}, {small_time:.1f} s with their traces and lowerings")
    by_name, programs = collections.Counter(), collections.Counter()
    for _, kind, duration, name in rows:
        by_name[name] += duration
        programs[name] += kind == "XLA"
    print("\nprograms by name (trace + lower + XLA, s; compiles):")
    for name, total in by_name.most_common(args.top):
        print(f"{total:8.1f} {programs[name]:6d}  {name[:90]}")
    print("\nsmall programs by test file (s):")
    for path, total in by_file.most_common(args.top):
        print(f"{total:8.1f}  {path}")
    for title, column in (("package line", 0), ("test line", 1)):
        lines = collections.Counter()
        for where, total in by_caller.items():
            lines[where.split(" ")[column]] += total
        print(f"\nsmall programs by the {title} that asked for them (innermost; '-': none) (s):")
        for line, total in lines.most_common(args.top):
            print(f"{total:8.1f}  {line}")
    shareable = _shareable(calls)
    print(f"\ncalls of {' and '.join(SIMULATE)} that compile again what an earlier call of their process compiled, "
          f"but for the leaves shown (earlier -> this): {len(shareable)}")
    for test, name, other, differences in shareable[:args.top]:
        shown = "; ".join(f"{a} -> {b}" for a, b in differences[:3]) + (" ..." if len(differences) > 3 else "")
        print(f"  {test[:100]}\n      {name}, as {other.split('::')[-1][:60]}: {shown}")


if __name__ == "__main__":
    main()
