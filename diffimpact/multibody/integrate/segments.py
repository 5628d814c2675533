"""A run with contacts, in segments between contact events (``solve_segments``).

The integration is split into segments at the contact onsets and separations, so that no step straddles the
initial instant of a contact ([Poursina 2020] §1) and impact-dependent laws can be set up at each onset. A
``lax.scan`` over at most ``max_events + 1`` segments (``segment``) runs one ``diffeqsolve`` per segment
(``solve_segment``), terminated by a ``diffrax.Event`` (a down-crossing located on the dense output). What
each contact's status is, which functions end a segment and what happens at an event is ``events``
(``events_at_end`` applies them); how the steps are bounded and judged is ``step_control``; which contacts
a segment's accelerations sum is ``accelerations``. A segment reads its ``SegmentArgs``; the scan carries
a ``SegmentStart`` and the saved rows (``Carry``) and records a ``SegmentRecord`` per segment; what every
segment of the run shares is its ``Segments``.

Finished segments are skipped by ``lax.cond``; each segment is given the save times still ahead of it, at
most ``ContactEvents``' ``save_window`` (64), and keeps the values of those it reaches (a save time at an
event gets the state after it); where more follow, it ends at the last of its window if no event ends it
first (a step then ends there: with fixed steps, the grid restarts from it).

Gradients include the sensitivity of the event times (diffrax differentiates the located root; ``events``
says where they are taken as constants), so ``jax.grad`` through impacts is exact up to the tolerances. The
contact forces themselves are the continuous laws in every segment: the events only place the steps and
switch the laws.

With ``contact_history=True`` each segment also evaluates, at the save times it covers, every contact's
penetration, gap, normal and friction force with its own laws and status (``ContactHistory``): what the
integrator applied, which a rebuild from the saved states and the final model would not give once a law set
at an onset has changed.

The friction implicit (``IMEX_SOLVERS``). Given an IMEX solver (diffrax's ``KenCarp3``, ``KenCarp4``,
``KenCarp5``, ``Sil3``), each segment's vector field is split in two (``accelerations.imex_terms``): the
explicit term is the motion with every contact family's friction law removed, the implicit term the
friction's part of the accelerations (the difference of the two: the formulations' accelerations are linear
in the applied forces). The stages then solve for the friction implicitly (diffrax's chord Newton: the
Jacobian of the whole state once a step), and the forward-mode derivatives are those of the stages'
solutions, stable on the stiff friction at any step: a disc sliding into rolling on a regularised Coulomb
law has its rolling speed's derivative right at rtol = 1e-3 without ``friction_steps``. With
``friction_steps`` only the passages' bound is kept. Each evaluation of the implicit term evaluates the
accelerations twice. On the four-ball break it does not pay (docs/design/derivatives.md, "The break's
gradient with an implicit solver (not adopted)").

Resting contact with a law re-resolved at every new impact can chatter (bounces of decreasing height, as
with a rigid ball and a coefficient of restitution): each bounce costs events, and a run that needs more
than ``max_events`` stops with an error.
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody.formulations import Formulation
from diffimpact.multibody.integrate import progress as run_progress
from diffimpact.multibody.integrate.accelerations import accelerations, closed_members, gathered, imex_terms
from diffimpact.multibody.integrate.events import (
    REMOVED,
    EventBisection,
    SegmentArgs,
    apply_events,
    contact_families,
    contact_histories,
    event_function,
    event_time_shifts,
    event_values,
    initial_statuses,
    removals,
    select,
)
from diffimpact.multibody.integrate.options import AdaptiveSteps, ContactEvents, Derivatives, ForwardMode, ReverseMode
from diffimpact.multibody.integrate.solve import acceleration, saved_trajectory
from diffimpact.multibody.integrate.step_control import (
    IMEX_SOLVERS,
    FrictionGuard,
    SegmentController,
    TangentErrors,
    differentiated,
    friction_guard,
    friction_guard_messages,
    friction_step,
    reverse_friction_message,
    spin_bounded,
    stages_loop,
    tangent_check,
    tangent_errors,
    with_friction,
)
from diffimpact.multibody.trajectory import Events


class SegmentStart(eqx.Module):
    """Where a segment starts: what the segment before it left (the run's start, for the first).

    Attributes
    ----------
    params : the model's inexact arrays: its contact families' laws as set at the onsets, and their
        ``engaged`` flags.
    status, residual, released : as ``SegmentArgs``'.
    t0, q, v : the time and state the segment starts from.
    hint : the step size the controller proposed at the end of the segment before (``SegmentController``).
    done : whether the run has reached its end: the segments left are skipped.
    """

    params: eqx.Module
    status: tuple
    residual: tuple
    released: tuple
    t0: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    hint: jnp.ndarray
    done: jnp.ndarray


class Carry(eqx.Module):
    """The carry of the scan of segments: the next segment's ``start``, and the ``saved`` rows of every save time
    (kept out of the ``lax.cond`` that skips a finished segment: ``segment``)."""

    start: SegmentStart
    saved: Any


class SegmentRecord(eqx.Module):
    """What a segment reports: each contact's event time at the segment's end (s; inf for none) and whether it
    was an onset, (contacts,) each; the state ``q``, ``v`` at the event that ended it (``Events``); its accepted
    ``steps``; whether it ``ran`` (not skipped)."""

    times: jnp.ndarray
    onsets: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    steps: jnp.ndarray
    ran: jnp.ndarray


class Segments(eqx.Module):
    """What every segment of a run shares: the model's static part and its contact families, how a segment is
    solved (solver, step-size controller, terms, event, what is saved) and the run's save times and options."""

    static: Any  # the model's part that is not an inexact array (``eqx.partition``)
    families: tuple = eqx.field(static=True)  # indices in ``model.forces`` of the contact families
    counts: tuple = eqx.field(static=True)  # their contacts
    frictional: tuple = eqx.field(static=True)  # the families with friction
    gathered: tuple = eqx.field(static=True)  # the families whose closed members are gathered (``gathered``)
    formulation: Formulation
    solver: dfx.AbstractSolver
    guard: float | None = eqx.field(static=True)  # ``FrictionGuard``'s limit, or None for no guard
    derivatives: Derivatives
    adaptive: bool = eqx.field(static=True)  # adaptive steps (``SegmentController``)
    controller: dfx.AbstractStepSizeController
    dt0: Any
    terms: Any
    event: dfx.Event
    save: Callable  # what a segment saves at a save time: ``fn`` of diffrax's ``SubSaveAt``
    events: ContactEvents
    adjoint: dfx.AbstractAdjoint
    save_times: jnp.ndarray
    padded_times: jnp.ndarray  # the save times, then ``window`` copies of the last
    t_start: jnp.ndarray
    t_end: jnp.ndarray
    window: int = eqx.field(static=True)  # save times a segment carries
    max_steps: int = eqx.field(static=True)
    progress: bool = eqx.field(static=True)

    @property
    def forward(self):
        """Whether the run is differentiated in forward mode (``ForwardMode``)."""
        return isinstance(self.derivatives, ForwardMode)

    @property
    def slots(self):
        """The contacts' offsets, family by family, in the rows of every contact (``event_values``)."""
        return np.cumsum([0] + list(self.counts))

    def wrapped_solver(self, model):
        """The solver of a segment of ``model``: the formulation's wrapper, and the friction guard's where set."""
        wrapped = self.formulation.wrap_solver(model, self.solver)
        return wrapped if self.guard is None else FrictionGuard(wrapped, self.frictional, self.guard,
                                                                **tangent_check(self.controller, self.derivatives))


@eqx.filter_jit
def solve_segments(model, state0, save_times, formulation, solver, steps, events, derivatives, max_steps,
                   contact_history, progress):
    """The run of a model with ``Contact``s: segments between contact events, saved at ``save_times``.

    ``steps``: ``StepSizes``, ``events``: ``ContactEvents`` (both ``checked``; ``AdaptiveSteps``'
    ``friction_steps`` and ``contact_steps`` as tuples of indices in ``model.forces``); ``derivatives``:
    ``Derivatives``; the model's contact families prepared (``Contact.prepared``); the other arguments as
    ``simulate``'s, checked.
    """
    families = contact_families(model)
    counts = [model.forces[k].count for k in families]
    frictional = tuple(with_friction(families, model))
    adaptive = isinstance(steps, AdaptiveSteps)
    friction_steps, contact_steps = (steps.friction_steps, steps.contact_steps) if adaptive else ((), ())
    unbounded = tuple(k for k in frictional if k not in friction_steps) if isinstance(derivatives, ReverseMode) \
        else ()
    if unbounded:
        # a reverse-mode derivative is taken on the state's steps, which through a friction law's band (a slide
        # into rolling, a slip reversing in a collision) give it wrong, by factors up to thousands that no check of
        # the steps sees (docs/design/derivatives.md, "Reverse-mode derivatives through friction"): refused where it
        # is taken
        taken = differentiated((eqx.filter(model, eqx.is_inexact_array), state0, save_times)) > 0
        state0 = eqx.error_if(state0, taken, reverse_friction_message(unbounded))
    q0, v0 = model.split(state0.q), model.split(state0.v)
    model, status0 = initial_statuses(model, families, q0, v0)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    # constant save times (closed over by a caller's ``jit``) made XLA compile a 1.4× slower program
    save_times = jax.lax.optimization_barrier(save_times)
    t_end = save_times[-1]
    # Each segment saves the next ``save_window`` times ahead of it, in order, padded with t_end (not reached by a
    # segment that an event ends), and runs to the window's last time where more follow: those segments (at
    # most ``window_ends``, each window but the first starting at the last one's end) are added to the scan.
    n_saves = len(save_times)
    window = min(n_saves, events.save_window)
    window_ends = 0 if window == n_saves else -(-(n_saves - 1) // (window - 1))
    padded_times = jnp.concatenate([save_times, jnp.full(window, t_end)])
    controller, dt0 = steps.controller()
    if adaptive:
        controller = tangent_errors(controller, derivatives)
    tangents = isinstance(controller, TangentErrors)
    # a slip's passage through a band inside one step, which no error estimate sees, bounds the steps of every
    # family with friction where the derivatives' errors set them (``passages``: those friction_steps does not
    # name); the stability bound is friction_steps' only
    # (only in a derivative: a run that is not differentiated takes the steps it takes without them)
    passages = tuple(k for k in frictional if k not in friction_steps) if tangents else ()
    if adaptive:
        controller = SegmentController(
            controller, tuple(families), events.near_distance is not None, friction_steps, passages, contact_steps,
            friction_step(solver, steps.friction_step) if friction_steps else None,
            steps.spin_step if spin_bounded(model, steps.spin_step) else None, steps.passage_step,
            steps.contact_step)
    # (reverse mode's steps bound every family with friction, or its derivative is refused above)
    guard = None
    if frictional and not tangents and isinstance(derivatives, ForwardMode):
        bounded = adaptive and set(frictional) <= set(friction_steps)
        guard = friction_guard(solver, derivatives.friction_guard,
                               friction_step(solver, steps.friction_step) if bounded else None)
    if guard is not None:
        solver = stages_loop(solver, derivatives)
    sizes = events.sizes
    gathered_families = gathered(model, families, sizes)

    def vector_field(t, y, args):
        q, v = y
        return v, accelerations(formulation, args.closed_only, args.size, gathered_families, sizes, q, v, t)

    if contact_history:
        def to_save(t, y, args):
            return y, contact_histories(families, t, y, args)
    else:
        def to_save(t, y, args):
            return y

    zeros = tuple(jnp.zeros(count) for count in counts)
    shapes = jax.eval_shape(to_save, state0.t, (state0.q, state0.v),
                            SegmentArgs(model, status0, zeros, zeros, events.rest_speed, events.near_distance, 0.0,
                                        model, 0))
    # rows past the last save time take the padding's rows
    nan = jax.tree.map(lambda x: jnp.full((n_saves + window,) + x.shape, jnp.nan), shapes)
    # what the segments change starts tied to the inputs (``_depending_on``): the contact families (their laws
    # set at onsets, ``engaged``), the residual surfaces, the time, the state, the saved rows and the step hint
    changing = _depending_on(
        ([params.forces[k] for k in families], zeros, zeros, state0.t, state0.q, state0.v, nan, jnp.zeros(())),
        (params, state0, save_times),
    )
    contacts, residual0, released0, t0, q_start, v_start, nan, hint0 = changing
    params = eqx.tree_at(lambda p: [p.forces[k] for k in families], params, contacts)
    run = Segments(
        static, tuple(families), tuple(counts), frictional, gathered_families, formulation, solver, guard,
        derivatives, adaptive, controller, dt0,
        imex_terms(vector_field) if isinstance(solver, IMEX_SOLVERS) else dfx.ODETerm(vector_field),
        # one event function, the least of all: its first down-crossing is the earliest of any contact's, which
        # bisection then locates
        dfx.Event(lambda t, y, args, **kwargs: event_function(families, t, y, args),
                  root_finder=EventBisection(rtol=events.event_tol, atol=events.event_tol, flip=True),
                  direction=False),
        to_save, events, derivatives.adjoint(segments=True), save_times, padded_times, state0.t, t_end, window,
        max_steps, progress,
    )
    start = SegmentStart(params, status0, residual0, released0, t0, q_start, v_start, hint0, jnp.array(False))
    carry, records = jax.lax.scan(functools.partial(segment, run), Carry(start, nan), None,
                                  length=events.max_events + 1 + window_ends)
    count = jnp.sum(jnp.isfinite(records.times))
    # the check rides on everything returned, so that it is kept when only the events are used
    saved, records = eqx.error_if(
        (carry.saved, records), ~carry.start.done | (count > events.max_events),
        f"more than max_events = {events.max_events} events (contact onsets and separations, and turning "
        "points of open contacts' gaps); increase max_events",
    )
    saved = jax.tree.map(lambda x: x[:n_saves], saved)
    if progress:
        run_progress.finish(saved)
    histories = None
    if contact_history:
        saved, by_family = saved
        by_force = dict(zip(families, by_family))
        histories = tuple(by_force.get(k) for k in range(len(model.forces)))
    removed = [(k, jnp.where(status >= REMOVED, released, jnp.inf)) for k, status, released in
               zip(families, carry.start.status, carry.start.released)]
    return saved_trajectory(eqx.combine(carry.start.params, static), save_times, *saved, jnp.sum(records.steps),
                            jnp.sum(records.ran), ordered_events(run, records, count), histories, removed)


def segment(run, carry, _):
    """One slot of the scan of segments: the segment from ``carry.start`` (``solve_segment``), skipped where the
    run has reached its end.

    The save buffer stays out of the ``lax.cond``: the segment's window of it is read and written back here, so
    that XLA updates it in place (passed through a branch, inside a caller's ``jit`` it was copied at every slot).
    """
    passed = jnp.sum(run.save_times < carry.start.t0)
    old_rows = jax.tree.map(lambda x: jax.lax.dynamic_slice_in_dim(x, passed, run.window), carry.saved)
    start, new_rows, record = jax.lax.cond(carry.start.done, functools.partial(skip_segment, run),
                                           functools.partial(solve_segment, run), carry.start, passed, old_rows)
    saved = jax.tree.map(lambda x, rows: jax.lax.dynamic_update_slice_in_dim(x, rows, passed, 0), carry.saved,
                         new_rows)
    return Carry(start, saved), record


def skip_segment(run, start, passed, old_rows):
    """A slot after the run's end: nothing changes, no event."""
    del passed
    slots = sum(run.counts)
    record = SegmentRecord(jnp.full(slots, jnp.inf), jnp.zeros(slots, bool), start.q, start.v,
                           jnp.asarray(0, dtype=int), jnp.asarray(False))
    return start, old_rows, record


def solve_segment(run, start, passed, old_rows):
    """One segment: a diffrax solve from ``start`` to the first event, or to the end of its save window (the
    run's end), then the events due there (``events_at_end``).

    ``passed``: the save times before the segment's start; ``old_rows``: the saved rows of its window. Returns
    the next segment's ``SegmentStart``, the window's rows (those the segment reached replaced) and its
    ``SegmentRecord``.
    """
    families, sizes = run.families, run.events.sizes
    model = eqx.combine(start.params, run.static)
    ahead = jax.lax.dynamic_slice_in_dim(run.padded_times, passed, run.window)
    closed_only, size, too_many = closed_members(model, families, sizes)
    args = SegmentArgs(model, start.status, start.residual, start.released, run.events.rest_speed,
                       run.events.near_distance, start.hint, closed_only, size)
    horizon = jnp.where(passed + run.window < len(run.save_times), ahead[-1], run.t_end)
    solution = dfx.diffeqsolve(
        run.terms,
        run.wrapped_solver(model),
        t0=start.t0,
        t1=horizon,
        dt0=run.dt0,
        y0=(eqx.error_if(start.q, too_many, f"more than max_closed = {sizes and sizes[-1]} contacts of one family "
                         "closed at once; increase max_closed"), start.v),
        args=args,
        saveat=dfx.SaveAt(
            subs=(dfx.SubSaveAt(ts=ahead, fn=run.save), dfx.SubSaveAt(t1=True)),
            controller_state=run.adaptive,
            solver_state=run.guard is not None,
        ),
        stepsize_controller=run.controller,
        event=run.event,
        max_steps=run.max_steps,
        adjoint=run.adjoint,
        progress_meter=run_progress.meter(run.progress, run.t_start, run.t_end, start.t0, horizon),
    )
    t1 = solution.ts[1][0]
    if run.guard is not None:
        # a forward-mode derivative's accepted steps flagged by ``FrictionGuard`` (the family, or -1)
        family = solution.solver_state[1]
        t1 = eqx.branched_error_if(t1, family >= 0, jnp.maximum(family, 0),
                                   friction_guard_messages(model, run.frictional))
    q1, v1 = (y[0] for y in solution.ys[1])
    happened = solution.event_mask
    saved = (ahead < t1) | ~happened
    new_rows = select(saved, solution.ys[0], old_rows)
    # every function below zero just past the crossing is due: the earliest one, and any
    # other that crossed at the same instant (simultaneous impacts of a symmetric system)
    values, landing = event_values(families, t1, (q1, v1), args)
    due = happened & (values <= 0)
    shift = event_time_shifts(families, model, start.status, values, landing, due, t1, q1, v1, args)
    # the state at the event (recorded in ``Events``) and each onset's m and ⁻δ̇ move with its time
    velocity_shift = _velocity_shift(shift, run.forward, **_without_derivatives(
        {"formulation": run.formulation, "model": model, "q": q1, "v": v1, "t": t1}))
    first_due = jnp.argmin(jnp.where(due, values, jnp.inf).min(axis=1))  # whose crossing ended the segment
    new_model, new_status, new_residual, new_released, v1, times, onsets = events_at_end(
        run, args, t1, q1, v1, due, shift, velocity_shift)
    record = SegmentRecord(jnp.concatenate(times), jnp.concatenate(onsets), q1 + shift[first_due] * v1,
                           v1 + velocity_shift[first_due], jnp.asarray(solution.stats["num_accepted_steps"], dtype=int),
                           jnp.asarray(True))
    next_start = SegmentStart(
        eqx.filter(new_model, eqx.is_inexact_array), tuple(new_status), tuple(new_residual), tuple(new_released), t1,
        q1, v1, solution.controller_state[1] if run.adaptive else start.hint, ~happened & (t1 >= run.t_end),
    )
    return next_start, new_rows, record


def events_at_end(run, args, t1, q1, v1, due, shift, velocity_shift):
    """The events ``due`` ((contacts, 3) flags, as ``event_values``) at the end t1 of a segment with ``SegmentArgs``
    ``args``: its removals (``removals``), then every family's events (``handle_events``), then, where a family is
    impulsive, the events its impulses made due.

    Returns the new model, statuses, residuals, release times and velocities, and each family's event times and
    onsets.
    """
    families, slots, model = run.families, run.slots, args.model
    leaving, removed = removals(model, families, [due[slots[f]: slots[f + 1], 2] for f in range(len(families))],
                                args.status)
    new_model, new_status, new_residual, new_released, v1, times, onsets = handle_events(
        run, model, args.status, args.residual, args.released, q1, v1, t1, due, leaving, removed, shift,
        velocity_shift)
    if any(model.forces[k].impulsive for k in families):
        # An impulse changes the velocities, and with them the rates in the other contacts' functions
        # (a turning point's ġ ± v_r, a separation that depends on δ̇): any that the jump took to zero or
        # below is due now, and handled as the segment's own events (else it would start the next
        # segment below zero, where no crossing is seen, and hide every later event).
        after = dataclasses.replace(args, model=new_model, status=tuple(new_status), residual=tuple(new_residual),
                                    released=tuple(new_released))
        jumped = event_values(families, t1, (q1, v1), after)[0][:, :2] <= 0
        none = [jnp.zeros(count, bool) for count in run.counts]
        new_model, new_status, new_residual, new_released, v1, more_times, more_onsets = handle_events(
            run, new_model, new_status, new_residual, new_released, q1, v1, t1, jumped, none, none, None, None)
        times = [jnp.minimum(a, b) for a, b in zip(times, more_times)]
        onsets = [a | b for a, b in zip(onsets, more_onsets)]
    return new_model, new_status, new_residual, new_released, v1, times, onsets


def handle_events(run, model, status, residual, released, q, v, t, due, leaving, removed, shift, velocity_shift):
    """The events ``due`` (the rows' first two functions) at ``t``, family by family (``apply_events``), with the
    members ``leaving`` and ``removed`` (``removals``); ``shift`` and ``velocity_shift`` carry the derivatives of
    the onset times (``None`` for none). Returns the new model, statuses, residuals, release times, velocities,
    event times and onsets."""
    slots = run.slots
    statuses, residuals, releases, times, onsets = [], [], [], [], []
    for f, k in enumerate(run.families):
        part = slice(slots[f], slots[f + 1])
        rows = due[part]
        hit = rows[:, 0] | rows[:, 1]
        shift_f, velocity_shift_f = (None, None) if shift is None else (shift[part], velocity_shift[part])
        model, status_f, residual_f, released_f, v, event_f, onset_f = apply_events(
            model, k, status[f], residual[f], released[f], hit, rows[:, 1] & ~rows[:, 0], leaving[f],
            removed[f], q, v, t, run.events.rest_speed, shift_f, velocity_shift_f,
        )
        statuses.append(status_f)
        residuals.append(residual_f)
        releases.append(released_f)
        times.append(jnp.where(hit & event_f, t if shift is None else t + shift_f, jnp.inf))
        onsets.append(hit & onset_f)
    return model, statuses, residuals, releases, v, times, onsets


def ordered_events(run, records, count):
    """The ``Events`` of a run from its segments' ``records`` (``count`` of them).

    Contact events in time order (simultaneous ones in the order of the contacts): the segments' events in the
    segments' order (each segment's events are at its end, in the order of the contacts; a sort of all the slots
    took 1.4 s for a 4-s break); the turning points only ended segments.
    """
    max_events, slots = run.events.max_events, run.slots[-1]
    times = records.times.reshape(-1)
    order = jnp.nonzero(jnp.isfinite(times), size=max_events, fill_value=0)[0]
    used = jnp.arange(max_events) < count
    segment_of, slot_of = order // slots, order % slots
    family_of = np.repeat(run.families, run.counts)
    member_of = np.concatenate([np.arange(count) for count in run.counts])
    return Events(
        count,
        jnp.where(used, times[order], jnp.inf),
        jnp.asarray(family_of)[slot_of],
        jnp.asarray(member_of)[slot_of],
        used & records.onsets.reshape(-1)[order],
        records.q[segment_of],
        records.v[segment_of],
    )


def _depending_on(tree, anchor):
    """``tree``'s values, made to depend on every inexact leaf of ``anchor`` (selected against, never used).

    Differentiating or batching a ``lax.scan``, JAX finds which parts of its carry have nonzero tangents (or
    a batch axis) by a fixpoint: it linearises, JVPs or batches the whole body once per round and adds what
    came out nonzero (batched), until nothing is added. The scan's carry starts with zero tangents in its
    state, gains them one segment later and in the laws set at onsets one more, so the whole segment
    (solver, events, impacts) was linearised three times. Tied to the inputs from the start, once: the
    four-ball break's ``jacfwd`` traces in 31–32 s instead of 51–56 s, a ball's reverse-mode rebound in 22–24 s
    instead of 29–31 s (docs/design/derivatives.md, "Derivatives traced once"). Where nothing of
    ``anchor`` is differentiated or batched, nothing changes; no value changes anywhere.
    """
    link = sum(jnp.sum(x) for x in jax.tree.leaves(anchor) if eqx.is_inexact_array(x))

    def tied(x):
        if not eqx.is_inexact_array(x):
            return x
        return jax.lax.select(jnp.zeros(x.shape, bool), jnp.broadcast_to(link, x.shape).astype(x.dtype), x)

    return jax.tree.map(tied, tree)


def _without_derivatives(tree):
    """``tree`` with its arrays' derivatives stopped."""
    arrays, others = eqx.partition(tree, eqx.is_array)
    return eqx.combine(jax.lax.stop_gradient(arrays), others)


@eqx.filter_custom_jvp
def _lazy_velocity_shift(shift, *, formulation, model, q, v, t):
    """s v̇ (shifts s, (contacts,), of value zero: ``event_time_shifts``): zeros (contacts, n), derivative ds v̇.

    The accelerations v̇(q, v, t) are evaluated only where this is
    differentiated, so a run without derivatives neither traces nor computes them.
    """
    return jnp.zeros(jnp.shape(shift) + jnp.shape(v))


@_lazy_velocity_shift.def_jvp
def _lazy_velocity_shift_jvp(primals, tangents, *, formulation, model, q, v, t):
    (shift,), (d_shift,) = primals, tangents
    zeros = _lazy_velocity_shift(shift, formulation=formulation, model=model, q=q, v=v, t=t)
    if d_shift is None:
        return zeros, jnp.zeros_like(zeros)
    return zeros, d_shift[:, None] * acceleration(formulation, model, q, v, t)


def _velocity_shift(shift, forward_mode, *, formulation, model, q, v, t):
    """s v̇ of ``_lazy_velocity_shift``, but in forward mode (``ForwardMode``) the plain product s v̇ (zero,
    derivative ds v̇).

    The lazy custom JVP's tangent keeps a ``vmap``'s batch axis under ``jacfwd`` of a ``vmap`` (the compliant
    cushion fit's Jacobian failed with a slice error), and the plain product makes every iteration of the scan
    of segments slower, skipped ones too (docs/design/performance.md, "Compiling without the fusion emitters"):
    forward mode, which differentiates anyway, takes the product; runs in reverse mode keep the lazy one.
    """
    if forward_mode:
        return shift[:, None] * acceleration(formulation, model, q, v, t)
    return _lazy_velocity_shift(shift, formulation=formulation, model=model, q=q, v=v, t=t)
