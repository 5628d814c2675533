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
STANDALONE = ("break_sensitivity", "cushion_hop", "fig03_mass_scaling", "fig04_velocity_scaling",
              "fig05_stiffness_scaling", "fig06_c_opt_vs_e", "fig07_alpha_beta", "fig08_random_systems",
              "fig09_kelvin_voigt", "fit_compile_cache", "pool_table", "seed002_resting_contact", "tutorial_two_discs")


def test_every_example_is_standalone_or_a_studys_run():
    # a new example joins STANDALONE, or calls a study's run function (tested at its defaults elsewhere)
    # module.function, e.g. "billiards.run_deflection" (not any ".run(", which subprocess.run would match)
    runs = {f"{run.__module__.rsplit('.', 1)[-1]}.{run.__name__}" for run, _ in [*REPRODUCTIONS.values(),
                                                                             *FITS.values()]}
    for path in EXAMPLES.glob("[a-z]*.py"):
        calls_a_run = any(re.search(rf"\b{re.escape(name)}\(", path.read_text()) for name in runs)
        assert (path.stem in STANDALONE) != calls_a_run, path.name


@pytest.mark.slow
@pytest.mark.parametrize("name", STANDALONE)
def test_example_runs(name, tmp_path):
    script = EXAMPLES / f"{name}.py"
    options = ["--out", str(tmp_path)] if "from _common import parse" in script.read_text() else []
    done = subprocess.run([sys.executable, str(script), *options], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
