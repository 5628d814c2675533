"""Pool and snooker balls on the cloth ([Gismeros Moreno 2022] §§3–4): the break, the cut shot, the cushion shot.

[Gismeros Moreno 2022] builds a pool table from three contact interactions: ball–cloth
(Hertz, eq. (3.9), K of eq. (3.6), with Ambrósio's friction, v0 = 1e-4 m/s,
v1 = 1e-3 m/s), ball–ball (Lankarani–Nikravesh, eqs. (3.3), (3.7), n = 3/2,
K of eq. (3.4), with Threlfall's μ = 0.06 or Alciatore's μ(v) of eq. (3.8))
and ball–cushion (Lankarani–Nikravesh with e = 0.98 and Ambrósio's friction
with μ = 0.14, the values of Mathavan et al. 2010). Balls are spatial bodies
(centre and Euler parameters) under gravity; the cloth is the plane z = 0.
This module gives the pieces (``ball``, ``cloth``, ``ball_pair``,
``cushion``, ``ball_state``) and three ready systems:

* the **break** of the first experiment (§§3.4, 4.1, figs. 7a, 9–16): the
  cue ball and the first three balls of the rack (``model``,
  ``initial_state``);
* the **cut shot** of the second (§4.2, figs. 17–19): the cue ball and one
  object ball (``pair_model``, ``cut_shot_state``);
* the **cushion shot** of the third (§4.3, figs. 20–21): one ball against
  the long cushion at y = W/2 (``cushion_model``, ``ball_state``), with the
  cushion touching the ball at its centre height (Gismeros Moreno et al.'s plane faces) or
  at the nose height h = 7R/5 of Mathavan et al. 2010 (``Cushion``).

The break. [Gismeros Moreno 2022] gives: balls of 57.15 mm diameter and 170 g, J =
0.000055 kg m², all orientations (1, 0, 0, 0); the cue ball at (−0.635, 0,
0.028576) m shot at 10.729 m/s along +x; the first ball of the rack at
(0.635, 0, 0.028575) m and the next two at its back, the three centres an
equilateral triangle of side d = 2R + α (fig. 9), α = 2.1325735e-4 m (the
"random" arrangement of Table 3 used for the comparison of formulations).

Not in the text, so assumed here (``Parameters``): the materials of Table 1
(ball: E = 5.4 GPa, ν = 0.35, phenolic resin; cloth: E = 10 MPa, ν = 0.3;
cushion rubber: E = 5 MPa, ν = 0.49), the coefficients of Table 2
(ball–ball e = 0.93; ball–cloth sliding μ = 0.2, Alciatore's values). The
balls start resting on the cloth at the static Hertz deflection (mg/K)^(2/3)
instead of 1 µm above it: the paper's start drops the cue ball onto an
undamped Hertz cloth, which then bounces it for ever. The break and the cut
shot leave the cushions out: the cloth is an unbounded plane (with the balls'
speeds after the break, the outer two would reach the side cushions of a
real table about 0.1 s after the break). The ``formulations`` reproduction
runs the same four balls on the full table (``table_model(p, balls=4)``,
``break_state(p, balls=4)``) for the paper's 3 s.

The cloth of the paper is undamped. That is harmless while the balls roll,
but a cushion that touches the ball above its centre presses it into the
cloth with a fraction sin θ = 2/5 of its force, and the undamped cloth gives
that energy back as a jump: the ball leaves a nose-height cushion with an
upward speed of a sizeable fraction of its rebound speed, and the rebound is
much slower than on a rigid bed. ``cloth_damping_ratio`` > 0
replaces Hertz by Hunt–Crossley, f = K δ^(3/2) (1 + χ δ̇), with χ set so that
the ball resting on the cloth is damped at that ratio of critical: χ = 2ζ
√(k_s m)/(m g), k_s = (3/2) K δ_s^(1/2) the stiffness at the static
deflection δ_s.

The shot is symmetric about the x-axis, so in the break the cue ball must
stay on it (y = 0): the paper's figs. 12–15 show which formulations break that.

The full table (geometry only, for the 16-ball break): ``table_cushions``
(the six cushions as nose polylines jaw – long face – jaw, the three prisms
of each cushion in the paper's fig. 3, ready for ``cushion``), ``pockets`` and
``pocket_depth`` (the six pockets and when a ball drops into one), ``rack``
(the cue ball and the 15 balls of the rack), and ``table_state`` (a shot's
start, refused where balls overlap or are off the table, in a cushion or over
a pocket). The frame: the origin in the middle of the playing surface, x along
its length L from the head (cue ball) to the foot (rack), y to the left seen
from the head, the cushion noses on |x| = L/2 and |y| = W/2. The paper gives the table's size (a WPA 9-ft table,
2.54 × 1.27 m), the cushions' make-up (fig. 3) and the rack's spacing α
(fig. 9, Table 3), not the pockets; those are the WPA's Tournament Table &
Equipment Specifications (quoted at
http://www.billiardsforum.com/pool-tables/official-pool-table-pocket-size):
mouths measured lip to lip between the cushion noses, 4.5–4.625 in (corner)
and 5–5.125 in (side); the cut angle between nose and facing 142° (corner)
and 104° (side). The cushion's width from nose to featherstrip, 1 7/8–2 in,
is from the same specifications (quoted at
http://dportx.blogg.se/2023/september/official-billiards-rack-2.html); the
shelf, mouth line to the slate's drop, 1 5/8–1 7/8 in (corner) and 0–3/8 in
(side), from the BCA's pocket specifications
(https://www.classicbilliards.net/cushions-supplies/bca-pocket-specs.html).
``Parameters`` takes the middle of each range. Assumed: the hole's radius
(half the mouth), the jaws as straight facings from the lip to the rail (no
rounded lip, no vertical back-draft of 12–15°), and where the 12 balls
other than the first three sit in the rack. The foot and head spots are a
quarter of the length from the foot and head cushions (WPA rules, "Parts of
the table": http://wpa-pool.com/index.asp?content=rules_def), which is where
the paper puts the rack (``rack_x``) and the cue ball (``cue_x``).
"""

import itertools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_positive, check_range, check_real, is_concrete, refuse_where
from diffimpact.contact import (
    Alciatore,
    Ambrosio,
    Hertz,
    HuntCrossley,
    sphere_plane_stiffness,
    sphere_sphere_stiffness,
)
from diffimpact.impulse.alciatore import throw_angle
from diffimpact.multibody import (
    AdaptiveSteps,
    Contact,
    ContactEvents,
    Cushion,
    Gravity,
    HoledPlane,
    HuntCrossleyImpact,
    LagrangeMultipliers,
    Model,
    ReverseMode,
    SpatialBody,
    SpherePlane,
    SphereSphere,
    State,
    angular_velocity,
    euler_rates,
    simulate,
)

#: Balls: cue, then the first three of the rack (the apex ball is yellow, fig. 7a).
BALLS = ("cue", "yellow", "blue", "red")
#: Cushion nose height over the radius, h/R, of Mathavan et al. 2010 ("in both snooker and pool h = 7R/5").
NOSE_HEIGHT_RATIO = 1.4


