"""Resumable long loops: finished items saved atomically to a JSON checkpoint.

``Checkpoint(path, meta)`` holds ``{key: result}`` of the items already done.
Each ``save(key, result)`` rewrites the file atomically (temporary file, then
rename, by ``diffimpact.io.write_json``), so an interruption loses
at most the item in progress and never leaves a torn file. On restart the same
``meta`` (what the results depend on: input file hash, settings) resumes the
finished items; a different ``meta`` starts afresh, since the old results
answer another question. ``finish()`` removes the file once the outputs are
written. ``resumable_map`` runs a batched (sharded) map chunk by chunk on top
of a checkpoint.
"""

import hashlib
import json
from pathlib import Path

import numpy as np

from diffimpact.io import write_json

FORMAT_VERSION = 1


def file_digest(path):
    """SHA-256 of a file's bytes (hex), to tie a checkpoint to its input data."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Checkpoint:
    """Finished results of a loop, keyed by strings, persisted after every item.

    Parameters
    ----------
    path : the JSON checkpoint file.
    meta : JSON-ready dict of what the results depend on; a stored checkpoint
        with different ``meta`` is discarded (``self.discarded`` is then True).
    """

    def __init__(self, path, meta):
        self.path = Path(path)
        self.meta = json.loads(json.dumps(meta))  # normalise (tuples -> lists) for comparison
        self.results = {}
        self.discarded = False
        if self.path.exists():
            try:
                stored = json.loads(self.path.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                stored = None
            if isinstance(stored, dict) and stored.get("version") == FORMAT_VERSION and stored.get("meta") == self.meta:
                self.results = dict(stored["results"])
            else:
                self.discarded = True
        #: Number of items loaded from an earlier run.
        self.resumed = len(self.results)

    def __contains__(self, key):
        return key in self.results

    def __getitem__(self, key):
        return self.results[key]

    def save(self, key, result):
        """Record one finished item (JSON-ready) and rewrite the checkpoint atomically."""
        self.results[str(key)] = result
        write_json(self.path, {"version": FORMAT_VERSION, "meta": self.meta, "results": self.results})

    def finish(self):
        """Delete the checkpoint file (the final outputs are written)."""
        self.path.unlink(missing_ok=True)


def resumable_map(fn, *arrays, chunk, checkpoint, mapper=None):
    """``mapper(fn, *chunk_arrays)`` over the leading axis, ``chunk`` elements at a time, resumable.

    Each finished chunk is saved to ``checkpoint`` (key ``"start:stop"``) and
    skipped on a restart with the same checkpoint meta. Every chunk has
    ``chunk`` elements (the last is padded by repeating its final element,
    then cut), so a jitted ``fn`` compiles once. ``mapper`` defaults to
    ``fitting.sharding.sharded_map``; ``fn`` must return one array per
    element. Returns the NumPy array of all results, in order.
    """
    from fitting.sharding import sharded_map

    mapper = sharded_map if mapper is None else mapper
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    arrays = [np.asarray(a) for a in arrays]
    size = arrays[0].shape[0]
    pieces = []
    for start in range(0, size, chunk):
        stop = min(start + chunk, size)
        key = f"{start}:{stop}"
        if key not in checkpoint:
            padded = [np.concatenate([a[start:stop], np.repeat(a[stop - 1 : stop], chunk - (stop - start), axis=0)]) for a in arrays]
            checkpoint.save(key, np.asarray(mapper(fn, *padded))[: stop - start].tolist())
        pieces.append(np.asarray(checkpoint[key], dtype=float))
    return np.concatenate(pieces)
