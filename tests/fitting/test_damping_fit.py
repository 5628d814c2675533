"""The ``damping`` fit (quick): fitting.fit against SciPy's curve_fit and the published fits; outputs; resume."""

import json

import numpy as np
import pytest

from diffimpact.impact import damping as od
from diffimpact.io import read_csv
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


def curve_fit_alpha_beta(e, c):
    """Independent least squares of eq. (45) with SciPy: (α, β) and their correlation."""
    from scipy.optimize import curve_fit

    values, covariance = curve_fit(lambda e, a, b: a * (e**b - 1.0), e, c, p0=(2.0, -0.3), xtol=1e-15, ftol=1e-15)
    return values, covariance[0, 1] / np.sqrt(covariance[0, 0] * covariance[1, 1])


def test_per_n_fits_agree_with_scipy_curve_fit(outcome, user_file):
    out, _ = outcome
    _, grid, keep = user_file
    table = read_csv(out / "damping.csv")
    assert table["n"].size == 7
    for i, n in enumerate(table["n"]):
        row = keep & (grid["n"] == n) & (grid["e"] < 1.0)
        values, correlation = curve_fit_alpha_beta(grid["e"][row], grid["c_opt_unit"][row])
        np.testing.assert_allclose([table["alpha"][i], table["beta"][i]], values, rtol=1e-6)
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
    from scipy.optimize import curve_fit

    expected, _ = curve_fit(lambda n, a, b, c: a * n**b + c, table["n"], table["beta"], p0=od.PAPER_BETA, xtol=1e-15, ftol=1e-15)
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


@pytest.fixture(scope="module")
def shipped_grid():
    return read_csv(damping.DEFAULT_DATA)


def fit_nearest(grid, target):
    n = np.unique(grid["n"])[np.argmin(np.abs(np.unique(grid["n"]) - target))]
    row = (grid["n"] == n) & (grid["e"] < 1.0)
    return n, damping.fit_alpha_beta(grid["e"][row], grid["c_opt_unit"][row], n)


def test_the_published_fit_at_n_1_2_is_reproduced(shipped_grid):
    # [Poursina 2020] fig. 6 caption: c_opt = 1.59 (e^−0.3794 − 1) for n = 1.2.
    n, result = fit_nearest(shipped_grid, 1.2)
    assert abs(n - 1.2) < 0.006
    alpha, beta = result.values
    assert alpha == pytest.approx(1.59, rel=5e-3)
    assert beta == pytest.approx(-0.3794, rel=5e-3)


def test_different_alpha_beta_pairs_give_nearly_the_same_curve(shipped_grid):
    # [Poursina 2020] fig. 6 caption for n = 1.8: 2.47 (e^−0.2323 − 1). Our fit finds a different
    # (α, β) pair; the two curves still agree to about 1 % of c_opt over the fitted range.
    _, result = fit_nearest(shipped_grid, 1.8)
    alpha, beta = result.values
    e = np.linspace(0.45, 0.99, 200)
    ours, paper = alpha * (e**beta - 1), 2.47 * (e**-0.2323 - 1)
    assert abs(alpha - 2.47) > 0.1  # the pairs really differ ...
    assert np.max(np.abs(ours - paper) / ours) < 0.02  # ... the curves hardly do


def test_the_json_names_the_data_file_by_its_absolute_path(outcome, user_file):
    out, _ = outcome
    assert json.loads((out / "damping.json").read_text())["data"]["file"] == str(user_file[0].resolve())


def test_a_resumed_standard_error_that_was_not_finite_is_nan_again(outcome, user_file, tmp_path):
    out, _ = outcome
    columns, _ = damping.load_data(user_file[0], drop_bad_rows=True)
    table = read_csv(out / "damping.csv")
    checkpoint = Checkpoint(tmp_path / "c.json", {})
    for i, n in enumerate(table["n"]):
        checkpoint.save(f"{n:.17g}", {"alpha": table["alpha"][i], "beta": table["beta"][i], "alpha_se": np.nan,
                                      "beta_se": np.inf, "correlation": 0.5, "rms": 0.0, "converged": True,
                                      "points": 1})
    fits = damping.study(columns, quick=True, checkpoint=Checkpoint(tmp_path / "c.json", {}), progress=False)
    assert np.all(np.isnan(fits["alpha_se"])) and np.all(np.isnan(fits["beta_se"]))


@pytest.mark.parametrize(
    ("e", "c", "shortfall"),
    [
        ([0.5, 0.6, 0.7, 0.8], [0.0, 0.0, 0.0, 0.0], "has ĉ = 0 at every e < 1"),
        ([0.5, 0.6, 1.0], [0.3, 0.2, 0.0], "has 2 row(s) with e < 1"),
        ([0.5, 0.5, 0.5], [0.3, 0.3, 0.3], "has e = 0.5 only"),
    ],
)
def test_rows_that_do_not_determine_alpha_and_beta_are_refused(e, c, shortfall):
    with pytest.raises(ValueError) as error:
        damping.fit_alpha_beta(e, c, 1.5)
    assert str(error.value) == f"n = 1.5 {shortfall}; {damping.PER_N_REQUIREMENT}"


def test_a_file_whose_exponents_fall_short_names_them(tmp_path):
    grid = read_csv(damping.DEFAULT_DATA)
    path = tmp_path / "short.csv"
    path.write_text("n,e,c_opt_unit\n1.5,0.5,0.3\n" + "".join(f"{1 + k / 10},1.0,0.0\n" for k in range(7)))
    with pytest.raises(DataError) as error:
        damping.load_data(path)
    assert str(error.value) == (f"{path}: {damping.PER_N_REQUIREMENT}; n = 1 has 0 row(s) with e < 1; n = 1.1 has 0 "
                                "row(s) with e < 1; n = 1.2 has 0 row(s) with e < 1; n = 1.3 has 0 row(s) with e < 1; "
                                "n = 1.4 has 0 row(s) with e < 1; and 2 more n")
    keep = np.isin(grid["n"], np.unique(grid["n"])[:5])
    rows = zip(grid["n"][keep], grid["e"][keep], grid["c_opt_unit"][keep])
    path.write_text("n,e,c_opt_unit\n" + "".join(f"{float(n)!r},{float(e)!r},{float(c)!r}\n" for n, e, c in rows))
    with pytest.raises(DataError, match=r"short.csv: the quartic α\(n\) needs more than 5 different n, got 5$"):
        damping.load_data(path)


def test_a_per_n_fit_that_does_not_converge_is_a_warning_line(monkeypatch, user_file, tmp_path):
    monkeypatch.setattr(damping, "MAX_STEPS", 2)
    summary = damping.run(tmp_path, quick=True, data=user_file[0], drop_bad_rows=True, progress=False)
    warnings = [line for line in summary.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 8
    assert warnings[0] == ("warning: the α, β fit at n = 1 did not converge (no tolerance met); its values and "
                           "standard errors are not reliable")
    assert warnings[-1].startswith("warning: the β(n) = a n^b + c fit did not converge")