class Parameters(eqx.Module):
    """Balls, materials, laws and shots of [Gismeros Moreno 2022] (SI units); see the module docstring for what is assumed."""

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
    cushion_modulus: float = 5e6  # assumed
    cushion_poisson: float = 0.49  # assumed
    ball_restitution: float = 0.93  # assumed (Table 2)
    cloth_friction: float = 0.2  # assumed (Table 2)
    cloth_damping_ratio: float = 0.0  # 0: the paper's Hertz cloth
    cushion_restitution: float = 0.98  # Mathavan et al. 2010
    cushion_friction: float = 0.14  # Mathavan et al. 2010
    table_length: float = 2.54  # WPA 9-ft table, playing surface (m)
    table_width: float = 1.27
    # the full table (``table_cushions``, ``pockets``): the middle of each WPA or BCA range, see "The full table"
    corner_mouth: float = 0.1158875  # 4 9/16 in, lip to lip (WPA: 4.5–4.625 in)
    side_mouth: float = 0.1285875  # 5 1/16 in (WPA: 5–5.125 in)
    corner_cut_angle: float = 142.0  # degrees, between the cushion's nose and its facing (WPA)
    side_cut_angle: float = 104.0  # degrees (WPA)
    cushion_width: float = 0.0492125  # 1 15/16 in, nose to featherstrip (WPA: 1 7/8–2 in)
    corner_shelf: float = 0.04445  # 1 3/4 in, mouth line to the slate's drop (BCA: 1 5/8–1 7/8 in)
    side_shelf: float = 0.0047625  # 3/16 in (BCA: 0–3/8 in)

    def __check_init__(self):
        """Every field in its range (``PARAMETER_RANGES``), refused under its own name when built with concrete
        values (a traced field, built inside a transformation, is the caller's to keep in range)."""
        for name, (low, high, low_open, high_open) in PARAMETER_RANGES.items():
            value = getattr(self, name)
            if is_concrete(value):
                check_range(name, value, low, high, low_open=low_open, high_open=high_open, shape=())

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

    def cushion_stiffness(self):
        """K of eq. (3.6), ball on the cushion's rubber (N/m^1.5)."""
        return sphere_plane_stiffness(
            self.radius, self.ball_modulus, self.ball_poisson, self.cushion_modulus, self.cushion_poisson
        )

    def static_deflection(self):
        """δ_s = (m g/K)^(2/3), the ball's indentation of the cloth at rest (m)."""
        return (self.mass * self.gravity / self.cloth_stiffness()) ** (2.0 / 3.0)

    def resting_height(self):
        """Centre height on the cloth at the static Hertz deflection (m)."""
        return self.radius - self.static_deflection()

    def nose_height(self):
        """Mathavan et al.'s cushion nose height h = 7R/5 above the cloth (m)."""
        return NOSE_HEIGHT_RATIO * self.radius


_POSITIVE, _NON_NEGATIVE, _ANY = (0.0, np.inf, True, True), (0.0, np.inf, False, True), (-np.inf, np.inf, True, True)
_POISSON, _RESTITUTION = (-1.0, 0.5, True, False), (0.0, 1.0, True, False)
#: Each field of ``Parameters`` and its allowed interval (low, high, low open, high open).
PARAMETER_RANGES = {
    "radius": _POSITIVE, "mass": _POSITIVE, "inertia": _POSITIVE, "speed": _POSITIVE, "cue_x": _ANY,
    "rack_x": _ANY, "spacing": _NON_NEGATIVE, "gravity": _POSITIVE, "ball_modulus": _POSITIVE,
    "ball_poisson": _POISSON, "cloth_modulus": _POSITIVE, "cloth_poisson": _POISSON, "cushion_modulus": _POSITIVE,
    "cushion_poisson": _POISSON, "ball_restitution": _RESTITUTION, "cloth_friction": _NON_NEGATIVE,
    "cloth_damping_ratio": _NON_NEGATIVE, "cushion_restitution": _RESTITUTION, "cushion_friction": _NON_NEGATIVE,
    "table_length": _POSITIVE, "table_width": _POSITIVE, "corner_mouth": _POSITIVE, "side_mouth": _POSITIVE,
    "corner_cut_angle": (90.0, 180.0, False, True), "side_cut_angle": (90.0, 180.0, False, True),
    "cushion_width": _POSITIVE, "corner_shelf": _NON_NEGATIVE, "side_shelf": _NON_NEGATIVE,
}

#: Modulus of a snooker table's bed, cloth on slate (Pa), assumed: the cushion at 7R/5 presses the ball into
#: the bed with 2/5 of its force, and on Gismeros Moreno et al.'s soft cloth (10 MPa) the ball would sink into it and the
#: cloth take a share of the impact's energy.
SLATE_MODULUS = 1e9


def snooker(**changes):
    """``Parameters`` of Mathavan et al.'s snooker ball and table (2009, 2010), with ``changes``.

    The ball: M = 0.1406 kg, R = 26.25 mm, solid (J = 2MR²/5). The cloth's
    sliding friction μ_s = 0.212 (their mean of 0.178–0.245). The bed, cloth
    on slate, as a stiff Hertz contact (E = ``SLATE_MODULUS``, assumed)
    damped at the critical ratio.
    """
    mass, radius = 0.1406, 0.02625
    return Parameters(**{"mass": mass, "radius": radius, "inertia": 0.4 * mass * radius**2, "cloth_friction": 0.212,
                         "cloth_modulus": SLATE_MODULUS, "cloth_damping_ratio": 1.0, **changes})


def ball(p, name="ball"):
    """A ball: a spatial body of mass m with the principal moments J."""
    return SpatialBody(p.mass, [p.inertia] * 3, name=name)


def cloth_law(p):
    """The ball–cloth normal law: Hertz (eq. (3.9)), or Hunt–Crossley damped at ``p.cloth_damping_ratio``."""
    stiffness = p.cloth_stiffness()
    if isinstance(p.cloth_damping_ratio, (int, float)) and p.cloth_damping_ratio == 0:
        return Hertz(stiffness, 1.5)
    resting_stiffness = 1.5 * stiffness * p.static_deflection() ** 0.5
    hysteresis = 2 * p.cloth_damping_ratio * jnp.sqrt(resting_stiffness * p.mass) / (p.mass * p.gravity)
    return HuntCrossley(stiffness, 1.5, hysteresis * stiffness)


def cloth(p, index):
    """Ball ``index`` on the cloth z = 0: ``cloth_law`` with Ambrósio's friction (v0 = 1e-4, v1 = 1e-3 m/s)."""
    return Contact(SpherePlane(None, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), index, radius=p.radius), cloth_law(p),
                   Ambrosio(p.cloth_friction, 1e-4, 1e-3))


def ball_pair(p, i, j, friction=None):
    """Balls i and j: Lankarani–Nikravesh (eqs. (3.3), (3.7)) with ``friction`` (default Alciatore's μ(v))."""
    return Contact(SphereSphere(i, None, p.radius, j, None, p.radius),
                   HuntCrossleyImpact(p.ball_stiffness(), 1.5, p.ball_restitution, factor="lankarani_nikravesh"),
                   Alciatore() if friction is None else friction)


def cushion(p, index, vertices, nose_height=None):
    """Ball ``index`` against the cushion whose nose runs through ``vertices`` (``Cushion``).

    Lankarani–Nikravesh with ``p.cushion_restitution`` and Ambrósio's friction
    with ``p.cushion_friction`` ([Gismeros Moreno 2022] §3.3); ``nose_height`` ``None`` for
    Gismeros Moreno et al.'s faces at the ball's centre height, or h (m, e.g. ``p.nose_height()``).
    """
    return Contact(Cushion(vertices, index, p.radius, nose_height),
                   HuntCrossleyImpact(p.cushion_stiffness(), 1.5, p.cushion_restitution, factor="lankarani_nikravesh"),
                   Ambrosio(p.cushion_friction, 1e-4, 1e-3))


def long_cushion(p):
    """Nose line of the long cushion at y = W/2, from x = −L/2 to L/2: the x-axis runs along it, y towards it."""
    half_length, half_width = p.table_length / 2, p.table_width / 2
    return np.array([[-half_length, half_width], [half_length, half_width]])


def _check_balls(balls):
    if balls not in (2, 4):
        raise ValueError(f"balls must be 2 (cue and yellow) or 4 (cue and the first three of the rack); got {balls!r}")
    return BALLS[:balls]


def model(p, balls=4):
    """The break: ``balls`` balls; forces gravity, the ball–cloth family (a contact per ball), the ball–ball family (per pair).

    ``balls``: 4 for the break; 2 for the cue ball and the yellow ball alone
    (a head-on collision).
    """
    names = _check_balls(balls)
    return Model([ball(p, name) for name in names],
                 forces=[Gravity((0.0, 0.0, -p.gravity)), cloth(p, 0).for_bodies(None, np.arange(len(names))),
                         ball_pair(p, 0, 1).for_bodies(*_pairs(len(names)))])


def contact_names(balls=4):
    """Names of the contacts of ``model(p, balls)``, per force: ``names[events.contact][events.member]``.

    ``[["gravity"], ["cloth–cue", …], ["cue–yellow", …]]``.
    """
    names = _check_balls(balls)
    return [["gravity"], [f"cloth–{name}" for name in names],
            [f"{a}–{b}" for a, b in itertools.combinations(names, 2)]]


