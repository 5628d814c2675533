"""Ctrl-C at a given time after ``diffimpact`` starts: the exit status and the lines it writes to stderr.

Runs ``diffimpact fit damping --quick`` (as installed in this environment)
``--repeats`` times per delay, sends SIGINT after the delay, and prints a
line per delay: how many runs ended with status 130 and one line of stderr
(the progress bar's lines, once it has started, aside), and the others'
statuses. Delays cover Python's start, the import of JAX (NumPy's and
jaxlib's extensions) and the first compilations.

    python benchmarks/ctrl_c.py --repeats 5
"""

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DELAYS = (0.02, 0.04, 0.06, 0.08, 0.09, 0.1, 0.11, 0.12, 0.13, 0.15, 0.2, 0.3, 0.6, 1.0, 1.5, 2.5, 4.0)


def interrupted(command, delay, out):
    """Status and stderr lines (progress-bar lines dropped) of ``command`` sent SIGINT ``delay`` s after its start."""
    child = subprocess.Popen([*command, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip() and "it/s]" not in line and "s/it]" not in line]
    return child.returncode, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per delay")
    args = parser.parse_args()
    executable = shutil.which("diffimpact", path=str(Path(sys.executable).parent))
    command = [executable, "fit", "damping", "--quick"]
    print(f"{' '.join(command)}: SIGINT after the delay, {args.repeats} runs each")
    print(f"{'delay (s)':>9}  {'130 + one line':>14}  others (status, stderr lines)")
    with tempfile.TemporaryDirectory() as out:
        for delay in DELAYS:
            runs = [interrupted(command, delay, Path(out) / str(k)) for k in range(args.repeats)]
            clean = sum(status == 130 and len(lines) == 1 and "interrupted" in lines[0] for status, lines in runs)
            others = [(status, len(lines)) for status, lines in runs
                      if not (status == 130 and len(lines) == 1 and "interrupted" in lines[0])]
            print(f"{delay:9.2f}  {clean:>9d} of {args.repeats}  {others if others else ''}")


if __name__ == "__main__":
    main()
