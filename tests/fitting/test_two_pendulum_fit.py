"""``diffimpact fit two-pendulum``: e and k of the eq. (50) contact recovered from θ̇1(t), θ̇2(t) of [Poursina 2020] §6."""

import json

import numpy as np
import pytest

from diffimpact.cli import main
from diffimpact.io import read_csv
from fitting import two_pendulum as tp_fit


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    # One compilation of the forward-mode fit step, shared by the --data run below.
    out = tmp_path_factory.mktemp("two-pendulum")
    assert main(["fit", "two-pendulum", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "two-pendulum.json").read_text())


@pytest.mark.slow  # the CLI fit end to end, about a minute; the fit machinery is tested in test_fit.py
def test_quick_fit_recovers_e_and_k_within_their_standard_errors(quick_run):
    out, record = quick_run
    fit = record["fit"]
    assert fit["converged"]
    assert all(abs(d) < 3.0 for d in record["deviation_in_standard_errors"].values())
    # σ = 0.01 rad/s noise: the fit's scatter matches it (reduced χ² ≈ 1).
    assert 0.6 < fit["residual_variance"] < 1.5
    # e is pinned by the velocity jump; k only by the burst samples inside the 0.4 ms contact.
    assert fit["parameters"]["restitution"]["standard_error"] < 0.01
    assert fit["parameters"]["stiffness"]["standard_error"] < 0.2 * tp_fit.TRUTH.stiffness
    assert sorted(p.name for p in out.iterdir()) == [f"two-pendulum.{x}" for x in ("csv", "json", "png")]
    assert (out / "two-pendulum.png").stat().st_size > 10_000


@pytest.mark.slow  # the CLI fit end to end, about a minute; the fit machinery is tested in test_fit.py
def test_users_file_gives_the_same_fit(quick_run, tmp_path):
    out, record = quick_run
    table = read_csv(out / "two-pendulum.csv")
    csv = tmp_path / "rates.csv"
    rows = zip(table["t_s"], table["theta1_dot_data_rad_per_s"], table["theta2_dot_data_rad_per_s"], table["sigma_rad_per_s"])
    csv.write_text("t_s,theta1_dot_rad_per_s,theta2_dot_rad_per_s,sigma_rad_per_s\n"
                   + "".join(f"{t!r},{a!r},{b!r},{s!r}\n" for t, a, b, s in ((float(x) for x in r) for r in rows)))
    assert main(["fit", "two-pendulum", "--quick", "--data", str(csv), "--out", str(tmp_path / "out")]) == 0
    mine = json.loads((tmp_path / "out" / "two-pendulum.json").read_text())["fit"]["parameters"]
    for name, entry in record["fit"]["parameters"].items():
        assert mine[name]["value"] == pytest.approx(entry["value"], rel=1e-6)


@pytest.mark.slow  # needs the quick run's compilation (the truth's events are simulated with the same shapes)
def test_the_full_record_holds_three_impacts(quick_run):
    # The CLI's default 8-s record: three impacts, whose onsets, separations and the gap's turning points between
    # them must fit in MAX_EVENTS (8 did not: the full fit failed with "more than max_events").
    onsets = tp_fit.true_onsets(quick=False)
    assert len(onsets) == 3
    # the first impact does not depend on the horizon (the quick run's, 1.6 s), and the fit's first stage holds it
    assert onsets[0] == pytest.approx(tp_fit.true_onsets(quick=True)[0], rel=tp_fit.TOLERANCE)
    assert onsets[0] < tp_fit.FIRST_WINDOW


def test_bad_rows_are_rejected_with_file_row_and_reason(tmp_path, capsys):
    csv = tmp_path / "bad.csv"
    csv.write_text("t_s,theta1_dot_rad_per_s,theta2_dot_rad_per_s,sigma_rad_per_s\n"
                   "0.1,0.0,-0.5,0.01\n0.2,nan,-1.0,0.01\n9.5,0.0,0.0,0.01\n0.3,0.1,-1.5,0\n")
    assert main(["fit", "two-pendulum", "--data", str(csv), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert f"{csv}:3: theta1_dot_rad_per_s: nan is not a finite number" in error
    assert f"{csv}:4: t_s = 9.5 s is out of range; it must be in (0, 8]" in error
    assert f"{csv}:5: sigma_rad_per_s = 0 rad/s is out of range" in error
    assert not (tmp_path / "out").exists()


def test_repeated_times_are_rejected(tmp_path):
    csv = tmp_path / "twice.csv"
    csv.write_text("t_s,theta1_dot_rad_per_s,theta2_dot_rad_per_s\n0.5,0.0,-1.0\n0.5,0.0,-1.1\n")
    with pytest.raises(ValueError, match=r"same t_s = 0.5 s"):
        tp_fit.load_data(csv)


def test_a_single_row_is_refused_naming_the_rows_the_fit_needs(tmp_path, capsys):
    csv = tmp_path / "one_row.csv"
    csv.write_text("t_s,theta1_dot_rad_per_s,theta2_dot_rad_per_s\n0.5,0.0,-1.0\n")
    assert main(["fit", "two-pendulum", "--data", str(csv), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (f"diffimpact fit two-pendulum: {csv}: the fit of k and e needs at least 2 rows "
                                       "(2 angular velocities each, for 2 parameters), got 1\n")


def test_samples_are_uniform_plus_a_burst_across_each_contact():
    onsets = [1.1424, 3.76]
    times = tp_fit.sample_times(quick=True, onsets=onsets)
    assert np.all(np.diff(times) > 0) and times[-1] == pytest.approx(tp_fit.HORIZON[True])
    burst = times[(times > onsets[0] - 2e-4) & (times < onsets[0] + 1e-3)]
    assert burst.size == tp_fit.BURST_SAMPLES
    # The burst spans the ≈ 0.38 ms contact; the second onset lies past the quick horizon.
    assert burst[0] < onsets[0] and burst[-1] > onsets[0] + 4e-4
    assert times.size == int(tp_fit.HORIZON[True] * tp_fit.SAMPLE_RATE[True]) + tp_fit.BURST_SAMPLES