def initial_state(p, balls=4):
    """The break: the cue ball sliding at ``p.speed`` along +x, the rack at rest, all resting on the cloth."""
    names = _check_balls(balls)
    side = 2 * p.radius + p.spacing
    back = p.rack_x + side * np.cos(np.pi / 6)
    centres = [(p.cue_x, 0.0), (p.rack_x, 0.0), (back, side / 2), (back, -side / 2)][: len(names)]
    return State(*ball_state(p, centres, [(p.speed, 0.0)] + [(0.0, 0.0)] * (len(names) - 1)))


def rolling_spin(p, velocity):
    """Angular velocity (rad/s) that rolls a ball moving at ``velocity`` (ṙ_x, ṙ_y) on the cloth: ω = ẑ × ṙ / R."""
    velocity = jnp.asarray(velocity, dtype=float)
    return jnp.stack([-velocity[..., 1], velocity[..., 0], jnp.zeros_like(velocity[..., 0])], axis=-1) / p.radius


def ball_state(p, centres, velocities, spins=None):
    """Coordinates and velocities (q, v) of balls resting on the cloth at ``centres`` (x, y) (m).

    ``velocities``: (ṙ_x, ṙ_y) per ball (m/s), a row for each of the n
    centres (n, 2); ``spins``: angular velocity ω per ball (rad/s, global
    axes), (n, 3), or ``None`` (default) for none. One ball's rows may be
    given as vectors. Orientations start at (1, 0, 0, 0), so ṗ = ½ Eᵀ ω
    (``euler_rates``).
    """
    centres = jnp.atleast_2d(jnp.asarray(check_real("centres", centres), dtype=float))
    if centres.ndim != 2 or centres.shape[1] != 2:
        raise ValueError(f"centres must have shape (n, 2), a row (x, y) per ball; got shape {np.shape(centres)}")
    count = len(centres)
    velocities = _rows("velocities", velocities, count, 2, "(ṙ_x, ṙ_y) (m/s)")
    spins = jnp.zeros((count, 3)) if spins is None else _rows("spins", spins, count, 3, "ω (rad/s)")
    unit = jnp.array([1.0, 0.0, 0.0, 0.0])
    height = jnp.full((len(centres), 1), p.resting_height())
    q = jnp.concatenate([centres, height, jnp.tile(unit, (len(centres), 1))], axis=1)
    rates = jnp.stack([euler_rates(unit, w) for w in spins])
    v = jnp.concatenate([velocities, jnp.zeros((len(centres), 1)), rates], axis=1)
    return q.ravel(), v.ravel()


def _rows(name, value, count, width, what):
    """``value`` as a (``count``, ``width``) float array: a row ``what`` per ball, none broadcast to others."""
    rows = jnp.atleast_2d(jnp.asarray(check_real(name, value), dtype=float))
    if rows.shape != (count, width):
        raise ValueError(f"{name} must have shape ({count}, {width}), a row {what} for each of the {count} balls; "
                         f"got shape {np.shape(value)}")
    return rows


def cushion_model(p, nose_height=None):
    """One ball on the cloth and the long cushion (``long_cushion``): forces gravity, cloth, cushion."""
    return Model([ball(p)], forces=[Gravity((0.0, 0.0, -p.gravity)), cloth(p, 0),
                                    cushion(p, 0, long_cushion(p), nose_height)])


def pair_model(p, friction=None):
    """The cue ball (0) and an object ball (1) on the cloth: forces gravity, the two cloth contacts, the pair."""
    return Model([ball(p, "cue"), ball(p, "object")],
                 forces=[Gravity((0.0, 0.0, -p.gravity)), cloth(p, 0).for_bodies(None, [0, 1]),
                         ball_pair(p, 0, 1, friction)])


def cut_shot_state(p, speed, cut, cue_x, object_x, rolling=True):
    """The cue ball at (``cue_x``, 0) moving at ``speed`` along +x towards the object ball at rest.

    The object ball sits at (``object_x``, 2R sin φ), so that the line of
    centres makes the cut angle φ = ``cut`` (rad) with +x when they touch (for
    a straight approach). ``rolling``: the cue ball rolls (ω = ẑ × ṙ/R); else
    it slides without spin (Gismeros Moreno et al.'s shots).
    """
    velocity = jnp.stack([jnp.asarray(speed, dtype=float), jnp.zeros(())])
    spin = rolling_spin(p, velocity) if rolling else jnp.zeros(3)
    centres = jnp.array([[cue_x, 0.0], [object_x, 0.0]]).at[1, 1].set(2 * p.radius * jnp.sin(cut))
    q, v = ball_state(p, centres, jnp.stack([velocity, jnp.zeros(2)]), jnp.stack([spin, jnp.zeros(3)]))
    return State(q, v)


def position(q, ball):
    """Centre (x, y, z) of ball ``ball`` (index into ``BALLS``) from the coordinates q (..., 7 × balls)."""
    return q[..., 7 * ball: 7 * ball + 3]


# --- shots: the cushion impact and the cut shot -----------------------------------------

#: Relative tolerance of the shots' solves (atol = rtol × 1e-2 m or m/s). Before ``ForwardMode``'s ``tangent_errors``
#: (now its default in forward mode) the derivatives were not in the step-size control and carried errors of
#: about √rtol in places (2e-2 of a Jacobian column at 1e-8, 2e-3 at 1e-10, measured then on the compliant
#: cushion's modulus), so checks of them use a tighter rtol.
SHOT_RTOL = 1e-8
#: Relative change of a fit's loss (Σ z², z = residual/σ) that fits of shots solved at ``SHOT_RTOL`` count as no
#: change. The loss of a point solved without derivatives and with them differ by about 1e-6 of the loss (the
#: two solves take different steps; measured on the compliant cushion fit, Σ z² ≈ 10): smaller changes are the
#: solvers' noise. 1e-5 of a loss of 10 is 1e-4 in χ², a move of the parameters by about 1e-2 of their standard
#: errors.
SHOT_FTOL = 1e-5


def shot_tolerances(rtol=SHOT_RTOL):
    """``rtol`` and ``atol`` of a shot's ``simulate`` (``rtol`` may be a traced array)."""
    return dict(rtol=rtol, atol=1e-2 * rtol)


#: Gap between the ball and the cushion at the start of ``cushion_impact``, normal to the cushion (m): small, so
#: that the cloth cannot change the ball's speed or spin before the impact (at most 2.3 ms of travel, at 0.5 m/s
#: and 5° incidence).
CUSHION_GAP = 1e-4
#: Time simulated after the ball reaches the cushion (s): Hertz's contact duration 2.87 (m²/(R E*² v))^(1/5)
#: is 13 ms for the softest rubber the fits allow (E = 1 MPa, ν = 0.49) at 0.25 m/s.
AFTER_CONTACT = 0.06
#: Force index of the cushion in ``cushion_model`` and of the ball pair in ``pair_model``.
CUSHION_FORCE, PAIR_FORCE = 2, 2


def _checked_cushion_shot(speed, incidence, topspin_ratio, sidespin_ratio):
    """A cushion shot's numbers as float64 arrays, checked: ``ValueError`` naming the argument and its range
    (``equinox.error_if`` when traced)."""
    return (check_range("speed", speed, 0.0, low_open=True, hint=" m/s"),
            check_range("incidence", incidence, 0.0, np.pi / 2, low_open=True, hint=" rad (π/2: head-on)"),
            check_range("topspin_ratio", topspin_ratio), check_range("sidespin_ratio", sidespin_ratio))


def _checked_cut_shot(speed, cut, duration):
    """A cut shot's numbers as float64 arrays, checked as ``_checked_cushion_shot``."""
    return (check_range("speed", speed, 0.0, low_open=True, hint=" m/s"),
            check_range("cut", cut, -np.pi / 2, np.pi / 2, low_open=True, high_open=True,
                        hint=" rad (negative: the object ball on the other side of the path)"),
            check_range("duration", duration, 0.0, low_open=True, hint=" s"))


