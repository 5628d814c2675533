"""Load a user's measurements from a CSV file, validated against a schema.

A file has a header line (line 1) of named columns whose names carry their
units (``v_in_m_per_s``), then one measurement per line. A ``Schema`` names
the columns, their units and allowed ranges; a column marked ``optional`` may
be absent (then it is absent from the result too); other columns are ignored
(and listed in the report). ``load_csv`` rejects

* a missing required column (the whole file: nothing can be read),
* a row with the wrong number of cells,
* a cell in a required column that is not a plain decimal number (``-1.5``,
  ``2``, ``.5``) or one in scientific notation (``1.5e-3``), in ASCII digits
  (not ``1_000``, which Python's ``float`` reads), or that is NaN or infinite,
* a value outside its column's range (e.g. a negative speed),
* a row whose required values repeat an earlier row (a duplicated row),

each reported as ``FILE:ROW: reason`` with ROW the line number in the file
(header = line 1). Bad rows are never dropped silently: by default they raise
a ``DataError`` listing all of them; with ``drop_bad_rows=True``
(``--drop-bad-rows``) they are dropped and listed in the ``LoadReport``.
Blank lines are skipped. A path that is missing, not a regular file (a
directory, a device) or unreadable is refused as a whole.
"""

import csv
import dataclasses
import math
import re
from pathlib import Path

import numpy as np


class DataError(ValueError):
    """A data file that cannot be used as it is; the message lists ``FILE:ROW: reason`` lines."""


@dataclasses.dataclass(frozen=True)
class Column:
    """One column: its header name, unit and allowed range.

    ``minimum``/``maximum`` are inclusive unless ``exclusive_minimum``/``exclusive_maximum``.
    ``optional=True``: the file may leave the column out; if present it is validated.
    """

    name: str
    unit: str
    description: str = ""
    minimum: float = -math.inf
    maximum: float = math.inf
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    optional: bool = False

    def __post_init__(self):
        if not self.name or self.name != self.name.strip() or "," in self.name:
            raise ValueError(f"Column name must be a non-empty header name without commas or padding, got {self.name!r}")
        if not self.minimum <= self.maximum:
            raise ValueError(f"Column {self.name!r}: minimum must be <= maximum, got {self.minimum!r} > {self.maximum!r}")

    def domain(self):
        left = "(" if self.exclusive_minimum or self.minimum == -math.inf else "["
        right = ")" if self.exclusive_maximum or self.maximum == math.inf else "]"
        return f"{left}{self.minimum:g}, {self.maximum:g}{right}"

    def violation(self, value):
        """Why ``value`` is out of range, or None."""
        low_ok = value > self.minimum if self.exclusive_minimum else value >= self.minimum
        high_ok = value < self.maximum if self.exclusive_maximum else value <= self.maximum
        if low_ok and high_ok:
            return None
        unit = f" {self.unit}" if self.unit not in ("", "-") else ""
        kind = "negative" if value < 0 <= self.minimum else "out of range"
        return f"{self.name} = {value:g}{unit} is {kind}; it must be in {self.domain()}"


@dataclasses.dataclass(frozen=True)
class Schema:
    """The columns a problem needs, by name; ``describe()`` documents them for users."""

    name: str
    columns: tuple

    def __post_init__(self):
        names = [c.name for c in self.columns]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"Schema {self.name!r}: columns must be non-empty and uniquely named, got {names}")

    @property
    def names(self):
        return tuple(c.name for c in self.columns)

    def describe(self):
        """One line per column: name, unit, allowed range and meaning."""
        lines = [f"CSV columns of {self.name} (header on line 1; other columns are ignored):"]
        width = max(16, *(len(c.name) for c in self.columns))
        for c in self.columns:
            meaning = f"(optional) {c.description}" if c.optional else c.description
            lines.append(f"  {c.name:<{width}s} unit {c.unit or '-':<8s} in {c.domain():<14s} {meaning}")
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class LoadReport:
    """What ``load_csv`` read: row counts, the dropped rows as ``FILE:ROW: reason``, ignored columns."""

    path: str
    rows_read: int
    rows_kept: int
    dropped: tuple
    ignored_columns: tuple

    @property
    def file(self):
        """The file read, as an absolute path with symbolic links resolved."""
        return str(Path(self.path).resolve())

    def to_dict(self):
        """JSON-ready: the absolute ``file``, the row counts and the dropped rows."""
        return {"file": self.file, "rows_read": self.rows_read, "rows_kept": self.rows_kept,
                "dropped": list(self.dropped)}

    def summary(self):
        text = f"{self.path}: kept {self.rows_kept} of {self.rows_read} rows"
        if self.dropped:
            text += f", dropped {len(self.dropped)}:\n" + "\n".join(self.dropped)
        return text


