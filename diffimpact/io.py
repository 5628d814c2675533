"""Files of the studies: the data shipped with diffimpact, atomic CSV/JSON/PNG writes and chunked batches.

The reproductions (``diffimpact reproduce``), the fits (``diffimpact fit``) and
the example scripts write their results through these functions: each file
is written beside its name and renamed, so that an interrupted run leaves the
old file or the new one, never a torn one. Figures are drawn with
matplotlib's Agg backend (no display needed).

``data_file`` opens the measurements and the damping grid that diffimpact
ships (``data/`` in the repository, package data in an installed wheel; what
each file holds and where it comes from is in its ``README.md``).
"""

import importlib.resources
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from diffimpact._files import atomic_write  # noqa: E402


def data_file(name):
    """The path of the shipped data file ``name`` (e.g. ``"mathavan2010_cushion_rebound.csv"``).

    Raises ``ValueError`` naming the data files if there is none of that name.
    """
    folder = importlib.resources.files("diffimpact") / "data"
    path = folder / name
    if not path.is_file():
        shipped = sorted(item.name for item in folder.iterdir() if item.name.endswith(".csv"))
        raise ValueError(f"data_file: name must be one of the data files {', '.join(shipped)}; got {name!r}")
    return Path(path)


def write_csv(path, columns):
    """Write ``{name: 1-D array}`` as a CSV with a header line, atomically: numbers to 17 digits, strings as they are
    (without commas)."""
    names = list(columns)
    arrays = [np.asarray(columns[name]).ravel() for name in names]
    cells = [a.astype(str) if a.dtype.kind == "U" else np.char.mod("%.17g", a.astype(float)) for a in arrays]
    table = np.column_stack(cells) if cells else np.empty((0, 0), dtype=str)
    return atomic_write(
        path, lambda tmp: np.savetxt(tmp, table, fmt="%s", delimiter=",", header=",".join(names), comments="",
                                     encoding="utf-8")
    )


def write_events(path, events, names=None):
    """Write the contact events of a ``simulate`` run (time, force, member, onset), one row per event, atomically.

    ``names``: the contacts' names, ``names[force][member]`` (``billiard.table_contact_names``), written as a last
    column ``contact``.
    """
    count = int(events.count)
    columns = {"t_s": np.asarray(events.t[:count]), "force": np.asarray(events.contact[:count]),
               "member": np.asarray(events.member[:count]), "onset": np.asarray(events.onset[:count])}
    if names is not None:
        columns["contact"] = np.array(event_names(events, names), dtype=str)
    return write_csv(path, columns)


def event_names(events, names):
    """The name of each event's contact, ``names[force][member]``, for the ``events.count`` events of a run."""
    count = int(events.count)
    return [names[int(f)][int(m)] for f, m in zip(events.contact[:count], events.member[:count])]


def read_csv(path):
    """Read a CSV written by ``write_csv`` into ``{name: array}``: numbers as float64, strings as they are; one
    array entry per row, also for a file of one row."""
    table = np.atleast_1d(np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8"))
    return {name: np.asarray(table[name]) if table[name].dtype.kind == "U" else np.asarray(table[name], dtype=float)
            for name in table.dtype.names}


def _strict(value):
    """``value`` with each float that is not finite (NaN, ±inf) replaced by None, in dicts, lists and tuples."""
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(item) for item in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value


def write_json(path, data):
    """Write ``data`` as indented, strict JSON, atomically.

    JSON has no NaN or Infinity: a float that is not finite, a value the fit leaves undetermined (the standard
    error of a parameter the data do not identify, a start where the model failed), is written as null, JSON's
    missing value; ``allow_nan=False`` makes any other way a NaN could reach the file an error.
    """

    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(_strict(data), f, indent=2, allow_nan=False)
            f.write("\n")

    return atomic_write(path, write)


def save_figure(figure, path):
    """Save a matplotlib figure as PNG, atomically, and close it."""
    atomic_write(path, lambda tmp: figure.savefig(tmp, dpi=130, format="png"))
    plt.close(figure)
    return Path(path)


def map_chunks(fn, *arrays, chunk=2000, desc=None, progress=True):
    """``fn`` over equally shaped arrays, ``chunk`` elements at a time, with a progress bar unless not ``progress``.

    Every chunk has the same length (the last is padded by repeating its final
    element), so a jitted ``fn`` compiles once. Returns a NumPy array (or a
    tuple of them) shaped like the inputs.
    """
    shape = np.shape(arrays[0])
    flat = [np.ravel(a) for a in arrays]
    size = flat[0].size
    chunk = min(chunk, size)
    pieces = []
    with tqdm(total=size, desc=desc, unit="pt", leave=False, disable=not progress) as bar:
        for start in range(0, size, chunk):
            stop = min(start + chunk, size)
            padded = [np.concatenate([a[start:stop], np.repeat(a[stop - 1], chunk - (stop - start))]) for a in flat]
            out = fn(*padded)
            out = out if isinstance(out, tuple) else (out,)
            pieces.append([np.asarray(o)[: stop - start] for o in out])
            bar.update(stop - start)
    results = tuple(np.concatenate(parts).reshape(shape) for parts in zip(*pieces))
    return results if len(results) > 1 else results[0]


def figure(rows, cols, width=4.2, height=3.4):
    """A figure with a grid of axes, sized per panel."""
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False, layout="constrained")
    return fig, axes


def script_arguments(description):
    """The command line of a script that writes a study's files: ``--quick`` (a coarse grid, for a fast look) and
    ``--out DIR`` (default ``out`` in the working directory), as the example scripts take it."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="coarse grid, for a fast look")
    parser.add_argument("--out", default="out", help="directory for the files (default: out)")
    return parser.parse_args()
