"""Every ``diffimpact reproduce`` at its defaults (not ``--quick``), as a user first runs it.

The other tests run the reproductions with ``--quick`` (coarser grids, shorter runs) or in parts; this runs
each whole, as ``diffimpact reproduce NAME`` does. About 7 min. The fits:
``tests/fitting/test_fits_at_defaults.py``.
"""

import pytest

from diffimpact.reproduce import REPRODUCTIONS


@pytest.mark.slow
@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_reproduction_runs_at_its_defaults(name, tmp_path, run_at_defaults):
    run_at_defaults("reproduce", name, tmp_path)
