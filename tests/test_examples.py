"""The example scripts that are not a fit or a reproduction of the command line, run as a user runs them.

The others call a study's ``run`` (``diffimpact fit`` or ``diffimpact reproduce``), which
``tests/fitting/test_fits_at_defaults.py`` and ``tests/reproduce/test_reproductions_at_defaults.py`` run at their
defaults. About 3.5 min, so slow.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from diffimpact.reproduce import REPRODUCTIONS
from fitting.studies import FITS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: The examples that do their own work (not a study's ``run``).
STANDALONE = ("billiards/break_sensitivity", "billiards/cushion_hop", "papers/poursina2020_scaling",
              "papers/poursina2020_damping_against_restitution", "papers/poursina2020_alpha_beta",
              "papers/poursina2020_random_systems", "papers/poursina2020_kelvin_voigt", "fits/compile_cache",
              "billiards/pool_table", "papers/sypniewska_kaminska2017_resting_contact", "tutorial_two_discs")


def test_every_example_is_standalone_or_a_studys_run():
    # a new example joins STANDALONE, or calls a study's run function (tested at its defaults elsewhere)
    # module.function, e.g. "billiards.run_deflection" (not any ".run(", which subprocess.run would match)
    runs = {f"{run.__module__.rsplit('.', 1)[-1]}.{run.__name__}" for run, _ in [*REPRODUCTIONS.values(),
                                                                             *FITS.values()]}
    for path in EXAMPLES.rglob("[a-z]*.py"):
        calls_a_run = any(re.search(rf"\b{re.escape(name)}\(", path.read_text()) for name in runs)
        assert (path.relative_to(EXAMPLES).with_suffix("").as_posix() in STANDALONE) != calls_a_run, path.name


@pytest.mark.slow
@pytest.mark.parametrize("name", STANDALONE)
def test_example_runs(name, tmp_path):
    script = EXAMPLES / f"{name}.py"
    options = ["--out", str(tmp_path)] if "script_arguments" in script.read_text() else []
    done = subprocess.run([sys.executable, str(script), *options], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
