"""Forward dynamics of a multibody ``Model`` with diffrax.

``simulate`` integrates the first-order system q̇ = v, v̇ = formulation's
accelerations with an adaptive Tsit5 solver (fixed steps when given ``dt``)
and returns the saved states with their diagnostics. It is a pure function of pytrees: it works under ``jit``,
``vmap`` and ``grad`` (gradients by diffrax's recursive checkpointing).

Contact events. When the model has ``Contact`` forces, the integration is split
into segments at the contact onsets and separations, so that no step straddles
the initial instant of a contact (seed 004 §1) and impact-dependent laws can be
set up at each onset. A ``lax.scan`` over at most ``max_events + 1`` segments
runs one ``diffeqsolve`` per segment, terminated by a ``diffrax.Event`` with one
event function per contact, chosen by the contact's status: out of contact
−δ (onset: δ crosses 0 upwards), in contact ``Contact.separation_function``
(the force of laws that separate at zero force, eq. (20) of seed 004, else δ),
both as down-crossings located by Newton's method on the dense output. At an
event the status flips and

* at onset, an ``ImpactLaw`` is resolved with the effective mass of the
  contact normal in the constrained system, m = 1/(wᵀ M_c⁻¹ w), and the
  approach speed ⁻δ̇ at the located onset (``contact.normal_response``);
* at onset of a ``NewtonRestitution`` contact the impulse of
  ``contact.restitution_impulse`` is applied and the contact stays open.

Finished segments are skipped by ``lax.cond``; save times are clipped into
each segment and the values of the segment that contains them are kept (a save
time at an event gets the state after it). Gradients include the sensitivity
of the event times (diffrax differentiates the located root), so ``jax.grad``
through impacts is exact up to the tolerances. The contact forces themselves
are the clipped, continuous laws in every segment: the events only place the
steps and switch the laws. Models without contacts take the single-solve path.

Known limitation: a law that separates at zero force (eq. (20) of seed 004,
e.g. eq. (50)'s Hertz + linear damper) ends the contact while the bodies may
still overlap (δ > 0). If they move back together before δ has returned below
zero, the onset event −δ never crosses zero and the contact is missed (the
body sinks through). Rapid small bounces in resting contact do this; check
``Trajectory.events`` and the penetration of long runs with such laws.
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import optimistix as optx

from diffimpact._validation import check_positive
from diffimpact.contact.normal import NormalForceLaw
from diffimpact.multibody.contact import Contact, resolve_at_onset, restitution_impulse
from diffimpact.multibody.formulations import Formulation, project
from diffimpact.multibody.model import Model, State

#: Largest constraint residual accepted in an initial state (m or rad, m/s or rad/s).
CONSTRAINT_TOLERANCE = 1e-8


class Trajectory(eqx.Module):
    """Saved states and diagnostics, one row per save time.

    Attributes
    ----------
    t : save times (s).
    q, v : coordinates and velocities, (len(t), n).
    constraint_violation : ‖Φ(q, t)‖.
    velocity_violation : ‖Φ̇(q, v, t)‖.
    energy : kinetic plus potential energy (J).
    linear_momentum : Σ m ṙ, (len(t), 2) for planar bodies, (len(t), 3) for spatial.
    angular_momentum : about the origin, (len(t),) for planar bodies, (len(t), 3) for spatial.
    steps : accepted solver steps over the whole run.
    events : ``Events`` of the contacts, ``None`` for models without contacts.
    """

    t: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    constraint_violation: jnp.ndarray
    velocity_violation: jnp.ndarray
    energy: jnp.ndarray
    linear_momentum: jnp.ndarray
    angular_momentum: jnp.ndarray
    steps: jnp.ndarray
    events: "Events | None" = None


class Events(eqx.Module):
    """Contact events in the order they happened; rows past ``count`` are unused (t = inf).

    Attributes
    ----------
    count : number of events.
    t : event times (s), (max_events,).
    contact : index of the contact in ``Model.forces``.
    onset : True at contact onset, False at separation.
    q, v : state just after the event (after the impulse of a Newton impact).
    """

    count: jnp.ndarray
    t: jnp.ndarray
    contact: jnp.ndarray
    onset: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray


def _is_concrete(*arrays):
    return not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(arrays))


def check_initial_state(model, state, tolerance=CONSTRAINT_TOLERANCE):
    """Raise if ``state`` violates Φ = 0 or Φ̇ = 0 by more than ``tolerance``, or D is rank deficient.

    Concrete input: a ``ValueError`` naming the first violated constraint and
    its residual, or the rank of D for redundant constraints. Traced input:
    the violation check is compiled in with ``equinox.error_if`` (the rank
    check is skipped; a singular system then gives non-finite results).
    Returns ``state`` (threaded through ``error_if`` when traced).
    """
    if not model.constraints:
        return state
    residual = model.constraint(state.q, state.t)
    rate = model.constraint_velocity(state.q, state.v, state.t)
    if not _is_concrete(model, state):
        bad = (jnp.max(jnp.abs(residual)) > tolerance) | (jnp.max(jnp.abs(rate)) > tolerance)
        message = f"initial state violates the constraints by more than {tolerance:g}"
        return eqx.error_if(state, bad, message)
    offsets = np.cumsum([0] + [c.size for c in model.constraints])
    for name, a, b in zip(model.constraint_names, offsets[:-1], offsets[1:]):
        for what, values in (("position", residual), ("velocity", rate)):
            values = np.asarray(values[a:b])
            if np.max(np.abs(values)) > tolerance:
                raise ValueError(
                    f"initial state violates {name}: {what} residual {values.tolist()} "
                    f"exceeds {tolerance:g}; use project_initial_state to correct it"
                )
    jacobian = np.asarray(model.jacobian(state.q, state.t))
    rank = np.linalg.matrix_rank(jacobian)
    if rank < jacobian.shape[0]:
        raise ValueError(
            f"constraint Jacobian is singular: rank {rank} < {jacobian.shape[0]} equations "
            "(redundant constraints, or a singular configuration)"
        )
    return state


def project_initial_state(model, state, iterations=10):
    """Correct ``state`` onto Φ = 0, Φ̇ = 0 by the direct-correction projection (eqs. (2.24)–(2.29))."""
    q, v = project(model, state.q, state.v, state.t, iterations)
    return State(q, v, state.t)


def simulate(
    model,
    state0,
    save_times,
    formulation,
    *,
    rtol=1e-10,
    atol=1e-10,
    dt=None,
    max_steps=100_000,
    constraint_tolerance=CONSTRAINT_TOLERANCE,
    progress=False,
    adjoint=None,
    max_events=16,
    event_tol=1e-12,
):
    """Integrate the equations of motion from ``state0`` and save at ``save_times``.

    Parameters
    ----------
    model : ``Model``.
    state0 : ``State`` consistent with the constraints (see
        ``project_initial_state``).
    save_times : increasing times (s); the integration runs from ``state0.t``
        to the last one.
    formulation : a ``Formulation`` instance, e.g. ``Baumgarte()``.
    rtol, atol : tolerances of the PID step-size controller.
    dt : ``None`` (default) for adaptive steps; a step size (s, > 0) for
        fixed steps of that size (``diffrax.ConstantStepSize``; rtol and atol
        are then unused). Fixed steps take (t_end − t0)/dt steps: raise
        ``max_steps`` to match. Contact events still end a step exactly at
        the located event.
    max_steps : cap on solver steps.
    constraint_tolerance : largest accepted initial constraint residual.
    progress : show diffrax's tqdm progress meter.
    adjoint : how diffrax differentiates the solves: ``None`` (default) for
        ``diffrax.RecursiveCheckpointAdjoint()``, reverse mode (``jax.grad``,
        ``jax.jacrev``); ``diffrax.ForwardMode()`` for forward mode
        (``jax.jvp``, ``jax.jacfwd``), cheaper for a few parameters.
    max_events : most contact events (onsets plus separations) in the run;
        more raise an error at run time. Only for models with ``Contact``s.
    event_tol : rtol and atol of the Newton root finder on the event times.

    Returns
    -------
    ``Trajectory``.
    """
    if not isinstance(formulation, Formulation):
        raise TypeError(
            "formulation must be an instance of a diffimpact.multibody Formulation "
            "(LagrangeMultipliers(), Baumgarte(), AugmentedLagrangian(), DirectCorrection()); "
            f"got {formulation!r}"
        )
    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model; got {type(model).__name__}")
    if not isinstance(state0, State):
        raise TypeError(f"state0 must be a State; got {type(state0).__name__}")
    if state0.q.shape != (model.size,) or state0.v.shape != (model.size,):
        raise ValueError(
            f"state0.q and state0.v must have shape ({model.size},); "
            f"got {state0.q.shape} and {state0.v.shape}"
        )
    state0 = check_initial_state(model, state0, constraint_tolerance)
    if adjoint is None:
        adjoint = dfx.RecursiveCheckpointAdjoint()
    elif not isinstance(adjoint, dfx.AbstractAdjoint):
        raise TypeError(f"adjoint must be a diffrax adjoint, e.g. diffrax.ForwardMode(); got {adjoint!r}")
    save_times = jnp.asarray(save_times, dtype=float)
    if dt is None:
        rtol, atol = jnp.asarray(rtol, dtype=float), jnp.asarray(atol, dtype=float)
        controller, dt0 = dfx.PIDController(rtol=rtol, atol=atol), None
    else:
        controller, dt0 = dfx.ConstantStepSize(), check_positive("dt", dt)
    if not any(isinstance(force, Contact) for force in model.forces):
        return _simulate(model, state0, save_times, formulation, controller, dt0, max_steps, progress, adjoint)
    if not isinstance(max_events, int) or max_events < 0:
        raise ValueError(f"max_events must be a non-negative int; got {max_events!r}")
    _check_impact_laws_open(model, state0)
    return _simulate_events(
        model, state0, save_times, formulation, controller, dt0, max_steps, progress, adjoint, max_events,
        jnp.asarray(event_tol, dtype=float),
    )


@eqx.filter_jit
def _simulate(model, state0, save_times, formulation, controller, dt0, max_steps, progress, adjoint):
    def vector_field(t, y, args):
        q, v = y
        return v, formulation.acceleration(model, q, v, t)

    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        formulation.wrap_solver(model, dfx.Tsit5()),
        t0=state0.t,
        t1=save_times[-1],
        dt0=dt0,
        y0=(state0.q, state0.v),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=adjoint,
        progress_meter=dfx.TqdmProgressMeter() if progress else dfx.NoProgressMeter(),
    )
    return _trajectory(model, save_times, *solution.ys, solution.stats["num_accepted_steps"])


def _trajectory(model, save_times, q, v, steps, events=None):
    def diagnostics(q, v, t):
        return (
            jnp.linalg.norm(model.constraint(q, t)),
            jnp.linalg.norm(model.constraint_velocity(q, v, t)),
            model.energy(q, v),
            model.linear_momentum(q, v),
            model.angular_momentum(q, v),
        )

    return Trajectory(save_times, q, v, *jax.vmap(diagnostics)(q, v, save_times), steps, events)


def _contact_indices(model):
    return [k for k, force in enumerate(model.forces) if isinstance(force, Contact)]


def _check_impact_laws_open(model, state):
    """Contacts whose law is set at onset (impact-dependent or impulsive) must start open."""
    for k in _contact_indices(model):
        contact = model.forces[k]
        if isinstance(contact.law, NormalForceLaw) or not _is_concrete(model, state):
            continue
        if float(contact.penetration(model.split(state.q))) > 0:
            raise ValueError(
                f"state0 is in contact at forces[{k}] ({type(contact.law).__name__}), whose law is "
                "set at contact onset; start the simulation before the contact"
            )


def _select(flag, new, old):
    """``new`` where ``flag`` else ``old``, leaf by leaf, for pytrees of the same structure."""
    arrays, static = eqx.partition(new, eqx.is_array)
    chosen = jax.tree.map(lambda a, b: jnp.where(flag, a, b), arrays, eqx.filter(old, eqx.is_array))
    return eqx.combine(chosen, static)


def _event_functions(model, contacts):
    """One down-crossing event function per contact: −δ when open, the separation function when closed."""

    def make(slot, k):
        def cond_fn(t, y, args, **kwargs):
            del t, kwargs
            model, closed = args
            q, v = (model.split(x) for x in y)
            contact = model.forces[k]
            return jnp.where(closed[slot], contact.separation_function(q, v), -contact.penetration(q))

        return cond_fn

    return tuple(make(slot, k) for slot, k in enumerate(contacts))


def _apply_event(model, closed, slot, k, q, v, t):
    """Flip contact k's status at its event; resolve its law at onset or apply the Newton impulse."""
    contact = model.forces[k]
    onset = ~closed[slot]
    if contact.impulsive:
        return model, closed, restitution_impulse(model, contact, q, v, t), onset
    resolved = eqx.tree_at(lambda m: m.forces[k], model, resolve_at_onset(model, contact, q, v, t))
    updated = _engage(_select(onset, resolved, model), k, onset)
    return updated, closed.at[slot].set(onset), v, onset


