"""Atomic file writes, shared by the library (``Trajectory.save``) and the reproductions, and the lock of an output
directory that the command line holds while a command writes there."""

import contextlib
import os
import tempfile
from pathlib import Path

#: The lock file of an output directory while a command writes there (``locked_directory``).
LOCK_NAME = ".diffimpact.lock"


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


def _holder(lock):
    """The PID written in ``lock``; None if it holds none (being written, or not ours)."""
    try:
        text = Path(lock).read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() and int(text) > 0 else None


def _alive(pid):
    try:
        os.kill(pid, 0)  # signal 0: the check alone
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def locked_directory(directory):
    """Hold the lock file ``directory/LOCK_NAME`` while the block runs: one command at a time writes in a directory.

    The directory (with its missing parents) is created, and the lock file created exclusively (``O_EXCL``) with
    this process's PID. It is removed when the block ends, also on an error or Ctrl-C, and so are the directories
    created here if they are still empty (a run refused for bad input leaves nothing behind). A lock whose PID is
    not alive (its run was killed) is taken over; any other raises ``ValueError`` naming the directory and the
    lock file.
    """
    directory = Path(directory)
    created = [path for path in (directory, *directory.parents) if not path.exists()]  # the deepest first
    directory.mkdir(parents=True, exist_ok=True)
    lock = directory / LOCK_NAME
    try:
        _acquire(lock)
        try:
            yield lock
        finally:
            lock.unlink(missing_ok=True)
    finally:
        for path in created:
            try:
                path.rmdir()
            except OSError:  # not empty: the run wrote there
                break


def _acquire(lock):
    holder = None
    for _ in range(2):  # a second try after taking over a stale lock
        try:
            descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(lock)
            if holder is None or _alive(holder):
                break
            lock.unlink(missing_ok=True)  # stale: its run is gone
            continue
        with os.fdopen(descriptor, "w") as file:
            file.write(f"{os.getpid()}\n")
        return
    by = "another run" if holder is None else f"another run (PID {holder})"
    raise ValueError(f"--out {lock.parent}: {by} is writing in this directory (lock file {lock}); wait for it to end "
                     f"or choose another --out (remove the lock file if no run is writing there)")
