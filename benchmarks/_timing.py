"""The benchmark scripts' timing helper: ``timed`` of ``diffimpact.reproduce._timing`` (best of the later calls)."""

from diffimpact.reproduce._timing import timed  # noqa: F401
