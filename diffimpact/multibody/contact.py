"""Compliant contact between planar or spatial bodies, usable as a force of a ``Model``.

A ``Contact`` pairs a gap geometry with a normal force law and an optional
friction law. The geometry gives the penetration δ (> 0 in contact), the
unit normal n (the direction of the force on the second body) and the
contact point P from the coordinate blocks of its two bodies. Then
([Poursina 2020] §2, [Gismeros Moreno 2022] §3.3):

* δ̇ = ∂δ/∂q · v by autodiff (``jax.jvp``);
* f_N = law(δ, δ̇), the clipped ``__call__`` of the law: compressive only and
  zero out of contact (no tensile force for laws that separate at zero force);
* the friction force opposes the tangential part of the relative velocity of
  the two material points at P, v_t = v_rel − (v_rel · n) n;
* the generalised force is Q = Jᵀ F with F = f_N n + F_t and J = ∂r/∂q the
  Jacobian of r = p_j − p_i, the positions of the material points of the two
  bodies that coincide at P: on each body, F at P, a force and the moment of
  its lever arm from the centre (``bodies.point_force``), the velocities
  likewise ṙ + ω × s (``bodies.point_velocity``), written out rather than
  differentiated, which makes the contact kernel of a large family several
  times cheaper. For the normal part, Jᵀ n = −∂δ/∂q, the virtual work of f_N
  on δ.

The law may be a ``NormalForceLaw`` (fixed parameters) or one of
``diffimpact.multibody.impact_laws``: an ``ImpactLaw``, whose parameters depend on the effective mass and the approach speed of each
impact (eq. (50): optimal damping; eq. (9) with a damping factor of eqs. (13)–(16)):
``simulate`` resolves it at every contact onset (``Contact.at_onset``), after
computing once per run what does not depend on the impact
(``ImpactLaw.prepared``: the exact optimal damping of the unit system).
``RigidImpact`` is the instantaneous (rigid) impact: no force, and at each
onset ``simulate`` applies the impulse of a model of ``diffimpact.impulse``
(Newton, Poisson, PLUS, Routh, maximum dissipation) to the stacked problem of
the family's proximal contacts, each in its frame ([Uchida 2015] §3a, Fig. 6;
``impact_velocity``); ``RigidImpact(Newton(e))`` is the frictionless
Newton impact.
The geometries are ``diffimpact.multibody.geometry``. In 3-D the friction
force is a 3-vector along the relative tangential velocity and its torques
come from Jᵀ F, its moments about the bodies' centres.

Contacts come in **families** (as MuJoCo MJX generates collisions per pair of
geometry types): a ``Contact`` holds one or more contacts of one geometry
class, law class and friction law class, their arrays stacked along a
leading contact axis and the body indices as integer arrays
(``Contact.family`` stacks contacts; ``Contact.for_bodies`` repeats one
contact, or a family, for other bodies without building each). Everything
per contact (gaps, forces, event functions, onset updates in ``simulate``)
is one ``jax.vmap`` over that axis and the
generalised forces are summed by a scatter-add, so a scene's size is data:
120 ball pairs trace and compile like one. ``Contact(geometry, law,
friction)`` is a family of one.
"""

from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._exact_sums import body_totals, exact_sum
from diffimpact._math import dot, normal_frame, positive_power, safe_norm
from diffimpact._validation import is_concrete
from diffimpact.contact.friction import FrictionLaw
from diffimpact.contact.normal import NormalForceLaw
from diffimpact.multibody.bodies import SPATIAL_SIZE, point_force, point_velocity, position
from diffimpact.multibody.forces import Force
from diffimpact.multibody.formulations import _saddle_point_solve, constrained_acceleration
from diffimpact.multibody.geometry import Geometry
from diffimpact.multibody.impact_laws import ImpactLaw, RigidImpact


# --- the force element -------------------------------------------------------------


