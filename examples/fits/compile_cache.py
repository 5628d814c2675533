"""Compile once, fit many: the cost of ``fitting.fit`` with and without reusing its compiled step.

The problem is the ``impact-stiffness`` study's scalar fit (contact duration and
restitution of a Hertz + linear-damper impact, 2 parameters, a diffrax solve
per residual evaluation) with a fixed number of Adam steps. It is fitted
``REPEATS`` times to differently seeded data in two ways, side by side:

* "fresh closure": ``fit(lambda p: model(p) - data, ...)``, a new function
  object per call, so every fit traces and compiles its step again;
* "eqx.Partial": ``fit(eqx.Partial(residuals, data), ...)`` with
  ``residuals(data, params)`` defined once; the data are array leaves of the
  problem, so the second and later fits reuse the compiled step.

Printed per fit: the wall time, the time of its first step (trace + compile +
one step when not cached) and the mean time of its other steps. Run::

    python examples/fits/compile_cache.py
"""

import sys
import time

import equinox as eqx
import numpy as np

import diffimpact
import fitting.fit  # noqa: F401
from fitting import impact_stiffness as study

diffimpact.configure()  # float64 and the CPU cap, before the first computation

fit_module = sys.modules["fitting.fit"]
REPEATS = 3
STEPS = 20


def residuals(data, params):
    return study.duration_and_restitution(params) - data


def _timed_steps(step_times):
    original = fit_module._minimise

    def minimise(step, *args, **kwargs):
        def timed(*step_args):
            start = time.perf_counter()
            out = step(*step_args)
            float(out[2])
            step_times.append(time.perf_counter() - start)
            return out

        return original(timed, *args, **kwargs)

    return minimise


def run_fits(kind):
    rows = []
    for repeat in range(REPEATS):
        truth = np.asarray(study.duration_and_restitution(study.TRUTH))
        data = truth + study.SCALAR_SIGMA * np.random.default_rng(repeat).normal(size=2)
        residual_fn = (lambda p, data=data: residuals(data, p)) if kind == "fresh closure" else eqx.Partial(residuals, data)
        step_times = []
        fit_module._minimise = _timed_steps(step_times)
        start = time.perf_counter()
        fit_module.fit(residual_fn, study.INITIAL_GUESS, study.SPEC, sigma=study.SCALAR_SIGMA, absolute_sigma=True,
                       max_steps=STEPS, gtol=1e-300, ftol=1e-300, progress=False)
        rows.append((time.perf_counter() - start, step_times[0], np.mean(step_times[1:])))
    return rows


def main():
    original = fit_module._minimise
    try:
        results = {kind: run_fits(kind) for kind in ("fresh closure", "eqx.Partial")}
    finally:
        fit_module._minimise = original
    print(f"{STEPS + 1} steps per fit, {REPEATS} fits per kind (same problem structure, different data)")
    print(f"{'residual function':<16s} {'fit':>3s} {'wall (s)':>9s} {'1st step (s)':>13s} {'later steps (ms)':>17s}")
    for kind, rows in results.items():
        for i, (wall, first, later) in enumerate(rows):
            print(f"{kind:<16s} {i + 1:>3d} {wall:9.2f} {first:13.2f} {1e3 * later:17.2f}")
    fresh, cached = results["fresh closure"], results["eqx.Partial"]
    repeat_ratio = np.mean([r[0] for r in fresh[1:]]) / np.mean([r[0] for r in cached[1:]])
    print(f"repeated fits: fresh closure / eqx.Partial wall-time ratio = {repeat_ratio:.0f}")


if __name__ == "__main__":
    main()
