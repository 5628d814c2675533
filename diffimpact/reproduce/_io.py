"""Output helpers for reproductions: atomic CSV/JSON/PNG writes and chunked, progress-reported batches."""

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from diffimpact._files import atomic_write  # noqa: E402


def write_csv(path, columns):
    """Write ``{name: 1-D array}`` as a CSV with a header line, atomically."""
    names = list(columns)
    table = np.column_stack([np.asarray(columns[name], dtype=float).ravel() for name in names])
    return atomic_write(
        path, lambda tmp: np.savetxt(tmp, table, delimiter=",", header=",".join(names), comments="", fmt="%.17g")
    )


def write_events(path, events):
    """Write the contact events of a ``simulate`` run (time, force, member, onset), one row per event, atomically."""
    count = int(events.count)
    return write_csv(path, {
        "t_s": np.asarray(events.t[:count]), "force": np.asarray(events.contact[:count]),
        "member": np.asarray(events.member[:count]), "onset": np.asarray(events.onset[:count]),
    })


def read_csv(path):
    """Read a CSV written by ``write_csv`` into ``{name: array}``."""
    table = np.genfromtxt(path, delimiter=",", names=True)
    return {name: np.asarray(table[name]) for name in table.dtype.names}


def write_json(path, data):
    """Write ``data`` as indented JSON, atomically."""

    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")

    return atomic_write(path, write)


def save_figure(figure, path):
    """Save a matplotlib figure as PNG, atomically, and close it."""
    atomic_write(path, lambda tmp: figure.savefig(tmp, dpi=130, format="png"))
    plt.close(figure)
    return Path(path)


def map_chunks(fn, *arrays, chunk=2000, desc=None):
    """``fn`` over equally shaped arrays, ``chunk`` elements at a time, with a progress bar.

    Every chunk has the same length (the last is padded by repeating its final
    element), so a jitted ``fn`` compiles once. Returns a NumPy array (or a
    tuple of them) shaped like the inputs.
    """
    shape = np.shape(arrays[0])
    flat = [np.ravel(a) for a in arrays]
    size = flat[0].size
    chunk = min(chunk, size)
    pieces = []
    with tqdm(total=size, desc=desc, unit="pt", leave=False) as bar:
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