def stack_poses(blocks):
    """(b + 1, s): the per-body coordinate blocks (rows of ``Model.split``) with the ground's pose appended.

    The ground's pose is the origin with the identity orientation (planar
    (0, 0, 0), spatial (0, 0, 0, 1, 0, 0, 0)), so a body index −1 (the
    ground) picks it and the ground's body-fixed vectors are global.
    """
    blocks = jnp.asarray(blocks)
    ground = jnp.zeros(blocks.shape[1])
    if blocks.shape[1] == SPATIAL_SIZE:
        ground = ground.at[3].set(1.0)
    return jnp.concatenate([blocks, ground[None]])


def stack_rates(blocks):
    """(b + 1, s): the per-body velocity blocks (rows of ``Model.split``) with the ground's (zero) appended."""
    blocks = jnp.asarray(blocks)
    return jnp.concatenate([blocks, jnp.zeros_like(blocks[:1])])


def _generalized(part_i, part_j, body_i, body_j, bodies):
    """One contact's parts (..., s) on its bodies i and j as generalised vectors (..., b s); the ground's dropped."""
    size = part_i.shape[-1]
    total = jnp.zeros(part_i.shape[:-1] + (bodies + 1, size))
    total = total.at[..., body_i, :].add(part_i).at[..., body_j, :].add(part_j)
    return total[..., :-1, :].reshape(part_i.shape[:-1] + (bodies * size,))


def _penetration_rate(contact, pose_i, pose_j, rate_i, rate_j):
    """δ and δ̇ of one contact."""
    return jax.jvp(contact.geometry.penetration, (pose_i, pose_j), (rate_i, rate_j))


def _normal_force(contact, pose_i, pose_j, rate_i, rate_j):
    """f_N of one contact (see ``Contact.normal_force``)."""
    if contact.impulsive:
        return jnp.asarray(0.0)
    penetration, rate = _penetration_rate(contact, pose_i, pose_j, rate_i, rate_j)
    law = contact.active_law
    by_event = jnp.where(contact.engaged > 0.5, law.force(penetration, rate), 0.0)
    return jnp.where(contact.engaged < 0, law(penetration, rate), by_event)


def _separation_function(contact, pose_i, pose_j, rate_i, rate_j):
    """Of one contact (see ``Contact.separation_function``)."""
    penetration, rate = _penetration_rate(contact, pose_i, pose_j, rate_i, rate_j)
    law = contact.active_law
    if law is not None and law.separates_at_zero_force:
        return law.force(penetration, rate) / law.stiffness
    return penetration


def _slip(contact, pose_i, pose_j, rate_i, rate_j):
    """The normal n, f_N, the contact point P and the slip v_t of one contact with friction.

    v_t: the tangential part of the velocity of body j's material point at P relative to body i's.
    """
    normal = contact.geometry.normal(pose_i, pose_j)
    normal_force = _normal_force(contact, pose_i, pose_j, rate_i, rate_j)
    point = contact.geometry.point(pose_i, pose_j)
    velocity = point_velocity(pose_j, rate_j, point) - point_velocity(pose_i, rate_i, point)
    return normal, normal_force, point, velocity - dot(velocity, normal) * normal


def _force_parts(contact, pose_i, pose_j, rate_i, rate_j):
    """The normal n, f_N and the friction force F_t (zero without friction) of one contact, on body j."""
    if contact.friction is None:
        normal = contact.geometry.normal(pose_i, pose_j)
        return normal, _normal_force(contact, pose_i, pose_j, rate_i, rate_j), jnp.zeros_like(normal)
    normal, normal_force, _, slip = _slip(contact, pose_i, pose_j, rate_i, rate_j)
    return normal, normal_force, contact.friction.continued(normal_force, slip)


def _least_moment(inertia):
    """A lower bound of a body's least principal moment (kg m²): J itself (planar), 2 det J'/‖J'‖_F² (spatial).

    (λ₁ λ₂ λ₃ = det J' and λ₂ λ₃ ≤ (λ₂² + λ₃²)/2 ≤ ‖J'‖_F²/2; 2/3 of J for a sphere's J' = J I.)
    """
    if jnp.ndim(inertia) == 0:
        return inertia
    return 2.0 * jnp.linalg.det(inertia) / jnp.sum(inertia**2)


def body_mobilities(bodies):
    """(b + 1, 2): (1/m, 1/J_min) of every body (``_least_moment``), and zeros for the ground (body index −1)."""
    return jnp.stack([jnp.stack([1.0 / b.mass, 1.0 / _least_moment(b.inertia)]) for b in bodies] + [jnp.zeros(2)])


