"""``diffimpact.reproduce._io``: the studies' CSV files read back as they were written."""

import numpy as np

from diffimpact.reproduce._io import read_csv, write_csv


def test_csv_round_trip_keeps_numbers_strings_and_a_single_row(tmp_path):
    for rows in (1, 3):
        columns = {"ball": np.array(["cue", "yellow", "blue"][:rows]), "x_m": np.linspace(0.1, 0.3, rows) / 3}
        write_csv(tmp_path / "table.csv", columns)
        back = read_csv(tmp_path / "table.csv")
        assert list(back) == ["ball", "x_m"]
        assert back["ball"].shape == back["x_m"].shape == (rows,)
        assert list(back["ball"]) == list(columns["ball"])
        np.testing.assert_array_equal(back["x_m"], columns["x_m"])  # written with every digit
