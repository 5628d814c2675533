"""The maximum-dissipation reproductions end to end through the CLI (``--quick``)."""

import numpy as np
import pytest

from diffimpact.cli import main
from diffimpact.io import read_csv


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


@pytest.mark.slow  # about 25 s: the sliding sphere at three time steps and the ten poured spheres twice
def test_time_stepping_reproduction_writes_its_files(tmp_path):
    assert main(["reproduce", "maxdiss-stepping", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "maxdiss-stepping.png").stat().st_size > 10_000
    sliding = read_csv(tmp_path / "maxdiss-stepping-sliding.csv")
    assert sliding["v_m_s"][-1] == pytest.approx(5 / 7 * sliding["v_m_s"][0], rel=1e-12)
    convergence = read_csv(tmp_path / "maxdiss-stepping-convergence.csv")
    assert np.all(np.abs(convergence["slip_time_error_s"]) <= convergence["dt_s"])
    assert np.all(np.abs(convergence["slip_distance_error_m"]) <= 2 * convergence["dt_s"])  # 2 m/s launch
    poured = read_csv(tmp_path / "maxdiss-stepping.csv")
    assert np.all(np.diff(poured["energy_J_eps0_sweeps20"]) <= 0)
    assert poured["penetration_m_eps0p2_sweeps20"][-1] < 0.1 * poured["penetration_m_eps0_sweeps20"][-1]
