"""Contact laws set at each impact: compliant laws whose parameters depend on the impact (``ImpactLaw``:
``OptimalDamping``, eq. (50) of [Poursina 2020]; ``HuntCrossleyImpact``, eq. (9) with the damping factors of
eqs. (13)–(16)), and instantaneous impacts resolved by a model of ``diffimpact.impulse`` (``RigidImpact``).

``simulate`` resolves an ``ImpactLaw`` at every onset of its ``Contact`` from
the effective mass of the contact normal and the approach speed there, and
applies a ``RigidImpact``'s impulse to the stacked problem of the family's
proximal contacts (``diffimpact.multibody.integrate.events``).
"""

import abc
from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._validation import check_positive, check_range
from diffimpact.contact import damping_factors
from diffimpact.contact.normal import HertzLinearDamper, HuntCrossley
from diffimpact.impact.damping import _check_exponent_restitution, _check_method, _optimal_damping, damping_scale
from diffimpact.impulse.base import KINDS, ImpulseModel


class ImpactLaw(eqx.Module):
    """A normal law whose parameters depend on each impact.

    ``at_impact(m, v)`` returns the ``NormalForceLaw`` for the effective mass m
    (kg) and approach speed v = ⁻δ̇ > 0 (m/s) at contact onset. ``prepared()``
    returns the law with what does not depend on the impact computed:
    ``simulate`` calls it once per run, so that its onsets do not repeat it.
    """

    @abc.abstractmethod
    def at_impact(self, effective_mass, impact_velocity):
        """The law for this impact."""

    def prepared(self):
        """The law with its parts that do not depend on the impact computed; itself by default."""
        return self


@eqx.filter_jit
def _unit_dampings(exponent, restitution, method):
    """ĉ(n, e) of eq. (49) by ``method`` for each (n, e) of two 1-D arrays, one at a time (``jax.lax.map``):
    batching the exact method's nested loops (``jax.vmap``) cost seconds of tracing in every compiled
    ``simulate``."""
    return jax.lax.map(lambda ne: _optimal_damping(1.0, 1.0, 1.0, *ne, method), (exponent, restitution))


class OptimalDamping(ImpactLaw):
    """Eq. (50) of [Poursina 2020]: f = c δ̇ + k δ^n with c = c_opt(m, v, k, n, e) (eq. (23)).

    c_opt = ĉ(n, e) · [k v^(n−1) m^n]^(1/(n+1)) exactly (eq. (49);
    ``diffimpact.impact.damping``), with ĉ the optimal damping of the unit
    system m = v = k = 1 by ``method`` ("exact", "paper" or "improved", as in
    ``diffimpact.optimal_damping``). ĉ depends on the law's parameters only:
    ``prepared()`` (``simulate`` calls it once per run) stores it in
    ``unit_damping``, and each impact then costs the scale; without it
    (``None``, as constructed) ``at_impact`` solves for ĉ.
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray
    unit_damping: Optional[jnp.ndarray]
    method: str = eqx.field(static=True)

    def __init__(self, stiffness, exponent, restitution, method="exact"):
        _check_method(method)
        # the ranges of ``optimal_damping`` for this method, checked now rather than at the first impact
        self.exponent, self.restitution = _check_exponent_restitution(exponent, restitution, method)
        self.stiffness = check_positive("stiffness", stiffness)
        self.unit_damping = None
        self.method = method

    def _solved_unit_damping(self):
        # (a law of one member and a family of one share one compilation)
        n, e = jnp.broadcast_arrays(self.exponent, self.restitution)
        return _unit_dampings(n.ravel(), e.ravel(), self.method).reshape(n.shape)

    def prepared(self):
        """The law with ĉ(n, e) in ``unit_damping``, computed from its current parameters."""
        unit = self._solved_unit_damping()
        return eqx.tree_at(lambda law: law.unit_damping, self, unit, is_leaf=lambda x: x is None)

    def at_impact(self, effective_mass, impact_velocity):
        unit = self._solved_unit_damping() if self.unit_damping is None else self.unit_damping
        damping = unit * damping_scale(effective_mass, impact_velocity, self.stiffness, self.exponent)
        return HertzLinearDamper(self.stiffness, self.exponent, damping)


#: Damping factors μ(k, e, v) of the Hunt–Crossley family for ``HuntCrossleyImpact``.
HUNT_CROSSLEY_FACTORS = {
    "hunt_crossley": damping_factors.hunt_crossley,  # [Poursina 2020] eq. (13)
    "lankarani_nikravesh": damping_factors.lankarani_nikravesh,  # eq. (14); [Gismeros Moreno 2022] eq. (3.7)
    "hu_guo": damping_factors.hu_guo,  # eq. (15)
    "flores": damping_factors.flores,  # eq. (16)
}


class HuntCrossleyImpact(ImpactLaw):
    """Hunt–Crossley, eq. (9) of [Poursina 2020], f = (μ δ̇ + k) δⁿ, with μ = factor(k, e, ⁻δ̇) set at each impact.

    ``factor`` names one of ``HUNT_CROSSLEY_FACTORS``: "flores" (eq. (16), the
    default), "lankarani_nikravesh" (eq. (14); [Gismeros Moreno 2022] eq. (3.7), its
    ball–ball and ball–cushion law with n = 3/2), "hunt_crossley", "hu_guo".
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray
    factor: str = eqx.field(static=True)

    def __init__(self, stiffness, exponent, restitution, factor="flores"):
        if factor not in HUNT_CROSSLEY_FACTORS:
            raise ValueError(f"factor must be one of {sorted(HUNT_CROSSLEY_FACTORS)}; got {factor!r}")
        self.stiffness = check_positive("stiffness", stiffness)
        self.exponent = check_positive("exponent", exponent)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
        self.factor = factor

    def at_impact(self, effective_mass, impact_velocity):
        del effective_mass
        hysteresis = HUNT_CROSSLEY_FACTORS[self.factor](self.stiffness, self.restitution, impact_velocity)
        return HuntCrossley(self.stiffness, self.exponent, hysteresis)