def _contact_force(contact, pose_i, pose_j, rate_i, rate_j):
    """Generalised forces on the two bodies of one contact: Jᵀ F, F = f_N n + F_t at the contact point."""
    normal, normal_force, friction = _force_parts(contact, pose_i, pose_j, rate_i, rate_j)
    point = contact.geometry.point(pose_i, pose_j)
    force = normal_force * normal + friction
    return point_force(pose_i, point, -force), point_force(pose_j, point, force)


def _batch(tree):
    """``tree`` with a leading contact axis of length one on every array leaf."""
    return jax.tree.map(lambda x: jnp.asarray(x)[None], tree)


def _refuse_self_contacts(body_i, body_j):
    """A ``ValueError`` where a contact's two bodies are one (−1 for the ground: the ground with itself)."""
    if not is_concrete(body_i, body_j):
        return
    same = np.flatnonzero(np.atleast_1d(np.asarray(body_i) == np.asarray(body_j)))
    if same.size:
        body = int(np.atleast_1d(np.asarray(body_j))[same[0]])
        what = "the ground" if body < 0 else f"body {body}"
        raise ValueError(f"a contact must be between two bodies; contact {int(same[0])} has {what} as both "
                         f"body_i and body_j (a contact of a body with itself)")


class Contact(Force):
    """A family of compliant (or instantaneous) contacts of one kind; see the module docstring.

    ``Contact(geometry, law, friction)`` is a family of one contact;
    ``Contact.family(contacts)`` stacks contacts of one geometry kind, law and
    friction law (the same classes and static settings) into one family.
    Every array of a family has a leading contact axis, and every method works
    on all its contacts at once (``jax.vmap``), so that a scene's size is data,
    not code to trace: 120 ball pairs compile like one. Methods that return a
    value per contact return arrays of length ``count``.

    Parameters
    ----------
    geometry : a ``Geometry`` (``CirclePlane``/``SpherePlane``, ``PointPlane``,
        ``CircleCircle``/``SphereSphere``, ``SphereFace``, ``Cushion``).
    law : ``NormalForceLaw``, ``ImpactLaw`` or ``RigidImpact`` (e.g. ``RigidImpact(Newton(e))``).
    friction : optional ``FrictionLaw`` (not with a ``RigidImpact``, whose model has its own friction).
    located : whether ``simulate`` locates the contacts' onsets and separations as events (default). With
        ``False`` it does not: the clipped law acts at every evaluation, as outside ``simulate``, and the
        solver steps through the onsets and separations. Only for a ``NormalForceLaw`` whose force
        vanishes at δ = 0 for every δ̇ (``separates_at_zero_force`` False: ``Hertz``, ``HuntCrossley``),
        which switches on and off continuously, so that the motion past an onset does not depend on
        where a segment would have ended; such contacts can be missed only by a grazing touch shorter
        than a step (a ball resting on the cloth under gravity cannot graze it). A ``removal``
        (``HoledPlane``) is still located. The pool table's cloth (``billiard.table_cloth``): its balls
        hop on the undamped cloth, and each hop's onset and separation would end two segments.
    removes_body : whether a removal (``Geometry.removal``, located by ``simulate``) takes the removed
        contact's body j out of the scene (default ``False``: only the contact; not with a ``RigidImpact``):
        once the body is clear of it (``Geometry.exit``, located too) every contact of every family that
        involves it is removed. The
        pool table's cloth: a pocketed ball meets the cushions' jaws and the other balls until its top is
        below the cloth, and nothing in the void under the table.

    Attributes
    ----------
    active_law : the ``NormalForceLaw`` in effect. For an ``ImpactLaw`` it is
        the law of unit mass and speed until ``simulate`` resolves it at the
        first onset (out of contact no law acts); ``None`` for a
        ``RigidImpact``.
    """

    geometry: Geometry
    law: eqx.Module
    friction: Optional[FrictionLaw]
    active_law: Optional[NormalForceLaw]
    # 1.0 while ``simulate`` has the contact closed (between its onset and
    # separation events), 0.0 while open or removed; −1.0 outside ``simulate``, and inside it for contacts
    # that are not ``located`` until they are removed.
    engaged: jnp.ndarray
    located: bool = eqx.field(static=True)
    removes_body: bool = eqx.field(static=True)

    def __init__(self, geometry, law, friction=None, located=True, removes_body=False):
        for name, flag in (("located", located), ("removes_body", removes_body)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool; got {flag!r}")
        if not located and (not isinstance(law, NormalForceLaw) or law.separates_at_zero_force):
            raise ValueError(
                f"located=False needs a NormalForceLaw whose force vanishes at zero penetration (Hertz, "
                f"HuntCrossley), which switches on and off continuously; got {type(law).__name__}"
            )
        self.located, self.removes_body = located, removes_body
        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be a Geometry; got {type(geometry).__name__}")
        if removes_body and (type(geometry).removal is Geometry.removal or type(geometry).exit is Geometry.exit):
            raise ValueError(f"removes_body=True needs a geometry with a removal and an exit (HoledPlane); "
                             f"{type(geometry).__name__} has not")
        if removes_body and isinstance(law, RigidImpact):
            raise ValueError("removes_body=True needs a compliant law (a NormalForceLaw or an ImpactLaw); an "
                             "impulsive family's statuses follow its impacts")
        if isinstance(law, NormalForceLaw):
            active_law = law
        elif isinstance(law, ImpactLaw):
            active_law = law.prepared().at_impact(1.0, 1.0)
        elif isinstance(law, RigidImpact):
            if friction is not None:
                raise ValueError("a RigidImpact takes friction as a parameter of its model; pass friction=None")
            active_law = None
        else:
            raise TypeError(
                f"law must be a NormalForceLaw, ImpactLaw or RigidImpact; got {type(law).__name__}"
            )
        if friction is not None and not isinstance(friction, FrictionLaw):
            raise TypeError(f"friction must be a FrictionLaw or None; got {type(friction).__name__}")
        _refuse_self_contacts(geometry.body_i, geometry.body_j)
        self.geometry, self.law, self.friction = _batch(geometry), _batch(law), _batch(friction)
        self.active_law = _batch(active_law)
        self.engaged = jnp.asarray([-1.0])

    @classmethod
    def family(cls, contacts):
        """One ``Contact`` holding ``contacts`` (each a ``Contact``, itself a family) in order.

        They must share the geometry class, the law class, the friction law
        class and every static setting (e.g. a damping factor's name), and
        their arrays must have the same shapes past the contact axis (e.g.
        cushions with the same number of vertices).
        """
        contacts = list(contacts)
        if not contacts:
            raise ValueError("a contact family needs at least one Contact; got none")
        for k, contact in enumerate(contacts):
            if not isinstance(contact, cls):
                raise TypeError(f"contacts[{k}] must be a Contact; got {type(contact).__name__}")
        first = contacts[0]
        for k, contact in enumerate(contacts[1:], 1):
            same = jax.tree.structure(contact) == jax.tree.structure(first) and all(
                jnp.shape(a)[1:] == jnp.shape(b)[1:] for a, b in zip(jax.tree.leaves(contact), jax.tree.leaves(first))
            )
            if not same:
                raise ValueError(
                    f"contacts[{k}] differs in kind from contacts[0]: a family's contacts share the geometry, "
                    f"law and friction classes, their static settings and array shapes; got "
                    f"{_kind(contact)} and {_kind(first)}"
                )
        return jax.tree.map(lambda *leaves: jnp.concatenate(leaves), *contacts)

    def for_bodies(self, body_i, body_j):
        """The family of ``len(body_j)`` contacts whose member k is member k mod ``count`` of this one with the
        bodies ``body_i[k]`` and ``body_j[k]`` (body indices, −1 for the ground; ``body_i`` ``None``: the
        ground for all).

        ``Contact.family`` of the same contacts built one by one gives the same family: this builds it
        without constructing, and so checking, each, as a scene of many contacts of a few kinds does
        (``billiard.table_model``: the 120 ball pairs from one, the 96 ball–cushion contacts from the six
        cushions'). Built inside a traced function (parameters differentiated), each check is then compiled
        once, not once per contact (docs/design/table-settings.md, "Building the table once a kind").
        """
        body_j = np.asarray(body_j)
        body_i = np.full(body_j.shape, -1) if body_i is None else np.asarray(body_i)
        for name, indices in (("body_i", body_i), ("body_j", body_j)):
            if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer) or np.any(indices < -1):
                raise ValueError(f"{name} must be a 1-D array of body indices (ints >= 0, -1 for the ground); "
                                 f"got {indices!r}")
        if body_i.shape != body_j.shape or not body_j.size or body_j.size % self.count:
            raise ValueError(f"body_i and body_j must have the same length, a positive multiple of the family's "
                             f"{self.count} contacts; got {body_i.size} and {body_j.size}")
        _refuse_self_contacts(body_i, body_j)
        repeats = body_j.size // self.count
        tiled = jax.tree.map(lambda x: jnp.tile(x, (repeats,) + (1,) * (jnp.ndim(x) - 1)), self)
        return eqx.tree_at(lambda c: (c.geometry.body_i, c.geometry.body_j), tiled,
                           (jnp.asarray(body_i), jnp.asarray(body_j)))

    @property
    def count(self):
        """Number of contacts in the family."""
        return self.engaged.shape[0]

    def member(self, k):
        """Contact ``k`` of the family, as a family of one."""
        return jax.tree.map(lambda x: x[k : k + 1], self)

    @property
    def body_indices(self):
        indices = (self.geometry.body_i, self.geometry.body_j)
        if not is_concrete(indices):
            return ()
        return tuple(None if b < 0 else int(b) for b in np.concatenate([np.asarray(x) for x in indices]))

    @property
    def impulsive(self):
        """Whether the contacts are instantaneous (rigid) impacts."""
        return isinstance(self.law, RigidImpact)

    @property
    def frictional(self):
        """Whether the contacts exert a continuous friction force: a friction law, and not impulsive."""
        return self.friction is not None and not self.impulsive

    def each(self, member, q, v=None, *arrays):
        """``member(contact, pose_i, pose_j, rate_i, rate_j, *rows)`` for every contact, vmapped.

        ``q``, ``v``: the bodies' coordinates and velocities, one row per body
        (``Model.split``; a tuple of blocks is stacked; ``v`` ``None``: zero
        velocities); ``arrays``: (count, ...) arrays whose rows go with
        the contacts. ``member`` sees one contact (its arrays without the
        contact axis) and its two bodies' blocks.
        """
        poses = stack_poses(q)
        rates = jnp.zeros_like(poses) if v is None else stack_rates(v)
        # one gather of both bodies' poses and rates (one XLA kernel where four gathers were four)
        size = poses.shape[1]
        rows = jnp.concatenate([poses, rates], axis=1)[jnp.stack([self.geometry.body_i, self.geometry.body_j], axis=1)]
        return jax.vmap(member)(self, rows[:, 0, :size], rows[:, 1, :size], rows[:, 0, size:], rows[:, 1, size:], *arrays)

    def penetration(self, q):
        """δ(q) (m), (count,)."""
        return self.each(lambda c, a, b, _, __: c.geometry.penetration(a, b), q)

    def normal(self, q):
        """Unit normals n(q), (count, d)."""
        return self.each(lambda c, a, b, _, __: c.geometry.normal(a, b), q)

    def penetration_rate(self, q, v):
        """δ and δ̇ = ∂δ/∂q · v, each (count,)."""
        return self.each(_penetration_rate, q, v)

    def normal_force(self, q, v):
        """f_N (N), (count,).

        Inside ``simulate`` the events decide: between onset and separation the
        law's ``force`` acts as it is (as in ``diffimpact.central_impact``), so
        the vector field is smooth within each segment; otherwise zero. Outside
        ``simulate``, and inside it for contacts that are not ``located``, the
        clipped law: ≥ 0, zero for δ ≤ 0.
        """
        return self.each(_normal_force, q, v)

    def separation_function(self, q, v):
        """Positive in contact, crossing zero downwards at separation, (count,).

        f(δ, δ̇)/k (units m^n) for laws that separate at zero force (eq. (20)),
        else δ (m). ``simulate`` locates its sign change in time (bisection),
        so only the sign matters.
        """
        return self.each(_separation_function, q, v)

    def slip_rates(self, mobilities, q, v):
        """Per body, Σ over the family's contacts on it of s_F (w_i + w_j) (1/s), (b,); zeros without friction.

        s_F is the friction law's ``largest_slope`` at the contact's f_N and
        slip, and w = 1/m + r²/J_min of each of its bodies (``mobilities``, from
        ``body_mobilities``; r the distance of the contact point from the
        body's centre of mass) bounds the slip acceleration of the free body per
        unit tangential force at the point (constraints only lower it). So
        s_F (w_i + w_j) bounds the rate at which the friction relaxes the slip,
        and a body's sum over its contacts (whose slips all move with its
        velocity) estimates the friction's largest eigenvalue of the
        accelerations' Jacobian: ``simulate``'s ``friction_steps``.
        """
        count = len(mobilities) - 1
        if not self.frictional:
            return jnp.zeros(count)
        i, j = self.geometry.body_i, self.geometry.body_j

        def member(contact, pose_i, pose_j, rate_i, rate_j, mobility_i, mobility_j):
            _, normal_force, point, slip = _slip(contact, pose_i, pose_j, rate_i, rate_j)
            slope = contact.friction.largest_slope(normal_force, safe_norm(slip))
            reach = [m[0] + m[1] * jnp.sum((point - position(pose))**2) for pose, m in
                     ((pose_i, mobility_i), (pose_j, mobility_j))]
            return slope * (reach[0] + reach[1])

        rates = self.each(member, q, v, mobilities[i], mobilities[j])
        return jnp.zeros(count + 1).at[i].add(rates).at[j].add(rates)[:-1]

    def slips(self, q, v):
        """f_N (N), (count,), and the slip v_t (m/s), (count, d), of each contact: ``simulate``'s ``friction_steps``."""
        def member(contact, pose_i, pose_j, rate_i, rate_j):
            _, normal_force, _, slip = _slip(contact, pose_i, pose_j, rate_i, rate_j)
            return normal_force, slip

        return self.each(member, q, v)

    def __call__(self, bodies, q, v, t):
        del bodies, t
        q = jnp.asarray(q)
        if self.impulsive:
            return jnp.zeros_like(q)
        on_i, on_j = self.each(_contact_force, q, v)
        return body_totals(jnp.concatenate([on_i, on_j]),
                           jnp.concatenate([self.geometry.body_i, self.geometry.body_j]), q.shape[0])

    def potential_energy(self, bodies, q):
        """Elastic energy Σ k δ^(n+1)/(n+1) stored in the contacts (J), δ > 0; zero when impulsive."""
        del bodies
        return jnp.sum(self.elastic_energies(q))

    def elastic_energies(self, q):
        """k δ^(n+1)/(n+1) of each contact (J), (count,): zero where δ ≤ 0, and for an impulsive family."""
        if self.impulsive:
            return jnp.zeros(self.count)
        law = self.active_law
        return law.stiffness * positive_power(self.penetration(q), law.exponent + 1.0) / (law.exponent + 1.0)

    def prepared(self):
        """The family with its ``ImpactLaw`` prepared (``ImpactLaw.prepared``), and its active law of unit mass
        and speed taken from that; itself for other laws. ``simulate`` calls it once per run."""
        law = self.law.prepared() if isinstance(self.law, ImpactLaw) else self.law
        if law is self.law:
            return self
        active_law = jax.vmap(lambda member: member.at_impact(1.0, 1.0))(law)
        return eqx.tree_at(lambda c: (c.law, c.active_law), self, (law, active_law))

    def at_onset(self, effective_mass, impact_velocity):
        """The contacts with their ``ImpactLaw`` resolved for impacts of these masses and speeds, (count,) each.

        Itself for other laws.
        """
        if not isinstance(self.law, ImpactLaw):
            return self
        laws = jax.vmap(lambda law, mass, speed: law.at_impact(mass, speed))(
            self.law, jnp.broadcast_to(effective_mass, (self.count,)), jnp.broadcast_to(impact_velocity, (self.count,))
        )
        return eqx.tree_at(lambda c: c.active_law, self, laws)


