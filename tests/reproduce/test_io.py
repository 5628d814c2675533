"""``diffimpact.reproduce._io``: the studies' CSV files read back as they were written; their JSON files strict."""

import json

import numpy as np
import pytest

from diffimpact.reproduce._io import read_csv, write_csv, write_json


def test_csv_round_trip_keeps_numbers_strings_and_a_single_row(tmp_path):
    for rows in (1, 3):
        columns = {"ball": np.array(["cue", "yellow", "blue"][:rows]), "x_m": np.linspace(0.1, 0.3, rows) / 3}
        write_csv(tmp_path / "table.csv", columns)
        back = read_csv(tmp_path / "table.csv")
        assert list(back) == ["ball", "x_m"]
        assert back["ball"].shape == back["x_m"].shape == (rows,)
        assert list(back["ball"]) == list(columns["ball"])
        np.testing.assert_array_equal(back["x_m"], columns["x_m"])  # written with every digit


def test_json_is_strict_with_null_for_numbers_that_are_not_finite(tmp_path):
    data = {"se": [1.5, np.nan, np.inf], "loss": -np.inf, "pair": (np.float64(2.0), np.float32("nan")), "n": 3}
    text = write_json(tmp_path / "record.json", data).read_text()
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in {text}")) == {
        "se": [1.5, None, None], "loss": None, "pair": [2.0, None], "n": 3}