class RigidImpact(eqx.Module):
    """An instantaneous impact resolved at onset by ``model``, an ``ImpulseModel`` of ``diffimpact.impulse``.

    ``RigidImpact(diffimpact.impulse.Plus(0.4, 0.2), proximity=1e-6)``: at
    each onset of a contact of its family ``simulate`` resolves one impact of
    the family's proximal contacts: it stacks their Delassus operator
    W = J M_c⁻¹ Jᵀ and velocities u⁻, each contact in its frame, normal first
    (``impact_velocity``), calls ``model(W, u⁻, dimension)`` once and applies
    the impulse. The model's array fields are differentiable leaves, one per
    contact: a family of m contacts stacks them, (m,), a family of one passes
    its own values. ``RigidImpact(Newton(e))`` is the frictionless Newton
    impact, ⁺δ̇ = −e ⁻δ̇.

    Proximity ([Uchida 2015] §3a, Fig. 6). An impact is triggered when a
    contact of the family is first seen to touch (an onset); every contact of
    the family whose gap is at most ``proximity`` (m, ≥ 0), i.e. whose
    penetration is δ ≥ −``proximity``, is proximal and takes part, and the
    model decides which of them get impulses (one that does not approach gets
    none unless the others' impulses drive it into approach). The tolerance
    stands for the uncertainty of the positions: a brick landing flat on its
    four corners bounces without spin when their heights differ by less than
    it, where resolving the corners one after the other would make it spin
    (by an amount that does not shrink with the difference). The default 0
    adds no distance of its own: the contacts that touch (δ ≥ 0) take part,
    among them every contact whose onset falls at the same event (an exactly
    symmetric drop); contacts whose onsets are apart, however little, are
    resolved one after the other. Set it to the accuracy of the positions
    (round-off in a brick's orientation, cos(π/2) ≈ 6e-17, gives height
    differences of 1e-17 m; ``simulate``'s rtol and atol bound those of the
    integration) to treat near-simultaneous contacts together.

    Models. Of several contacts (``several``): ``Newton`` and ``Poisson``
    (planar or spatial) and ``MaxDissipationGaussSeidel`` (spatial) need W
    positive definite, which redundant contacts are not (four corners of a
    brick on the ground, or two ends of a planar rod: more contact directions
    than freedoms); ``Plus`` (spatial) resolves those too, spreading the load
    by least squares. Of one contact: ``Routh`` (planar) and
    ``MaxDissipation`` (spatial) refuse a family of more than one contact
    (``ValueError`` in ``simulate``): give each contact a family of its own,
    resolved one after the other. A model whose ``dimensions`` do not hold the
    family's contacts is refused too.
    """

    model: ImpulseModel
    proximity: jnp.ndarray

    def __init__(self, model, *, proximity=0.0):
        if not isinstance(model, ImpulseModel):
            raise TypeError(f"model must be an ImpulseModel of diffimpact.impulse (e.g. Newton(restitution)); got "
                            f"{type(model).__name__}")
        self.model = model
        if jnp.ndim(proximity) != 0:
            raise ValueError(f"proximity must be one distance (m) per contact, a scalar; got shape "
                             f"{jnp.shape(proximity)}")
        self.proximity = check_range("proximity (m)", proximity, 0.0)

    def family_model(self, count, dimension):
        """The model for one impact of this family of ``count`` contacts of ``dimension``, once it suits them.

        The law is the family's (its leaves stacked along the contacts): a
        family of one gives its contact's own values, a family of m the (m,)
        stacks.
        """
        model = self.model
        name = type(model).__name__
        if dimension not in model.dimensions:
            raise ValueError(f"{name} resolves {KINDS[model.dimensions[0]]} contacts; this RigidImpact family's "
                             f"contacts are {KINDS[dimension]}")
        if count > 1 and not model.several:
            raise ValueError(
                f"{name} resolves one contact at a time, and this RigidImpact family has {count} contacts, which "
                "take part in one impact together when they touch at once: use a model of several contacts "
                "(Newton, Poisson, Plus, MaxDissipationGaussSeidel), or give each contact a family of its own "
                "(resolved one after the other)"
            )
        return jax.tree.map(lambda value: value[0], model) if count == 1 else model
