"""Every ``diffimpact fit`` at its defaults (not ``--quick``), as a user first runs it.

The other tests run the fits with ``--quick`` (shorter records, fewer points); the defaults reach run lengths and
sizes that only they reach (the two-pendulum fit's 8-s record once outgrew its ``MAX_EVENTS``). About 4 min.
The reproductions: ``tests/reproduce/test_reproductions_at_defaults.py``.
"""

import pytest

from fitting.studies import FITS


@pytest.mark.slow
@pytest.mark.parametrize("name", FITS)
def test_fit_runs_at_its_defaults(name, tmp_path, run_at_defaults):
    run_at_defaults("fit", name, tmp_path)