def _kind(contact):
    parts = [type(contact.geometry).__name__, type(contact.law).__name__, type(contact.friction).__name__]
    flags = ([] if contact.located else ["located=False"]) + (["removes_body=True"] if contact.removes_body else [])
    return "(" + ", ".join(parts + flags) + ")"


# --- impact quantities of a contact in a constrained model --------------------------


def normal_response(model, contact, q, t):
    """For every contact of the family: w = ∂δ/∂q, M_c⁻¹ w and the effective mass m = 1/(wᵀ M_c⁻¹ w).

    Returns arrays of shapes (count, n), (count, n), (count,). M_c⁻¹ w is the
    velocity change per unit generalised impulse w under the constraints:
    ``[[M, Dᵀ], [D, 0]] [Δv; λ] = [w; 0]`` (the impulsive form of eq.
    (2.20) of [Gismeros Moreno 2022], with Δ(D v) = 0), solved as the
    accelerations are (``constrained_acceleration``: body by body where the
    system splits). m is the effective mass of eq. (3) of [Poursina 2020] for
    the contact normal of the constrained system; its sum over the
    coordinates, like ⁻δ̇ = w · v in ``resolve_at_onset``, is exact
    (``exact_sum``), so that mirror-image contacts get the same law.
    """
    poses = stack_poses(model.split(q))
    i, j = contact.geometry.body_i, contact.geometry.body_j
    gradient = jax.grad(lambda c, a, b: c.geometry.penetration(a, b), argnums=(1, 2))
    on_i, on_j = jax.vmap(gradient)(contact, poses[i], poses[j])
    w = jax.vmap(lambda a, b, bi, bj: _generalized(a, b, bi, bj, len(model.bodies)))(on_i, on_j, i, j)
    zero = jnp.zeros_like(model.constraint(q, t))
    response = jax.vmap(lambda force: constrained_acceleration(model, q, t, force, zero))(w)
    return w, response, 1.0 / exact_sum(w * response)


