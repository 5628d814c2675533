"""Benchmark: fit iterations, Jacobian cost and sharded sweeps of the ``fitting`` package.

    python benchmarks/fit_speed.py [--sweep 64] [--skip-two-pendulum]

Reports, in one run (compile time = first call minus the best later call):

* ``impact-stiffness``: one fit of k, e to the quick synthetic force–
  penetration history (one start, Adam, the study's settings): compile time,
  run time, iterations to converge and time per iteration;
* the cost of the residual Jacobian relative to one evaluation of the
  residuals: forward mode for that fit (its solves use ``diffrax.ForwardMode``),
  forward and reverse mode for the two-pendulum fit (the quick data's save
  times × 2 rates through the contact events);
* a sharded sensitivity sweep (``fitting.sensitivity_study.sweep``: the
  forward-mode Jacobian of the central impact at ``--sweep`` restitutions)
  on 1 and on 4 host devices (``XLA_FLAGS=--xla_force_host_platform_device_count``,
  each in its own process): run time, points/s and the ratio.
"""

import argparse
import os
import subprocess
import sys
import time

import diffimpact
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation

SWEEP_SCRIPT = """
import time, numpy as np, jax
from fitting import sensitivity_study as ss
e = np.linspace(0.2, 0.9, {points})
start = time.perf_counter(); ss.sweep("optimal-damping", e, damping_method="improved"); first = time.perf_counter() - start
start = time.perf_counter(); ss.sweep("optimal-damping", e, damping_method="improved"); run = time.perf_counter() - start
print(jax.device_count(), first - run, run)
"""


def impact_stiffness():
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    from fitting import impact_stiffness as study
    from fitting.fit import fit

    data = study.synthetic_data(quick=True)
    arguments = (jnp.asarray(data["times"]), jnp.asarray(data["history"]), jnp.asarray(study.MASS),
                 jnp.asarray(study.IMPACT_VELOCITY))
    residuals = eqx.Partial(study._history_residuals, arguments)
    options = dict(sigma=data["sigma"], max_steps=study.MAX_STEPS, starts=1, progress=False)
    walls, results = [], []
    for _ in range(2):
        start = time.perf_counter()
        results.append(fit(residuals, study.INITIAL_GUESS, study.SPEC, **options))
        walls.append(time.perf_counter() - start)
    result = results[-1]
    print(
        f"impact-stiffness fit (1 start, {len(data['times'])} samples × 2 channels): compile ≈ {walls[0] - walls[1]:.1f} s, "
        f"run {walls[1]:.2f} s, {result.steps} iterations (converged={result.converged}), "
        f"{walls[1] / result.steps * 1e3:.2f} ms/iteration"
    )
    params = study.INITIAL_GUESS
    forward = eqx.filter_jit(lambda p: residuals(p))
    jac_fwd = eqx.filter_jit(jax.jacfwd(lambda p: residuals(p)))
    # The study's central-impact solves use diffrax.ForwardMode: forward-mode Jacobians only.
    report("impact-stiffness residuals", forward, {"forward-mode": jac_fwd}, params)


def two_pendulum():
    import jax
    import jax.numpy as jnp

    from diffimpact.multibody import (AdaptiveSteps, ContactEvents, ForwardMode, LagrangeMultipliers, ReverseMode,
                                      simulate)
    from diffimpact.scenes import two_pendulum as tp
    from fitting import two_pendulum as study

    times = jnp.asarray(study.sample_times(True, study.true_onsets(True)))

    def rates(theta, derivatives):
        p = tp.Parameters(stiffness=theta[0], restitution=theta[1])
        run = simulate(tp.model(p, "optimal", study.METHOD), tp.initial_state(p), times, LagrangeMultipliers(),
                       steps=AdaptiveSteps(rtol=study.TOLERANCE, atol=study.TOLERANCE),
                       events=ContactEvents(max_events=study.MAX_EVENTS), derivatives=derivatives)
        return tp.angular_velocities(run.v)

    theta = jnp.array([1e8, 0.3])
    forward = jax.jit(lambda t: rates(t, ForwardMode()))
    jac_fwd = jax.jit(jax.jacfwd(lambda t: rates(t, ForwardMode())))
    jac_rev = jax.jit(jax.jacrev(lambda t: rates(t, ReverseMode())))
    report(f"two-pendulum rates ({times.size} times × 2)", forward, {"forward-mode": jac_fwd, "reverse-mode": jac_rev}, theta)


def report(name, forward, jacobians, params):
    first, run = timed(forward, params)
    print(f"{name}: evaluation compile ≈ {first - run:.1f} s, run {run * 1e3:.2f} ms")
    for label, fn in jacobians.items():
        first_j, run_j = timed(fn, params)
        print(f"  {label} Jacobian: compile ≈ {first_j - run_j:.1f} s, run {run_j * 1e3:.2f} ms = {run_j / run:.2f}× an evaluation")


def sweep(points):
    runs = {}
    for devices in (1, 4):
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
        out = subprocess.run([sys.executable, "-c", SWEEP_SCRIPT.format(points=points)], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        count, compile_time, run = int(out[-3]), float(out[-2]), float(out[-1])
        runs[devices] = run
        print(f"sharded sensitivity sweep, {points} points on {count} host device(s): compile ≈ {compile_time:.1f} s, "
              f"run {run:.2f} s ({points / run:.1f} points/s)")
    print(f"  4 devices / 1 device throughput: {runs[1] / runs[4]:.2f}× (on {os.cpu_count()} CPU cores)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", type=int, default=64, help="points of the sharded sweep (default 64)")
    parser.add_argument("--skip-two-pendulum", action="store_true", help="leave out the two-pendulum Jacobians")
    args = parser.parse_args()
    import jax

    import diffimpact  # noqa: F401  (float64)

    print(f"JAX {jax.__version__} on {jax.devices()[0].device_kind}, {os.cpu_count()} CPU cores")
    impact_stiffness()
    if not args.skip_two_pendulum:
        two_pendulum()
    sweep(args.sweep)


if __name__ == "__main__":
    main()