def cushion_impact(p, speed, incidence, topspin_ratio=1.0, sidespin_ratio=0.0, nose=True,
                   derivatives=ReverseMode(), rtol=SHOT_RTOL, max_events=12):
    """One ball against the long cushion (``cushion_model``), from ``CUSHION_GAP`` before the contact.

    ``incidence`` α (rad) from the cushion line (π/2: head-on); the spins are
    multiples of V/R in Mathavan et al.'s convention (ω_x = −ω_T sin α,
    ω_y = ω_T cos α, ω_z = ω_S; ω_T = V/R rolls). ``nose``: the cushion
    touches at ``p.nose_height()``, else at the ball's centre height. Saves
    the start and the end, ``AFTER_CONTACT`` after the ball reaches the
    cushion; works under ``vmap`` over the numbers. ``derivatives`` as in ``simulate``, ``max_events`` as
    ``ContactEvents``' (12 are plenty on a damped bed; on Gismeros Moreno et al.'s undamped
    cloth the ball bounces after a cushion impact, and each bounce costs two);
    ``rtol`` as in ``shot_tolerances``.
    """
    speed, incidence, topspin_ratio, sidespin_ratio = _checked_cushion_shot(speed, incidence, topspin_ratio,
                                                                            sidespin_ratio)
    direction = jnp.stack([jnp.cos(incidence), jnp.sin(incidence)])
    # the ball touches the nose when its centre is √(R² − (h − z)²) from the nose line (z: its resting height)
    touch = p.radius if not nose else jnp.sqrt(p.radius**2 - (p.nose_height() - p.resting_height()) ** 2)
    start_y = p.table_width / 2 - touch - CUSHION_GAP
    topspin, sidespin = topspin_ratio * speed / p.radius, sidespin_ratio * speed / p.radius
    spin = jnp.stack([-topspin * jnp.sin(incidence), topspin * jnp.cos(incidence), sidespin])
    q, v = ball_state(p, jnp.stack([jnp.zeros(()), jnp.asarray(start_y)]), speed * direction, spin)
    end = CUSHION_GAP / (speed * jnp.sin(incidence)) + AFTER_CONTACT
    model = cushion_model(p, p.nose_height() if nose else None)
    return simulate(model, State(q, v), jnp.stack([jnp.zeros(()), end]), LagrangeMultipliers(),
                    steps=AdaptiveSteps(**shot_tolerances(rtol)), events=ContactEvents(max_events=max_events),
                    derivatives=derivatives)


def _first_event(events, force, onset):
    """Row of the first ``onset`` (True) or separation (False) event of ``force``, and whether there is one."""
    rows = jnp.arange(events.t.shape[-1])
    chosen = (events.contact == force) & (events.onset == onset) & (rows < events.count)
    return jnp.argmax(chosen), jnp.any(chosen)


def rebound_velocity(run):
    """Velocity (ẋ, ẏ, ż) right after the cushion's first separation in a ``cushion_impact`` run (NaN if none)."""
    row, found = _first_event(run.events, CUSHION_FORCE, False)
    return jnp.where(found, run.events.v[row, :3], jnp.nan)


def cut_shot(p, friction, speed, cut, cue_x, object_x, rolling, duration, derivatives=ReverseMode(),
             rtol=SHOT_RTOL, friction_steps=False):
    """The two-ball shot of ``cut_shot_state`` on ``pair_model``, saved at 0 and ``duration`` (s).

    Works under ``vmap`` over the numbers; ``derivatives`` as in ``simulate``, ``friction_steps`` as
    ``AdaptiveSteps``', ``rtol`` as in ``shot_tolerances``.
    """
    speed, cut, duration = _checked_cut_shot(speed, cut, duration)
    model = pair_model(p, friction)
    state = cut_shot_state(p, speed, cut, cue_x, object_x, rolling)
    return simulate(model, state, jnp.stack([jnp.zeros(()), duration]), LagrangeMultipliers(),
                    steps=AdaptiveSteps(**shot_tolerances(rtol), friction_steps=friction_steps),
                    events=ContactEvents(max_events=24), derivatives=derivatives)


def _signed_angle(a, b):
    """Angle from the horizontal vector ``a`` to ``b`` (rad, counter-clockwise positive)."""
    return jnp.arctan2(a[0] * b[1] - a[1] * b[0], a[0] * b[0] + a[1] * b[1])


def rolling_velocity(p, q, v, ball):
    """Horizontal velocity (m/s) ball ``ball`` rolls at once the cloth has stopped its slip, from (q, v) now.

    The cloth's forces pass through the contact point (the normal force) or
    act there (friction), and gravity acts along the lever arm from it, so
    the ball's angular momentum about the contact point, m R ẑ × ṙ + J ω, is
    conserved while it slides; rolling (ω = ẑ × ṙ/R) then fixes
    ṙ_roll = (m R² ṙ + J R ω × ẑ)/(m R² + J), whatever the cloth's friction
    (5/7 ṙ + 2/7 R ω × ẑ for a solid ball). Rolling resistance is neglected.
    """
    block = slice(7 * ball, 7 * ball + 7)
    velocity = v[block][:3]
    spin = angular_velocity(q[block], v[block])
    arm = p.mass * p.radius**2
    return ((arm * velocity + p.inertia * p.radius * jnp.cross(spin, jnp.array([0.0, 0.0, 1.0]))) / (arm + p.inertia))[:2]


def cut_shot_outcome(p, run):
    """What a ``cut_shot`` run shows (a dict of scalars and 2-vectors, angles in rad; NaN without a collision).

    At the onset of the ball–ball contact: ``cut``, the line of centres
    against the cue ball's velocity; ``cue_speed_at_impact``; ``throw_tpa14``,
    TP A.14 (``diffimpact.impulse.alciatore.throw_angle``) with the cue ball's
    speed and spin there. Right after the separation: ``throw``, the object
    ball's direction against the line of centres, positive towards the cue
    ball's path; ``cue_rolling``, ``object_rolling``, the velocities the
    balls will roll at (``rolling_velocity``), and ``deflection_rolling``,
    the cue ball's rolling direction against +x (the aim line). At the end of
    the run: ``deflection``, the cue ball's direction against +x; both
    balls' speeds; the cue ball's slip on the cloth (it rolls again when the
    slip is within Ambrósio's band).
    """
    events = run.events
    onset, hit = _first_event(events, PAIR_FORCE, True)
    separation, _ = _first_event(events, PAIR_FORCE, False)
    q0, v0 = events.q[onset], events.v[onset]
    centres = position(q0, 1)[:2] - position(q0, 0)[:2]
    approach = position(v0, 0)[:2]
    cut = _signed_angle(approach, centres)
    side = jnp.sign(cut)
    spin = angular_velocity(q0[:7], v0[:7])
    across = jnp.array([approach[1], -approach[0]]) / jnp.linalg.norm(approach)  # TP A.14's î, right of the path
    throw_tpa14 = throw_angle(jnp.abs(cut), jnp.linalg.norm(approach), spin[:2] @ across, side * spin[2],
                              radius=p.radius)
    q1, v1 = events.q[separation], events.v[separation]
    throw = -side * _signed_angle(centres, position(v1, 1)[:2])
    cue_rolling, object_rolling = rolling_velocity(p, q1, v1, 0), rolling_velocity(p, q1, v1, 1)
    aim = jnp.array([1.0, 0.0])
    q_end, v_end = run.q[-1], run.v[-1]
    cue_end = position(v_end, 0)[:2]
    spin_end = angular_velocity(q_end[:7], v_end[:7])
    # the contact point lies R − δ_s/2 below the centre (the middle of the static overlap)
    slip = cue_end - (p.radius - p.static_deflection() / 2) * jnp.array([spin_end[1], -spin_end[0]])
    missing = jnp.where(hit, 0.0, jnp.nan)
    outcome = {
        "cut": jnp.abs(cut),
        "cue_speed_at_impact": jnp.linalg.norm(approach),
        "throw_tpa14": throw_tpa14,
        "throw": throw,
        "cue_rolling": cue_rolling,
        "object_rolling": object_rolling,
        "deflection_rolling": jnp.abs(_signed_angle(aim, cue_rolling)),
        "deflection": jnp.abs(_signed_angle(aim, cue_end)),
        "cue_speed_end": jnp.linalg.norm(cue_end),
        "object_speed_end": jnp.linalg.norm(position(v_end, 1)[:2]),
        "cue_slip_end": jnp.linalg.norm(slip),
    }
    return {key: value + missing for key, value in outcome.items()}


