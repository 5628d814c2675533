"""Derivatives through a Hertz contact, with and without ``simulate``'s ``contact_steps``, against a closed form.

An elastic ball (0.5 kg, radius 5 cm, planar) dropped from h = 5 cm onto a ground of force k δⁿ (k = 1e7, g =
9.81 m/s²) leaves it at √(2gh) by energy, so d(rebound speed)/dh = √(g/2h) for any elastic law. Forward mode
(``jax.jvp``, ``diffrax.ForwardMode``) of the rebound speed (the velocity at the separation event), atol =
1e-2 rtol: the relative errors of the speed and of its derivative, and the accepted steps, for the Hertz law
(n = 3/2) with the steps the error control chooses from the state's error alone (``tangent_errors=False``), with
``contact_steps=True`` (and the state's error alone), and with the tangents' errors judged too (``simulate``'s
default in forward mode), and for a linear spring (n = 1, whose stiffness is smooth on each side of δ = 0) with the
state's error alone.

    python validation/contact_steps.py [--rtol 1e-6 1e-8 1e-10]
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
from diffimpact.contact.normal import Hertz
from diffimpact.multibody import (AdaptiveSteps, CirclePlane, Contact, ContactEvents, ForwardMode, Gravity,
                                  LagrangeMultipliers, Model, PlanarBody, State, simulate)

diffimpact.configure()  # float64 and the CPU cap, before the first computation

MASS, RADIUS, STIFFNESS, G, HEIGHT = 0.5, 0.05, 1e7, 9.81, 0.05


def rebound(exponent, rtol, contact_steps, tangent_errors):
    """The jitted ``h -> ((speed, steps), (d speed/dh, _))`` of the drop."""
    ball = PlanarBody(MASS, 0.5 * MASS * RADIUS**2)
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), RADIUS)
    model = Model([ball], (), (Gravity((0.0, -G)), Contact(ground, Hertz(STIFFNESS, exponent))))

    def run(h):
        state = State(jnp.stack([0.0, RADIUS + h, 0.0]), jnp.zeros(3))
        trajectory = simulate(model, state, jnp.array([0.0, 0.2]), LagrangeMultipliers(),
                              steps=AdaptiveSteps(rtol=rtol, atol=1e-2 * rtol, contact_steps=contact_steps),
                              events=ContactEvents(max_events=4),
                              derivatives=ForwardMode(tangent_errors=tangent_errors))
        return trajectory.events.v[1, 1], trajectory.steps

    return jax.jit(lambda h: jax.jvp(run, (h,), (1.0,)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtol", type=float, nargs="+", default=[1e-6, 1e-8, 1e-10])
    args = parser.parse_args()
    speed, derivative = np.sqrt(2 * G * HEIGHT), np.sqrt(G / (2 * HEIGHT))
    print(f"elastic drop from {HEIGHT} m: rebound {speed:.9f} m/s, d/dh {derivative:.9f} /s (closed form); "
          "relative errors of the speed and of d/dh, accepted steps")
    print(f"{'':26s}" + "".join(f"{f'rtol {r:g}':>30s}" for r in args.rtol))
    for label, exponent, steps, tangents in (("Hertz n = 3/2", 1.5, False, False),
                                             ("Hertz, contact_steps", 1.5, True, False),
                                             ("Hertz, tangent_errors", 1.5, False, True),
                                             ("linear spring n = 1", 1.0, False, False)):
        cells = []
        for rtol in args.rtol:
            (v, count), (dv, _) = rebound(exponent, rtol, steps, tangents)(HEIGHT)
            cells.append(f"{abs(float(v) - speed) / speed:8.1e} {abs(float(dv) - derivative) / derivative:8.1e} "
                         f"{int(count):5d}")
        print(f"{label:26s}" + "".join(f"{c:>30s}" for c in cells))


if __name__ == "__main__":
    main()