def _engage(model, k, engaged):
    """The model with contact k's ``engaged`` flag set (a float, so it rides in the fitted parameters)."""
    return eqx.tree_at(lambda m: m.forces[k].engaged, model, jnp.asarray(engaged, dtype=float))


@eqx.filter_jit
def _simulate_events(
    model, state0, save_times, formulation, controller, dt0, max_steps, progress, adjoint, max_events, event_tol
):
    contacts = _contact_indices(model)
    q0 = model.split(state0.q)
    closed0 = jnp.stack(
        [(model.forces[k].penetration(q0) > 0) & (not model.forces[k].impulsive) for k in contacts]
    )
    for slot, k in enumerate(contacts):
        model = _engage(model, k, closed0[slot])
    params, static = eqx.partition(model, eqx.is_inexact_array)
    t_end = save_times[-1]
    event = dfx.Event(
        _event_functions(model, contacts),
        root_finder=optx.Newton(rtol=event_tol, atol=event_tol),
        direction=False,
    )

    def vector_field(t, y, args):
        model, _ = args
        q, v = y
        return v, formulation.acceleration(model, q, v, t)

    def segment(carry, _):
        params, closed, t0, q, v, ys, done = carry
        model = eqx.combine(params, static)

        def run(_):
            solution = dfx.diffeqsolve(
                dfx.ODETerm(vector_field),
                formulation.wrap_solver(model, dfx.Tsit5()),
                t0=t0,
                t1=t_end,
                dt0=dt0,
                y0=(q, v),
                args=(model, closed),
                saveat=dfx.SaveAt(
                    subs=(dfx.SubSaveAt(ts=jnp.clip(save_times, t0, t_end)), dfx.SubSaveAt(t1=True))
                ),
                stepsize_controller=controller,
                event=event,
                max_steps=max_steps,
                adjoint=adjoint,
                progress_meter=dfx.TqdmProgressMeter() if progress else dfx.NoProgressMeter(),
            )
            masks = jnp.stack(solution.event_mask)
            t1 = solution.ts[1][0]
            q1, v1 = (y[0] for y in solution.ys[1])
            happened = jnp.any(masks)
            saved = (save_times >= t0) & ((save_times < t1) | ~happened)
            new_ys = _select(saved[:, None], solution.ys[0], ys)
            new_model, new_closed, onset, which = model, closed, jnp.array(False), jnp.array(-1)
            for slot, k in enumerate(contacts):
                m_k, c_k, v_k, o_k = _apply_event(model, closed, slot, k, q1, v1, t1)
                hit = masks[slot]
                new_model = _select(hit, m_k, new_model)
                new_closed = jnp.where(hit, c_k, new_closed)
                v1 = jnp.where(hit, v_k, v1)
                onset = jnp.where(hit, o_k, onset)
                which = jnp.where(hit, k, which)
            new_params = eqx.filter(new_model, eqx.is_inexact_array)
            record = (jnp.where(happened, t1, jnp.inf), which, onset, q1, v1)
            steps = jnp.asarray(solution.stats["num_accepted_steps"], dtype=int)
            return (new_params, new_closed, t1, q1, v1, new_ys, ~happened), (record, happened, steps)

        def skip(_):
            record = (jnp.inf, jnp.array(-1), jnp.array(False), q, v)
            return (params, closed, t0, q, v, ys, done), (record, jnp.array(False), jnp.asarray(0, dtype=int))

        return jax.lax.cond(done, skip, run, None)

    nan = jnp.full((len(save_times), model.size), jnp.nan)
    carry = (params, closed0, state0.t, state0.q, state0.v, (nan, nan), jnp.array(False))
    carry, (records, happened, steps) = jax.lax.scan(segment, carry, None, length=max_events + 1)
    done = carry[-1]
    q, v = eqx.error_if(
        carry[5], ~done, f"more than max_events = {max_events} contact events; increase max_events"
    )
    t, which, onset, q_event, v_event = (r[:max_events] for r in records)
    events = Events(jnp.sum(happened[:max_events]), t, which, onset, q_event, v_event)
    return _trajectory(eqx.combine(carry[0], static), save_times, q, v, jnp.sum(steps), events)
