"""Benchmark: exact optimal damping over the paper's 600 × 100 grid, against the diffrax method and SciPy.

    python benchmarks/optimal_damping.py [--subset 20] [--repeats 3] [--old-exponents 100]

Times the exact ĉ(n, e) of [Poursina 2020] §4.2.4's grid, n ∈ [1, 2] (100) × e ∈ [0.45, 1] (600), as
``diffimpact reproduce damping-lambda`` computes it (``diffimpact.reproduce.damping.lambda_grid``), compile and run
apart (the first call, the best of ``--repeats`` later ones, as ``_timing.timed``), beside

* the method it replaces, kept here for comparison only: optimistix's Newton on ln e_out(ln ĉ) with e_out and its
  derivative from ``central_impact`` (diffrax Tsit5 with events, ``diffrax.ForwardMode``), in the same chunks, on
  every exponent (``--old-exponents 10``: every tenth);
* SciPy (``solve_ivp`` DOP853 with a terminal zero-force event inside ``brentq``) on ``--subset`` roots of the grid.

It also times one e_out with its derivative in ĉ by each solve (the timed calls taken in turn, so that the load of a
shared machine falls on each alike), counts Newton iterations per root, compares the roots with
data/damping_lambda.csv, and re-solves both with SciPy at rtol 1e-13 to give their restitution error.
"""

import argparse
import time

import diffrax as dfx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import diffimpact as di

di.configure()  # float64 and the CPU cap, before the first computation (importing diffimpact.reproduce starts JAX)

from diffimpact.impact import damping as od  # noqa: E402
from diffimpact.io import data_file, map_chunks, read_csv  # noqa: E402
from diffimpact.reproduce import damping as study  # noqa: E402


def scipy_restitution(c, n, rtol=1e-10, atol=1e-12):
    def rhs(t, y):
        return [y[1], -(c * y[1] + np.sign(y[0]) * abs(y[0]) ** n)]

    def force(t, y):
        return c * y[1] + np.sign(y[0]) * abs(y[0]) ** n

    force.terminal, force.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 1e3), [0.0, 1.0], method="DOP853", rtol=rtol, atol=atol, events=force)
    return -sol.y_events[0][0][1]


def scipy_optimal_damping(n, e):
    if e >= 1.0:
        return 0.0
    return brentq(lambda c: scipy_restitution(c, n) - e, 1e-12, 50.0, xtol=1e-14, rtol=1e-12)


def newton(residual, n, e):
    """optimistix's Newton on ln ĉ from the improved closed form, with the library's tolerance."""
    return optx.root_find(residual, optx.Newton(rtol=od.NEWTON_TOL, atol=od.NEWTON_TOL),
                          jnp.log(od.improved_unit_damping(n, e)), args=(n, jnp.log(e)),
                          max_steps=od.NEWTON_MAX_STEPS, throw=False)


def new_residual(log_damping, args):
    n, log_e = args
    return jnp.log(od.unit_restitution(jnp.exp(log_damping), n)) - log_e


def diffrax_restitution(damping, n):
    return od.restitution_of_damping(damping, 1.0, 1.0, 1.0, n, adjoint=dfx.ForwardMode())


def old_residual(log_damping, args):
    n, log_e = args
    return jnp.log(diffrax_restitution(jnp.exp(log_damping), n)) - log_e


def old_unit_damping(n, e):
    """The replaced method on the grid: Newton through the diffrax solve; the near-elastic root near e = 1."""
    elastic = e > 1.0 - od.NEAR_ELASTIC_GAP
    solved = jnp.exp(newton(old_residual, n, jnp.where(elastic, 0.5, e)).value)
    return jnp.where(elastic, od.near_elastic_unit_damping(n, jnp.where(elastic, e, 1.0)), solved)


def batched(fn):
    """``fn`` over arrays in vmapped blocks of 1,000, as ``optimal_damping`` runs its roots."""
    return jax.jit(lambda *a: jax.lax.map(lambda b: fn(*b), a, batch_size=1000))


_old_chunk = batched(old_unit_damping)


def old_grid(n, e):
    """The diffrax method in the study's chunks of 1,000 roots."""
    return map_chunks(_old_chunk, n, e, chunk=1000, progress=False)


def solve_with_derivative(fn):
    """One e_out and its ĉ-derivative per root, in blocks of 1,000."""
    return batched(lambda c, n: jax.jvp(lambda c: fn(c, n), (c,), (jnp.ones_like(c),)))


def iterations(residual, n, e):
    return np.bincount(np.asarray(batched(lambda n, e: newton(residual, n, e).stats["num_steps"])(n, e)))


