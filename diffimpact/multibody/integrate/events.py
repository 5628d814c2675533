"""Contact events in ``simulate``'s segments: each contact's status, the functions whose crossings end a segment, and
what happens at an event. Why the engine is built so, with the measurements behind it, is
docs/design/event-engine.md.

Each contact of each family (its status an array along the family's contact axis, every update vectorised) is
closed, open and receding, or open and approaching. A closed contact's event is ``Contact.separation_function``;
an open one's gap g = x_s − δ ends a receding phase at a turning point (ġ = −v_r, v_r = ``rest_speed``) and an
approaching one at the onset g = 0 or at its turning point (ġ = +v_r), so that g is monotone within a segment
and no contact begins and ends inside one step unseen. The event function of a segment is the least of all
contacts' functions; bisection locates its first crossing, and every contact whose function has crossed is
handled there (simultaneous impacts stay simultaneous). ``Events`` lists the onsets and separations.

* Removals: a geometry's ``removal`` (a ball through a pocket's hole) removes the contact for good; a family
  with ``removes_body`` takes the body out of every contact once its ``Geometry.exit`` crosses zero.
* Contacts at a distance (``ContactEvents``' ``near_distance`` d_n): an open contact's turning points end
  segments only while its gap is below d_n, and every step is bounded by h ≤ max(−δ, d_n)/(2 δ̇) over the
  approaching ones.
* Contacts not located (``Contact(..., located=False)``): the clipped law acts at every evaluation and the
  solver steps through its onsets and separations (the table's cloth).
* Zero-force separation (f = c δ̇ + k δⁿ): the deformed zone recovers by ``free_surface`` and the bodies touch
  again when δ reaches it; energy is never injected.
* At a new impact an ``ImpactLaw`` is resolved with the contact normal's effective mass and the approach
  speed (``contact.normal_response``); a ``RigidImpact`` family's proximal contacts take part in one impact
  ([Uchida 2015] §3a), and any function the impulses took to zero or below is handled at the same instant.
* Event times are differentiated by diffrax's located root, except where the accelerations stay continuous
  across the crossing (turning points; onsets and separations of laws whose force vanishes at δ = 0), whose
  segment ends are taken as constants (``event_time_shifts``).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact.contact.normal import free_surface
from diffimpact.multibody.contact import (
    Contact,
    _force_parts,
    _penetration_rate,
    _separation_function,
    impact_velocity,
    resolve_at_onset,
)
from diffimpact.multibody.trajectory import ContactHistory


# Status of each contact in a run's segments (``segments``): open (receding or approaching), closed, removed for
# good (``Geometry.removal``), or removed with its body not yet clear of the scene (``Contact``'s ``removes_body``:
# ``Geometry.exit``). Statuses from ``REMOVED`` on are out of play.
RECEDING, APPROACHING, CLOSED, REMOVED, LEAVING = 0, 1, 2, 3, 4


class SegmentArgs(eqx.Module):
    """What the functions of one segment's solve read (its vector field, event function, step bounds and saved
    values: diffrax's ``args``).

    Attributes
    ----------
    model : the run's ``Model``, its contact families' laws and ``engaged`` flags as the events left them.
    status, residual, released : each contact family's statuses (``RECEDING`` ...), residual surface
        deformations (m; ``free_surface``) and times of their last release (s), one array per family.
    rest_speed, near_distance : ``ContactEvents``' v_r and d_n (``None`` for none).
    hint : the step size the controller proposed at the end of the last segment (``SegmentController``; 0 at
        the first).
    closed_only : ``model`` with only the closed members of its larger families (``accelerations``), and
    size : the index of the least of ``ContactEvents``' sizes that holds them: what the accelerations sum.
    """

    model: eqx.Module
    status: tuple
    residual: tuple
    released: tuple
    rest_speed: jnp.ndarray
    near_distance: jnp.ndarray | None
    hint: jnp.ndarray
    closed_only: eqx.Module
    size: jnp.ndarray


def contact_families(model):
    """The indices in ``model.forces`` of its ``Contact`` families."""
    return [k for k, force in enumerate(model.forces) if isinstance(force, Contact)]


def starts_closed(penetration, rate):
    """Whether contacts start closed: overlapping (δ > 0), or touching and approaching (δ = 0, δ̇ > 0).

    A touching, approaching pair (a row of balls at rest, one rolling in) is an
    onset at the start: its gap starts at zero, where no down-crossing could
    be seen.
    """
    return (penetration > 0) | ((penetration == 0) & (rate > 0))


def select(flag, new, old):
    """``new`` where ``flag`` else ``old``, leaf by leaf, for pytrees of the same structure.

    ``flag`` is a scalar, or one flag per row of every leaf (a contact family's flags).
    """
    arrays, static = eqx.partition(new, eqx.is_array)

    def choose(a, b):
        return jnp.where(jnp.reshape(flag, jnp.shape(flag) + (1,) * (jnp.ndim(a) - jnp.ndim(flag))), a, b)

    return eqx.combine(jax.tree.map(choose, arrays, eqx.filter(old, eqx.is_array)), static)


def initial_statuses(model, families, q0, v0):
    """The statuses of the contact families ``families`` (indices in ``model.forces``) at the start of a run, at
    the bodies' blocks ``q0``, ``v0``, and ``model`` with each family's ``engaged`` flags set from them.

    Closed where ``starts_closed``, but never a family whose law is set at onset; otherwise approaching from a
    positive gap, or receding; a family that is not ``located`` only removed or not; removed where a geometry's
    ``removal`` starts at or below zero (leaving, for ``removes_body``), and removed for good with every contact of
    a body whose ``exit`` starts there too.
    """
    status0 = []
    for k in families:
        contact = model.forces[k]
        penetration, rate = contact.penetration_rate(q0, v0)
        # (laws set at onset must start apart: ``_check_contacts_at_start``)
        closed = starts_closed(penetration, rate) & (not contact.impulsive)
        # touching at rest (δ = 0, δ̇ = 0) starts receding: approaching, its onset function g = 0 would start at
        # zero, where no down-crossing can be seen, and hide every other contact's event
        status = jnp.where(closed, CLOSED, jnp.where((rate >= 0) & (penetration < 0), APPROACHING, RECEDING))
        if not contact.located:  # (its statuses are only removed or not)
            status = jnp.full(contact.count, RECEDING)
        removal = contact.each(lambda c, pose_i, pose_j, _, __: c.geometry.removal(pose_i, pose_j), q0)
        if removal is not None:  # already gone (e.g. a ball that starts under a hole)
            status = jnp.where(removal <= 0, LEAVING if contact.removes_body else REMOVED, status)
        status0.append(status)
    # a body that starts out of the scene too (``removes_body``: its exit function ≤ 0) is taken out of it
    exits = []
    for k, status in zip(families, status0):
        contact = model.forces[k]
        outside = (contact.each(lambda c, pose_i, pose_j, _, __: c.geometry.exit(pose_i, pose_j), q0) <= 0
                   if contact.removes_body else False)
        exits.append((status == LEAVING) & outside)
    _, removed = removals(model, families, exits, status0)
    status0 = tuple(jnp.where(flags, REMOVED, status) for status, flags in zip(status0, removed))
    for k, status in zip(families, status0):
        contact = model.forces[k]
        engaged = (status == CLOSED).astype(float) if contact.located else jnp.where(status >= REMOVED, 0.0, -1.0)
        model = eqx.tree_at(lambda m: m.forces[k].engaged, model, engaged)
    return model, status0


def _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t):
    """Gap g = x_s − δ of one open contact and its rate ġ = ẋ_s − δ̇ (x_s: ``free_surface``)."""
    penetration, rate = _penetration_rate(contact, pose_i, pose_j, rate_i, rate_j)
    law = contact.active_law
    if law is None:
        return -penetration, -rate
    surface, surface_rate = free_surface(law, residual, t - released)
    return surface - penetration, surface_rate - rate


def _open_gaps(contact, q, v, t, residual, released):
    """``_open_gap`` of every contact of a family."""
    return contact.each(lambda *arguments: _open_gap(*arguments, t), q, v, residual, released)


class EventBisection(optx.Bisection):
    """``optimistix.Bisection`` stopped on the bracket alone, returning the bracket's far end.

    Bisection needs no derivative: it is safe on the kinks of the event
    function (a minimum over contacts) and where its slope vanishes, where
    Newton's method fails. It stops when the bracket is shorter than
    atol + rtol |t| (the event functions have units of their own, so
    ``optimistix.Bisection``'s other test, |value| < atol, may be out of
    reach) and returns the end of the bracket past the crossing, where the function is negative (construct with ``flip=True``:
    the event functions decrease through their roots).
    """

    def terminate(self, fn, y, args, options, state, tags):
        del fn, args, options, tags
        return jnp.abs(state.upper - state.lower) < self.atol + self.rtol * jnp.abs(y), optx.RESULTS.successful

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        del fn, y, args, options, tags, result
        return state.upper, aux, {}


def event_values(families, t, y, args):
    """The three down-crossing event functions of every contact, (contacts, 3), family by family, chosen by status,
    and which receding contacts would land at their turning point, (contacts,).

    The first: the separation function when closed; ġ + v_r when receding
    (the bodies start to approach); g when approaching (onset). The second:
    v_r − ġ when approaching (the bodies start to recede), else inactive (1).
    With a near distance d_n the turning points (ġ + v_r, v_r − ġ) of contacts
    whose gap is d_n or more are inactive (1).
    The third: the geometry's ``removal`` function, inactive (1) for
    geometries without one, and once removed with its body still leaving
    (``LEAVING``) the geometry's ``exit``; all three are inactive once the
    contact is removed for good. A family that is not ``located`` has only
    the third.
    The band 2 v_r between the turning points makes every function positive
    at the start of the segment that follows its status change (ġ ≥ 0 at a
    separation), so none has a root there: a bounce shorter than the first
    step is still seen. A receding contact whose gap has closed (g ≤ 0: it
    left, or came back, slower than v_r) lands at its turning point, an
    onset there (``apply_events``).
    """
    model, status, residual, released = args.model, args.status, args.residual, args.released
    rest_speed, near_distance = args.rest_speed, args.near_distance
    q, v = (model.split(x) for x in y)

    def member(contact, pose_i, pose_j, rate_i, rate_j, status, residual, released):
        gap, rate = _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t)
        near = True if near_distance is None else gap < near_distance
        open_value = jnp.where(status == RECEDING, jnp.where(near, rate + rest_speed, 1.0), gap)
        closed_value = _separation_function(contact, pose_i, pose_j, rate_i, rate_j)
        first = jnp.where(status == CLOSED, closed_value, open_value) if contact.located else 1.0
        second = jnp.where((status == APPROACHING) & near, rest_speed - rate, 1.0) if contact.located else 1.0
        removal = contact.geometry.removal(pose_i, pose_j)
        third = 1.0 if removal is None else removal
        if contact.removes_body:
            third = jnp.where(status == LEAVING, contact.geometry.exit(pose_i, pose_j), third)
        out = status >= REMOVED
        values = jnp.stack([jnp.where(out, 1.0, first), jnp.where(out, 1.0, second),
                            jnp.where(status == REMOVED, 1.0, third)])
        return values, (status == RECEDING) & (gap <= 0)

    values, landing = zip(
        *[model.forces[k].each(member, q, v, *rows) for k, *rows in zip(families, status, residual, released)]
    )
    return jnp.concatenate(values), jnp.concatenate(landing)


def _continuous_events(contact):
    """Whether the accelerations are continuous across (onset, separation) of ``contact``'s family (static).

    A law whose force vanishes at δ = 0 for every δ̇ (f ∝ δⁿ: ``Hertz``,
    ``HuntCrossley``, and ``HuntCrossleyImpact``, whose law is set from m and
    ⁻δ̇ at the onset, ``resolve_at_onset`` with the onset's time derivative;
    ``separates_at_zero_force`` False) switches on and off continuously, and
    so does its friction (∝ f_N). Not so a linear damper (c δ̇ jumps at the
    onset; its zero-force separation leaves a residual set there) or an impulse.
    """
    if contact.impulsive:
        return False, False
    vanishes = not contact.active_law.separates_at_zero_force
    return vanishes, vanishes


def _continuous_rows(families, model, status, landing):
    """(contacts, 3) flags, as ``event_values``: the functions whose crossing leaves the accelerations continuous.

    The turning points of open gaps (only the statuses change) but where the
    contact lands there (``landing``, (contacts,): its force jumps from 0 to
    its value at the gap's depth), the onsets and separations of
    ``_continuous_events``; never a removal.
    """
    counts = [model.forces[k].count for k in families]
    onset, separation = (np.repeat(flags, counts) for flags in
                         zip(*(_continuous_events(model.forces[k]) for k in families)))
    status = jnp.concatenate(status)
    first = jnp.where(status == CLOSED, separation, jnp.where(status == RECEDING, ~landing, onset))
    return jnp.stack([first, jnp.ones_like(first), jnp.zeros_like(first)], axis=1)


def event_function(families, t, y, args):
    """The least of ``event_values``, the function whose first down-crossing ends a segment.

    Its value is that least value; its derivatives are those of the located
    time. Where the crossing leaves the accelerations continuous
    (``_continuous_rows``), the motion past it does not depend on where the
    segment ends (but through a law set at the onset, which
    ``event_time_shifts`` carries), and the located time is taken as a constant: its
    derivative, −(∂g/∂θ)/ġ by the implicit function theorem, grows without
    bound at a grazing crossing (ġ → 0), where it would multiply the
    difference between the solver's interpolant and the vector field
    (docs/design/derivatives.md, "Derivatives through grazing events"). (The value
    stays g; its derivative in t is 1, in everything else 0.)
    """
    values, landing = event_values(families, t, y, args)
    frozen = jax.lax.stop_gradient(values) + (t - jax.lax.stop_gradient(t))
    return jnp.min(jnp.where(_continuous_rows(families, args.model, args.status, landing), frozen, values))


def event_time_shifts(families, model, status, values, landing, due, t, q, v, args):
    """Zero-valued shifts (contacts,) that carry the derivatives of the due continuous onsets and separations.

    ``event_function`` takes the time of a continuous crossing as a
    constant; the time of each due onset or separation among them (a
    position-level function g(t, q): the gap, or δ) is t + s with s = 0 and
    ds = −dg/ġ (dg: the derivative of g at the located state, which includes
    any derivative t itself carries; ġ = ∂g/∂t + ∂g/∂q · v), the implicit
    function theorem.
    """
    recorded = jnp.concatenate(status) != RECEDING  # (the first function of a receding contact is its turning point)
    continuous = _continuous_rows(families, model, status, landing)[:, 0] & due[:, 0] & recorded
    _, rate = jax.jvp(lambda t, q: event_values(families, t, (q, v), args)[0][:, 0], (t, q), (jnp.ones_like(t), v))
    moved = continuous & (rate < 0)
    slope = jax.lax.stop_gradient(jnp.where(moved, rate, -1.0))
    first = values[:, 0]
    return jnp.where(moved, -(first - jax.lax.stop_gradient(first)) / slope, 0.0)


def contact_histories(families, t, y, args):
    """``ContactHistory`` rows at (t, y) of every contact family, with the segment's ``SegmentArgs`` ``args``."""
    model, status, residual, released = args.model, args.status, args.residual, args.released
    q, v = (model.split(x) for x in y)

    def member(contact, pose_i, pose_j, rate_i, rate_j, status, residual, released):
        gap, _ = _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t)
        penetration = contact.geometry.penetration(pose_i, pose_j)
        normal, normal_force, friction = _force_parts(contact, pose_i, pose_j, rate_i, rate_j)
        return ContactHistory(penetration, jnp.where(status == CLOSED, -penetration, gap), normal, normal_force,
                              friction)

    return tuple(model.forces[k].each(member, q, v, *rows) for k, *rows in zip(families, status, residual, released))


def removals(model, families, due, status):
    """(leaving, removed) flags per member, family by family, from the due removal functions ``due``.

    A due ``Geometry.removal`` removes its contact for good (``REMOVED``);
    in a family with ``removes_body`` (``Contact``) it leaves the contact's
    body j on its way out (``LEAVING``: no force, its ``Geometry.exit`` then
    watched), and the exit takes the body out of the scene: every member of
    every family with that body, on either side, is removed for good with it
    (but those already ``REMOVED``).
    """
    if not any(model.forces[k].removes_body for k in families):
        return [jnp.zeros_like(flags) for flags in due], list(due)
    leaving, removed, gone = [], [], jnp.zeros(len(model.bodies), dtype=int)
    for k, flags, status_k in zip(families, due, status):
        contact = model.forces[k]
        if contact.removes_body:
            leaving.append(flags & (status_k < REMOVED))
            exits = flags & (status_k == LEAVING)
            body = contact.geometry.body_j
            gone = gone.at[jnp.maximum(body, 0)].add((exits & (body >= 0)).astype(int))
            removed.append(exits)
        else:
            leaving.append(jnp.zeros_like(flags))
            removed.append(flags)
    out = []
    for k, flags, status_k in zip(families, removed, status):
        geometry = model.forces[k].geometry
        involved = ((geometry.body_i >= 0) & (gone[jnp.maximum(geometry.body_i, 0)] > 0)) | (
            (geometry.body_j >= 0) & (gone[jnp.maximum(geometry.body_j, 0)] > 0))
        out.append(flags | (involved & (status_k != REMOVED)))
    return leaving, out


def apply_events(model, k, status, residual, released, hit, second, leaving, removed, q, v, t, rest_speed, shift,
                  velocity_shift):
    """The due events of family k (``hit``; by its ``second`` function where set, else the first), vectorised.

    Returns ``(model, status, residual, released, v, contact_event, onset)``,
    the last two one flag per contact; ``contact_event`` is False at the
    turning points of an open gap. The onsets of an impulsive family, with
    its other proximal members, are one impact (``impact_velocity``).
    Members ``removed`` (``removals``) are removed for good, those
    ``leaving`` until their body's exit (with any event of theirs at the same
    instant); a removal's time is kept from the first of the two. ``shift`` and
    ``velocity_shift`` (``event_time_shifts``, ``_velocity_shift``) carry the
    derivatives of the onset times into the laws set at them.
    """
    contact = model.forces[k]
    qs, vs = model.split(q), model.split(v)
    penetration = contact.penetration(qs)
    separation = hit & ~second & (status == CLOSED)
    crossed = hit & ~second & (status == APPROACHING)
    turning = hit & (second | (status == RECEDING))
    law = contact.active_law
    left = jnp.maximum(penetration, 0.0) if law is not None and law.separates_at_zero_force else 0.0
    # a residual surface deformation is kept until the bodies part (δ < 0 at a turning point)
    new_residual = jnp.where(separation, left, jnp.where(turning & (penetration < 0), 0.0, residual))
    # After a turning point the gap (with the surface as it now stands) says which way the bodies go: the
    # status is chosen so that its functions start positive (receding: ġ > −v_r; approaching: ġ < v_r,
    # g > 0). Dropping the recovering surface when the bodies have parted changes ġ by −ẋ_s, so the
    # bodies may still be receding from the bare surface. A gap that closed within the rest band is an
    # onset at the turn.
    gap, rate = _open_gaps(contact, qs, vs, t, new_residual, released)
    approaching = turning & (rate < -0.5 * rest_speed)
    landed = approaching & (gap <= 0)
    onset = crossed | landed
    # (and the time of a removal, which ``_trajectory`` reads back from the final statuses)
    new_released = jnp.where(separation | onset | leaving | (removed & (status != LEAVING)), t, released)
    out = removed | leaving
    open_status = jnp.where(approaching, APPROACHING, RECEDING)
    if contact.impulsive:
        # One impact of the proximal members ([Uchida 2015] §3a, Fig. 6): those within the proximity
        # tolerance, always with the members whose onset it is.
        impact = jnp.any(onset)
        in_play = (status != REMOVED) & ~removed  # (an impulsive family does not remove bodies: ``Contact``)
        taking_part = (onset | (penetration >= -contact.law.proximity)) & in_play
        v = jax.lax.cond(impact, lambda v: impact_velocity(model, contact, q, v, t, taking_part), lambda v: v, v)
        # After an impulse every member's status follows its gap rate as it then stands, as after a turning
        # point (receding; approaching only from a positive gap): the impulse changes the rates of members
        # that did not take part too. A member the model left touching and approaching has none.
        gap_after, rate_after = _open_gaps(contact, qs, model.split(v), t, new_residual, new_released)
        approaching_after = rate_after < -0.5 * rest_speed
        v = eqx.error_if(
            v, impact & jnp.any(approaching_after & (gap_after <= 0) & in_play),
            "a RigidImpact's model left a contact touching and approaching (Poisson's law can, where the others' "
            "restitution impulses press a contact that did not compress; an unconverged PLUS impact can): use "
            "a model that resolves it (Newton, Plus) or a larger rest_speed",
        )
        after = jnp.where(approaching_after, APPROACHING, RECEDING)
        new_status = jnp.where(impact, after, jnp.where(hit, open_status, status))
        new_status = jnp.where(removed | (status == REMOVED), REMOVED, new_status)
        updated = model
    else:
        new_status = jnp.where(removed, REMOVED, jnp.where(
            leaving, LEAVING, jnp.where(hit, jnp.where(onset, CLOSED, open_status), status)))
        # a fresh impact sets the law; a return onto the recovering surface keeps it
        fresh = onset & (new_residual <= 0)
        resolved = jax.lax.cond(
            jnp.any(fresh), lambda c: resolve_at_onset(model, c, q, v, t, shift, velocity_shift), lambda c: c, contact
        )
        contact = select(fresh, resolved, contact)
        engaged = jnp.where(hit | out, (new_status == CLOSED).astype(float), contact.engaged)
        updated = eqx.tree_at(lambda m: m.forces[k], model, eqx.tree_at(lambda c: c.engaged, contact, engaged))
    return (
        updated,
        new_status,
        new_residual,
        new_released,
        v,
        separation | onset,
        onset,
    )
