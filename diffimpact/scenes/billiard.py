"""The break of seed 000's first experiment (§§3.4, 4.1, figs. 7a, 9–16): the cue ball and the first three balls of the rack.

Seed 000 gives: balls of 57.15 mm diameter and 170 g, J = 0.000055 kg m²,
all orientations (1, 0, 0, 0); the cue ball at (−0.635, 0, 0.028576) m shot
at 10.729 m/s along +x; the first ball of the rack at (0.635, 0, 0.028575)
m and the next two at its back, the three centres an equilateral triangle of
side d = 2R + α (fig. 9), α = 2.1325735e-4 m (the "random" arrangement of
Table 3 used for the comparison of formulations); gravity; ball–cloth
contact by Hertz (eq. (3.9)) with Ambrósio's friction (v0 = 1e-4 m/s,
v1 = 1e-3 m/s); ball–ball contact by Lankarani–Nikravesh (eqs. (3.3),
(3.7), n = 3/2) with Alciatore's friction (eq. (3.8)); stiffnesses from
eqs. (3.4) and (3.6).

Not in the text, so assumed here (``Parameters``): the materials of Table 1
(ball: E = 5.4 GPa, ν = 0.35, phenolic resin; cloth: E = 10 MPa, ν = 0.3),
the coefficients of Table 2 (ball–ball e = 0.93; ball–cloth sliding μ =
0.2, Alciatore's values). The balls start resting on the cloth at the
static Hertz deflection (mg/K)^(2/3) instead of 1 µm above it: the paper's
start drops the cue ball onto an undamped Hertz cloth, which then bounces
it for ever. The cushions are left out: the cloth is an unbounded plane
(with the balls' speeds after the break, the outer two would reach the side
cushions of a real table about 0.1 s after the break).

The shot is symmetric about the x-axis, so the cue ball must stay on it
(y = 0): the paper's figs. 12–15 show which formulations break that.
"""

import itertools

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact.contact import Alciatore, Ambrosio, Hertz, sphere_plane_stiffness, sphere_sphere_stiffness
from diffimpact.multibody import (
    Contact,
    Gravity,
    HuntCrossleyImpact,
    Model,
    SpatialBody,
    SpherePlane,
    SphereSphere,
    State,
)

#: Balls: cue, then the first three of the rack (the apex ball is yellow, fig. 7a).
BALLS = ("cue", "yellow", "blue", "red")


class Parameters(eqx.Module):
    """Seed 000's billiard break (SI units); see the module docstring for what is assumed."""

    radius: float = 0.028575
    mass: float = 0.17
    inertia: float = 0.000055
    speed: float = 10.729
    cue_x: float = -0.635
    rack_x: float = 0.635
    spacing: float = 2.1325735e-4  # α of Table 3
    gravity: float = 9.81
    ball_modulus: float = 5.4e9  # assumed (Table 1)
    ball_poisson: float = 0.35  # assumed
    cloth_modulus: float = 10e6  # assumed
    cloth_poisson: float = 0.3  # assumed
    ball_restitution: float = 0.93  # assumed (Table 2)
    cloth_friction: float = 0.2  # assumed (Table 2)

    def cloth_stiffness(self):
        """K of eq. (3.6), ball on cloth (N/m^1.5)."""
        return sphere_plane_stiffness(
            self.radius, self.ball_modulus, self.ball_poisson, self.cloth_modulus, self.cloth_poisson
        )

    def ball_stiffness(self):
        """K of eq. (3.4), ball on ball (N/m^1.5)."""
        return sphere_sphere_stiffness(
            self.radius, self.radius, self.ball_modulus, self.ball_poisson, self.ball_modulus, self.ball_poisson
        )

    def resting_height(self):
        """Centre height on the cloth at the static Hertz deflection (m)."""
        return self.radius - (self.mass * self.gravity / self.cloth_stiffness()) ** (2.0 / 3.0)


def _check_balls(balls):
    if balls not in (2, 4):
        raise ValueError(f"balls must be 2 (cue and yellow) or 4 (cue and the first three of the rack); got {balls!r}")
    return BALLS[:balls]


def model(p, balls=4):
    """``balls`` balls, gravity, a ball–cloth contact per ball, then a ball–ball contact per pair.

    ``balls``: 4 for the break; 2 for the cue ball and the yellow ball alone
    (a head-on collision).
    """
    names = _check_balls(balls)
    bodies = [SpatialBody(p.mass, [p.inertia] * 3, name=name) for name in names]
    cloth = [
        Contact(SpherePlane(None, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), i, radius=p.radius),
                Hertz(p.cloth_stiffness(), 1.5), Ambrosio(p.cloth_friction, 1e-4, 1e-3))
        for i in range(len(names))
    ]
    pairs = [
        Contact(SphereSphere(i, np.zeros(3), p.radius, j, np.zeros(3), p.radius),
                HuntCrossleyImpact(p.ball_stiffness(), 1.5, p.ball_restitution, factor="lankarani_nikravesh"),
                Alciatore())
        for i, j in itertools.combinations(range(len(names)), 2)
    ]
    return Model(bodies, forces=[Gravity((0.0, 0.0, -p.gravity)), *cloth, *pairs])


def contact_names(balls=4):
    """Names of ``model(p, balls).forces`` in order: "gravity", "cloth–cue", …, "cue–yellow", …"""
    names = _check_balls(balls)
    return ["gravity", *(f"cloth–{name}" for name in names),
            *(f"{a}–{b}" for a, b in itertools.combinations(names, 2))]


def initial_state(p, balls=4):
    """The break: the cue ball sliding at ``p.speed`` along +x, the rack at rest, all resting on the cloth."""
    names = _check_balls(balls)
    z, side = p.resting_height(), 2 * p.radius + p.spacing
    back = p.rack_x + side * np.cos(np.pi / 6)
    centres = [(p.cue_x, 0.0), (p.rack_x, 0.0), (back, side / 2), (back, -side / 2)][: len(names)]
    q = jnp.concatenate([jnp.array([x, y, z, 1.0, 0.0, 0.0, 0.0]) for x, y in centres])
    return State(q, jnp.zeros(7 * len(names)).at[0].set(p.speed))


def position(q, ball):
    """Centre (x, y, z) of ball ``ball`` (index into ``BALLS``) from the coordinates q (..., 7 × balls)."""
    return q[..., 7 * ball: 7 * ball + 3]
