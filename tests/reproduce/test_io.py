"""``diffimpact.io``: the shipped data files found by name; the studies' CSV files read back as they were written;
their JSON files strict; batches without a progress bar when asked."""

import json
from pathlib import Path

import numpy as np
import pytest

from diffimpact.io import data_file, map_chunks, read_csv, write_csv, write_json


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


def test_data_file_finds_each_shipped_file_inside_the_package_and_names_them_for_a_wrong_name():
    import diffimpact

    for name in ("damping_lambda.csv", "mathavan2009_cut_shots.csv", "mathavan2010_cushion_rebound.csv",
                 "marlow_ball_ball_friction.csv"):
        path = data_file(name)
        assert path.is_file() and path.parent == Path(diffimpact.__file__).parent / "data"
        assert read_csv(path)
    with pytest.raises(ValueError, match="name must be one of the data files .*damping_lambda.csv.*; got 'x.csv'"):
        data_file("x.csv")


def test_map_chunks_shows_a_bar_unless_progress_is_false(capsys):
    for progress in (True, False):
        doubled = map_chunks(lambda x: 2 * x, np.arange(5.0), chunk=2, desc="doubling", progress=progress)
        np.testing.assert_array_equal(doubled, 2 * np.arange(5.0))
        assert ("doubling" in capsys.readouterr().err) == progress
