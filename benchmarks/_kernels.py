"""Counting the XLA kernels (thunks) that a jitted program executes, each named by its instruction's source.

On a CPU a step of an event-driven run costs mostly the dispatch of its kernels, so kernels per step measure a
step's cost (``break_gradient.py --kernels``).
"""

import collections
import glob
import re
import tempfile

import jax
from jax.profiler import ProfileData


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
        for line in plane.lines:  # every thread: a program may run on XLA's Eigen pool or on the caller's thread
            names = [event.name for event in line.events if event.name in kind]
            by_frame.update(where.get(name, "(no frame)") for name in names)
            by_kind.update(kind[name] for name in names)
    return by_frame, by_kind