def resolve_at_onset(model, contact, q, v, t, shift=None, velocity_shift=None):
    """``contact`` with the law of every contact set for an impact at (q, v, t) (see ``Contact.at_onset``).

    m from ``normal_response`` and ⁻δ̇ = w · v; a non-approaching onset
    (⁻δ̇ ≤ 0, grazing) uses 1 m/s. A family without an ``ImpactLaw`` is returned as it is.
    With ``shift`` s (count,) and ``velocity_shift`` s v̇ (count, n), each
    contact's m and ⁻δ̇ are moved along the motion by its s: m + s ṁ,
    ⁻δ̇ + s ẇ · v + w · s v̇ (``simulate`` passes shifts of value zero that
    carry the derivatives of the onset times).
    """
    if not isinstance(contact.law, ImpactLaw):
        return contact

    def mass_gradient(q, t):
        w, _, mass = normal_response(model, contact, q, t)
        return mass, w

    if shift is None:
        mass, w = mass_gradient(q, t)
        rate = exact_sum(w * v)
    else:
        t = jnp.asarray(t, dtype=float)
        (mass, w), (mass_change, w_change) = jax.jvp(mass_gradient, (q, t), (v, jnp.ones_like(t)))
        rate = exact_sum(w * v) + shift * (w_change @ v) + jnp.sum(w * velocity_shift, axis=1)
        mass = mass + shift * mass_change
    return contact.at_onset(mass, jnp.where(rate > 0, rate, 1.0))


