"""Seed 000 §4.1 analogue: drift and CPU time of the formulations at fixed steps (quick run, two of them)."""

import numpy as np
import pytest

from diffimpact.multibody import LagrangeMultipliers, simulate
from diffimpact.reproduce import formulations as study
from diffimpact.reproduce._io import read_csv
from diffimpact.scenes import double_pendulum as dp

NAMES = ("lagrange", "direct")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("formulations")
    summary = study.run(out, quick=True, names=NAMES)
    assert "direct correction" in summary
    return out


@pytest.fixture(scope="module")
def timing(out):
    table = read_csv(out / "formulations-timing.csv")
    return {(NAMES[int(i)], dt): {key: table[key][k] for key in table}
            for k, (i, dt) in enumerate(zip(table["formulation"], table["dt_s"]))}


def test_writes_the_documented_files(out):
    assert (out / "formulations.png").stat().st_size > 10_000
    header = (out / "formulations.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "t_s"
    for name in NAMES:
        for dt in study.QUICK_STEPS:
            for key in ("phi_m", "phi_dot_m_per_s", "energy_error_J"):
                assert f"{key}_{name}_{study.step_tag(dt)}" in header
    assert (out / "formulations-timing.csv").read_text().splitlines()[0] == (
        "formulation,dt_s,compile_s,run_s,max_phi_m,max_phi_dot_m_per_s,max_energy_error_J,max_angle_error_rad"
    )


def test_direct_correction_holds_the_constraints_to_round_off(timing):
    small = study.QUICK_STEPS[1]
    assert timing[("direct", small)]["max_phi_m"] < 1e-13
    assert timing[("direct", small)]["max_phi_dot_m_per_s"] < 1e-12
    for dt in study.QUICK_STEPS:
        assert timing[("lagrange", dt)]["max_phi_m"] > 10 * timing[("direct", dt)]["max_phi_m"]


def test_lagrange_drift_is_integration_error(timing):
    # Tsit5 is 5th order: ten times smaller steps cut the drift by far more than 1e3.
    large, small = study.QUICK_STEPS
    assert timing[("lagrange", large)]["max_phi_m"] > 1e-7
    assert timing[("lagrange", large)]["max_phi_m"] > 1e3 * timing[("lagrange", small)]["max_phi_m"]
    # The motion itself agrees with eq. (3) at the small step.
    assert timing[("lagrange", small)]["max_angle_error_rad"] < 1e-9


def test_times_are_recorded(timing):
    for row in timing.values():
        assert np.isfinite(row["compile_s"]) and row["compile_s"] >= 0
        assert 0 < row["run_s"] < 60


def test_fixed_step_size_is_validated():
    p = dp.Parameters()
    for bad in (0.0, -1e-3):
        with pytest.raises(ValueError, match="dt"):
            simulate(dp.model(p), dp.initial_state(p), [0.0, 1.0], LagrangeMultipliers(), dt=bad)


def test_unknown_formulation_name_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="names"):
        study.run(tmp_path, quick=True, names=("lagrange", "penalty"))
