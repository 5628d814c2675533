"""The [Poursina 2020] studies on their --quick grids: files written, physics asserted on the output."""

import jax
import numpy as np
import pytest

import diffimpact as di
from diffimpact.cli import main
from diffimpact.impact import damping as od
from diffimpact.io import data_file, read_csv
from diffimpact.reproduce import damping


@pytest.mark.slow  # a study of hundreds of exact solves; eq. (49)'s scaling is checked in the default run by
# tests/impact/test_damping.py::test_exact_scales_as_eq_49
def test_scaling_slopes_match_eq_35(tmp_path):
    assert main(["reproduce", "damping-scaling", "--quick", "--out", str(tmp_path)]) == 0
    table = read_csv(tmp_path / "damping-scaling.csv")
    for name in ("mass", "velocity", "stiffness"):
        np.testing.assert_allclose(table[f"slope_{name}"], table[f"slope_{name}_theory"], atol=1e-8)
    assert (tmp_path / "damping-scaling.png").stat().st_size > 10_000


def test_kelvin_voigt_study_closed_form_matches_ode():
    study = damping.kelvin_voigt_study(quick=True)
    for method in ("paper", "improved"):
        result = study[method]
        assert np.max(np.abs(result["e_ode"] - result["e_exact"])) < 1e-9
        assert np.any(result["damping_ratio"] > 1) and np.any(result["damping_ratio"] < 1)  # both branches
    paper_error = np.max(np.abs(study["paper"]["e_exact"] - study["e"]))
    improved_error = np.max(np.abs(study["improved"]["e_exact"] - study["e"]))
    assert improved_error * 10 < paper_error


@pytest.mark.slow  # a study of hundreds of exact solves
def test_verification_study_orders_the_methods():
    study = damping.verification_study(quick=True)
    assert study["exact"].max() < 1e-8
    assert study["improved"].max() * 10 < study["paper"].max()


@pytest.mark.slow  # a study of hundreds of exact solves
def test_improved_refit_reproduces_the_coefficients_in_use():
    # The quick grid is coarser than the one that made the coefficients, so they agree
    # only approximately; the fitted form must still beat eq. (49) tenfold.
    coefficients = damping.improved_fit(quick=True)
    in_use = np.asarray(damping.od.IMPROVED_COEFFICIENTS)
    assert np.max(np.abs(coefficients - in_use)) < 1e-2
    comparison = damping.improved_comparison(quick=True)
    assert comparison["improved"].max() * 10 < comparison["paper"].max()


@pytest.mark.slow  # a study of hundreds of exact solves; eq. (34) and the round trip through eq. (23) are checked in
# the default run by tests/impact/test_damping.py (test_lambda_is_a_slack_variable_of_eq_34,
# test_exact_reproduces_restitution_in_an_independent_solver)
def test_lambda_grid_solves_eq_23_and_obeys_eq_34(tmp_path):
    assert main(["reproduce", "damping-lambda", "--quick", "--out", str(tmp_path)]) == 0
    grid = read_csv(tmp_path / "damping_lambda.csv")
    assert set(grid) == {"n", "e", "lambda", "c_opt_unit"}
    n, e, c = grid["n"], grid["e"], grid["c_opt_unit"]
    # eq. (34): λ = e ĉ / ((n + 1)/2)^(n/(n+1))
    np.testing.assert_allclose(grid["lambda"], e * c / ((n + 1) / 2) ** (n / (n + 1)), rtol=1e-12)
    # each ĉ gives back its e in a forward solve of the unit impact (eq. (23)); e = 1 needs c = 0
    pick = np.arange(0, n.size, 37)
    e_out = damping.restitution_out(c[pick], 1.0, 1.0, 1.0, n[pick])
    np.testing.assert_allclose(e_out, e[pick], rtol=1e-7)
    assert np.all(c[e == 1.0] == 0.0)
    assert (tmp_path / "damping-lambda.png").stat().st_size > 10_000


def test_shipped_lambda_grid_and_the_exact_method_solve_eq_23_to_eq_24():
    # data/damping_lambda.csv on a sample of rows, the last below e = 1 (where |∂ ln e/∂ ln ĉ| ≈ 1 − e is smallest, so
    # that ĉ's differences are largest) among them: its ĉ gives back e in the unit solve to eq. (24)'s 1e-8, and the
    # exact method's ĉ to the solve's own 2 UNIT_RTOL
    grid = read_csv(data_file("damping_lambda.csv"))
    rows = np.concatenate([np.arange(0, grid["n"].size, 997), np.arange(0, 100, 11) * 600 + 598])
    n, e, shipped = (grid[k][rows] for k in ("n", "e", "c_opt_unit"))
    solved = e < 1
    exact = np.asarray(di.optimal_damping(1.0, 1.0, 1.0, n, e))
    np.testing.assert_array_equal(exact[~solved], shipped[~solved])  # 0 at e = 1
    restitution = jax.jit(jax.vmap(od.unit_restitution))
    np.testing.assert_allclose(np.asarray(restitution(shipped[solved], n[solved])), e[solved], rtol=1e-8)
    np.testing.assert_allclose(np.asarray(restitution(exact[solved], n[solved])), e[solved], rtol=2 * od.UNIT_RTOL)


def test_the_batches_show_their_bar_unless_progress_is_false(capsys):
    for progress in (True, False):
        e_out = damping.restitution_out(0.0, 1.0, 1.0, 1.0, np.array([1.0, 1.5]), desc="undamped", progress=progress)
        np.testing.assert_allclose(e_out, 1.0, rtol=1e-7)
        assert ("undamped" in capsys.readouterr().err) == progress
