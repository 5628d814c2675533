"""Benchmark: exact optimal damping over the paper's 600 × 100 grid, against a SciPy baseline.

    python benchmarks/optimal_damping.py [--subset 20] [--batch-size 1000]

Reports compile and run time separately for ``diffimpact.optimal_damping(...,
method="exact")`` over n ∈ [1, 2] (100) × e ∈ [0.45, 1] (600), m = v = k = 1,
and the time per root of a straightforward SciPy implementation
(``solve_ivp`` with a terminal zero-force event inside ``brentq``) on a subset
of the same grid, in the same run. diffimpact's roots are then re-solved
with SciPy to check the restitution they give.
"""

import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import diffimpact as di
from diffimpact import _broadcast as broadcast

di.configure()  # float64 and the CPU cap, before the first computation


def scipy_restitution(c, n):
    def rhs(t, y):
        return [y[1], -(c * y[1] + np.sign(y[0]) * abs(y[0]) ** n)]

    def force(t, y):
        return c * y[1] + np.sign(y[0]) * abs(y[0]) ** n

    force.terminal, force.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 1e3), [0.0, 1.0], method="DOP853", rtol=1e-10, atol=1e-12, events=force)
    return -sol.y_events[0][0][1]


def scipy_optimal_damping(n, e):
    if e >= 1.0:
        return 0.0
    return brentq(lambda c: scipy_restitution(c, n) - e, 1e-12, 50.0, xtol=1e-14, rtol=1e-12)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", type=int, default=20, help="SciPy roots to time (default 20)")
    parser.add_argument(
        "--batch-size", type=int, default=broadcast.BATCH_SIZE, help="vmapped block size of batched solves"
    )
    args = parser.parse_args()
    broadcast.BATCH_SIZE = args.batch_size

    n = np.linspace(1.0, 2.0, 100)
    e = np.linspace(0.45, 1.0, 600)
    N, E = np.meshgrid(n, e, indexing="ij")

    start = time.perf_counter()
    di.optimal_damping(1.0, 1.0, 1.0, N, E).block_until_ready()
    first = time.perf_counter() - start
    start = time.perf_counter()
    grid = np.asarray(di.optimal_damping(1.0, 1.0, 1.0, N, E).block_until_ready())
    run = time.perf_counter() - start
    roots = N.size
    print(f"diffimpact exact, {roots} roots: compile ≈ {first - run:.1f} s, run {run:.2f} s ({run / roots * 1e3:.3f} ms/root)")

    rng = np.random.default_rng(0)
    picks = rng.choice(roots, size=args.subset, replace=False)
    start = time.perf_counter()
    reference = np.array([scipy_optimal_damping(N.flat[i], E.flat[i]) for i in picks])
    scipy_time = (time.perf_counter() - start) / args.subset
    print(f"SciPy solve_ivp + brentq, {args.subset} roots: {scipy_time * 1e3:.1f} ms/root")
    print(f"speed-up per root (run time): {scipy_time / (run / roots):.0f}x")
    print(f"max |c_diffimpact − c_scipy|/c_scipy over those roots: {np.max(np.abs(grid.flat[picks] / reference - 1)):.1e}")
    e_scipy = np.array([scipy_restitution(grid.flat[i], N.flat[i]) for i in picks])
    print(f"max |e_out − e|/e of diffimpact's c_opt, re-solved by SciPy: {np.max(np.abs(e_scipy / E.flat[picks] - 1)):.1e}")


if __name__ == "__main__":
    main()
