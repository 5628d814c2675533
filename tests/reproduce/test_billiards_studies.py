"""The billiards reproductions and fits end to end through the CLI (``--quick``; slow: minutes each)."""

import json

import numpy as np
import pytest

from diffimpact.cli import main
from diffimpact.io import read_csv

pytestmark = pytest.mark.slow


def test_cushion_reproduction_writes_its_files_and_the_rigid_model_is_speed_independent(tmp_path):
    assert main(["reproduce", "billiards-cushion", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "billiards-cushion.png").stat().st_size > 10_000
    table = read_csv(tmp_path / "billiards-cushion.csv")
    head_on = (table["incidence_deg"] == 90.0) & (table["topspin_ratio"] == 1.0)
    # Mathavan's rigid model has no scale but V: a rolling ball's rebound is a fixed fraction of it.
    ratio = table["rebound_speed_m_per_s_mathavan"][head_on] / table["speed_m_per_s"][head_on]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
    for geometry in ("plane", "nose"):
        rebound = table[f"rebound_speed_m_per_s_{geometry}"]
        assert np.all(np.isfinite(rebound)) and np.all(rebound < table["speed_m_per_s"])
    shot = read_csv(tmp_path / "billiards-cushion-shot.csv")
    assert shot["t_s"][-1] == pytest.approx(0.2)


def test_deflection_reproduction_has_the_documented_columns(tmp_path):
    assert main(["reproduce", "billiards-deflection", "--quick", "--out", str(tmp_path)]) == 0
    table = read_csv(tmp_path / "billiards-deflection.csv")
    for key in ("friction", "speed_mph", "fraction", "cut_angle_deg", "deflection_deg", "deflection_eq41_deg",
                "throw_deg", "throw_tpa14_deg"):
        assert key in table
    # a thinner hit cuts more: the cut angle falls as the fraction grows, at every speed and friction
    for friction in np.unique(table["friction"]):
        for mph in np.unique(table["speed_mph"]):
            chosen = (table["friction"] == friction) & (table["speed_mph"] == mph)
            assert np.all(np.diff(table["cut_angle_deg"][chosen][np.argsort(table["fraction"][chosen])]) < 0)


@pytest.mark.parametrize("name", ["cushion", "deflection"])
def test_fit_quick_runs_write_json_csv_png(tmp_path, name):
    assert main(["fit", name, "--quick", "--out", str(tmp_path)]) == 0
    record = json.loads((tmp_path / f"{name}.json").read_text())
    assert record.get("fits") or record.get("fit")
    assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    assert (tmp_path / f"{name}.csv").stat().st_size > 0