def contact_frame(contact, q):
    """Q (count, d, d): each contact's normal n (the direction of the force on the second body) and tangents, columns."""
    return jax.vmap(normal_frame)(contact.normal(q))


def _contact_jacobian(model, contact, q):
    """J (count, d, n): u = J v, the velocity of every contact in its frame Q (``contact_frame``), normal first.

    u_n = n · ṙ < 0 approaching, with r = p_j − p_i the material points at the contact point.
    """
    def member(one, pose_i, pose_j, _, __):
        point = one.geometry.point(pose_i, pose_j)
        frame = normal_frame(one.geometry.normal(pose_i, pose_j))
        # row k of Qᵀ ∂r/∂q is the generalised force of the unit force along column k of Q
        on_i, on_j = (jax.vmap(lambda axis: point_force(pose, point, sign * axis))(frame.T)
                      for pose, sign in ((pose_i, -1.0), (pose_j, 1.0)))
        return _generalized(on_i, on_j, one.geometry.body_i, one.geometry.body_j, len(model.bodies))

    return contact.each(member, model.split(q))


def _inert(delassus, velocity, taking_part, dimension):
    """(W, u⁻) of all the contacts, in which those not ``taking_part`` are decoupled and separating.

    Their rows and columns of W become w I and their u⁻ (s, 0[, 0]), with w
    the largest diagonal entry of W and s the largest normal speed |u⁻_n| of
    the contacts taking part (1 where that is zero): every model gives such a
    contact no impulse, and the scales the models take from W and u⁻ (their
    tolerances, PLUS's rank cutoff: W's largest entry and singular value) are
    those of the contacts taking part alone. The shapes stay static under
    ``jit``.
    """
    keep = jnp.repeat(taking_part, dimension)
    normal = jnp.arange(keep.shape[0]) % dimension == 0
    scale = jnp.max(jnp.where(keep, jnp.diag(delassus), 0.0))
    speed = jnp.max(jnp.where(keep & normal, jnp.abs(velocity), 0.0))
    decoupled = jnp.where(scale > 0, scale, 1.0) * jnp.eye(keep.shape[0])
    separating = jnp.where(normal, jnp.where(speed > 0, speed, 1.0), 0.0)
    return jnp.where(keep[:, None] & keep[None, :], delassus, decoupled), jnp.where(keep, velocity, separating)