def _float64(*arrays):
    """The arrays as float64 without JAX's weak type, which would otherwise key a second compilation."""
    return tuple(jnp.asarray(a, dtype=float) for a in arrays)


@eqx.filter_jit
def _cushion_rebounds(p, speed, incidence, topspin_ratio, sidespin_ratio, nose, derivatives, rtol, max_events):
    def one(v, a, w, s):
        return rebound_velocity(cushion_impact(p, v, a, w, s, nose=nose, derivatives=derivatives, rtol=rtol,
                                               max_events=max_events))

    return jax.lax.map(lambda case: one(*case), (speed, incidence, topspin_ratio, sidespin_ratio))


def cushion_rebounds(p, speed, incidence, topspin_ratio, sidespin_ratio, nose=True, derivatives=ReverseMode(),
                     rtol=SHOT_RTOL, max_events=12):
    """``rebound_velocity`` of ``cushion_impact`` for arrays of cases, (..., 3).

    The cases run one after the other (``jax.lax.map``): under ``jax.vmap`` each event-driven run waits for
    the slowest, and the batch compiled twice as long. One compilation per shape (the arrays are taken as float64, so ``jnp.full(4, 1.0)`` and
    ``np.ones(4)`` share it); pass ``rtol`` as an array to share it between tolerances.
    """
    return _cushion_rebounds(p, *_checked_cushion_shot(speed, incidence, topspin_ratio, sidespin_ratio), nose,
                             derivatives, rtol, max_events)


@eqx.filter_jit
def _cut_shots(p, friction, speed, cut, cue_x, object_x, duration, rolling, derivatives, rtol):
    def one(v, c, x0, x1, t):
        return cut_shot_outcome(p, cut_shot(p, friction, v, c, x0, x1, rolling, t, derivatives=derivatives,
                                            rtol=rtol))

    return jax.lax.map(lambda shot: one(*shot), (speed, cut, cue_x, object_x, duration))


def cut_shots(p, friction, speed, cut, cue_x, object_x, duration, rolling=True, derivatives=ReverseMode(),
              rtol=SHOT_RTOL):
    """``cut_shot_outcome`` of ``cut_shot`` for arrays of shots, one after the other (``jax.lax.map``, as
    ``cushion_rebounds``).

    One compilation per shape (the arrays are taken as float64, as in ``cushion_rebounds``); pass
    ``rtol`` as an array to share it between tolerances.
    """
    speed, cut, duration = _checked_cut_shot(speed, cut, duration)
    return _cut_shots(p, friction, speed, cut, *_float64(cue_x, object_x), duration, rolling, derivatives, rtol)


# --- the full table: six cushions, six pockets, the rack ---------------------------------

#: The cushions of ``table_cushions``, counter-clockwise seen from above from the foot cushion at x = L/2 (x runs
#: from the head to the foot, y to the left of a player at the head looking at the foot).
CUSHIONS = ("foot", "left-foot", "left-head", "head", "right-head", "right-foot")
#: The pockets of ``pockets``: pocket k lies between cushions k and k + 1 (mod 6) of ``CUSHIONS``.
POCKETS = ("foot-left", "left-side", "head-left", "head-right", "right-side", "foot-right")
#: Whether each of ``POCKETS`` is a corner pocket (else a side pocket).
CORNER_POCKETS = (True, False, True, True, False, True)
#: The balls of ``rack``: the cue ball, then the rack row by row from the apex, each row from +y to −y. The first
#: four are ``BALLS`` (the break of the paper's figs. 7a and 9); the black (8) ball sits in the middle of the third
#: row and a solid and a stripe in the back corners, as the eight-ball rules rack them; the other places are
#: assumed (the balls are alike, so only their names depend on it). Colours as the paper lists them (§3.2).
RACK_BALLS = ("cue", "yellow", "blue", "red", "yellow-stripe", "black", "purple", "blue-stripe", "orange",
              "red-stripe", "green", "brown", "purple-stripe", "orange-stripe", "green-stripe", "brown-stripe")
#: Rows of the rack: row r holds r + 1 balls (r = 0 is the apex).
RACK_ROWS = 5


def _lips(p):
    """The two lips (start, end) of each cushion's long face, (6, 2, 2), counter-clockwise (the table on the left)."""
    half_length, half_width = p.table_length / 2, p.table_width / 2
    # a corner pocket is symmetric about the corner's diagonal: its lips lie mouth/√2 from the corner on each nose line
    corner, side = p.corner_mouth / np.sqrt(2.0), p.side_mouth / 2
    lips = [
        [(half_length, -half_width + corner), (half_length, half_width - corner)],  # foot
        [(half_length - corner, half_width), (side, half_width)],  # left-foot
        [(-side, half_width), (-half_length + corner, half_width)],  # left-head
        [(-half_length, half_width - corner), (-half_length, -half_width + corner)],  # head
        [(-half_length + corner, -half_width), (-side, -half_width)],  # right-head
        [(side, -half_width), (half_length - corner, -half_width)],  # right-foot
    ]
    return jnp.stack([jnp.stack([jnp.stack([jnp.asarray(c, dtype=float) for c in point]) for point in pair])
                      for pair in lips])


def _jaw_end(lip, along, outward, cut_angle, width):
    """Far end of the jaw that leaves the nose at ``lip``.

    The facing turns from the nose's own direction ``along`` (unit, pointing
    into the pocket) towards ``outward`` (unit, away from the table) by
    180° − ``cut_angle`` (degrees: the angle inside the rubber between nose and
    facing), and runs back to the rail, ``width`` behind the nose line.
    """
    turn = jnp.deg2rad(180.0 - cut_angle)
    return lip + width / jnp.sin(turn) * (jnp.cos(turn) * along + jnp.sin(turn) * outward)


def table_cushions(p):
    """The six cushions' nose polylines, (6, 4, 2) (m): jaw – long face – jaw, in the order of ``CUSHIONS``.

    Each row is the ``vertices`` of a ``Cushion`` (``cushion(p, index,
    table_cushions(p)[k])``): the end of the jaw at the rail, the lip where the
    nose turns into the pocket, the other lip, the other jaw's end. The long
    faces lie on the boundary of the L × W playing surface, centred at the
    origin (the noses bound it, as the WPA measures the playing surface), and
    run counter-clockwise seen from above, so the table lies on the left of
    every segment. Between two cushions a pocket opens (``pockets``): corner
    lips ``p.corner_mouth`` apart, side lips ``p.side_mouth`` apart; each jaw
    leaves its lip at the WPA cut angle (``p.corner_cut_angle``,
    ``p.side_cut_angle``, measured inside the rubber between nose and facing)
    and ends ``p.cushion_width`` behind the nose line. The three segments are
    Gismeros Moreno et al.'s three prisms (fig. 3): the central rectangular
    one and the two triangular ones at the pockets.
    """
    lips = _lips(p)
    start, end = lips[:, 0], lips[:, 1]
    along = (end - start) / jnp.linalg.norm(end - start, axis=1, keepdims=True)
    outward = jnp.stack([along[:, 1], -along[:, 0]], axis=1)  # right of the direction of travel: off the table
    corner = np.array(CORNER_POCKETS)
    # cushion k starts at pocket k − 1 and ends at pocket k
    start_angle = jnp.where(np.roll(corner, 1), p.corner_cut_angle, p.side_cut_angle)[:, None]
    end_angle = jnp.where(corner, p.corner_cut_angle, p.side_cut_angle)[:, None]
    return jnp.stack([_jaw_end(start, -along, outward, start_angle, p.cushion_width), start, end,
                      _jaw_end(end, along, outward, end_angle, p.cushion_width)], axis=1)


