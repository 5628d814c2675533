"""[Gismeros Moreno 2022] §4.1: the four-ball break on the table and the α sweep (quick run, one formulation).

The quick run takes Baumgarte alone, the α sweep's formulation, so that one compilation (about 35 s) serves
both studies. The formulations' drift is compared on the double pendulum (tests/scenes/test_double_pendulum.py).
The study's run is a long reproduction (slow); the validation of its arguments and the rack of the α sweep stay
in every run.
"""

import itertools

import numpy as np
import pytest

from diffimpact.io import read_csv
from diffimpact.multibody import AdaptiveSteps, FixedSteps, LagrangeMultipliers, simulate
from diffimpact.reproduce import formulations as study
from diffimpact.scenes import billiard

NAMES = (study.SWEEP_FORMULATION,)
P = billiard.Parameters()
CONTACT_NAMES = billiard.table_contact_names(study.BALLS)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("formulations")
    summary = study.run(out, quick=True, names=NAMES)
    assert "Baumgarte" in summary and "α sweep" in summary
    return out


@pytest.fixture(scope="module")
def timing(out):
    table = read_csv(out / "formulations-timing.csv")
    return {(NAMES[int(i)], h, span): {key: table[key][k] for key in table}
            for k, (i, h, span) in enumerate(zip(table["formulation"], table["max_step_s"], table["duration_s"]))}


@pytest.fixture(scope="module")
def saved(out):
    return read_csv(out / "formulations.csv")


@pytest.fixture(scope="module")
def events(out):
    table = read_csv(out / f"formulations-events-{NAMES[0]}.csv")
    names = [CONTACT_NAMES[int(f)][int(m)] for f, m in zip(table["force"], table["member"])]
    return table, names


def _centre(saved, ball, name=NAMES[0]):
    return np.stack([saved[f"{axis}_{ball}_m_{name}"] for axis in "xyz"], axis=1)


def _distance_to_polyline(point, vertices):
    start, end = vertices[:-1], vertices[1:]
    along = end - start
    fraction = np.clip(np.sum((point - start) * along, axis=1) / np.sum(along**2, axis=1), 0.0, 1.0)
    return np.linalg.norm(point - (start + fraction[:, None] * along), axis=1).min()


@pytest.mark.slow
def test_writes_the_documented_files(out):
    for png in ("formulations.png", "formulations-alpha.png"):
        assert (out / png).stat().st_size > 10_000
    for path in ("formulations.csv", "formulations-small-step.csv"):
        header = (out / path).read_text().splitlines()[0].split(",")
        assert header[0] == "t_s"
        for name in NAMES:
            for ball in billiard.BALLS:
                assert {f"{axis}_{ball}_m_{name}" for axis in "xyz"} <= set(header)
            for key in ("y_acceleration_cue_m_per_s2", "phi", "phi_dot_per_s", "mirror_error_m"):
                assert f"{key}_{name}" in header
    assert (out / "formulations-timing.csv").read_text().splitlines()[0] == ",".join(study.TIMING_COLUMNS)
    assert (out / "formulations-alpha-summary.csv").read_text().splitlines()[0] == ",".join(study.ALPHA_COLUMNS)
    header = (out / "formulations-alpha.csv").read_text().splitlines()[0].split(",")
    assert header == ["t_s"] + [f"{key}_a{k}" for k in range(len(study.QUICK_ALPHAS))
                                for key in ("z_rise_cue_m", "z_rise_yellow_m", "x_yellow_m")]


@pytest.mark.slow
def test_the_shot_stays_symmetric_about_the_x_axis(timing, saved, events):
    # Only x-velocity at the start and a rack symmetric about y = 0: the cue ball stays on the axis and the blue
    # and red balls mirror each other, exactly until the first cushion contact (the paper's figs. 12-15 show
    # formulations that break this); from there the cushion's arithmetic breaks it at round-off.
    table, names = events
    first_cushion = table["t_s"][[name.endswith("cushion") for name in names]].min()
    before = saved["t_s"] < first_cushion
    mirror = saved[f"mirror_error_m_{NAMES[0]}"]
    assert before.sum() > 100 and np.all(mirror[before] == 0.0)
    assert mirror.max() <= 1e-9
    for row in timing.values():
        assert row["max_abs_y_cue_m"] == 0.0 and row["max_abs_y_acceleration_cue_m_per_s2"] == 0.0


@pytest.mark.slow
def test_cushion_events_name_the_ball_and_cushion_that_touch(saved, events):
    # Every ball–cushion onset names a ball whose centre is then about a radius from the named cushion's nose,
    # and nearer to it than to any other cushion. The quick run reaches the back balls' first cushion.
    table, names = events
    cushions = np.asarray(billiard.table_cushions(P))
    t = saved["t_s"]
    onsets = [(time, name) for time, name, force, onset in zip(table["t_s"], names, table["force"], table["onset"])
              if int(force) == study.CUSHION_FORCE and onset == 1]
    assert len(onsets) >= 2
    for time, name in onsets:
        ball, side = name.removesuffix(" cushion").split("–")
        centre = _centre(saved, ball)[np.argmin(np.abs(t - time)), :2]
        distances = [_distance_to_polyline(centre, vertices) for vertices in cushions]
        assert int(np.argmin(distances)) == billiard.CUSHIONS.index(side)
        assert abs(distances[billiard.CUSHIONS.index(side)] - P.radius) < 0.01