def impact_problem(model, contact, q, v, t, taking_part=None):
    """(W, u⁻, M_c⁻¹ Jᵀ): the problem of one ``RigidImpact`` of the contacts ``taking_part`` of the family at (q, v, t).

    ``taking_part``: (count,) booleans, ``None`` for every contact. By
    impulse–momentum under the constraints: J = Qᵀ ∂r/∂q maps v to the contact
    velocities u = J v, stacked contact by contact, each in its frame Q of
    ``contact_frame`` (normal first). With M_c⁻¹ the constrained inverse of
    ``normal_response``, W = J M_c⁻¹ Jᵀ (the problem of the models of
    ``diffimpact.impulse``), and an impulse λ changes v by (M_c⁻¹ Jᵀ) λ,
    keeping the constraint velocities. The problem holds every contact of the
    family, those not taking part made inert (``_inert``), so that its shape is
    static.
    """
    count = contact.count
    taking_part = jnp.ones(count, bool) if taking_part is None else taking_part
    jacobian = _contact_jacobian(model, contact, q)
    dimension = jacobian.shape[1]
    jacobian = jacobian.reshape(count * dimension, -1)
    mass, constraint = model.mass_matrix(q), model.jacobian(q, t)
    zero = jnp.zeros((constraint.shape[0], jacobian.shape[0]))
    responses = _saddle_point_solve(mass, constraint, jacobian.T, zero)
    delassus, velocity = _inert(jacobian @ responses, jacobian @ v, taking_part, dimension)
    return delassus, velocity, responses


def impact_velocity(model, contact, q, v, t, taking_part=None):
    """Velocities after one ``RigidImpact`` of the contacts ``taking_part`` of the family at (q, v, t), together.

    The model's impulse λ on the problem of ``impact_problem`` changes v by
    M_c⁻¹ Jᵀ λ. The contacts not taking part get no impulse (PLUS's
    pseudoinverse leaves round-off there, dropped). Models give no impulse to a
    contact that does not approach unless the others' impulses drive it into
    approach.
    """
    count = contact.count
    taking_part = jnp.ones(count, bool) if taking_part is None else taking_part
    delassus, velocity, responses = impact_problem(model, contact, q, v, t, taking_part)
    dimension = velocity.shape[0] // count
    impulse = contact.law.family_model(count, dimension)(delassus, velocity, dimension).impulse
    return v + responses @ jnp.where(jnp.repeat(taking_part, dimension), impulse, 0.0)