def in_turn(calls, repeats):
    """The first call of each of ``calls`` and the best of ``repeats`` later ones (``_timing.timed``), the calls taken
    in turn so that the load of a shared machine falls on all of them alike."""
    first, best = {}, dict.fromkeys(calls, np.inf)
    for sweep in range(repeats + 1):
        for name, call in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(call())
            elapsed = time.perf_counter() - start
            if sweep == 0:
                first[name] = elapsed
            else:
                best[name] = min(best[name], elapsed)
    return first, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", type=int, default=20, help="SciPy roots to time (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the first (default 3)")
    parser.add_argument("--old-exponents", type=int, default=100,
                        help="exponents of the grid for the diffrax method (default 100: all; 10: every tenth)")
    args = parser.parse_args()

    n, e = (a.ravel() for a in np.meshgrid(np.linspace(*study.LAMBDA_GRID["exponent"]),
                                            np.linspace(*study.LAMBDA_GRID["restitution"]), indexing="ij"))
    roots = n.size
    rows = np.unique(np.linspace(0, 99, args.old_exponents).round().astype(int))
    old_n, old_e = (a.reshape(100, 600)[rows].ravel() for a in (n, e))
    inside = e < 1.0 - od.NEAR_ELASTIC_GAP
    pick = np.flatnonzero(inside)[::10]
    pick_n, pick_e = (jnp.asarray(a[pick]) for a in (n, e))
    pick_unit = od.improved_unit_damping(pick_n, pick_e)  # within 1e-3 of the roots, without compiling them
    rng = np.random.default_rng(0)
    picks = rng.choice(roots, size=args.subset, replace=False)
    ours_solve, diffrax_solve = solve_with_derivative(od.unit_restitution), solve_with_derivative(diffrax_restitution)
    calls = {
        "ours": lambda: study.lambda_grid(progress=False)["c_opt_unit"],
        "diffrax": lambda: old_grid(old_n, old_e),
        "ours solve": lambda: ours_solve(pick_unit, pick_n),
        "diffrax solve": lambda: diffrax_solve(pick_unit, pick_n),
        "scipy": lambda: np.array([scipy_optimal_damping(n[i], e[i]) for i in picks]),
    }
    first, best = in_turn(calls, args.repeats)
    run, run_old = best["ours"], best["diffrax"]
    print(f"ours (lockstep Dopri8, forward sensitivities), {roots} roots: compile ≈ {first['ours'] - run:.1f} s, "
          f"run {run:.2f} s ({run / roots * 1e3:.4f} ms/root)")
    print(f"diffrax method, {old_n.size} roots ({rows.size} exponents): compile ≈ {first['diffrax'] - run_old:.1f} s, "
          f"run {run_old:.2f} s ({run_old / old_n.size * 1e3:.4f} ms/root): ours {run_old / old_n.size / (run / roots):.1f}× "
          "faster per root")
    unit, old = calls["ours"](), calls["diffrax"]()
    ours = unit.reshape(100, 600)[rows].ravel()
    solved = old > 0
    print(f"max |c_ours − c_diffrax|/c over those roots: {np.max(np.abs(ours[solved] / old[solved] - 1)):.1e}")
    per_ours, per_diffrax = best["ours solve"] / pick.size, best["diffrax solve"] / pick.size
    print(f"one e_out and ∂e_out/∂ĉ at {pick.size} roots: ours {per_ours * 1e6:.1f} µs, diffrax "
          f"{per_diffrax * 1e6:.1f} µs ({per_diffrax / per_ours:.1f}×)")
    for name, residual in (("ours", new_residual), ("diffrax method", old_residual)):
        counts = iterations(residual, pick_n, pick_e)
        print(f"Newton iterations per root, {name}: " + ", ".join(f"{k}: {c}" for k, c in enumerate(counts) if c))

    scipy_time = min(first["scipy"], best["scipy"]) / args.subset
    print(f"SciPy solve_ivp + brentq, {args.subset} roots: {scipy_time * 1e3:.1f} ms/root")
    print(f"per root: ours {scipy_time / (run / roots):.0f}× SciPy, the diffrax method "
          f"{scipy_time / (run_old / old_n.size):.0f}×")
    reference = calls["scipy"]()
    nonzero = reference > 0
    print(f"max |c_ours − c_scipy|/c_scipy over those roots: "
          f"{np.max(np.abs(unit[picks][nonzero] / reference[nonzero] - 1)):.1e}")
    shipped = read_csv(data_file("damping_lambda.csv"))["c_opt_unit"]
    solved = shipped > 0
    difference = np.abs(unit[solved] / shipped[solved] - 1)
    worst = np.flatnonzero(solved)[np.argmax(difference)]
    print(f"max |c_ours − c_shipped|/c against data/damping_lambda.csv: {difference.max():.1e} "
          f"(n = {n[worst]:.3f}, e = {e[worst]:.5f})")
    checked = np.concatenate([rng.choice(np.flatnonzero(inside), size=args.subset, replace=False), [worst]])
    for name, roots_of in (("our roots", unit), ("the shipped roots", shipped)):
        error = [abs(scipy_restitution(roots_of[i], n[i], rtol=1e-13, atol=1e-16) / e[i] - 1) for i in checked]
        print(f"max |e_out − e|/e of {name}, re-solved by SciPy at rtol 1e-13 ({checked.size} roots): {max(error):.1e}")


if __name__ == "__main__":
    main()
