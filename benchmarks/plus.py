"""Benchmark: one PLUS impact (Uchida, Sherman & Delp 2015) beside integrating the same impact with the compliant model.

    python benchmarks/plus.py [--repeats 5]

Example 1 (Table A1, ``diffimpact reproduce plus-brick``): the brick's
single-point impact at μ = 0.125, 0.225, 0.325. Reports, in one run:

(a) ``diffimpact.impulse.Plus`` jitted once (μ, e_min and θ_max
    traced) on the impact's (W, u⁻), for θ_max = 0.01 rad (Fig. 8: 116–131
    intervals) and 0.15 rad (Fig. 10: about 11): compile time and run time
    apart, and the intervals taken;
(b) ``diffimpact.multibody.simulate`` integrating the compliant brick of
    ``plus-brick`` (Hertz + Hunt–Crossley, 10 GPa, regularised Coulomb)
    through the impact, 0 to 0.8 ms, at the reproduction's tolerances
    (rtol 1e-9, atol 1e-12) and at rtol 1e-5, atol 1e-8 (about the paper's
    Runge–Kutta–Merson accuracy of 1e-5): compile and run time, solver steps,
    and how far its total impulse m Δv lies from PLUS's;
(c) the ratios (b)/(a) of the run times (the paper: PLUS more than 20×
    faster than its compliant model, Fig. 15).

Compile time is the first call minus the best later call. CPU, float64.
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
from diffimpact.multibody import AdaptiveSteps, ContactEvents, LagrangeMultipliers, simulate
from diffimpact.reproduce import plus as study
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation

TOLERANCES = {"tight": dict(rtol=1e-9, atol=1e-12), "loose": dict(rtol=1e-5, atol=1e-8)}
SAVE_TIMES = np.array([0.0, 8e-4])


def _compile(seconds):
    return f"≈ {seconds:.2f} s" if seconds > 0.05 else "(cached)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    p = study.EXAMPLE_1
    W, u, _ = study.example_1_problem()
    twist = np.concatenate([p["velocity"], np.zeros(3)])
    vertex = int(np.argmin(study.brick_vertices(study.EXAMPLE_1_ROTATION)[:, 2]))
    impact = study._plus_compiled()
    print(f"device: {jax.devices()[0].device_kind}, {jax.device_count()} device(s)")
    rows = []
    for mu, e in zip(p["friction"], p["min_restitution"]):
        line = {"mu": mu}
        for theta in (0.01, 0.15):
            first, best = timed(impact, W, u, e, mu, theta, repeats=args.repeats)
            result = impact(W, u, e, mu, theta)
            line[theta] = (first - best, best, int(result.intervals), np.asarray(result.impulse)[[1, 2, 0]])
        model, state, _ = study.brick_model([vertex], study.EXAMPLE_1_ROTATION, twist, mu, p["stiffness"],
                                            p["dissipation"])
        for name, tolerance in TOLERANCES.items():
            run = lambda: simulate(model, state, SAVE_TIMES, LagrangeMultipliers(),  # noqa: E731
                                   steps=AdaptiveSteps(**tolerance), events=ContactEvents(max_events=4)).v
            first, best = timed(run, repeats=args.repeats)
            trajectory = simulate(model, state, SAVE_TIMES, LagrangeMultipliers(), steps=AdaptiveSteps(**tolerance),
                                  events=ContactEvents(max_events=4))
            impulse = study.BRICK["mass"] * (np.asarray(trajectory.v[-1, :3]) - twist[:3])
            line[name] = (first - best, best, int(trajectory.steps), impulse)
        rows.append(line)

    for line in rows:
        mu = line["mu"]
        print(f"\nμ = {mu}")
        for theta in (0.01, 0.15):
            compile_time, run, intervals, _ = line[theta]
            print(f"  (a) PLUS θ_max = {theta}: compile {_compile(compile_time)}, run {run * 1e3:.3f} ms "
                  f"({intervals} intervals, {run / intervals * 1e6:.1f} µs/interval)")
        reference = line[0.01][3]
        for name in TOLERANCES:
            compile_time, run, steps, impulse = line[name]
            difference = np.abs(impulse - reference).max() / np.abs(reference).max()
            print(f"  (b) compliant, {name} (rtol {TOLERANCES[name]['rtol']:g}): compile {_compile(compile_time)}, "
                  f"run {run * 1e3:.2f} ms ({steps} steps); impulse differs from PLUS's by {100 * difference:.2f} %")
        for name in TOLERANCES:
            ratios = ", ".join(f"θ_max = {theta}: {line[name][1] / line[theta][1]:.1f}×" for theta in (0.01, 0.15))
            print(f"  (c) compliant {name} / PLUS: {ratios}")


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