@pytest.mark.slow
def test_the_balls_move_as_their_events_say(saved, events):
    # A ball at rest stays where it is until its first contact with another ball; a ball without cushion events
    # stays a radius clear of every cushion; between its events with other balls and cushions the yellow ball
    # rolls or slides on the cloth, so its x runs one way.
    table, names = events
    t = saved["t_s"]
    cushions = np.asarray(billiard.table_cushions(P))
    for ball in billiard.BALLS[1:]:
        touches = table["t_s"][[ball in name.split("–") for name in names]]
        centre = _centre(saved, ball)
        resting = t < touches.min()
        assert resting.sum() > 100 and np.all(centre[resting, :2] == centre[0, :2])
        assert np.abs(centre[resting, 2] - centre[0, 2]).max() < 1e-9  # on the undamped cloth: round-off oscillation
    for ball in billiard.BALLS:
        if not any(name.startswith(f"{ball}–") and name.endswith("cushion") for name in names):
            centre = _centre(saved, ball)[:, :2]
            clearance = min(_distance_to_polyline(c, vertices) for c in centre for vertices in cushions)
            assert clearance > P.radius
    yellow = [time for time, name in zip(table["t_s"], names)
              if "yellow" in name.removesuffix(" cushion").split("–") and not name.startswith("cloth")]
    x = saved[f"x_yellow_m_{NAMES[0]}"]
    for start, end in itertools.pairwise([*yellow, t[-1]]):
        steps = np.diff(x[(t > start) & (t < end)])
        assert np.all(steps <= 1e-12) or np.all(steps >= -1e-12)


@pytest.mark.slow
def test_the_step_limit_is_kept(timing):
    large, small = study.QUICK_STEPS
    for name in NAMES:
        long, window = timing[(name, large, study.QUICK_DURATION)], timing[(name, small, study.QUICK_WINDOW)]
        assert window["steps"] >= study.QUICK_WINDOW / small
        assert long["steps"] >= study.QUICK_DURATION / large
        assert long["segments"] >= long["events"] / 2


@pytest.mark.slow
def test_times_are_recorded(timing):
    for row in timing.values():
        assert np.isfinite(row["compile_s"]) and row["compile_s"] >= 0
        assert 0 < row["run_s"] < 60


@pytest.mark.slow
def test_the_alpha_sweep_runs_each_spacing(out):
    summary = read_csv(out / "formulations-alpha-summary.csv")
    columns = read_csv(out / "formulations-alpha.csv")
    assert np.array_equal(summary["alpha_m"], study.QUICK_ALPHAS)
    for k in range(len(study.QUICK_ALPHAS)):
        # the yellow ball starts at the apex of the rack, every ball resting on the cloth
        assert columns[f"x_yellow_m_a{k}"][0] == P.rack_x
        assert columns[f"z_rise_cue_m_a{k}"][0] == columns[f"z_rise_yellow_m_a{k}"][0] == 0.0
        # the cue ball drives the yellow ball into both back balls
        assert summary["yellow_back_onsets_break"][k] >= 2
        assert np.isclose(summary["max_z_rise_yellow_m"][k], columns[f"z_rise_yellow_m_a{k}"].max())


@pytest.mark.parametrize("alpha", study.ALPHAS)
def test_the_alpha_sweep_spaces_the_rack_by_alpha(alpha):
    # Fig. 9: the first three balls of the rack form an equilateral triangle of side 2R + α, its apex on the
    # foot spot; the cue ball is on the head spot.
    q = np.asarray(study.alpha_state(alpha).q)
    centres = np.stack([billiard.position(q, ball) for ball in range(study.BALLS)])
    assert np.array_equal(centres[0, :2], [P.cue_x, 0.0]) and np.array_equal(centres[1, :2], [P.rack_x, 0.0])
    for i, j in itertools.combinations(range(1, study.BALLS), 2):
        assert abs(np.linalg.norm(centres[i] - centres[j]) - (2 * P.radius + alpha)) <= 1e-13


def test_step_limit_is_validated():
    p = billiard.Parameters()
    model, state = billiard.model(p, balls=2), billiard.initial_state(p, balls=2)
    for bad in (0.0, -1e-3):
        with pytest.raises(ValueError, match="max_step"):
            simulate(model, state, [0.0, 0.1], LagrangeMultipliers(), steps=AdaptiveSteps(max_step=bad))
    with pytest.raises(TypeError, match="max_step"):  # (a bound of adaptive steps)
        FixedSteps(1e-3, max_step=1e-3)


def test_unknown_formulation_name_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="names"):
        study.run(tmp_path, quick=True, names=("lagrange", "penalty"))
