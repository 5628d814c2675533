"""JAX's persistent compilation cache, kept in one folder per user.

A program that JAX stores there is read back by the next process that compiles the same program (the same
function, shapes, JAX version and XLA flags) instead of being compiled again. The command line uses it unless told
not to (``--no-cache``, or ``DIFFIMPACT_NO_CACHE=1``); from Python, ``diffimpact.cache.enable()`` once, before the
first computation, does the same. ``diffimpact cache info`` shows the folder and its size, ``diffimpact cache clear``
empties it.

The folder: ``$DIFFIMPACT_CACHE_DIR`` if set, else ``diffimpact/jax`` under ``$XDG_CACHE_HOME`` (default
``~/.cache``). JAX stores a program only if compiling it took at least
``jax_persistent_cache_min_compile_time_secs`` (1 s by default) and it holds no host callback.
"""

import os
import shutil
from pathlib import Path

#: The environment variable that moves the folder.
FOLDER_VARIABLE = "DIFFIMPACT_CACHE_DIR"
#: The environment variable that, set to anything but ``""`` or ``"0"``, keeps the command line from using the cache.
OFF_VARIABLE = "DIFFIMPACT_NO_CACHE"


def folder():
    """The cache's folder (module docstring); it need not exist yet."""
    given = os.environ.get(FOLDER_VARIABLE)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "diffimpact" / "jax"


def turned_off():
    """Whether ``DIFFIMPACT_NO_CACHE`` asks the command line not to use the cache."""
    return os.environ.get(OFF_VARIABLE, "") not in ("", "0")


def enable(path=None):
    """Keep JAX's compiled programs in ``path`` (default ``folder()``) and read them back from there.

    Call it before the first computation: JAX opens its cache when it first compiles. Returns the folder.
    """
    import jax

    path = folder() if path is None else Path(path).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    return path


def info(path=None):
    """The folder (default ``folder()``), the number of files in it and their total size in bytes."""
    path = folder() if path is None else Path(path)
    files = [entry for entry in path.rglob("*") if entry.is_file()] if path.is_dir() else []
    return path, len(files), sum(entry.stat().st_size for entry in files)


def clear(path=None):
    """Remove every file of the folder (default ``folder()``); returns what ``info`` said before."""
    before = info(path)
    if before[0].is_dir():
        for entry in before[0].iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    return before