class Pockets(NamedTuple):
    """The six pockets of ``pockets``, in the order of ``POCKETS`` (m).

    ``lips`` (6, 2, 2): the two lips of the mouth (the ends of the
    neighbouring cushions' long faces), the mouth line between them.
    ``axes`` (6, 2): unit vectors across the mouth line, into the pocket.
    ``drops`` (6, 2): where the slate drops away on the axis, the shelf behind
    the middle of the mouth line. ``centres`` (6, 2) and ``radii`` (6,): the
    pocket's hole, the circle through the drop point centred on the axis.
    """

    centres: jnp.ndarray
    radii: jnp.ndarray
    lips: jnp.ndarray
    axes: jnp.ndarray
    drops: jnp.ndarray


def pockets(p):
    """The six pockets (``Pockets``) where the cushions of ``table_cushions`` end.

    The mouth of pocket k runs from the end lip of cushion k to the start lip
    of cushion k + 1 (``p.corner_mouth`` or ``p.side_mouth`` wide). The slate
    drops away ``p.corner_shelf`` or ``p.side_shelf`` (the shelf) behind the
    middle of the mouth line; the hole is the circle of radius half the mouth
    (assumed) centred on the axis, its edge through that drop point.

    A ball is pocketed when its centre enters the hole (``pocket_depth`` > 0):
    its centre of mass is then past the edge of the slate, so the cloth no
    longer carries it and it drops off. A ball's centre can reach a hole only
    through the mouth between the jaws: the holes lie beyond the nose lines,
    but for a sliver of each corner pocket (its drop point lies mouth/2 − shelf
    inside the corner, 9.5 mm from both nose lines with the defaults), and a
    centre less than R from a nose line can only be in a mouth, where there is
    no cushion. A simulation locates the drop as an event: ``pocket_depth``
    crosses zero upwards.
    """
    lips = _lips(p)
    mouth_start, mouth_end = lips[:, 1], jnp.roll(lips[:, 0], -1, axis=0)
    across = mouth_end - mouth_start
    mouths = jnp.linalg.norm(across, axis=1)
    axes = jnp.stack([across[:, 1], -across[:, 0]], axis=1) / mouths[:, None]  # off the table, as in table_cushions
    corner = np.array(CORNER_POCKETS)
    shelves = jnp.where(corner, p.corner_shelf, p.side_shelf)
    radii = mouths / 2
    drops = (mouth_start + mouth_end) / 2 + shelves[:, None] * axes
    return Pockets(drops + radii[:, None] * axes, radii, jnp.stack([mouth_start, mouth_end], axis=1), axes, drops)


def pocket_depth(p, centres):
    """How far each ball centre (..., 2) lies inside each pocket's hole, (..., 6) (m): > 0 pocketed (``pockets``).

    The radius of the hole less the distance to its centre: an event function
    that crosses zero upwards when the ball drops.
    """
    holes = pockets(p)
    offset = jnp.asarray(centres, dtype=float)[..., None, :] - holes.centres
    return holes.radii - jnp.linalg.norm(offset, axis=-1)


def rack(p, spacing=None):
    """Centres (x, y) of the cue ball and the 15-ball rack, (16, 2) (m), in the order of ``RACK_BALLS``.

    The cue ball on the head spot (``p.cue_x``, 0); the rack an equilateral
    triangle of five rows pointing at it, its apex on the foot spot
    (``p.rack_x``, 0: the WPA's foot spot, a quarter of the length from the
    foot cushion), neighbours d = 2R + α apart (Gismeros Moreno et al.'s
    fig. 9, extended to the 15 balls), so that every ball has a gap α to each
    neighbour. ``spacing``: α (m), ≥ 0 (default ``p.spacing``, 2.1325735e-4 m,
    the "random" arrangement of Table 3). Table 3's other values are
    not in our copy of the paper; its text names 10⁻⁶ m and says α should be
    10⁻⁹–10⁻⁷ m for proper results (§4.1). The first four centres are those of
    ``initial_state(p, balls=4)``. Each row is symmetric about the aim line
    y = 0.
    """
    spacing = check_range("spacing", p.spacing if spacing is None else spacing, 0.0)
    side = 2 * p.radius + spacing
    row = np.concatenate([np.full(r + 1, r) for r in range(RACK_ROWS)]).astype(float)
    place = np.concatenate([np.arange(r + 1) for r in range(RACK_ROWS)]).astype(float)
    balls = jnp.stack([p.rack_x + row * side * np.cos(np.pi / 6), (row / 2 - place) * side], axis=1)
    cue = jnp.stack([jnp.asarray(p.cue_x, dtype=float), jnp.zeros(())])
    return jnp.concatenate([cue[None], balls])


# --- the full table ------------------------------------------------------------------


def table_cloth(p, index, located=False):
    """Ball ``index`` on the table's cloth: ``cloth_law`` and Ambrósio's friction on a ``HoledPlane``.

    The plane z = 0 with the six pockets' holes (``pockets``), bounded at the
    rails (the nose lines moved out by ``p.cushion_width``): a ball whose
    centre passes over a hole's edge leaves the cloth (its force fades out
    over the rim strip) and falls through. It leaves the cloth for good
    (``HoledPlane.removal``, located by ``simulate``) there, or, if it flew
    over the edge, where it falls to the cloth's level over the hole: no
    pocket floor, it falls on, out of the scene (``Contact``'s
    ``removes_body``): it can still meet the cushions' jaws and the other
    balls until its top passes below the cloth (``HoledPlane.exit``,
    located), and then its contacts with them are removed, so that it meets
    nothing under the table. By default (``located`` False) the cloth's
    onsets and separations are not located (``Contact``'s ``located``): its
    Hertz force vanishes at δ = 0, and on the paper's undamped cloth the
    balls hop for the whole run, each hop an onset and a separation that
    would end two segments (docs/design/event-engine.md, "The cloth's hops are not
    events"). ``located=True`` makes them events: a ball's landing is then
    resolved where the solver would step over it, at the price of a
    segment for each (docs/design/event-engine.md, "Pocketed balls out of the scene;
    the landings on the cloth": the 4-s break runs about twice as long).
    """
    holes = pockets(p)
    return Contact(HoledPlane(0.0, _rails(p), holes.centres, holes.radii, index, p.radius),
                   cloth_law(p), Ambrosio(p.cloth_friction, 1e-4, 1e-3), located=located, removes_body=True)


def _rails(p):
    """The rails' rectangle ((x_min, y_min), (x_max, y_max)) (m): the nose lines moved out by ``p.cushion_width``."""
    half = jnp.stack([jnp.asarray(p.table_length, dtype=float), jnp.asarray(p.table_width, dtype=float)]) / 2
    half = half + p.cushion_width
    return jnp.stack([-half, half])


def _check_table_balls(balls):
    if isinstance(balls, bool) or not isinstance(balls, int) or not 1 <= balls <= len(RACK_BALLS):
        raise ValueError(f"balls must be an int from 1 to {len(RACK_BALLS)} (the cue ball and the rack); got {balls!r}")
    return RACK_BALLS[:balls]


#: Forces of ``table_model`` in order (with one ball, no ball–ball: ``table_forces``).
TABLE_FORCES = ("gravity", "cloth", "ball–ball", "ball–cushion")


def table_forces(balls=16):
    """Names of the forces of ``table_model(p, balls)`` in order: ``TABLE_FORCES``, without the ball–ball family
    for one ball."""
    return tuple(name for name in TABLE_FORCES if name != "ball–ball" or len(_check_table_balls(balls)) > 1)


def table_model(p, balls=16, nose_height=None, cloth_located=False):
    """The full table of [Gismeros Moreno 2022]: the cue ball and the first ``balls`` − 1 of the rack (``rack``).

    Forces (``TABLE_FORCES``): gravity; the ball–cloth family (``table_cloth``,
    one per ball, ``cloth_located`` its ``located``); the ball–ball family
    (``ball_pair``, one per pair); the ball–cushion family (``cushion`` on each
    of the six ``table_cushions``, one per ball and cushion, ``nose_height`` as
    there). For 16 balls: 16, 120 and 96 contacts in three families. With
    ``cloth_located`` every hop of a ball on the cloth is two events: allow
    ``simulate`` more of them (the 4-s break has about 2,600).
    """
    names = _check_table_balls(balls)
    count = len(names)
    indices = np.arange(count)
    # each family from one contact of each kind (``Contact.for_bodies``): the members of a kind differ only in
    # their bodies; the ball–cushion family ball by ball, each ball against the six cushions in turn
    return Model(
        [ball(p, name) for name in names],
        forces=[
            Gravity((0.0, 0.0, -p.gravity)),
            table_cloth(p, 0, cloth_located).for_bodies(None, indices),
            *([ball_pair(p, 0, 1).for_bodies(*_pairs(count))] if count > 1 else []),
            _noses(p, nose_height).for_bodies(None, np.repeat(indices, len(CUSHIONS))),
        ],
    )


