"""Every fit and reproduction of the command line at its defaults (not ``--quick``), as a user first runs them.

The other tests run them with ``--quick`` (shorter records, coarser grids); the defaults differ in run lengths and
sizes that only they reach (the two-pendulum fit's 8-s record once outgrew its ``MAX_EVENTS``). About 10 min on
2 cores, so slow.
"""

import jax
import pytest

from diffimpact.cli import main
from diffimpact.reproduce import REPRODUCTIONS
from fitting.studies import FITS

RUNS = [("fit", name) for name in FITS] + [("reproduce", name) for name in REPRODUCTIONS]


@pytest.fixture(autouse=True)
def fresh_caches():
    # ~26 runs in one process: without this, their compiled code accumulates until LLVM cannot allocate more
    yield
    jax.clear_caches()


@pytest.mark.slow
@pytest.mark.parametrize("command, name", RUNS, ids=[f"{c}-{n}" for c, n in RUNS])
def test_runs_at_its_defaults_and_writes_its_files(command, name, tmp_path):
    assert main([command, name, "--out", str(tmp_path)]) == 0
    written = {path.suffix for path in tmp_path.iterdir() if path.stat().st_size > 0}
    assert {".csv", ".png"} <= written
