"""Shared timing helper of the benchmark scripts."""

import time

import jax


def timed(fn, *args, repeats=3):
    """(first call, best of ``repeats`` later calls) in seconds; compile time ≈ the difference."""
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return times[0], min(times[1:])
