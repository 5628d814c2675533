"""Planar compliant contact between bodies, usable as a force of a ``Model``.

A ``Contact`` pairs a gap geometry with a normal force law and an optional
friction law. The geometry gives the penetration δ(q) (> 0 in contact), the
unit normal n(q) (the direction of the force on the second body) and the
contact point P(q). Then (seed 004 §2, seed 000 §3.3):

* δ̇ = ∂δ/∂q · v by autodiff (``jax.jvp``);
* f_N = law(δ, δ̇), the clipped ``__call__`` of the law: compressive only and
  zero out of contact (no tensile force for laws that separate at zero force);
* the friction force opposes the tangential part of the relative velocity of
  the two material points at P, v_t = v_rel − (v_rel · n) n;
* the generalised force is Q = Jᵀ F with F = f_N n + F_t and J = ∂r/∂q the
  Jacobian (autodiff) of r = p_j − p_i, the positions of the material points
  of the two bodies that coincide at P (torques follow from the lever arms
  in J). For the normal part, Jᵀ n = −∂δ/∂q, the virtual work of f_N on δ.

The law may be a ``NormalForceLaw`` (fixed parameters) or an ``ImpactLaw``,
whose parameters depend on the effective mass and the approach speed of each
impact (eq. (50): optimal damping; eq. (9) with the factor of eq. (16)):
``simulate`` resolves it at every contact onset (``Contact.at_onset``).
``NewtonRestitution`` is the instantaneous (rigid) impact: no force, and
``simulate`` applies the impulse of ``restitution_impulse`` at each onset.
Body index ``None`` stands for the ground.
"""

import abc
from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._validation import check_range
from diffimpact.contact._math import positive_power, safe_norm
from diffimpact.contact.damping_factors import flores
from diffimpact.contact.friction import FrictionLaw
from diffimpact.contact.normal import HertzLinearDamper, HuntCrossley, NormalForceLaw
from diffimpact.impact.damping import METHODS, optimal_damping
from diffimpact.multibody.bodies import point_position, rotation
from diffimpact.multibody.forces import Force
from diffimpact.multibody.formulations import _saddle_point_solve

# --- geometries -------------------------------------------------------------------


def _position(q, body, point):
    """Global position of a body-fixed point (or ``point`` itself for the ground)."""
    return point if body is None else point_position(q[body], point)


def _local(q, body, position):
    """Body-frame coordinates s' of a global ``position`` (inverse of ``_position``)."""
    return position if body is None else rotation(q[body][2]).T @ (position - q[body][:2])


class Geometry(eqx.Module):
    """Abstract gap geometry between bodies ``body_i`` and ``body_j``.

    ``penetration(q)`` δ (m, > 0 in contact), ``normal(q)`` the unit vector along
    which the contact pushes body j (−n on body i), ``point(q)`` the contact
    point P (m); ``q`` is the tuple of per-body coordinates.
    """

    body_i: eqx.AbstractVar[Optional[int]]
    body_j: eqx.AbstractVar[Optional[int]]

    @abc.abstractmethod
    def penetration(self, q):
        """δ(q) (m)."""

    @abc.abstractmethod
    def normal(self, q):
        """Unit normal n(q), on body j."""

    @abc.abstractmethod
    def point(self, q):
        """Contact point P(q) (m)."""


