"""Benchmark: the analytic maximum-dissipation impulse (Preclik et al. 2017, Fig. 5) beside a generic solver.

    python benchmarks/max_dissipation.py [--cases 100000] [--generic-cases 200] [--repeats 3]

Compares in one run, on random single-contact problems (W = L Lᵀ + 0.05 E
with L standard normal, u⁻ standard normal with u⁻_n < 0, μ uniform in
[0, 2]):

(a) ``diffimpact.impulse.MaxDissipation`` jitted (μ traced) and
    broadcast over ``--cases`` problems (compile time and run time apart),
    per problem;
(b) SciPy's SLSQP on the same convex problem (min ½λᵀWλ + λᵀu⁻ subject to
    u⁺_n = 0, λ_n ≥ 0, μ²λ_n² ≥ ‖λ_to‖²), one start from λ = 0 … per
    problem, over ``--generic-cases`` of them; the largest energy difference
    (a) − (b) is printed (negative: ours lower).

Also the share of each case of the structogram in the batch, and

(c) one time step of §3.1 (``diffimpact.rigid_spheres.simulate``) on
    the ten spheres of ``diffimpact reproduce maxdiss-stepping`` poured into
    their box (95 candidate contacts, ε = 0.2), ``--stepping-steps`` steps from
    the start, at 5, 20 and 80 Gauss–Seidel sweeps: per step, compile time
    apart.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import minimize

import diffimpact
from diffimpact import rigid_spheres
from diffimpact.impulse import MaxDissipation
from diffimpact.reproduce.max_dissipation import POURED, poured_scene
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def problems(count, seed=0):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(count, 3, 3))
    W = L @ np.swapaxes(L, 1, 2) + 0.05 * np.eye(3)
    u = rng.normal(size=(count, 3))
    u[:, 0] = -np.abs(u[:, 0])
    return W, u, rng.uniform(0.0, 2.0, count)


def energy(W, u, impulse):
    return 0.5 * np.einsum("...i,...ij,...j->...", impulse, W, impulse) + np.einsum("...i,...i->...", impulse, u)


def generic(W, u, mu):
    constraints = [{"type": "eq", "fun": lambda x: u[0] + W[0] @ x}, {"type": "ineq", "fun": lambda x: x[0]},
                   {"type": "ineq", "fun": lambda x: (mu * x[0]) ** 2 - x[1] ** 2 - x[2] ** 2}]
    start = np.array([-u[0] / W[0, 0], 0.0, 0.0])  # the frictionless impulse: feasible
    return minimize(lambda x: energy(W, u, x), start, constraints=constraints, method="SLSQP",
                    options={"ftol": 1e-14, "maxiter": 500}).x


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--generic-cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stepping-steps", type=int, default=400)
    args = parser.parse_args()

    W, u, mu = problems(args.cases)
    solve = jax.jit(lambda W, u, mu: MaxDissipation(mu)(W, u).impulse)
    first, best = timed(solve, W, u, mu, repeats=args.repeats)
    per_case = best / args.cases
    print(f"(a) MaxDissipation, jitted, broadcast over {args.cases} problems: compile ≈ {first - best:.2f} s, "
          f"run {best:.3f} s = {per_case * 1e6:.2f} µs/problem")

    n = args.generic_cases
    start = time.perf_counter()
    reference = np.array([generic(W[i], u[i], mu[i]) for i in range(n)])
    generic_time = (time.perf_counter() - start) / n
    print(f"(b) SciPy SLSQP, {n} problems: {generic_time * 1e6:.0f} µs/problem")
    print(f"ratio (b)/(a) = {generic_time / per_case:.0f}x")

    ours = np.asarray(solve(W, u, mu))
    difference = energy(W[:n], u[:n], ours[:n]) - energy(W[:n], u[:n], reference)
    print(f"energy (a) − (b) over the {n}: max {difference.max():.1e}, min {difference.min():.1e} J")

    x0 = np.linalg.solve(W, -u[..., None])[..., 0]
    stick = (x0[:, 0] >= 0) & (np.hypot(x0[:, 1], x0[:, 2]) <= mu * x0[:, 0])
    ellipse = W[:, 0, 0] > mu * np.hypot(W[:, 0, 1], W[:, 0, 2])
    print(f"cases: sticking (P₁) {stick.mean():.1%}, sliding on an ellipse {(~stick & ellipse).mean():.1%}, "
          f"on a hyperbola {(~stick & ~ellipse).mean():.1%}")

    scene, start = poured_scene()
    steps = args.stepping_steps
    for sweeps in (5, 20, 80):
        run = lambda: rigid_spheres.simulate(scene, start, POURED["dt"], steps, error_reduction=0.2,  # noqa: E731
                                             sweeps=sweeps)
        first, best = timed(run, repeats=args.repeats)
        loaded = float((np.asarray(run().impulse[..., 0]) > 0).sum(axis=1).mean())
        print(f"(c) {scene.spheres} poured spheres, {len(scene.pairs()[0])} candidate contacts ({loaded:.1f} loaded "
              f"on average), {sweeps} sweeps: compile ≈ {first - best:.1f} s, {best / steps * 1e3:.2f} ms/step")


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