def max_closed(balls=16):
    """Most contacts of one family of ``table_model(p, balls)`` closed at once: ``ContactEvents``' ``max_closed``.

    Equal balls on the cloth touch at most six others each (the kissing
    number of circles in the plane), so at most 3 × ``balls`` pairs; a ball
    touches one cloth and at most two cushions (a pocket's jaws).
    """
    return 3 * len(_check_table_balls(balls))


def table_contact_names(balls=16):
    """Names of the contacts of ``table_model(p, balls)``, per force: ``names[events.contact][events.member]``."""
    names = _check_table_balls(balls)
    pairs = [[f"{a}–{b}" for a, b in itertools.combinations(names, 2)]] if len(names) > 1 else []
    return [["gravity"], [f"cloth–{name}" for name in names], *pairs,
            [f"{name}–{side} cushion" for name in names for side in CUSHIONS]]


#: Overlap (m) that ``table_state`` still takes for touching, of two balls or of a ball and a cushion: the round-off
#: of centres placed in float64 on a table (a unit in the last place of a coordinate of 1–2 m is 2.2e-16 m);
#: ``rack(p, spacing=0)`` puts two pairs of its touching balls 7e-18 m into each other.
TOUCHING = 1e-15


def _inside_cushions(p, centres):
    """Whether each centre (n, 2) lies inside each cushion's rubber, (n, 6): jaw – face – jaw, closed along the rail."""
    corners = table_cushions(p)  # clockwise round the rubber: the table lies on the left of the nose
    edges = jnp.roll(corners, -1, axis=1) - corners
    offsets = jnp.asarray(centres)[:, None, None, :] - corners
    left = edges[..., 0] * offsets[..., 1] - edges[..., 1] * offsets[..., 0]
    return jnp.all(left < 0, axis=-1)


def _first(bad, describe):
    """``got`` of ``refuse_where``: ``describe`` of the indices of the first True of ``bad``, and how many more."""
    def got():
        found = np.argwhere(np.asarray(bad))
        return describe(*found[0]) + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")

    return got


def _point(xy):
    """(x, y) to six digits."""
    return f"({float(xy[0]):.6g}, {float(xy[1]):.6g})"


@jax.jit
def _table_checks(p, q, v, nose_height):
    """What ``table_state`` checks of the balls' coordinates ``q`` and velocities ``v`` (n × 7), one compilation.

    Per ball: whether its centre, and its velocities, are finite; whether its
    centre is on or beyond the rails; ``pocket_depth`` (n, 6); the penetration
    into each cushion (n, 6) and whether the centre is inside it (n, 6). Per
    pair of balls (in the order of ``itertools.combinations``): the penetration.
    """
    poses, rates = q.reshape(-1, 7), v.reshape(-1, 7)
    xy = poses[:, :2]
    rails = _rails(p)
    noses = _noses(p, nose_height)
    pair = ball_pair(p, 0, 1)
    i, j = _pairs(len(poses))
    return dict(
        centre_finite=jnp.all(jnp.isfinite(xy), axis=1),
        motion_finite=jnp.all(jnp.isfinite(rates), axis=1),
        too_fast=jnp.linalg.norm(rates[:, :3], axis=1) > max_speed(p),
        off=jnp.any((xy <= rails[0]) | (xy >= rails[1]), axis=1),
        depth=pocket_depth(p, xy),
        cushion=jax.vmap(lambda pose: noses.penetration((pose,)))(poses),
        inside=_inside_cushions(p, xy),
        pair=jax.vmap(lambda a, b: pair.penetration((a, b))[0])(poses[i], poses[j]),
    )


def max_speed(p):
    """The fastest a ball may start on the table (m/s): the speed v at which it would sink by its radius R into a
    cushion met head-on, or into another ball, whichever is slower, from Hertz's peak penetration
    δ_max = (5 m* v²/(4 K))^(2/5) of a sphere of effective mass m* meeting a contact of stiffness K (Johnson 1985,
    §11.4): v = √(4 K R^(5/2)/(5 m*)), m* = m against a cushion, m/2 against a ball at rest. Faster, the laws
    cannot stop it within the ball and it passes through (31 m/s on ``Parameters``' rubber, against the break's
    10.7 m/s; Hertz holds only for penetrations small against R)."""
    reach = 4 * p.radius**2.5 / 5
    return jnp.sqrt(reach * jnp.minimum(p.cushion_stiffness() / p.mass, p.ball_stiffness() / (p.mass / 2)))


def _noses(p, nose_height):
    """The family of ball 0 against each of the six ``table_cushions``, in the order of ``CUSHIONS``."""
    return Contact.family(cushion(p, 0, vertices, nose_height) for vertices in table_cushions(p))


def _pairs(count):
    """The pairs (i, j), i < j, of ``count`` balls as two index arrays."""
    return np.array(list(itertools.combinations(range(count), 2)), dtype=int).reshape(-1, 2).T


def table_state(p, centres, velocities, spins=None, nose_height=None):
    """A shot's start on the full table, checked: the balls of ``RACK_BALLS`` resting on the cloth at ``centres``.

    ``centres`` (n, 2) (m), one row per ball of ``table_model(p, n)``;
    ``velocities`` and ``spins`` as in ``ball_state``; ``nose_height`` as in
    ``table_model`` (the cushions the balls are checked against). Every ball
    rests on the cloth at its static deflection, so none can start off it.
    Refused: a centre, velocity or spin that is not finite; a speed beyond
    ``max_speed``; a centre on or
    beyond the rails (off the table, where ``table_cloth`` ends); a centre
    over a pocket's hole or on its edge (``pocket_depth`` ≥ 0); a ball
    overlapping a cushion (the ``cushion`` contact's penetration), or with its
    centre inside a cushion's rubber; two balls overlapping. Touching balls
    and cushions (up to ``TOUCHING`` of round-off) are allowed: ``simulate``
    starts a touching, approaching pair closed.

    Returns
    -------
    ``State``.

    Raises
    ------
    ValueError
        For concrete input: the problem, the first ball concerned (by name),
        its centre and the overlap or depth (m), and how many more there are.
        Traced input runs the same checks with ``equinox.error_if``, which
        names the problem only.
    """
    shape = np.shape(centres)
    if len(shape) != 2 or shape[1] != 2 or not 1 <= shape[0] <= len(RACK_BALLS):
        raise ValueError(f"centres must have shape (n, 2), a row for each of the first n of RACK_BALLS "
                         f"(1 <= n <= {len(RACK_BALLS)}); got shape {shape}")
    names = RACK_BALLS[: shape[0]]
    q, v = ball_state(p, centres, velocities, spins)
    poses, rates = q.reshape(-1, 7), v.reshape(-1, 7)
    xy = poses[:, :2]
    checks = _table_checks(p, q, v, nose_height)

    def at(k):
        return f"{names[k]} at {_point(xy[k])} m"

    # every check rides on both q and v, so that it is kept when only one of them is used
    start = (q, v)
    bad = ~checks["centre_finite"]
    start = refuse_where(start, bad, "every ball's centre must be finite", _first(bad, at))
    bad = ~checks["motion_finite"]
    start = refuse_where(start, bad, "every ball's velocity and spin must be finite", _first(
        bad, lambda k: f"{names[k]} moving at {_point(rates[k])} m/s, spinning at "
                       f"{np.asarray(angular_velocity(poses[k], rates[k])).tolist()} rad/s"))
    bad = checks["too_fast"]
    start = refuse_where(start, bad, "every ball's speed must be at most billiard.max_speed, at which its Hertz "
                         "contact with a cushion would sink it by its radius (beyond that the contact laws cannot "
                         "stop it)", _first(
        bad, lambda k: f"{names[k]} moving at {float(np.linalg.norm(rates[k, :3])):.6g} m/s, max_speed "
                       f"{float(max_speed(p)):.4g} m/s"))
    bad = checks["off"]
    start = refuse_where(start, bad, "every ball must be on the table, its centre inside the rails", _first(
        bad, lambda k: f"{at(k)}, the rails at |x| = {float(_rails(p)[1, 0]):.6g} m, "
                       f"|y| = {float(_rails(p)[1, 1]):.6g} m"))
    depth = checks["depth"]
    bad = depth >= 0
    start = refuse_where(start, bad, "no ball may start with its centre over a pocket's hole", _first(
        bad, lambda k, j: f"{at(k)}, {float(depth[k, j]):.3g} m inside the edge of the {POCKETS[j]} pocket"))
    # a centre inside the rubber first: its ball also overlaps the nose, but is not in front of it
    bad = checks["inside"]
    start = refuse_where(start, bad, "no ball may start inside a cushion", _first(
        bad, lambda k, c: f"{at(k)}, inside the {CUSHIONS[c]} cushion"))
    into_cushion = checks["cushion"]
    bad = into_cushion > TOUCHING
    start = refuse_where(start, bad, "no ball may overlap a cushion (touching is allowed)", _first(
        bad, lambda k, c: f"{at(k)} overlapping the {CUSHIONS[c]} cushion by {float(into_cushion[k, c]):.3g} m"))
    i, j = _pairs(len(names))
    into_ball = checks["pair"]
    bad = into_ball > TOUCHING
    start = refuse_where(start, bad, "no two balls may overlap (touching is allowed)", _first(
        bad, lambda m: f"{at(i[m])} and {at(j[m])} overlapping by {float(into_ball[m]):.3g} m"))
    return State(*start)


