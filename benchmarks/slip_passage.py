"""Benchmark: where the break's μ derivative was lost — the cue ball's slip passing through the cloth's band.

    python benchmarks/slip_passage.py [--variants paper no-friction coulomb-0.1 coulomb-1e-3 ambrosio-cloth
                                       alciatore-balls]
                                      [--contact-steps [FAMILY ...]] [--passage-step C] [--friction-step C] [--guard FACTOR]
                                      [--time 0.1146]
                                      [--rtols 1e-6 1e-8 1e-10 1e-12]

The break with two balls (``billiard.table_model(p, balls=2)``, ``break_state``: the cue ball sliding at
10.729 m/s into the head ball), ``reproduce break``'s settings with ``friction_steps`` at each rtol of
``--rtols`` (atol = 1e-3 rtol). Forward mode (``jax.jvp``, ``ForwardMode``) of the cue ball's x and ẋ
at ``--time`` s (just after the collision) with respect to the cue speed, against central differences of
runs at rtol = 1e-12 (relative steps 1e-4 and 1e-5; the second is the reference); the steps the state's error
sets (``tangent_errors=False``), those the bounds were made for. Variants of the laws:

* ``paper``: the table's (the cloth's Ambrósio band, v0 = 1e-4 and v1 = 1e-3 m/s; Alciatore's ball–ball friction);
* ``no-friction``: neither friction;
* ``coulomb-V``: the cloth's friction the smooth ``Coulomb(μ, V)``, no ball–ball friction;
* ``ambrosio-cloth``: the cloth's Ambrósio band as in ``paper``, no ball–ball friction;
* ``alciatore-balls``: Alciatore's ball–ball friction as in ``paper``, no cloth friction;
* ``rounded-W``: as ``ambrosio-cloth``, with the corners of Ambrósio's c_d(|v|) at v0 and v1 rounded over ±W
  (m/s) into parabolas, so that the law is C¹ (``RoundedAmbrosio`` below, a check of this benchmark's, not a
  law of the package);
* ``v0-V``: as ``ambrosio-cloth``, with Ambrósio's lower tolerance speed v0 (the end of its dead zone) = V m/s.

``--contact-steps [FAMILY ...]``: every run with ``AdaptiveSteps``' ``contact_steps`` (the Hertz onset) on ``all``
families, on those named of the cloth, the ball pairs and the cushions, or with none named on none, instead of the
table's default (the cushions). ``--passage-step C``:
``AdaptiveSteps``' ``passage_step`` (``inf``: ``friction_steps``' stability bound alone, without the
passages' bound); ``--friction-step C`` its ``friction_step`` (``_bounds``). docs/design/step-control.md, "The
slip's passage through the band".
"""

import argparse
import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import _bounds
from diffimpact.contact import Ambrosio, Coulomb
from diffimpact.multibody import simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

BALLS = 2


class RoundedAmbrosio(Ambrosio):
    """Ambrósio's law with its two corners rounded over ±``width`` (m/s): c_d = [s(|v| − v0) − s(|v| − v1)]/(v1 − v0),
    s(x) = max(x, 0) with a parabola (x + w)²/4w for |x| < w. C¹; the paper's law beyond w of the corners."""

    width: jnp.ndarray

    def __init__(self, law, width):
        super().__init__(law.coefficient, law.lower_tolerance_speed, law.upper_tolerance_speed)
        self.width = width

    def magnitude(self, normal_force, slip_speed):
        def rounded(x):
            return jnp.where(x <= -self.width, 0.0,
                             jnp.where(x >= self.width, x, (x + self.width) ** 2 / (4 * self.width)))

        ramp = (rounded(slip_speed - self.lower_tolerance_speed) - rounded(slip_speed - self.upper_tolerance_speed))
        return self.coefficient * normal_force * ramp / (self.upper_tolerance_speed - self.lower_tolerance_speed)