def file_problem(path):
    """Why ``path`` cannot be a data file, or None: it does not exist, or is not a regular file (a directory, a
    device such as /dev/null)."""
    path = Path(path)
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return f"not a regular CSV file ({'a directory' if path.is_dir() else 'a device or other special file'})"
    return None


def _read_lines(path):
    problem = file_problem(path)
    if problem is not None:
        raise DataError(f"{path}: {problem}")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return list(csv.reader(f))
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not a UTF-8 text file ({error.reason})") from None
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror})") from None


#: A plain decimal number or one in scientific notation, ASCII digits only.
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)


def _parse(cell):
    """(value, None) for a finite number, else (None, why)."""
    text = cell.strip()
    if _NUMBER.fullmatch(text) or _NOT_FINITE.fullmatch(text):
        value = float(text)
        return (value, None) if math.isfinite(value) else (None, f"{value} is not a finite number")
    return None, f"not a number: {text!r}" if text else "empty cell"


def load_csv(path, schema, drop_bad_rows=False):
    """Read the required columns of ``schema`` from the CSV file ``path``.

    Parameters
    ----------
    path : the file (header on line 1).
    schema : Schema naming the required columns, units and ranges.
    drop_bad_rows : False: any bad row raises ``DataError`` listing every bad row;
        True: bad rows are dropped and listed in the report.

    Returns
    -------
    columns : {name: 1-D float NumPy array} for the schema's columns present in the file
        (every required one), good rows in file order.
    report : LoadReport.

    Raises
    ------
    DataError
        Missing file, empty file, missing columns, bad rows (unless dropped) or no good row.
    """
    if not isinstance(schema, Schema):
        raise ValueError(f"schema must be a fitting.data.Schema, got {type(schema).__name__}")
    lines = _read_lines(path)
    if not lines or not any(cell.strip() for cell in lines[0]):
        raise DataError(f"{path}:1: no header line (expected columns {', '.join(schema.names)})")
    header = [cell.strip() for cell in lines[0]]
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise DataError(f"{path}:1: repeated column names {repeated}")
    missing = [c.name for c in schema.columns if c.name not in header and not c.optional]
    if missing:
        raise DataError(
            f"{path}:1: missing column(s) {', '.join(missing)}; the header has {', '.join(header)}\n{schema.describe()}"
        )
    present = [c for c in schema.columns if c.name in header]
    index = [header.index(c.name) for c in present]
    good, bad, seen = [], [], {}
    rows_read = 0
    for line_number, cells in enumerate(lines[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        rows_read += 1
        if len(cells) != len(header):
            bad.append(f"{path}:{line_number}: has {len(cells)} cells, the header has {len(header)}")
            continue
        values, reasons = [], []
        for column, i in zip(present, index):
            value, reason = _parse(cells[i])
            if reason is None:
                reason = column.violation(value)
                values.append(value)
            else:
                reason = f"{column.name}: {reason}"
            if reason is not None:
                reasons.append(reason)
        if not reasons:
            key = tuple(values)
            if key in seen:
                reasons.append(f"duplicate of row {seen[key]}")
            else:
                seen[key] = line_number
        if reasons:
            bad.append(f"{path}:{line_number}: " + "; ".join(reasons))
        else:
            good.append(values)
    if bad and not drop_bad_rows:
        raise DataError(
            f"{path}: {len(bad)} bad row(s) of {rows_read}; fix them or drop them "
            f"(drop_bad_rows=True, --drop-bad-rows):\n" + "\n".join(bad)
        )
    if not good:
        raise DataError(f"{path}: no usable rows ({rows_read} read, {len(bad)} bad)" + "".join("\n" + b for b in bad))
    table = np.array(good, dtype=float)
    columns = {c.name: table[:, j].copy() for j, c in enumerate(present)}
    report = LoadReport(
        path=str(path),
        rows_read=rows_read,
        rows_kept=len(good),
        dropped=tuple(bad),
        ignored_columns=tuple(h for h in header if h not in schema.names),
    )
    return columns, report


def time_order(path, times):
    """Indices that sort a time column, rejecting repeated times (one measurement per time)."""
    order = np.argsort(times, kind="stable")
    ordered = np.asarray(times)[order]
    repeated = np.flatnonzero(np.diff(ordered) == 0)
    if repeated.size:
        raise DataError(f"{path}: two rows have the same t_s = {ordered[repeated[0]]:g} s; one measurement per time")
    return order
