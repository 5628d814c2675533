"""Closed forms of D. G. Alciatore for the ball–ball collision of pool: throw and the 30° rule.

**Throw** (Technical Proof TP A.14, "The effects of cut angle, speed, and spin
on object ball throw", billiards.colostate.edu): a cue ball moving at speed v
with topspin ω_x (about the horizontal axis across its path; natural roll
|ω_x| = v/R) and side spin ω_z (about the vertical) hits a resting object ball
of equal mass at the cut angle φ (the angle between the cue ball's velocity
and the line of centres; φ = 0 is a full hit). The normal impulse is that of a
perfectly elastic impact, m v cos φ. The contact points slide at

    v_rel = √((v sin φ − R ω_z)² + (R ω_x cos φ)²)                  (TP A.14)

and friction μ(v_rel) acts against the slip, unless the slip stops first: a
tangential impulse J changes the slip by 7J/m for two solid spheres
(1/m + R²/I on each ball, I = 2mR²/5), so it can be at most m u/7 for the
slip u = v sin φ − R ω_z along the tangent. The object ball leaves with

    v_t = min(μ(v_rel) v cos φ / v_rel, 1/7) (v sin φ − R ω_z),
    v_n = v cos φ,   throw = atan(v_t / v_n)                        (eqs. 15–17)

(the equation numbers of TP A.14 as cited in its transcriptions; the PDF
could not be read here). ω_x enters only squared, so its sign does not
matter; ω_z > 0 (the sign of the cut) is outside English and reduces throw,
to zero at the "gearing" spin R ω_z = v sin φ. A positive throw turns the
object ball from the line of centres towards the cue ball's original path.

**The 30° rule** ([Gismeros Moreno 2022], eq. (4.1), after Alciatore): a rolling cue ball
hitting an object ball with the ball-hit fraction f (f = 1: full hit) at the
cut angle φ = asin(1 − f), frictionless and elastic, leaves along the
tangent line, then friction with the cloth turns it until it rolls again;
the final direction makes the angle

    θ = atan(sin φ cos φ / (sin² φ + 2/5))                          (eq. (4.1))

with the original direction (independent of speed and cloth friction; it is
(5/7 sin φ cos φ, 5/7 sin² φ + 2/7) v, the 5/7–2/7 split of rolling). The
largest deflection, 33.75°, is at φ = atan √(2/7) = 28.1°.

All functions take angles in radians and speeds in m/s, broadcast their
arguments, and work under ``jit``, ``vmap`` and ``grad``.
"""

import jax.numpy as jnp

from diffimpact._validation import check_positive, check_range
from diffimpact.contact.friction import Alciatore

#: Largest tangential impulse per unit mass and slip of two equal solid spheres: 1/(1 + 1 + 5/2 + 5/2).
NO_SLIP_LIMIT = 1.0 / 7.0


def cut_angle(fraction):
    """Cut angle φ = asin(1 − f) (rad) of the ball-hit fraction f ∈ (0, 1] ([Gismeros Moreno 2022], eq. (4.1))."""
    fraction = check_range("fraction", fraction, 0.0, 1.0, low_open=True)
    return jnp.arcsin(1.0 - fraction)


def _check_cut(cut):
    return check_range("cut_angle", cut, 0.0, jnp.pi / 2, high_open=True)


def deflection_angle(cut):
    """The 30° rule, [Gismeros Moreno 2022] eq. (4.1): a rolling cue ball's final direction against its original one (rad).

    ``cut``: the cut angle φ ∈ [0, π/2) (rad); see ``cut_angle`` for the ball-hit fraction.
    """
    cut = _check_cut(cut)
    return jnp.arctan2(jnp.sin(cut) * jnp.cos(cut), jnp.sin(cut) ** 2 + 0.4)


def throw_angle(cut, speed, topspin=0.0, sidespin=0.0, *, radius=0.028575, friction=None):
    """Object-ball throw of TP A.14, eqs. 15–17 (rad); see the module docstring.

    Parameters
    ----------
    cut : cut angle φ ∈ [0, π/2) (rad).
    speed : cue-ball speed v > 0 (m/s).
    topspin : ω_x (rad/s), about the horizontal axis across the path; a
        rolling cue ball has |ω_x| = v/R, a stun shot 0.
    sidespin : ω_z (rad/s), about the vertical; positive (the sign of the
        cut) is outside English.
    radius : R > 0 (m); the default is a pool ball's (57.15 mm diameter).
    friction : an ``Alciatore`` law whose μ(v) = a + b e^(−c v) is taken at
        the slip speed (default: Alciatore's coefficients).
    """
    cut = _check_cut(cut)
    speed = check_positive("speed", speed)
    topspin = check_range("topspin", topspin)
    sidespin = check_range("sidespin", sidespin)
    radius = check_positive("radius", radius)
    friction = Alciatore() if friction is None else friction
    if not isinstance(friction, Alciatore):
        raise TypeError(f"friction must be an Alciatore law; got {type(friction).__name__}")
    tangential_slip = speed * jnp.sin(cut) - radius * sidespin
    normal_speed = speed * jnp.cos(cut)
    slip_squared = tangential_slip**2 + (radius * topspin * jnp.cos(cut)) ** 2
    sliding = slip_squared > 0
    slip = jnp.sqrt(jnp.where(sliding, slip_squared, 1.0))
    # Without slip there is no friction (and no throw); the double where keeps gradients finite there.
    ratio = jnp.where(sliding, friction.coefficient(slip) * normal_speed / slip, 0.0)
    return jnp.arctan2(jnp.minimum(ratio, NO_SLIP_LIMIT) * tangential_slip, normal_speed)
