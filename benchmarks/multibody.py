"""Benchmark: the 8-s two-pendulum run of [Poursina 2020] §6 (eq. (50) contact) — forward, gradient, batch.

    python benchmarks/multibody.py [--batch 1000] [--repeats 3]

Reports, in one run, for ``diffimpact.multibody.simulate`` on the scene of
``diffimpact.scenes.two_pendulum`` (LagrangeMultipliers, rtol = atol = 1e-9 as
in ``diffimpact reproduce two-pendulum``, 801 save times):

* compile time and run time of the forward run, solver steps and steps/s;
* the cost of one gradient of θ̇₂ just after the first impact with respect to
  (k, e) (reverse mode through all the contact events), relative to the
  forward run (goal: under 4×);
* a vmapped batch of runs over e ∈ [0.2, 0.8]: compile and run time, runs/s,
  and the speed-up over the same number of single jitted runs.

Compile time is the first call minus the best later call.
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
from diffimpact.multibody import AdaptiveSteps, LagrangeMultipliers, simulate
from diffimpact.scenes import two_pendulum as tp
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation

TOLERANCES = dict(rtol=1e-9, atol=1e-9)
SAVE_TIMES = jnp.linspace(0.0, tp.DURATION, 801)


METHOD = "exact"


def _run(stiffness, restitution):
    p = tp.Parameters(stiffness=stiffness, restitution=restitution)
    model = tp.model(p, "optimal", METHOD)
    return simulate(model, tp.initial_state(p), SAVE_TIMES, LagrangeMultipliers(), steps=AdaptiveSteps(**TOLERANCES))


@jax.jit
def forward(stiffness, restitution):
    trajectory = _run(stiffness, restitution)
    return trajectory.v, trajectory.events.count, trajectory.steps


def first_rebound(params):
    """θ̇₂ (rad/s) just after the first contact ends (the state saved at its separation event)."""
    stiffness, restitution = params
    events = _run(stiffness, restitution).events
    return tp.angular_velocities(events.v[1])[1]


gradient = jax.jit(jax.grad(first_rebound))
batch = jax.jit(jax.vmap(lambda e: forward(1e8, e)[0][-1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1000, help="runs in the vmapped batch (default 1000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the first (default 3)")
    parser.add_argument(
        "--method", default="exact", choices=("exact", "improved", "paper"),
        help="how the contact's optimal damping is found at each impact (default exact)",
    )
    args = parser.parse_args()
    global METHOD
    METHOD = args.method
    print(f"JAX {jax.__version__} on {jax.devices()[0].device_kind} ({jax.device_count()} device(s))")

    k, e = jnp.asarray(1e8), jnp.asarray(0.3)
    first, run = timed(forward, k, e, repeats=args.repeats)
    _, count, steps = forward(k, e)
    steps = int(steps)
    print(
        f"forward 8-s run: compile ≈ {first - run:.2f} s, run {run * 1e3:.1f} ms, {int(count)} contact events, "
        f"{steps} steps ({steps / run:,.0f} steps/s)"
    )

    params = jnp.stack([k, e])
    first_g, run_g = timed(gradient, params, repeats=args.repeats)
    g = np.asarray(gradient(params))
    print(
        f"gradient of θ̇₂ after the first impact w.r.t. (k, e) = ({g[0]:.3e}, {g[1]:.4f}): "
        f"compile ≈ {first_g - run_g:.2f} s, run {run_g * 1e3:.1f} ms = {run_g / run:.2f}× the forward run"
    )

    restitutions = jnp.linspace(0.2, 0.8, args.batch)
    first_b, run_b = timed(batch, restitutions, repeats=max(1, args.repeats // 3))
    print(
        f"vmapped batch of {args.batch} runs over e: compile ≈ {first_b - run_b:.2f} s, run {run_b:.2f} s "
        f"({args.batch / run_b:.1f} runs/s) = {args.batch * run / run_b:.2f}× the throughput of single jitted runs"
    )
    # The batch must give what single runs give.
    batched = np.asarray(batch(restitutions))
    for i in (0, args.batch // 2, args.batch - 1):
        single = np.asarray(forward(k, restitutions[i])[0][-1])
        assert np.allclose(single, batched[i], rtol=1e-9, atol=1e-12), (i, single, batched[i])


if __name__ == "__main__":
    main()
