"""The PLUS reproductions end to end through the CLI (``--quick``), against the paper's numbers.

Each reproduction runs once per module (a module-scoped fixture) and the tests read its CSV.
"""

import numpy as np
import pytest

from diffimpact.cli import main
from diffimpact.io import read_csv


def _reproduce(name, tmp_path_factory):
    out = tmp_path_factory.mktemp(name)
    assert main(["reproduce", name, "--quick", "--out", str(out)]) == 0
    assert (out / f"{name}.png").stat().st_size > 10_000
    return read_csv(out / f"{name}.csv")


@pytest.fixture(scope="module")
def brick(tmp_path_factory):
    return _reproduce("plus-brick", tmp_path_factory)


@pytest.fixture(scope="module")
def cradle(tmp_path_factory):
    return _reproduce("plus-cradle", tmp_path_factory)


@pytest.mark.slow  # the compliant brick's compile is most of it; Example 1's states and the interval counts of
# Fig. 10 are checked in the default run by tests/impulse/test_plus.py
def test_plus_brick_reproduces_the_states_and_interval_counts_of_example_1(brick):
    table = brick
    plus = table["model"] == 0
    main_runs = plus & (table["max_direction_change_rad"] == 0.01)  # μ = 0.325 twice: Fig. 8 and Fig. 10
    # Fig. 8: sliding throughout / rolling in expansion / rolling in compression
    first_roll = []
    for mu in (0.125, 0.225, 0.325):
        rows = main_runs & (table["friction"] == mu)
        rolls = rows & (table["friction_state"] == 1)
        first_roll.append(int(table["round"][rolls][0]) if rolls.any() else 0)
    assert first_roll == [0, 2, 1]
    # Fig. 10: 116, 11 and 8 intervals (rows are the start and the end of each interval)
    sweep = plus & (table["friction"] == 0.325)
    counts = [int(np.sum(sweep & (table["max_direction_change_rad"] == theta))) - 1 for theta in (0.15, 0.25)]
    assert counts == [11, 8]
    assert int(np.sum(sweep & (table["max_direction_change_rad"] == 0.01))) == 2 * 117
    # beside the compliant brick (μ = 0.325): total impulses within 0.5 %, both ending in rolling
    compliant = table["model"] == 1
    last = np.flatnonzero(compliant)[-1]
    plus_last = np.flatnonzero(main_runs & (table["friction"] == 0.325))[116]
    names = ["impulse_x_N_s", "impulse_y_N_s", "impulse_z_N_s"]
    compliant_total = np.array([table[n][last] for n in names])
    plus_total = np.array([table[n][plus_last] for n in names])
    np.testing.assert_allclose(plus_total, compliant_total, atol=5e-3 * np.abs(compliant_total).max())
    assert abs(table["v_x_m_s"][last]) < 0.01 and abs(table["v_y_m_s"][last]) < 0.01


def _final_velocities(table, row):
    rows = np.flatnonzero(table["row"] == row)
    return np.array([table[f"v{b}_m_s"][rows[-1]] for b in range(1, 6)]), rows


def test_plus_cradle_takes_the_five_rounds_of_table_2_and_only_it_approximates_the_compliant_row(cradle):
    table = cradle
    # Table 2: pair k compresses in round k and expands in round k + 1, observing otherwise (one interval a round)
    plus_final, rows = _final_velocities(table, 1)
    rows = rows[1:]
    assert table["round"][rows].tolist() == [1, 2, 3, 4, 5]
    states = np.array([[table[f"state_{k}{k + 1}"][r] for k in range(1, 5)] for r in rows]).T
    expected = np.zeros((4, 5))
    for k in range(4):
        expected[k, k], expected[k, k + 1] = 1, 3  # compressing, expanding
    np.testing.assert_array_equal(states, expected)
    # row B: ball 5 leaves alone at the striker's speed; row C: the four move as one ball (e = 1)
    np.testing.assert_allclose(plus_final, [0, 0, 0, 0, -2], atol=1e-12)
    model_c, _ = _final_velocities(table, 2)
    np.testing.assert_allclose(model_c, [1.2, -0.8, -0.8, -0.8, -0.8], atol=1e-12)
    # row A: undamped Hertz conserves momentum and energy; the last ball takes nearly all of it
    compliant, rows = _final_velocities(table, 0)
    assert abs(compliant.sum() + 2.0) < 1e-9 and abs(0.5 * np.sum(compliant ** 2) - 2.0) < 1e-6
    assert -2.0 < compliant[4] < -1.95 and np.all(np.abs(compliant[:4]) < 0.3)
    assert np.linalg.norm(plus_final - compliant) < 0.2 * np.linalg.norm(model_c - compliant)  # 0.30 vs 2.06 m/s
    # the compliant contacts close in order along the row
    first_contact = [table["time_s"][rows][np.argmax(table[f"penetration_{k}{k + 1}_m"][rows] > 0)] for k in range(1, 5)]
    assert np.all(np.diff(first_contact) > 0)