def break_state(p, balls=16, speed=None, nose_height=None):
    """The break: the cue ball on the head spot sliding at ``speed`` (default ``p.speed``) along +x, the rack at rest.

    ``speed`` > 0 (m/s); the balls are checked by ``table_state`` (``nose_height`` as there).
    """
    names = _check_table_balls(balls)
    speed = check_positive("speed", p.speed if speed is None else speed)
    velocities = jnp.zeros((len(names), 2)).at[0, 0].set(speed)
    return table_state(p, rack(p)[: len(names)], velocities, nose_height=nose_height)


def cue_strike(p, speed, aim, topspin_ratio=0.0, sidespin_ratio=0.0):
    """The cue ball's velocity (ṙ_x, ṙ_y) (m/s) and angular velocity ω (rad/s) as the cue leaves it.

    ``speed`` V > 0 (m/s) along the ``aim`` θ (rad, from +x towards +y);
    the spins in multiples of V/R, in ``cushion_impact``'s convention:
    ``topspin_ratio`` ω_T about the horizontal axis across the aim (1 rolls,
    0 slides without spin, as a ball struck at its centre leaves the cue; < 0
    draw), ``sidespin_ratio`` ω_S about the vertical (> 0 counter-clockwise
    seen from above): ω = (V/R) (ω_T ẑ × d + ω_S ẑ), d = (cos θ, sin θ).
    For ``table_state``'s ``velocities`` and ``spins``.
    """
    speed = check_positive("speed", speed)
    aim = check_range("aim", aim)
    topspin, sidespin = check_range("topspin_ratio", topspin_ratio), check_range("sidespin_ratio", sidespin_ratio)
    direction = jnp.stack([jnp.cos(aim), jnp.sin(aim)])
    spin = speed / p.radius * jnp.stack([-topspin * direction[1], topspin * direction[0], sidespin])
    return speed * direction, spin


def ghost_ball_aim(p, cue, ball, pocket):
    """The aim θ (rad, from +x towards +y) that sends the cue ball at ``cue`` (x, y) to the ghost-ball point of the
    object ball at ``ball`` (x, y) for the ``pocket`` (a name of ``POCKETS``).

    The ghost ball touches the object ball on the line from the centre of the
    pocket's hole (``pockets``) through its centre, G = O − 2R (P − O)/|P − O|:
    without friction between the balls (and without the cue ball's swerve on
    the cloth), the impulse along the line of centres then sends the object
    ball at the hole. Friction throws it off that line by a few degrees
    (``diffimpact.impulse.alciatore.throw_angle``), so a cut played this way
    can miss a narrow pocket. Raises ``ValueError`` for an unknown pocket, for
    ``cue`` or ``ball`` not a finite (x, y), for the object ball on the
    hole's centre, and for a cut the cue ball cannot make: G behind the
    object ball as seen from the cue ball (a cut of 90° or more), or the cue
    ball on G.
    """
    if pocket not in POCKETS:
        raise ValueError(f"pocket must be one of {', '.join(POCKETS)}; got {pocket!r}")
    cue, ball = (np.asarray(check_range(name, point), dtype=float) for name, point in (("cue", cue), ("ball", ball)))
    for name, point in (("cue", cue), ("ball", ball)):
        if point.shape != (2,):
            raise ValueError(f"{name} must be a centre (x, y) (m); got shape {point.shape}")
    towards = np.asarray(pockets(p).centres[POCKETS.index(pocket)]) - ball
    if np.linalg.norm(towards) <= 1e-9:
        raise ValueError(f"the ball at {_point(ball)} m is on the centre of the {pocket} pocket's hole: no line "
                         "runs from it to the pocket")
    towards /= np.linalg.norm(towards)
    ghost = ball - 2 * p.radius * towards
    path = ghost - cue
    if np.linalg.norm(path) <= 1e-9 or path @ towards <= 0:
        cut = np.degrees(np.arccos(np.clip(path @ towards / max(np.linalg.norm(path), 1e-300), -1, 1)))
        raise ValueError(f"the cue ball at {_point(cue)} m cannot cut the ball at {_point(ball)} m into the "
                         f"{pocket} pocket: the cut is {cut:.1f}° (at most 90°)")
    return float(np.arctan2(path[1], path[0]))


def pocketed(p, run, balls=16):
    """Balls that dropped into a pocket in a ``table_model`` run: a list of (time (s), ball, pocket) in time order.

    A ball is pocketed when its cloth contact is removed for good (the
    cloth's ``Trajectory.removals``, force 1: ``HoledPlane.removal``, located
    by ``simulate``): its centre has passed a hole's edge and it has reached
    the cloth's level there, sliding off the edge or falling from a hop over
    the hole. That is the time given; the pocket is the hole nearest its
    centre at the first save from then on (``pocket_depth``: the ball falls
    on through the hole). A ball removed with no hole within a radius of its
    centre left the table (``left_table``) and is not pocketed.
    """
    return [(t, ball, pocket) for t, ball, pocket in _cloth_removals(p, run, balls) if pocket is not None]


def left_table(p, run, balls=16):
    """Balls that left the table in a ``table_model`` run: a list of (time (s), ball) in time order.

    The cloth ends at the rails (``table_cloth``), and a ball that flies
    beyond them (thrown up by a cushion, it can pass over a pocket's mouth:
    the cushions' faces have no top, but a pocket's mouth is open) leaves it
    for good where it falls to the cloth's level there, with no hole within a
    radius of its centre (``pocketed`` has the others). That is the time
    given; like a pocketed ball, it then falls on out of the scene.
    """
    return [(t, ball) for t, ball, pocket in _cloth_removals(p, run, balls) if pocket is None]


def _cloth_removals(p, run, balls):
    """(time (s), ball, pocket) of every ball whose cloth contact a ``table_model`` run removed, in time order: the
    pocket is the hole nearest the ball's centre at the first save from its removal on, ``None`` where no hole is
    within a radius of it (the ball left the table)."""
    names = _check_table_balls(balls)
    removed, times = np.asarray(run.removals[1]), np.asarray(run.t)
    found = []
    for index in np.flatnonzero(np.isfinite(removed)):
        save = min(int(np.searchsorted(times, removed[index])), len(times) - 1)
        depth = np.asarray(pocket_depth(p, np.asarray(position(run.q[save], index))[:2]))
        pocket = POCKETS[int(np.argmax(depth))] if depth.max() > -p.radius else None
        found.append((float(removed[index]), names[index], pocket))
    return sorted(found, key=lambda removal: removal[:2])
