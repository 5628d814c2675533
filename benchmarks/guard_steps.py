"""Benchmark: what the friction guard could judge at each accepted step of another benchmark's derivatives.

    python benchmarks/guard_steps.py --rtol RTOL SCRIPT [ARGS ...]

Runs ``benchmarks/SCRIPT`` with ``ARGS`` in this process, with ``ForwardMode``'s guards off (so that no derivative
stops: the tangents' check left out, ``tangent_guard`` inf) but the friction guard's wrapper of the solver in place
(``friction_guard`` 1e30, whatever the script asks), and records for every forward-mode step through it: h λ_F at
its start (``_friction_rate``, as the guard computes it), the passage ratio of ``friction_steps`` (``_slip_passage``
with ``AdaptiveSteps``' default ``passage_step``; 1
at its bound) and the tangents' error relative to the tangents (rtol × the PID's scaled error of the tangent of
the step's error estimate, ``_scaled_error``, with atol = rtol/1000, as ``_tangents_error``). At the end it prints
the largest of each over the accepted steps (a step whose end state is the next one's start) of all the
script's derivatives: run one derivative per process (``--factors 1e30`` for ``guard_rolling.py``, one
``--rtols`` value for ``rolling_hop.py`` and ``friction_guard.py``). ``--rtol`` must be the runs' rtol.
docs/design/derivatives.md, "What a resting ball does to another ball's derivative".
"""

import atexit
import runpy
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import AdaptiveSteps
from diffimpact.multibody.integrate import segments, step_control

PASSAGE, ERROR_NORM = AdaptiveSteps().passage_step, AdaptiveSteps().norm


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "--rtol":
        sys.exit(__doc__.splitlines()[2].strip())
    rtol, script = float(sys.argv[2]), sys.argv[3]
    rows = []
    step = step_control.FrictionGuard.step

    def recorded(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, state, result = step(self, terms, t0, t1, y0, args, solver_state, made_jump)
        arrays, static = eqx.partition(args.model, eqx.is_array)

        @jax.custom_jvp
        def identity(y1, y_error, y0, h, arrays):
            return y1

        @identity.defjvp
        def identity_jvp(primals, tangents):
            y1, _, y0, h, arrays = primals
            model = eqx.combine(arrays, static)
            families = tuple(k for k, force in enumerate(model.forces) if getattr(force, "frictional", False))
            q0, v0 = (model.split(x) for x in y0)
            passage = step_control._slip_passage(families, step_control._loaded_slips(families, y0, model),
                                                 step_control._loaded_slips(families, y1, model), model, PASSAGE)
            error = rtol * step_control._scaled_error(tangents[1], tangents[2], tangents[0], rtol, rtol / 1000,
                                                      ERROR_NORM)[0]
            keys = [sum(jnp.sum(x * (1.0 + jnp.arange(x.size).reshape(x.shape))) for x in y) for y in (y0, y1)]
            jax.debug.callback(lambda *a: rows.append([float(x) for x in a]),
                               h * step_control._friction_rate(model, families, q0, v0), passage, error, *keys)
            return y1, tangents[0]

        return identity(y1, y_error, y0, jax.lax.stop_gradient(t1 - t0), arrays), y_error, dense_info, state, result

    def summary():
        if not rows:
            print("guard_steps: no differentiated steps through the friction guard")
            return
        table = np.array(rows)
        accepted = table[np.append(table[1:, 3] == table[:-1, 4], True)]
        print(f"guard_steps: {len(accepted)} accepted steps of {len(table)}; largest h lambda_F "
              f"{accepted[:, 0].max():.3g}, passage ratio {accepted[:, 1].max():.3g}, tangents' error "
              f"{accepted[:, 2].max():.2g}")

    step_control.FrictionGuard.step = recorded
    guard = segments.friction_guard
    segments.friction_guard = lambda solver, factor, bound: guard(solver, 1e30, bound)
    segments.tangent_check = lambda controller, derivatives: {}
    atexit.register(summary)
    sys.argv = [script, *sys.argv[4:]]
    sys.path.insert(0, ".")
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