class CirclePlane(Geometry):
    """Circle of radius R on body j against a line (a plane in 2-D) on body i.

    The line passes through the body-fixed point ``plane_point`` with the
    body-fixed outward normal ``plane_normal`` (normalised here); the circle's
    centre C is the body-fixed point ``centre``. δ = R − (C − P₀) · n, the
    planar sphere–plane gap; P = C − (R − δ/2) n, the middle of the overlap.
    The line is unbounded: the scene must keep contacts within the real
    surface. ``body_i=None`` makes it a ground line given in global coordinates.
    """

    body_i: Optional[int] = eqx.field(static=True)
    plane_point: jnp.ndarray
    plane_normal: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    centre: jnp.ndarray
    radius: jnp.ndarray

    def __init__(self, body_i, plane_point, plane_normal, body_j, centre=(0.0, 0.0), radius=0.0):
        self.body_i = body_i
        self.plane_point = jnp.asarray(plane_point, dtype=float)
        normal = jnp.asarray(plane_normal, dtype=float)
        self.plane_normal = normal / check_range("norm of plane_normal", jnp.linalg.norm(normal), 0.0, low_open=True)
        self.body_j = body_j
        self.centre = jnp.asarray(centre, dtype=float)
        self.radius = check_range("radius", radius, 0.0)

    def normal(self, q):
        return self.plane_normal if self.body_i is None else rotation(q[self.body_i][2]) @ self.plane_normal

    def penetration(self, q):
        offset = _position(q, self.body_j, self.centre) - _position(q, self.body_i, self.plane_point)
        return self.radius - offset @ self.normal(q)

    def point(self, q):
        return _position(q, self.body_j, self.centre) - (self.radius - self.penetration(q) / 2) * self.normal(q)


def PointPlane(body_i, plane_point, plane_normal, body_j, point=(0.0, 0.0)):
    """A body-fixed point of body j against a line on body i: ``CirclePlane`` with R = 0."""
    return CirclePlane(body_i, plane_point, plane_normal, body_j, point, 0.0)


class CircleCircle(Geometry):
    """Circles of radii R_i, R_j centred at body-fixed points of bodies i and j.

    δ = R_i + R_j − |C_j − C_i|, n = (C_j − C_i)/|C_j − C_i| (the planar
    sphere–sphere gap); P = C_i + (R_i − δ/2) n. The centres must not coincide.
    """

    body_i: Optional[int] = eqx.field(static=True)
    centre_i: jnp.ndarray
    radius_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    centre_j: jnp.ndarray
    radius_j: jnp.ndarray

    def __init__(self, body_i, centre_i, radius_i, body_j, centre_j, radius_j):
        self.body_i, self.body_j = body_i, body_j
        self.centre_i = jnp.asarray(centre_i, dtype=float)
        self.centre_j = jnp.asarray(centre_j, dtype=float)
        self.radius_i = check_range("radius_i", radius_i, 0.0)
        self.radius_j = check_range("radius_j", radius_j, 0.0)

    def _axis(self, q):
        return _position(q, self.body_j, self.centre_j) - _position(q, self.body_i, self.centre_i)

    def normal(self, q):
        axis = self._axis(q)
        return axis / safe_norm(axis)

    def penetration(self, q):
        return self.radius_i + self.radius_j - safe_norm(self._axis(q))

    def point(self, q):
        centre = _position(q, self.body_i, self.centre_i)
        return centre + (self.radius_i - self.penetration(q) / 2) * self.normal(q)


# --- impact-dependent laws ---------------------------------------------------------


class ImpactLaw(eqx.Module):
    """A normal law whose parameters depend on each impact.

    ``at_impact(m, v)`` returns the ``NormalForceLaw`` for the effective mass m
    (kg) and approach speed v = ⁻δ̇ > 0 (m/s) at contact onset.
    """

    @abc.abstractmethod
    def at_impact(self, effective_mass, impact_velocity):
        """The law for this impact."""


class OptimalDamping(ImpactLaw):
    """Eq. (50) of seed 004: f = c δ̇ + k δ^n with c = c_opt(m, v, k, n, e) (eq. (23)).

    ``method`` is passed to ``diffimpact.optimal_damping``.
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray
    method: str = eqx.field(static=True)

    def __init__(self, stiffness, exponent, restitution, method="exact"):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}")
        self.stiffness, self.exponent = jnp.asarray(stiffness, dtype=float), jnp.asarray(exponent, dtype=float)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
        self.method = method

    def at_impact(self, effective_mass, impact_velocity):
        damping = optimal_damping(
            effective_mass, impact_velocity, self.stiffness, self.exponent, self.restitution, self.method
        )
        return HertzLinearDamper(self.stiffness, self.exponent, damping)


class FloresHuntCrossley(ImpactLaw):
    """Hunt–Crossley, eq. (9), with the damping factor μ = 8k(1 − e)/(5ev) of eq. (16)."""

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray

    def __init__(self, stiffness, exponent, restitution):
        self.stiffness, self.exponent = jnp.asarray(stiffness, dtype=float), jnp.asarray(exponent, dtype=float)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)

    def at_impact(self, effective_mass, impact_velocity):
        del effective_mass
        hysteresis = flores(self.stiffness, self.restitution, impact_velocity)
        return HuntCrossley(self.stiffness, self.exponent, hysteresis)


class NewtonRestitution(eqx.Module):
    """Instantaneous impact with Newton's coefficient of restitution e: ⁺δ̇ = −e ⁻δ̇."""

    restitution: jnp.ndarray

    def __init__(self, restitution):
        self.restitution = check_range("restitution", restitution, 0.0, 1.0)


