"""Eq. (2.20) for the 16-ball table: body by body (``constrained_acceleration``) beside one dense saddle-point solve.

One evaluation of the accelerations (forces, M, D, γ and the solve) at a
perturbed break state, timed inside a compiled loop of ``--evaluations``
(no dispatch), both ways in one run; and the largest difference of the two.
Body by body, the free balls take the closed form of
``formulations._normalised_acceleration`` (no solve at all).

    python benchmarks/saddle_point.py
"""

import argparse
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody.formulations import _saddle_point_solve, constrained_acceleration
from diffimpact.scenes import billiard


def per_evaluation(acceleration, q, evaluations, repeats=3):
    """Best time (s) of one ``acceleration(q)`` over ``repeats`` compiled loops of ``evaluations``."""
    @jax.jit
    def loop(q):
        return jax.lax.fori_loop(0, evaluations, lambda i, acc: acc + 1e-30 * jnp.sum(acceleration(q + 1e-30 * acc)),
                                 0.0)

    loop(q).block_until_ready()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        loop(q).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best / evaluations


def perturbed_break():
    """(model, state, q, v): the 16-ball table at its break state with every ball on the cloth, as in the run, and
    q, v perturbed (seed 0) so that every contact and spin is at work."""
    p = billiard.Parameters()
    model, state = billiard.table_model(p), billiard.break_state(p)
    model = eqx.tree_at(lambda m: m.forces[1].engaged, model, jnp.ones(16))  # resting on the cloth, as in the run
    rng = np.random.default_rng(0)
    q = state.q + 1e-4 * rng.standard_normal(state.q.shape)
    v = state.v + rng.standard_normal(state.v.shape)
    return model, state, q, v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=200)
    args = parser.parse_args()
    model, state, q, v = perturbed_break()
    ways = {
        "body by body": lambda q: constrained_acceleration(model, q, state.t, model.generalized_force(q, v, state.t),
                                                           model.gamma(q, v, state.t)),
        "dense": lambda q: _saddle_point_solve(model.mass_matrix(q), model.jacobian(q, state.t),
                                               model.generalized_force(q, v, state.t), model.gamma(q, v, state.t)),
    }
    results = {name: way(q) for name, way in ways.items()}
    difference = jnp.max(jnp.abs(results["body by body"] - results["dense"])) / jnp.max(jnp.abs(results["dense"]))
    print(f"16 balls, one evaluation of the accelerations; max |body by body − dense| / max |dense| = {difference:.1e}")
    times = {name: per_evaluation(way, q, args.evaluations) for name, way in ways.items()}
    for name, seconds in times.items():
        print(f"  {name:13s} {1e6 * seconds:8.1f} µs")
    print(f"  dense / body by body: {times['dense'] / times['body by body']:.2f}")


if __name__ == "__main__":
    main()
