"""Two pendulums that strike each other, [Poursina 2020] §6 (figs. 10–12).

Each pendulum is a uniform rod of negligible thickness hinged to the ground
at one end: m₁ = 1 kg, L₁ = 6 m; m₂ = 0.2 kg, L₂ = 4 m; pivots a = 2 m apart.
It starts at rest from θ₁ = π/12, θ₂ = −π/2 and runs for 8 s; the impacts
have e = 0.3 and, for the compliant models, n = 3/2, k = 1e8 N/m^1.5.

Fig. 10 is missing from the text, so the geometry is reconstructed:

* both pivots lie on a horizontal line, O₁ = (0, 0) and O₂ = (−a, 0);
* θ_k is the angle of rod k from the downward vertical, counter-clockwise
  positive, so rod k points along (sin θ_k, −cos θ_k) from its pivot. Rod 2
  starts horizontal pointing away from rod 1 (θ₂ = −π/2), rod 1 tilted by
  15° away from pendulum 2;
* the contact is the tip of rod 2 against the side of rod 1 (the only
  generic contact: since L₁ − a = L₂, the tip of rod 1 can reach rod 2 only
  when both are horizontal, and L₂ > a lets the tip of rod 2 sweep across
  rod 1 at s = 2 sin θ₁ + (4 sin² θ₁ + 12)^½ ≈ 3.5 m from O₁).

Rod 2 swings down through the vertical and its tip hits rod 1 at t ≈ 1.14 s;
the rigid (Newton) solution then has impacts at t ≈ 3.76 s and 6.69 s: three
impacts in 8 s, as the paper reports. The count is robust: moving a by
±0.1 m or θ₁ by ±1° keeps three impacts (times shift by < 0.1 s). The
mirror-image reading in which rod 1 starts tilted towards pendulum 2
(θ₁ = −π/12 in this convention) gives only two impacts in 8 s, and reading
θ₂ = −π/2 as rod 2 pointing towards rod 1 would make the rods overlap at
t = 0; both are rejected.

The model uses absolute coordinates (``diffimpact.multibody``): each rod's
body frame has its y'-axis from the tip towards the pivot, so φ_k = θ_k and
θ̇_k = v[3k + 2]. The contact is a ``PointPlane``: the tip of rod 2 against
the line of rod 1 with normal towards pendulum 2. The line is unbounded, so
``contact_arc_length`` lets a caller check that every contact lies on rod 1
(0 ≤ s ≤ L₁).
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_positive, check_range
from diffimpact.impulse import Newton
from diffimpact.multibody import (
    Contact,
    Gravity,
    HuntCrossleyImpact,
    Model,
    OptimalDamping,
    PlanarBody,
    PointPlane,
    RevolutePlanar,
    RigidImpact,
    State,
)

#: Initial angles θ₁, θ₂ (rad) of [Poursina 2020] §6.
INITIAL_ANGLES = (np.pi / 12, -np.pi / 2)
#: Simulated time (s).
DURATION = 8.0
#: The three impact models of fig. 11.
MODELS = ("optimal", "hunt_crossley", "newton")


class Parameters(eqx.Module):
    """Parameters of [Poursina 2020] §6 (SI units)."""

    m1: jnp.ndarray
    m2: jnp.ndarray
    L1: jnp.ndarray
    L2: jnp.ndarray
    a: jnp.ndarray
    restitution: jnp.ndarray
    exponent: jnp.ndarray
    stiffness: jnp.ndarray
    g: jnp.ndarray

    def __init__(self, m1=1.0, m2=0.2, L1=6.0, L2=4.0, a=2.0, restitution=0.3, exponent=1.5, stiffness=1e8, g=9.81):
        self.m1, self.m2 = check_positive("m1", m1), check_positive("m2", m2)
        self.L1, self.L2, self.a = check_positive("L1", L1), check_positive("L2", L2), check_positive("a", a)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
        self.exponent = check_positive("exponent", exponent)
        self.stiffness = check_positive("stiffness", stiffness)
        self.g = check_positive("g", g)


def impact_law(p, kind, method="exact"):
    """The contact law of one model: ``"optimal"`` (eq. (50)), ``"hunt_crossley"`` (eqs. (9), (16)) or ``"newton"``."""
    if kind == "optimal":
        return OptimalDamping(p.stiffness, p.exponent, p.restitution, method)
    if kind == "hunt_crossley":
        return HuntCrossleyImpact(p.stiffness, p.exponent, p.restitution, factor="flores")
    if kind == "newton":
        return RigidImpact(Newton(p.restitution))
    raise ValueError(f"kind must be one of {MODELS}; got {kind!r}")


def model(p, kind, method="exact"):
    """Rods 0 and 1 with revolute joints to the ground, gravity and the tip–rod contact (forces[1])."""
    rod1 = PlanarBody(p.m1, p.m1 * p.L1**2 / 12, name="rod1")
    rod2 = PlanarBody(p.m2, p.m2 * p.L2**2 / 12, name="rod2")
    contact = Contact(
        PointPlane(0, (0.0, 0.0), (-1.0, 0.0), 1, jnp.stack([0.0, -p.L2 / 2])),
        impact_law(p, kind, method),
    )
    return Model(
        bodies=(rod1, rod2),
        constraints=(
            RevolutePlanar(0, jnp.stack([0.0, p.L1 / 2]), None, (0.0, 0.0)),
            RevolutePlanar(1, jnp.stack([0.0, p.L2 / 2]), None, jnp.stack([-p.a, 0.0])),
        ),
        forces=(Gravity((0.0, -p.g)), contact),
    )


def initial_state(p, theta=INITIAL_ANGLES, t=0.0):
    """State at rest with rod angles θ (rad)."""
    theta = jnp.asarray(theta, dtype=float)
    pivots = jnp.stack([jnp.zeros(2), jnp.stack([-p.a, 0.0])])
    half = jnp.stack([p.L1, p.L2]) / 2
    centres = pivots + half[:, None] * jnp.stack([jnp.sin(theta), -jnp.cos(theta)], axis=-1)
    q = jnp.concatenate([centres[0], theta[:1], centres[1], theta[1:]])
    return State(q, jnp.zeros(6), t)


def angular_velocities(v):
    """θ̇₁, θ̇₂ (rad/s) from absolute velocities (..., 6)."""
    return v[..., jnp.array([2, 5])]


def contact_arc_length(p, q):
    """Distance s (m) from O₁ along rod 1 of the tip of rod 2, for q (..., 6)."""
    tip = q[..., 3:5] + p.L2 / 2 * jnp.stack([jnp.sin(q[..., 5]), -jnp.cos(q[..., 5])], axis=-1)
    return jnp.sum(tip * jnp.stack([jnp.sin(q[..., 2]), -jnp.cos(q[..., 2])], axis=-1), axis=-1)
