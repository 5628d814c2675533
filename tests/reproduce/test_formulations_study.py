"""[Gismeros Moreno 2022] §4.1: the break shot at two step limits (quick run, one formulation: each compiles for about 70 s).

The formulations' drift is compared on the double pendulum (tests/scenes/test_double_pendulum.py). The
study's run is a long reproduction (slow); the validation of its arguments stays in every run.
"""

import numpy as np
import pytest

from diffimpact.multibody import LagrangeMultipliers, simulate
from diffimpact.reproduce import formulations as study
from diffimpact.reproduce._io import read_csv
from diffimpact.scenes import billiard

NAMES = ("direct",)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("formulations")
    summary = study.run(out, quick=True, names=NAMES)
    assert "direct correction" in summary
    return out


@pytest.fixture(scope="module")
def timing(out):
    table = read_csv(out / "formulations-timing.csv")
    return {(NAMES[int(i)], h): {key: table[key][k] for key in table}
            for k, (i, h) in enumerate(zip(table["formulation"], table["max_step_s"]))}


@pytest.mark.slow
def test_writes_the_documented_files(out):
    assert (out / "formulations.png").stat().st_size > 10_000
    header = (out / "formulations.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "t_s"
    for name in NAMES:
        for h in study.QUICK_STEPS:
            for key in ("y_cue_m", "y_acceleration_cue_m_per_s2", "phi", "phi_dot_per_s", "x_yellow_m",
                        "z_cue_m", "z_yellow_m"):
                assert f"{key}_{name}_{study.step_tag(h)}" in header
    assert (out / "formulations-timing.csv").read_text().splitlines()[0] == ",".join(study.TIMING_COLUMNS)
    events = read_csv(out / "formulations-events.csv")
    names = billiard.contact_names()
    first = names[int(events["force"][0])][int(events["member"][0])]
    assert first == "cue–yellow" and events["onset"][0] == 1


@pytest.mark.slow
def test_the_shot_stays_symmetric_about_the_x_axis(timing):
    # Only x-velocity at the start and a rack symmetric about y = 0: the cue ball stays on the axis and the
    # blue and red balls mirror each other (the paper's figs. 12-15 show formulations that break this).
    for row in timing.values():
        assert row["max_abs_y_cue_m"] <= 1e-12
        assert row["max_abs_y_acceleration_cue_m_per_s2"] <= 1e-9
        assert row["max_mirror_error_m"] <= 1e-12


@pytest.mark.slow
def test_every_run_sees_the_break(timing):
    # The cue ball strikes the yellow one, which strikes the two behind it; the cue and the yellow ball then
    # bounce on the cloth. The yellow ball ends moving back (-x), as the paper's compliant model found for
    # this alpha (its fig. 11).
    for row in timing.values():
        assert row["events"] >= 8
        assert -0.2 < row["yellow_vx_end_m_per_s"] < -0.1


@pytest.mark.slow
def test_the_step_limit_is_kept(timing):
    large, small = study.QUICK_STEPS
    for name in NAMES:
        assert timing[(name, small)]["steps"] > timing[(name, large)]["steps"]
        assert timing[(name, small)]["steps"] >= study.QUICK_DURATION / small


@pytest.mark.slow
def test_times_are_recorded(timing):
    for row in timing.values():
        assert np.isfinite(row["compile_s"]) and row["compile_s"] >= 0
        assert 0 < row["run_s"] < 60


def test_step_limit_is_validated():
    p = billiard.Parameters()
    model, state = billiard.model(p, balls=2), billiard.initial_state(p, balls=2)
    for bad in (0.0, -1e-3):
        with pytest.raises(ValueError, match="max_step"):
            simulate(model, state, [0.0, 0.1], LagrangeMultipliers(), max_step=bad)
    with pytest.raises(ValueError, match="max_step"):
        simulate(model, state, [0.0, 0.1], LagrangeMultipliers(), max_step=1e-3, dt=1e-3)


def test_unknown_formulation_name_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="names"):
        study.run(tmp_path, quick=True, names=("lagrange", "penalty"))