def model_and_state(variant, speed):
    p = billiard.Parameters()
    model, state = billiard.table_model(p, balls=BALLS), billiard.break_state(p, balls=BALLS, speed=speed)
    cloth, pairs = billiard.TABLE_FORCES.index("cloth"), billiard.TABLE_FORCES.index("ball–ball")
    if variant not in ("paper", "no-friction", "ambrosio-cloth", "alciatore-balls") and not variant.startswith(
            ("coulomb-", "rounded-", "v0-")):
        raise SystemExit(f"unknown variant {variant!r}")
    if variant not in ("paper", "alciatore-balls"):  # no ball–ball friction
        none = jax.tree.map(lambda x: jnp.broadcast_to(x, (model.forces[pairs].count,)), Coulomb(0.0, 0.1))
        model = eqx.tree_at(lambda m: m.forces[pairs].friction, model, none)
    if variant.startswith("v0-"):
        law = model.forces[cloth].friction
        law = Ambrosio(law.coefficient, jnp.full(BALLS, float(variant.split("-", 1)[1])), law.upper_tolerance_speed)
        return eqx.tree_at(lambda m: m.forces[cloth].friction, model, law), state
    if variant.startswith("rounded-"):
        rounded = RoundedAmbrosio(model.forces[cloth].friction, jnp.full(BALLS, float(variant.split("-", 1)[1])))
        return eqx.tree_at(lambda m: m.forces[cloth].friction, model, rounded), state
    if variant not in ("paper", "ambrosio-cloth"):  # the cloth's band replaced: frictionless or smooth Coulomb
        band = float(variant.split("-", 1)[1]) if variant.startswith("coulomb-") else 0.1
        mu = p.cloth_friction if variant.startswith("coulomb-") else 0.0
        law = jax.tree.map(lambda x: jnp.broadcast_to(x, (BALLS,)), Coulomb(mu, band))
        model = eqx.tree_at(lambda m: m.forces[cloth].friction, model, law)
    return model, state


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["paper", "no-friction", "coulomb-0.1", "coulomb-1e-3"])
    _bounds.add_contact_steps(parser)
    _bounds.add_options(parser)
    parser.add_argument("--time", type=float, default=0.1146)
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-6, 1e-8, 1e-10, 1e-12])
    args = parser.parse_args()
    speed = billiard.Parameters().speed
    print(f"two balls, cue speed {speed} m/s; d(x, ẋ of the cue ball at {args.time:g} s)/d(cue speed); "
          f"friction_steps (passage_step = {_bounds.steps(args).passage_step:g})"
          + f", {_bounds.contact_steps_label(args)}")
    for variant in args.variants:
        @jax.jit
        def run(v0, rtol):
            model, state = model_and_state(variant, v0)
            settings = _bounds.settings(args, model, rtol=rtol, max_events=60)
            settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=True)
            trajectory = simulate(model, state, jnp.stack([0.0, args.time]), table.FORMULATION,
                                  derivatives=_bounds.forward_mode(args, tangent_errors=False), **settings)
            return jnp.stack([trajectory.q[-1, 0], trajectory.v[-1, 0]]), trajectory.steps

        differences = [(np.asarray(run(speed + h * speed, 1e-12)[0]) - np.asarray(run(speed - h * speed, 1e-12)[0]))
                       / (2 * h * speed) for h in (1e-4, 1e-5)]
        reference = differences[1]
        print(f"\n{variant}: central differences (rtol 1e-12, steps 1e-4, 1e-5): d(x, ẋ) = "
              f"{np.array2string(differences[0], precision=6)}, {np.array2string(reference, precision=6)}")
        for rtol in args.rtols:
            (_, steps), (tangent, _) = jax.jvp(lambda v: run(v, rtol), (speed,), (1.0,))
            error = np.abs(np.asarray(tangent) - reference) / np.abs(reference)
            print(f"  rtol {rtol:g}: {int(steps)} steps, forward mode d(x, ẋ) = "
                  f"{np.array2string(np.asarray(tangent), precision=6)}, relative error "
                  f"{np.array2string(error, formatter={'float_kind': lambda v: f'{v:.1e}'})}", flush=True)


if __name__ == "__main__":
    main()
