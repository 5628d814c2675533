"""Benchmark: a ball spinning fast, far from its one contact, at a loose tolerance: what ``spin_step`` does.

    python benchmarks/spinning_ball.py [--speed 490] [--duration 1] [--rtol 1e-3] [--spin-steps inf 2 1 0.5 0.25]
                                       [--formulation lagrange|table]

One ball (``billiard.ball``: 57.15 mm, 170 g, J = 5.5e-5 kg m²) 1 m from a plane it never reaches,
without gravity, spinning at ``--speed`` rad/s about a tilted axis: a
torque-free sphere, whose spin and energy stay as they start. ``simulate``
(Lagrange multipliers, or with ``--formulation table`` the table's
Baumgarte feedback ``table.FORMULATION``; Tsit5, ``--rtol``, atol = 1e-6) at each of
``--spin-steps``, ``AdaptiveSteps``' ``spin_step`` (the largest angle a step
turns a spatial body by, rad; ``inf``: no bound, the error control alone):
the accepted steps, the angle a step turns the ball by on average, and over
the run the largest relative change of the energy and of |ω| and the
largest drift of the Euler parameters off unit length. docs/design/step-control.md,
"Fast spins: a step turns a ball by at most a radian".
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.contact import HertzLinearDamper
from diffimpact.multibody import (
    AdaptiveSteps,
    Contact,
    LagrangeMultipliers,
    Model,
    SpherePlane,
    State,
    angular_velocity,
    euler_rates,
    simulate,
)
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

AXIS = np.array([-0.72, 0.25, 0.65]) / np.linalg.norm([-0.72, 0.25, 0.65])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=490.0, help="|ω| (rad/s)")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated time (s)")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--spin-steps", type=float, nargs="+", default=[np.inf, 2.0, 1.0, 0.5, 0.25])
    parser.add_argument("--formulation", choices=("lagrange", "table"), default="lagrange",
                        help="the Lagrange multipliers or table.FORMULATION (Baumgarte, α = β = 20)")
    args = parser.parse_args()
    formulation = LagrangeMultipliers() if args.formulation == "lagrange" else table.FORMULATION
    p = billiard.Parameters()
    floor = Contact(SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), 0, None, p.radius),
                    HertzLinearDamper(1e8, 1.5, 50.0))
    model = Model([billiard.ball(p)], [], [floor])
    unit = jnp.array([1.0, 0.0, 0.0, 0.0])
    omega = args.speed * AXIS
    state = State(jnp.concatenate([jnp.array([0.0, 0.0, 1.0]), unit]),
                  jnp.concatenate([jnp.zeros(3), euler_rates(unit, jnp.asarray(omega))]))
    times = np.linspace(0.0, args.duration, 11)
    print(f"a ball spinning at {args.speed:g} rad/s, no contact, no gravity, {args.duration:g} s, "
          f"rtol {args.rtol:g}, atol 1e-6, {type(formulation).__name__}")
    print(f"  {'SPIN_STEP':>9s} {'steps':>7s} {'rad a step':>10s} {'energy':>10s} {'|ω|':>10s} {'| |p| − 1 |':>11s}")
    for spin_step in args.spin_steps:
        run = simulate(model, state, times, formulation,
                       steps=AdaptiveSteps(rtol=args.rtol, atol=1e-6, spin_step=spin_step), max_steps=1_000_000)
        energy = np.asarray(run.energy)
        speeds = np.linalg.norm(np.asarray(jax.vmap(angular_velocity)(run.q, run.v)), axis=1)
        drift = np.abs(np.linalg.norm(np.asarray(run.q)[:, 3:], axis=1) - 1.0).max()
        steps = int(run.steps)
        print(f"  {spin_step:9g} {steps:7d} {args.speed * args.duration / steps:10.2f} "
              f"{np.abs(energy / energy[0] - 1).max():10.2e} {np.abs(speeds / args.speed - 1).max():10.2e} "
              f"{drift:11.2e}")


if __name__ == "__main__":
    main()
