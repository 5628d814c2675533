"""The PLUS reproductions end to end through the CLI (``--quick``), against the paper's numbers."""

import numpy as np

from diffimpact.cli import main
from diffimpact.reproduce._io import read_csv


def test_plus_brick_reproduces_the_states_and_interval_counts_of_example_1(tmp_path):
    assert main(["reproduce", "plus-brick", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "plus-brick.png").stat().st_size > 10_000
    table = read_csv(tmp_path / "plus-brick.csv")
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
