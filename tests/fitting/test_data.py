"""CSV loading: each rejection reason reported as FILE:ROW: reason; dropping on request."""

import numpy as np
import pytest

from fitting.data import Column, DataError, Schema, load_csv

SCHEMA = Schema(
    "test",
    (
        Column("v_in_m_per_s", "m/s", "impact speed", minimum=0.0, exclusive_minimum=True),
        Column("e", "-", "restitution", minimum=0.0, maximum=1.0),
    ),
)


def _write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_file_is_read_in_order_and_extra_columns_are_ignored(tmp_path):
    path = _write(tmp_path, "e,note,v_in_m_per_s\n0.5,a,1.0\n\n0.7,b,2.5\n")
    columns, report = load_csv(path, SCHEMA)
    np.testing.assert_array_equal(columns["v_in_m_per_s"], [1.0, 2.5])
    np.testing.assert_array_equal(columns["e"], [0.5, 0.7])
    assert (report.rows_read, report.rows_kept, report.dropped) == (2, 2, ())
    assert report.ignored_columns == ("note",)


def test_missing_column_names_it_and_the_schema(tmp_path):
    path = _write(tmp_path, "v_in_m_per_s\n1.0\n")
    with pytest.raises(DataError, match=r"data.csv:1: missing column\(s\) e;") as error:
        load_csv(path, SCHEMA)
    assert "unit m/s" in str(error.value)


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("abc,0.5", "v_in_m_per_s: not a number: 'abc'"),
        ("nan,0.5", "v_in_m_per_s: nan is not a finite number"),
        ("1.0,inf", "e: inf is not a finite number"),
        ("1e400,0.5", "v_in_m_per_s: inf is not a finite number"),
        ("0_5,0.5", "v_in_m_per_s: not a number: '0_5'"),
        ("\u0661,0.5", "v_in_m_per_s: not a number: '\u0661'"),
        ("1.0,0x1", "e: not a number: '0x1'"),
        (",0.5", "v_in_m_per_s: empty cell"),
        ("-2.0,0.5", "v_in_m_per_s = -2 m/s is negative; it must be in (0, inf)"),
        ("0.0,0.5", "v_in_m_per_s = 0 m/s is out of range"),
        ("1.0,1.5", "e = 1.5 is out of range; it must be in [0, 1]"),
        ("1.0", "has 1 cells, the header has 2"),
        ("1.0,0.5", "duplicate of row 2"),
    ],
)
def test_each_bad_row_is_rejected_with_file_row_and_reason(tmp_path, row, reason):
    # Row numbers as in the file: header line 1, first data row line 2; the bad row is line 4.
    path = _write(tmp_path, f"v_in_m_per_s,e\n1.0,0.5\n2.0,0.6\n{row}\n3.0,0.7\n")
    with pytest.raises(DataError) as error:
        load_csv(path, SCHEMA)
    assert f"{path}:4: {reason}" in str(error.value)
    assert "1 bad row(s) of 4" in str(error.value)


def test_drop_bad_rows_keeps_the_good_ones_and_reports_every_dropped_row(tmp_path):
    path = _write(tmp_path, "v_in_m_per_s,e\n1.0,0.5\n-1,0.5\n2.0,x\n1.0,0.5\n3.0,0.7\n")
    with pytest.raises(DataError) as error:
        load_csv(path, SCHEMA)
    assert all(f"{path}:{row}:" in str(error.value) for row in (3, 4, 5))
    columns, report = load_csv(path, SCHEMA, drop_bad_rows=True)
    np.testing.assert_array_equal(columns["v_in_m_per_s"], [1.0, 3.0])
    assert (report.rows_read, report.rows_kept) == (5, 2)
    assert [line.split(": ")[0] for line in report.dropped] == [f"{path}:{row}" for row in (3, 4, 5)]
    assert "dropped 3" in report.summary()


def test_files_without_usable_rows_fail(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_csv(tmp_path / "absent.csv", SCHEMA)
    with pytest.raises(DataError, match=":1: no header"):
        load_csv(_write(tmp_path, ""), SCHEMA)
    with pytest.raises(DataError, match="no usable rows"):
        load_csv(_write(tmp_path, "v_in_m_per_s,e\n-1,0.5\n"), SCHEMA, drop_bad_rows=True)
    with pytest.raises(DataError, match="repeated column names"):
        load_csv(_write(tmp_path, "e,e,v_in_m_per_s\n"), SCHEMA)


def test_a_path_that_is_not_a_regular_file_is_named_as_such(tmp_path):
    with pytest.raises(DataError, match=rf"^{tmp_path}: not a regular CSV file \(a directory\)$"):
        load_csv(tmp_path, SCHEMA)
    with pytest.raises(DataError, match=r"^/dev/null: not a regular CSV file \(a device or other special file\)$"):
        load_csv("/dev/null", SCHEMA)


def test_schema_validation_names_the_problem():
    with pytest.raises(ValueError, match="uniquely named"):
        Schema("dup", (Column("a", "m"), Column("a", "m")))
    with pytest.raises(ValueError, match="minimum must be <= maximum"):
        Column("a", "m", minimum=2.0, maximum=1.0)
    with pytest.raises(ValueError, match="schema must be"):
        load_csv("x.csv", {"a": "m"})


def test_optional_column_may_be_absent_and_is_validated_when_present(tmp_path):
    schema = Schema("opt", SCHEMA.columns + (Column("sigma", "m/s", minimum=0.0, exclusive_minimum=True, optional=True),))
    columns, _ = load_csv(_write(tmp_path, "v_in_m_per_s,e\n1.0,0.5\n"), schema)
    assert set(columns) == {"v_in_m_per_s", "e"}
    columns, _ = load_csv(_write(tmp_path, "v_in_m_per_s,e,sigma\n1.0,0.5,0.1\n"), schema)
    np.testing.assert_array_equal(columns["sigma"], [0.1])
    path = _write(tmp_path, "v_in_m_per_s,e,sigma\n1.0,0.5,0.1\n2.0,0.5,-0.1\n")
    with pytest.raises(DataError, match=rf"{path}:3: sigma = -0.1 m/s is negative"):
        load_csv(path, schema)
    assert "(optional)" in schema.describe()
