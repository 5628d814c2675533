"""Impacts resolved in an instant, by impulses: one module per model and its paper.

Each takes the Delassus operator W = J M⁻¹ Jᵀ and the pre-impact contact velocities u⁻ (each contact's normal
first) and returns an ``Impact`` (impulse λ, post-impact velocities u⁺ = u⁻ + W λ).

* ``newton``, ``poisson``: Newton's and Poisson's restitution for several contacts.
* ``routh``: Routh's method for a planar contact ([Sypniewska-Kamińska 2017] Fig. 4).
* ``max_dissipation``: the maximally dissipative inelastic impulse of [Preclik 2017] (one contact in closed
  form, several by block Gauss–Seidel).
* ``plus``: the PLUS model of [Uchida 2015] for simultaneous spatial frictional impacts.
* ``mathavan_2010``: a billiard ball against a rigid cushion (Mathavan, Jackson & Parkin 2010), integrated in
  the cushion's normal impulse.
* ``alciatore``: D. G. Alciatore's closed forms for the ball–ball collision of pool, object-ball throw
  (TP A.14) and the 30° rule ([Gismeros Moreno 2022] eq. (4.1)).

Impacts resolved in time, by a compliant contact law, are in ``diffimpact.impact``.
"""

from diffimpact.impulse import alciatore, mathavan_2010, max_dissipation, newton, plus, poisson, routh

__all__ = ["alciatore", "mathavan_2010", "max_dissipation", "newton", "plus", "poisson", "routh"]
