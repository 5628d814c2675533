"""Routh's method: a planar frictional impact followed in impulse space, with Poisson's restitution.

As used by [Sypniewska-Kamińska 2017] (§3.4, Fig. 4) for the double pendulum hitting a rough
obstacle, for any planar system. With the contact frame normal first,
λ = (F, T) (normal, tangential impulse) and u = (c, s) (closing and sliding
velocity), the contact velocity is linear in the impulse (eqs. (34)–(35)):
u(λ) = u⁻ + W λ, W = [[γ, ε], [ε, α]] in the paper's symbols. The impulse
path is followed with the normal impulse F as the independent variable:

* sliding: T' = −μ sign(s) (the line of friction, eq. (37));
* the slip stops where s = 0 (the line of sticking); from there the contact
  sticks along that line if its slope T'/F' = −W_tn/W_tt lies inside the
  friction cone (|·| ≤ μ), and otherwise slides back with T' = +μ sign(s⁻);
  after that switch the slip no longer changes sign, so a path has at most
  two segments;
* compression ends where c = 0, at F_m (the line of maximum compression);
  the impact ends at F_f = (1 + k) F_m (eq. (28), Poisson's hypothesis).

The five arrangements of Fig. 4 and their mirror images (s⁻ < 0) are the
``case`` of the result: 0 (a) the slip never stops; 1 (b) it stops during
compression and the contact sticks; 2 (c) it stops during compression and
reverses; 3 (d) it stops during restitution and sticks; 4 (e) it stops
during restitution and reverses. A contact that starts without slip
(s⁻ = 0) sticks from the start when it can (case b with the stop at F = 0)
and otherwise slides in the direction its normal impulse drives it.

A separating contact (c⁻ ≥ 0) gets no impulse (case a, a documented no-op).
With W positive definite the path always ends: the closing velocity can
fall with the normal impulse while sliding (dc/dF = W_nn − μ sign(s) W_nt ≤ 0,
Painlevé's case) only if μ |W_nt| ≥ W_nn > W_nt²/W_tt, and then the slip must
stop (ds/dF = W_tn − μ sign(s) W_tt has the sign opposite to s) and the
contact can stick (|W_tn/W_tt| < μ), after which dc/dF = W_nn − W_nt²/W_tt > 0.
The result is piecewise smooth in W, u⁻, μ and k, with derivatives that jump
where the case changes; ``jit``, ``vmap`` and ``grad`` apply.
"""

from typing import ClassVar

import jax.numpy as jnp

from diffimpact._validation import check_range
from diffimpact.impulse._problem import check_problem
from diffimpact.impulse.base import Impact, ImpulseModel

CASES = ("a: slides throughout", "b: sticks during compression", "c: reverses during compression",
         "d: sticks during restitution", "e: reverses during restitution")


class RouthImpact(Impact):
    """``Impact`` with Routh's record: the ``case`` of Fig. 4 (0–4 for a–e), the normal impulse where the slip
    stops (``stop``, inf if never), at the end of compression (``compression``) and at the end (``end``)."""

    case: jnp.ndarray
    stop: jnp.ndarray
    compression: jnp.ndarray
    end: jnp.ndarray


def _path(W, u, mu, k):
    c0, s0 = u[0], u[1]
    stick_slope = -W[1, 0] / W[1, 1]
    can_stick = jnp.abs(stick_slope) <= mu
    starts_stuck = (s0 == 0) & can_stick
    sign = jnp.where(s0 != 0, jnp.sign(s0), -jnp.sign(stick_slope))
    slope1 = jnp.where(starts_stuck, stick_slope, -mu * sign)
    slope2 = jnp.where(can_stick, stick_slope, mu * sign)
    dc1, ds1 = W[0, 0] + W[0, 1] * slope1, W[1, 0] + W[1, 1] * slope1
    dc2 = W[0, 0] + W[0, 1] * slope2
    stops = (s0 * ds1 < 0) | starts_stuck
    stop = jnp.where(stops, jnp.where(starts_stuck, 0.0, -s0 / jnp.where(stops, ds1, 1.0)), jnp.inf)
    compress1 = -c0 / jnp.where(dc1 > 0, dc1, 1.0)
    first_compresses = (dc1 > 0) & (compress1 <= stop)
    c_at_stop = c0 + dc1 * jnp.where(jnp.isfinite(stop), stop, 0.0)
    compression = jnp.where(first_compresses, compress1, stop - c_at_stop / jnp.where(dc2 > 0, dc2, 1.0))
    end = (1 + k) * compression
    tangential = jnp.where(end <= stop, slope1 * end, slope1 * stop + slope2 * (end - stop))
    impulse = jnp.stack([end, tangential])
    reverse = ~can_stick
    case = jnp.where(end <= stop, 0, jnp.where(stop < compression, 1, 3) + reverse.astype(int))
    separating = c0 >= 0
    zero = jnp.zeros(())
    return (jnp.where(separating, 0.0, impulse), jnp.where(separating, 0, case),
            jnp.where(separating, jnp.inf, stop), jnp.where(separating, zero, compression),
            jnp.where(separating, zero, end))


class Routh(ImpulseModel):
    """Routh's impact of one planar contact (module docstring).

    Called as every ``ImpulseModel``, ``model(W, u⁻)``: W (..., 2, 2), SPD,
    normal first (u⁺ = u⁻ + W λ); u⁻ = (c, s) (..., 2), the closing (negative:
    approaching) and sliding velocity; leading dimensions broadcast with the
    parameters'. Returns a ``RouthImpact``: impulse (F, T), velocity u⁺, case,
    stop, compression, end.

    Parameters
    ----------
    friction : Coulomb μ ≥ 0.
    restitution : Poisson's k ∈ [0, 1] (F_f = (1 + k) F_m).
    """

    friction: jnp.ndarray
    restitution: jnp.ndarray
    dimensions: ClassVar[tuple] = (2,)
    several: ClassVar[bool] = False

    def __init__(self, friction, restitution):
        self.friction = check_range("friction", friction, 0.0)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0)

    def __call__(self, delassus, velocity, dimension=None):
        self._own_dimension(dimension)
        W, u = check_problem(delassus, velocity, sizes=(2,))
        impulse, case, stop, compression, end = jnp.vectorize(
            _path, signature="(2,2),(2),(),()->(2),(),(),(),()")(W, u, self.friction, self.restitution)
        return RouthImpact(impulse, u + jnp.einsum("...ij,...j->...i", W, impulse), case, stop, compression, end)
