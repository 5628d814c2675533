"""Poisson's kinetic restitution for one or several contacts: the restitution impulse is e times the compression's.

Compression ends when no contact approaches any more: normal impulses
p_c ≥ 0 with w = N p_c + u⁻_n ≥ 0, p_cᵀ w = 0 (the same normal problem N as
``newton``, with friction −μ_j p_j d_j along the fixed pre-impact slip
directions); restitution then adds e_j p_c,j at each contact, so the total
normal impulse is (1 + e_j) p_c,j (Stronge, *Impact Mechanics*, 2000, §4;
[Sypniewska-Kamińska 2017] eq. (28) for one contact). For one contact this equals Newton's
impulse; it differs where a contact that compressed is pushed away, or one
that did not is pressed, by the others' restitution impulses. Following the
slip through the impact (stick, reversal) is Routh's method
(``diffimpact.impulse.routh``), which with one contact is Poisson's
hypothesis with Coulomb friction exactly.

Without friction Poisson's law never creates energy: the compression
impulse satisfies p_cᵀ(W_nn p_c + u⁻_n) = 0, so with p = (1 + e) p_c the
kinetic energy changes by pᵀu⁻_n + ½ pᵀW_nn p = −½ (1 − e²) p_cᵀ W_nn p_c ≤ 0
(Newton's law has no such identity, and with several contacts can gain
energy even without friction; tests show both).
"""

import jax.numpy as jnp

from diffimpact._validation import refuse_where
from diffimpact.impulse._problem import solve_lcp
from diffimpact.impulse.base import Impact
from diffimpact.impulse.newton import _Restitution


class Poisson(_Restitution):
    """Poisson's impact of m ≤ 12 simultaneous contacts (module docstring), planar or spatial.

    ``Poisson(restitution, friction=0.0)`` and its call as ``newton.Newton``.
    Returns an ``Impact``.
    """

    def __call__(self, delassus, velocity, dimension=None):
        W, u, N, B, approach, e = self._problem(delassus, velocity, dimension)
        compression, found = solve_lcp(N, approach)
        compression = refuse_where(compression, ~found, "no compression impulse exists: friction at the fixed "
                                   "sliding directions makes the normal velocities fall with the normal impulse (a "
                                   "Painlevé jam)")
        impulse = B @ ((1 + e) * compression)
        return Impact(impulse, u + W @ impulse)