# --- the force element -------------------------------------------------------------


class Contact(Force):
    """Compliant (or instantaneous) contact between two bodies; see the module docstring.

    Parameters
    ----------
    geometry : a ``Geometry`` (``CirclePlane``, ``PointPlane``, ``CircleCircle``).
    law : ``NormalForceLaw``, ``ImpactLaw`` or ``NewtonRestitution``.
    friction : optional ``FrictionLaw`` (not with ``NewtonRestitution``).

    Attributes
    ----------
    active_law : the ``NormalForceLaw`` in effect. For an ``ImpactLaw`` it is
        the law of unit mass and speed until ``simulate`` resolves it at the
        first onset (out of contact no law acts); ``None`` for
        ``NewtonRestitution``.
    """

    geometry: Geometry
    law: eqx.Module
    friction: Optional[FrictionLaw]
    active_law: Optional[NormalForceLaw]
    # 1.0 while ``simulate`` has the contact closed (between its onset and
    # separation events), 0.0 while open; −1.0 outside ``simulate``.
    engaged: jnp.ndarray

    def __init__(self, geometry, law, friction=None):
        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be a Geometry; got {type(geometry).__name__}")
        if isinstance(law, NormalForceLaw):
            self.active_law = law
        elif isinstance(law, ImpactLaw):
            self.active_law = law.at_impact(1.0, 1.0)
        elif isinstance(law, NewtonRestitution):
            if friction is not None:
                raise ValueError("friction is not supported with NewtonRestitution; pass friction=None")
            self.active_law = None
        else:
            raise TypeError(
                f"law must be a NormalForceLaw, ImpactLaw or NewtonRestitution; got {type(law).__name__}"
            )
        if friction is not None and not isinstance(friction, FrictionLaw):
            raise TypeError(f"friction must be a FrictionLaw or None; got {type(friction).__name__}")
        self.geometry, self.law, self.friction = geometry, law, friction
        self.engaged = jnp.asarray(-1.0)

    @property
    def body_indices(self):
        return (self.geometry.body_i, self.geometry.body_j)

    @property
    def impulsive(self):
        """Whether the contact is an instantaneous (Newton) impact."""
        return isinstance(self.law, NewtonRestitution)

    def penetration(self, q):
        """δ(q) (m)."""
        return self.geometry.penetration(q)

    def penetration_rate(self, q, v):
        """δ and δ̇ = ∂δ/∂q · v."""
        return jax.jvp(self.geometry.penetration, (q,), (v,))

    def normal_force(self, q, v):
        """f_N (N).

        Inside ``simulate`` the events decide: between onset and separation the
        law's ``force`` acts as it is (as in ``diffimpact.central_impact``), so
        the vector field is smooth within each segment; otherwise zero. Outside
        ``simulate`` the clipped law: ≥ 0, zero for δ ≤ 0.
        """
        if self.impulsive:
            return jnp.asarray(0.0)
        penetration, rate = self.penetration_rate(q, v)
        by_event = jnp.where(self.engaged > 0.5, self.active_law.force(penetration, rate), 0.0)
        return jnp.where(self.engaged < 0, self.active_law(penetration, rate), by_event)

    def separation_function(self, q, v):
        """Positive in contact, crossing zero downwards at separation.

        f(δ, δ̇)/k (units m^n) for laws that separate at zero force (eq. (20)),
        else δ (m): small in magnitude, so an absolute tolerance on it is
        meaningful for the event root finder.
        """
        penetration, rate = self.penetration_rate(q, v)
        law = self.active_law
        if law is not None and law.separates_at_zero_force:
            return law.force(penetration, rate) / law.stiffness
        return penetration

    def _relative_point(self, q, at):
        """p_j(q) − p_i(q) for the material points of bodies j and i at P(``at``)."""
        contact_point = self.geometry.point(at)
        i, j = self.geometry.body_i, self.geometry.body_j
        return _position(q, j, _local(at, j, contact_point)) - _position(q, i, _local(at, i, contact_point))

    def __call__(self, bodies, q, v, t):
        del bodies, t
        if self.impulsive:
            return tuple(jnp.zeros_like(qi) for qi in q)
        normal = self.geometry.normal(q)
        normal_force = self.normal_force(q, v)
        force = normal_force * normal
        relative = lambda x: self._relative_point(x, q)  # noqa: E731
        if self.friction is not None:
            velocity = jax.jvp(relative, (q,), (v,))[1]
            force = force + self.friction(normal_force, velocity - (velocity @ normal) * normal)
        return jax.vjp(relative, q)[1](force)[0]

    def potential_energy(self, bodies, q):
        """Elastic energy k δ^(n+1)/(n+1) stored in the contact (J), δ > 0; zero when impulsive."""
        del bodies
        if self.impulsive:
            return jnp.asarray(0.0)
        law = self.active_law
        return law.stiffness * positive_power(self.penetration(q), law.exponent + 1.0) / (law.exponent + 1.0)

    def at_onset(self, effective_mass, impact_velocity):
        """The contact with its ``ImpactLaw`` resolved for this impact (itself otherwise)."""
        if not isinstance(self.law, ImpactLaw):
            return self
        return eqx.tree_at(lambda c: c.active_law, self, self.law.at_impact(effective_mass, impact_velocity))


