"""Impacts resolved in an instant, by impulses: one module per model and its paper, one interface.

A model is an object, an ``ImpulseModel`` whose fields are its parameters (``base``): called with the Delassus
operator W = J M⁻¹ Jᵀ and the pre-impact contact velocities u⁻ (each contact's normal first), it returns an
``Impact`` (impulse λ, post-impact velocities u⁺ = u⁻ + W λ). ``multibody.RigidImpact(model)`` applies one at
each contact onset of a simulation.

* ``Newton``, ``Poisson`` (``newton``, ``poisson``): Newton's and Poisson's restitution for several contacts.
* ``Routh`` (``routh``): Routh's method for a planar contact ([Sypniewska-Kamińska 2017] Fig. 4).
* ``MaxDissipation``, ``MaxDissipationGaussSeidel`` (``max_dissipation``): the maximally dissipative inelastic
  impulse of [Preclik 2017] (one contact in closed form, several by block Gauss–Seidel).
* ``Plus`` (``plus``): the PLUS model of [Uchida 2015] for simultaneous spatial frictional impacts.

The billiard-specific closed forms are functions of the balls' states, not models of (W, u⁻):

* ``mathavan_2010``: a billiard ball against a rigid cushion (Mathavan, Jackson & Parkin 2010), integrated in
  the cushion's normal impulse.
* ``alciatore``: D. G. Alciatore's closed forms for the ball–ball collision of pool, object-ball throw
  (TP A.14) and the 30° rule ([Gismeros Moreno 2022] eq. (4.1)).

Impacts resolved in time, by a compliant contact law, are in ``diffimpact.impact``.
"""

from diffimpact.impulse import alciatore, base, mathavan_2010, max_dissipation, newton, plus, poisson, routh
from diffimpact.impulse.base import Impact, ImpulseModel
from diffimpact.impulse.max_dissipation import MaxDissipation, MaxDissipationGaussSeidel
from diffimpact.impulse.newton import Newton
from diffimpact.impulse.plus import Plus
from diffimpact.impulse.poisson import Poisson
from diffimpact.impulse.routh import Routh

__all__ = ["Impact", "ImpulseModel", "MaxDissipation", "MaxDissipationGaussSeidel", "Newton", "Plus", "Poisson",
           "Routh", "alciatore", "base", "mathavan_2010", "max_dissipation", "newton", "plus", "poisson", "routh"]