@pytest.fixture(scope="module")
def four_points(tmp_path_factory):
    return _reproduce("plus-brick-four-points", tmp_path_factory)


def _point_columns(table, rows, name):
    return np.array([table[f"p{k}_{name}"][rows] for k in range(1, 5)]).T


def test_plus_brick_four_points_keeps_symmetry_and_rolls_together_in_expansion(four_points):
    table = four_points
    rows = np.flatnonzero(table["model"] == 0)
    # Example 2: all four points slide from the start and pass to rolling together in the common expansion
    states = _point_columns(table, rows[1:], "friction_state")
    assert states.tolist() == [[2] * 4, [2] * 4, [1] * 4]
    assert table["round"][rows[1:]].tolist() == [1, 2, 2]
    impulse = np.stack([_point_columns(table, rows[-1:], f"impulse_{a}_N_s")[0] for a in "xyz"], 1)
    # symmetry about the sliding plane to round-off; no share of the twisting null space (minimum norm)
    np.testing.assert_allclose(impulse[[0, 1]], impulse[[2, 3]], rtol=0, atol=1e-12)
    assert abs(impulse[:, 2] @ [1, -1, -1, 1]) < 1e-12 and np.all(np.abs(impulse[:, 1]) < 1e-12)
    # compression stops the fall (Σπ_z = m 8.84 N s, 2 kg) and Poisson adds e_min = 0.414 of it at every point;
    # the friction moment (μ = 0.2, lever 0.3 m under the centre) loads the leading pair (0.4 m ahead) more:
    # π_lead (0.4 − 0.3 μ) = π_trail (0.4 + 0.3 μ), the moment balance about y that ends compression with ω_y = 0
    # (expansion repeats the shares times e_min)
    np.testing.assert_allclose(impulse[:, 2].sum(), 1.414 * 2.0 * 8.84, rtol=1e-9)
    np.testing.assert_allclose(impulse[0, 2] / impulse[1, 2], (0.4 + 0.06) / (0.4 - 0.06), rtol=1e-9)
    slip = _point_columns(table, rows[-1:], "slip_x_m_s")[0]
    np.testing.assert_allclose(slip, 0.0, atol=1e-12)  # rolling at the end
    # a tilt of 1e-9 rad: with the proximity tolerance the same four-point impact, without it one point alone
    tilted = np.flatnonzero(table["model"] == 2)[-1]
    np.testing.assert_allclose([table[f"p{k}_impulse_z_N_s"][tilted] for k in range(1, 5)], impulse[:, 2],
                               rtol=1e-6)
    alone = np.flatnonzero(table["model"] == 3)[-1]
    assert np.sum(np.isfinite([table[f"p{k}_impulse_z_N_s"][alone] for k in range(1, 5)])) == 1


@pytest.mark.slow  # the compliant brick on four spheres takes half a minute
def test_plus_brick_four_points_beside_the_compliant_brick(tmp_path):
    assert main(["reproduce", "plus-brick-four-points", "--out", str(tmp_path)]) == 0
    table = read_csv(tmp_path / "plus-brick-four-points.csv")
    plus, compliant = np.flatnonzero(table["model"] == 0)[-1], np.flatnonzero(table["model"] == 1)
    for axis, tolerance in (("z", 0.03), ("x", 0.1)):
        ours = np.array([table[f"p{k}_impulse_{axis}_N_s"][plus] for k in range(1, 5)])
        theirs = np.array([table[f"p{k}_impulse_{axis}_N_s"][compliant[-1]] for k in range(1, 5)])
        np.testing.assert_allclose(ours, theirs, rtol=tolerance)
    # Fig. 13: the friction moment drives the leading spheres deeper
    depth = _point_columns(table, compliant, "penetration_m")
    assert depth[:, 0].max() > 1.1 * depth[:, 1].max()