# --- impact quantities of a contact in a constrained model --------------------------


def normal_response(model, contact, q, t):
    """Gap gradient w = ∂δ/∂q, M_c⁻¹ w and the effective mass m = 1/(wᵀ M_c⁻¹ w).

    M_c⁻¹ w is the velocity change per unit generalised impulse w under the
    constraints: [[M, Dᵀ], [D, 0]] [Δv; λ] = [w; 0] (the impulsive form of eq.
    (2.20) of seed 000, with Δ(D v) = 0). m is the effective mass of eq. (3)
    of seed 004 for the contact normal of the constrained system.
    """
    w = jax.grad(lambda x: contact.penetration(model.split(x)))(q)
    response = _saddle_point_solve(
        model.mass_matrix(q), model.jacobian(q, t), w, jnp.zeros(len(model.constraint(q, t)))
    )
    return w, response, 1.0 / (w @ response)


def resolve_at_onset(model, contact, q, v, t):
    """``contact`` with its law set for an impact at (q, v, t) (see ``Contact.at_onset``).

    m from ``normal_response`` and ⁻δ̇ = w · v; a non-approaching onset
    (⁻δ̇ ≤ 0, grazing) uses 1 m/s.
    """
    w, _, mass = normal_response(model, contact, q, t)
    rate = w @ v
    return contact.at_onset(mass, jnp.where(rate > 0, rate, 1.0))


def restitution_impulse(model, contact, q, v, t):
    """Velocities after an instantaneous impact with Newton's restitution (impulse–momentum).

    The impulse P = (1 + e) m ⁻δ̇ acts along −w, Δv = −P M_c⁻¹ w, so that
    ⁺δ̇ = −e ⁻δ̇ and the constraint velocities are kept. Returns v⁺ (no impulse
    if ⁻δ̇ ≤ 0).
    """
    w, response, mass = normal_response(model, contact, q, t)
    impulse = (1.0 + contact.law.restitution) * mass * jnp.maximum(w @ v, 0.0)
    return v - impulse * response
