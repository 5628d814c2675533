"""Wall-clock timing of jitted calls, shared by the reproductions and the benchmark scripts."""

import time

import jax


def timed(fn, *args, repeats=3, statistic=min):
    """(first call, ``statistic`` of ``repeats`` later calls) in seconds, each to ``block_until_ready``.

    The first call compiles: compile time ≈ the difference. ``statistic``: ``min`` (the best run, the
    benchmarks'), or e.g. ``numpy.median``.
    """
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return times[0], float(statistic(times[1:]))
