"""The ``damping`` fit (quick): fitting.fit reproduces the hand-written Gauss–Newton α, β; outputs; resume."""

import json

import numpy as np
import pytest

from diffimpact.impact import damping as od
from diffimpact.reproduce import damping as reproduce
from diffimpact.reproduce._io import read_csv
from fitting import damping
from fitting.checkpoint import Checkpoint
from fitting.data import DataError


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    """A user's file: 7 exponents of the shipped grid, columns reordered, one bad row."""
    grid = read_csv(damping.DEFAULT_DATA)
    keep = np.isin(grid["n"], np.unique(grid["n"])[::16])
    lines = ["c_opt_unit,e,n"] + [f"{float(c)!r},{float(e)!r},{float(n)!r}" for n, e, c in zip(grid["n"][keep], grid["e"][keep], grid["c_opt_unit"][keep])]
    lines.insert(5, "0.5,-0.2,1.5")
    path = tmp_path_factory.mktemp("user") / "my_damping.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, grid, keep


@pytest.fixture(scope="module")
def outcome(user_file, tmp_path_factory):
    path, _, _ = user_file
    out = tmp_path_factory.mktemp("out")
    summary = damping.run(out, quick=True, data=path, drop_bad_rows=True, progress=False)
    return out, summary


def test_per_n_fits_agree_with_the_gauss_newton_of_the_reproduction(outcome, user_file):
    out, _ = outcome
    _, grid, keep = user_file
    table = read_csv(out / "damping.csv")
    assert table["n"].size == 7
    for i, n in enumerate(table["n"]):
        row = keep & (grid["n"] == n) & (grid["e"] < 1.0)
        alpha, beta, correlation, *_ = reproduce._fit_alpha_beta(grid["e"][row], grid["c_opt_unit"][row])
        np.testing.assert_allclose([table["alpha"][i], table["beta"][i]], [alpha, beta], rtol=1e-6)
        np.testing.assert_allclose(table["correlation"][i], correlation, rtol=1e-6)
    # Near the paper's values (eqs. (46)–(47)) but not on them: α and β are nearly degenerate.
    assert np.all(table["correlation"] > 0.999)
    np.testing.assert_allclose(table["alpha_paper"], od.paper_alpha(table["n"]))
    assert np.max(np.abs(table["beta"] - table["beta_paper"])) < 0.07
    assert np.all((table["alpha_se"] > 0) & (table["alpha_se"] < 0.02 * table["alpha"]))


def test_beta_curve_agrees_with_the_reproduction_and_outputs_are_written(outcome):
    out, summary = outcome
    table = read_csv(out / "damping.csv")
    record = json.loads((out / "damping.json").read_text())
    expected = reproduce._fit_beta_curve(table["n"], table["beta"])
    np.testing.assert_allclose(record["beta_power_a_b_c"]["ours"], expected, rtol=1e-6)
    np.testing.assert_allclose(record["alpha_quartic_highest_power_first"]["ours"], np.polyfit(table["n"], table["alpha"], 4), rtol=1e-9)
    assert record["beta_power_a_b_c"]["paper_eq_47"] == list(od.PAPER_BETA)
    assert record["per_n_fits_converged"]
    # The bad row (e < 0, line 6 of the file) was dropped and reported, not lost silently.
    assert len(record["data"]["dropped"]) == 1 and ":6: e = -0.2 is negative" in record["data"]["dropped"][0]
    assert "dropped 1" in summary
    assert (out / "damping.png").stat().st_size > 10_000
    assert not (out / "damping.checkpoint.json").exists()


def test_bad_rows_fail_without_drop(user_file, tmp_path):
    with pytest.raises(DataError, match=r"my_damping.csv:6: e = -0.2"):
        damping.run(tmp_path, quick=True, data=user_file[0], progress=False)


def test_an_interrupted_run_resumes_from_its_checkpoint(outcome, user_file, tmp_path):
    out, _ = outcome
    path = user_file[0]
    columns, _ = damping.load_data(path, drop_bad_rows=True)
    table = read_csv(out / "damping.csv")
    meta = {"data_sha256": "x"}
    checkpoint = Checkpoint(tmp_path / "c.json", meta)
    # Six exponents finished before the interruption; the stored values are marked to prove they are reused.
    for i, n in enumerate(table["n"][:-1]):
        checkpoint.save(f"{n:.17g}", {"alpha": table["alpha"][i], "beta": table["beta"][i], "alpha_se": 1.0, "beta_se": 1.0,
                                      "correlation": 0.5, "rms": 0.0, "converged": True, "points": 1})
    resumed = Checkpoint(tmp_path / "c.json", meta)
    assert resumed.resumed == 6
    fits = damping.study(columns, quick=True, checkpoint=resumed, progress=False)
    np.testing.assert_array_equal(fits["alpha_se"][:-1], 1.0)
    np.testing.assert_allclose(fits["alpha"], table["alpha"], rtol=1e-9)
    assert len(json.loads((tmp_path / "c.json").read_text())["results"]) == 7
    # Another data file (different meta) does not reuse the results.
    assert Checkpoint(tmp_path / "c.json", {"data_sha256": "y"}).resumed == 0
