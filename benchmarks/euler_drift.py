"""Benchmark: what a drift of a ball's Euler parameters off unit length does to its answer to a torque.

    python benchmarks/euler_drift.py [--scales 1 1.01 1.014 1.05 1.14]

One ball (170 g, J = 5.5e-5 kg m², ``billiard.ball``) at rest, its Euler
parameters p a fixed unit orientation times each of ``--scales`` (|p|), under
a couple of moment n (two opposite forces at ±s, as contact forces enter:
``bodies.point_force``). The accelerations of the Lagrange multipliers
(eq. (2.20), ``constrained_acceleration``) give p̈; the ball's angular
acceleration is that of its orientation matrix, which normalises p: ω̇ =
2 E p̈ / pᵀp (ṗ = 0; ``angular_velocity`` of p̈). Exact: ω̇ = n/J at any
|p|. Printed: ω̇ over n/J, and the moment of inertia that answer amounts to,
J_eff/J: 1 at every |p| since the spatial bodies' mass matrix and forces are
those of the rotation of p/|p| (``diffimpact.multibody.bodies``); with the
paper's M = 4 Gᵀ J' G it was |p|⁴. docs/design/step-control.md, "Fast spins: a step turns
a ball by at most a radian"; docs/design/table-settings.md, "A ball's inertia under a drift of |p|" (the
drift is the table's: ``random_shots.py``).
"""

import argparse

import jax.numpy as jnp
import numpy as np

from diffimpact.multibody import Model, angular_velocity, euler_parameters
from diffimpact.multibody.bodies import point_force
from diffimpact.multibody.formulations import constrained_acceleration
from diffimpact.scenes import billiard


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0, 1.01, 1.014, 1.05, 1.14])
    args = parser.parse_args()
    p = billiard.Parameters()
    model = Model([billiard.ball(p)])
    unit = jnp.asarray(euler_parameters([0.3, -1.0, 0.4], 1.1))
    arm, force = jnp.array([0.0, 0.0, p.radius]), jnp.array([0.1, 0.0, 0.0])
    moment = np.cross(2 * np.asarray(arm), np.asarray(force))  # the couple's moment, 2 s × F (N m)
    exact = moment / p.inertia
    print(f"a ball at rest under the moment {np.round(moment, 7).tolist()} N m; exact ω̇ = n/J, |ω̇| = {np.linalg.norm(exact):.4g} rad/s²")
    print(f"  {'|p|':>6s} {'ω̇ / (n/J)':>10s} {'J_eff/J':>8s}")
    for scale in args.scales:
        q = jnp.concatenate([jnp.zeros(3), scale * unit])
        v = jnp.zeros(7)
        centre = q[:3]
        generalised = point_force(q, centre + arm, force) + point_force(q, centre - arm, -force)
        acceleration = constrained_acceleration(model, q, 0.0, generalised, model.gamma(q, v, 0.0))
        angular = np.asarray(angular_velocity(q, acceleration))  # ω̇: ω is linear in ṗ, and ṗ = 0
        ratio = float(angular @ exact) / float(exact @ exact)
        print(f"  {scale:6.3f} {ratio:10.4f} {1.0 / ratio:8.4f}")


if __name__ == "__main__":
    main()
