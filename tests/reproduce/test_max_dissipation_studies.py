"""The maximum-dissipation reproductions end to end through the CLI (``--quick``)."""

import numpy as np

from diffimpact.cli import main
from diffimpact.reproduce._io import read_csv


def test_academic_and_paradox_reproductions_write_their_files(tmp_path):
    for name in ("maxdiss-academic", "maxdiss-paradox"):
        assert main(["reproduce", name, "--quick", "--out", str(tmp_path)]) == 0
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    academic = read_csv(tmp_path / "maxdiss-academic.csv")
    # per frame: three Coulomb solutions and one maximally dissipative one, the latter of least energy
    for frame in (0.0, 1.0):
        rows = academic["orthonormal_frame"] == frame
        star = rows & (academic["max_dissipation"] == 1.0)
        assert rows.sum() == 4 and star.sum() == 1
        assert academic["energy"][star][0] == academic["energy"][rows].min()
    paradox = read_csv(tmp_path / "maxdiss-paradox.csv")
    np.testing.assert_allclose(paradox["mu_threshold_impact_model"], paradox["mu_star"], atol=1e-8)
