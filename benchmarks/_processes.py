"""The benchmarks' measuring processes: a script run again in a process of its own, whose last line of output is
its result as JSON. A process of its own, because XLA reads ``XLA_FLAGS`` once, when JAX's CPU backend starts, and
because what a first call costs (tracing, compiling) is only seen in a fresh process."""

import json
import os
import subprocess
import sys


def measured(script, arguments, label, flags=""):
    """The JSON result of ``script`` run with ``arguments`` (strings) and ``flags`` added to ``XLA_FLAGS``, from
    the script's folder; exits with ``label`` and the process's error output if it failed."""
    env = {**os.environ, "XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()}
    out = subprocess.run([sys.executable, script, *arguments], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.abspath(script)))
    if out.returncode:
        sys.exit(f"{label}: the measuring process failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])
