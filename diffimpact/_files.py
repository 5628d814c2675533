"""Atomic file writes, shared by the library (``Trajectory.save``) and the reproductions."""

import os
import tempfile
from pathlib import Path


def atomic_write(path, write):
    """Create or replace ``path`` atomically: ``write(tmp)`` writes a temporary file beside it, then it is renamed.

    A failed or interrupted write leaves the old file (if any) and no temporary one. Returns ``path`` as a ``Path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
