"""Check: `simulate`'s derivatives in both modes through every formulation and the options that change a run.

    python validation/derivative_options.py          # about 10 min on 2 cores

Two runs, each differentiated by reverse mode (``jax.grad``, ``simulate``'s default ``ReverseMode()``) and by
forward mode (``jax.jvp`` with ``ForwardMode()``), against central differences (relative step 1e-5) of the same
run:

* **the ball**: a planar ball (0.5 kg, radius 5 cm) dropped from a height h above Hertz ground with a linear
  damper (k = 1e6, n = 1.5, 50 N s/m^1.5) and regularised Coulomb friction (μ = 0.3, v_reg = 1e-3 m/s),
  moving sideways at 0.5 m/s and down at 1 m/s, for 0.2 s at rtol 1e-8: its final height with respect to h
  (onsets, separations and the friction's slip into rolling on the way);
* **the pendulum**: the double pendulum of ``scenes.double_pendulum`` for 0.5 s at rtol 1e-10: its second
  angle with respect to the second link's mass.

The ball through each formulation, and through ``dt``, ``max_step``, ``progress``, ``friction_steps`` with
``contact_steps``, ``Dopri5`` and ``Kvaerno5`` under ``Baumgarte`` and ``DirectCorrection``; the pendulum
through each formulation. The ball's reverse-mode runs take ``friction_steps`` (without it ``simulate`` refuses a
reverse-mode derivative through friction; with ``dt``, which it cannot bound, the derivative is refused). A pair
that fails prints its error. docs/design/derivatives.md, "The stiff slips' tangents projected after each step (not
adopted)", its paragraph
"Derivatives and options, checked together".
"""

import argparse
import sys
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _errors
import diffimpact  # noqa: E402
import _errors  # noqa: E402
from diffimpact.contact.friction import Coulomb  # noqa: E402
from diffimpact.contact.normal import HertzLinearDamper  # noqa: E402
from diffimpact.multibody import (  # noqa: E402
    AdaptiveSteps,
    AugmentedLagrangian,
    Baumgarte,
    CirclePlane,
    Contact,
    DirectCorrection,
    FixedSteps,
    ForwardMode,
    Gravity,
    LagrangeMultipliers,
    Model,
    PlanarBody,
    ReverseMode,
    State,
    simulate,
)
from diffimpact.scenes import double_pendulum  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

MASS, RADIUS = 0.5, 0.05
FORMULATIONS = (LagrangeMultipliers(), Baumgarte(), AugmentedLagrangian(), DirectCorrection())
OPTIONS = ({"dt": 1e-5}, {"max_step": 1e-3}, {"progress": True}, {"friction_steps": True, "contact_steps": True},
           {"solver": diffrax.Dopri5()}, {"solver": diffrax.Kvaerno5()})


def ball(height, formulation, derivatives=ReverseMode(), dt=None, solver=None, progress=False, **step_fields):
    """The ball's final height (m) after 0.2 s, dropped from ``height`` (m) above its contact: with fixed steps
    ``dt``, or adaptive steps with ``AdaptiveSteps``' ``step_fields``."""
    body = PlanarBody(MASS, 0.5 * MASS * RADIUS**2, name="ball")
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), RADIUS)
    model = Model([body], (), (Gravity((0.0, -9.81)), Contact(ground, HertzLinearDamper(1e6, 1.5, 50.0),
                                                              Coulomb(0.3, 1e-3))))
    state = State(jnp.stack([0.0, RADIUS + height, 0.0]), jnp.stack([0.5, -1.0, 0.0]))
    steps = FixedSteps(dt) if dt is not None else AdaptiveSteps(**{"rtol": 1e-8, "atol": 1e-10, **step_fields})
    run = simulate(model, state, jnp.array([0.0, 0.2]), formulation, solver=solver, steps=steps,
                   derivatives=derivatives, progress=progress)
    return run.q[-1, 1]


def pendulum(mass, formulation, derivatives=ReverseMode()):
    """The double pendulum's second angle (rad) after 0.5 s, its second link of ``mass`` (kg)."""
    p = double_pendulum.Parameters(m2=mass)
    run = simulate(double_pendulum.model(p), double_pendulum.initial_state(p), jnp.array([0.0, 0.5]), formulation,
                   steps=AdaptiveSteps(rtol=1e-10, atol=1e-10), derivatives=derivatives)
    return double_pendulum.angles(run.q)[-1, 1]


def check(name, fn, x0, formulation, reverse=None, **options):
    """Print the central difference and each mode's derivative with its relative difference (or its failure);
    ``reverse``: reverse mode's options besides ``options``."""
    h = 1e-5 * x0
    reference = (float(fn(x0 + h, formulation, **options)) - float(fn(x0 - h, formulation, **options))) / (2 * h)
    modes = {"reverse": lambda: jax.grad(lambda x: fn(x, formulation, **options, **(reverse or {})))(x0),
             "forward": lambda: jax.jvp(lambda x: fn(x, formulation, ForwardMode(), **options),
                                        (x0,), (1.0,))[1]}
    found = []
    for mode, derivative in modes.items():
        try:
            value = float(derivative())
            found.append(f"{mode} {value:.8g} ({abs(value - reference) / abs(reference):.1e})")
        except Exception as error:  # noqa: BLE001 (a failing pair is the finding: printed, and the rest goes on)
            found.append(f"{mode} failed: {type(error).__name__}: {_errors.message(error)[:100]}")
    label = ", ".join(f"{k}={type(v).__name__ if k == 'solver' else v}" for k, v in options.items())
    print(f"  {name:9s} {type(formulation).__name__:20s} {label:40s} central {reference:.8g}; " + "; ".join(found),
          flush=True)
    # every pair compiles programs of its own: without this, LLVM ran out of memory for their code (mapped
    # sections) before the last pairs in one process
    jax.clear_caches()


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # (no options: --help says what it does)
    print("derivatives against central differences (relative step 1e-5), relative differences in brackets")
    for formulation in FORMULATIONS:
        check("ball", ball, 0.01, formulation, {"friction_steps": True})
        check("pendulum", pendulum, 3.8, formulation)
    for options in OPTIONS:
        reverse = None if "dt" in options or "friction_steps" in options else {"friction_steps": True}
        for formulation in (Baumgarte(), DirectCorrection()):
            check("ball", ball, 0.01, formulation, reverse, **options)


if __name__ == "__main__":
    main()
