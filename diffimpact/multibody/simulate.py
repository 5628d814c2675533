"""Forward dynamics of a multibody ``Model`` with diffrax: ``simulate``, the one entry point.

``simulate`` integrates the first-order system q̇ = v, v̇ = formulation's accelerations with an adaptive Tsit5
solver (or the ``solver`` given) and returns the saved states with their diagnostics (``Trajectory``). It is a
pure function of pytrees: it works under ``jit``, ``vmap`` and ``grad`` (gradients by diffrax's recursive
checkpointing, or in forward mode). Its concerns are objects, as diffrax's: how the steps are chosen
(``AdaptiveSteps``, ``FixedSteps``), how contact events are located and handled (``ContactEvents``) and how the
run is differentiated (``ReverseMode``, ``ForwardMode``), each with its numbers as fields
(``diffimpact.multibody.integrate.options``).

Contact events. When the model has ``Contact`` forces, the integration is split into segments at the contact
onsets and separations, so that no step straddles the initial instant of a contact ([Poursina 2020] §1) and
impact-dependent laws can be set up at each onset; ``diffimpact.multibody.integrate`` is the engine (the segment
loop, the events, the step control, the progress bar). Models without contacts take one solve.

Only the closed contacts push (``ContactEvents``' ``max_closed``): for the 16-ball table, a segment sums at most
48 of the 120 pairs and of the 96 ball–cushion contacts (docs/design/event-engine.md, "Only the closed contacts
push"); given increasing sizes, (4, 16, 48) for the table, the least size that holds its closed members
(docs/design/event-engine.md, "Evaluations that cost what is closed").
"""

import dataclasses
import warnings

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_count, check_positive, check_range, is_concrete, refuse_where, require_float64
from diffimpact.contact.normal import NormalForceLaw
from diffimpact.multibody.formulations import Formulation, project
from diffimpact.multibody.integrate.events import contact_families, starts_closed
from diffimpact.multibody.integrate.options import (
    AdaptiveSteps,
    ContactEvents,
    Derivatives,
    FixedSteps,
    ReverseMode,
    StepSizes,
)
from diffimpact.multibody.integrate.segments import solve_segments
from diffimpact.multibody.integrate.solve import solve
from diffimpact.multibody.integrate.step_control import IMEX_SOLVERS, with_friction
from diffimpact.multibody.model import Model, State

#: Largest constraint residual accepted in an initial state (m or rad, m/s or rad/s): ``simulate``'s
#: ``constraint_tolerance`` by default.
CONSTRAINT_TOLERANCE = 1e-8


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
    if not is_concrete(model, state):
        residual = model.constraint(state.q, state.t)
        rate = model.constraint_velocity(state.q, state.v, state.t)
        bad = (jnp.max(jnp.abs(residual)) > tolerance) | (jnp.max(jnp.abs(rate)) > tolerance)
        message = f"initial state violates the constraints by more than {tolerance:g}"
        return eqx.error_if(state, bad, message)
    residual, rate, jacobian = _constraint_residuals(model, state.q, state.v, state.t)
    offsets = np.cumsum([0] + [c.size for c in model.constraints])
    for name, a, b in zip(model.constraint_names, offsets[:-1], offsets[1:]):
        for what, values in (("position", residual), ("velocity", rate)):
            values = values[a:b]
            if np.max(np.abs(values)) > tolerance:
                raise ValueError(
                    f"initial state violates {name}: {what} residual {values.tolist()} "
                    f"exceeds {tolerance:g}; use project_initial_state to correct it"
                )
    rank = np.linalg.matrix_rank(jacobian)
    if rank < jacobian.shape[0]:
        raise ValueError(
            f"constraint Jacobian is singular: rank {rank} < {jacobian.shape[0]} equations "
            "(redundant constraints, or a singular configuration)"
        )
    return state


def _concrete(fn):
    """``fn`` of concrete values, compiled as one call, its results as NumPy arrays: also where the values are
    constants closed over by a caller's ``jit``, whose trace would otherwise make its results tracers."""
    compiled = eqx.filter_jit(fn)

    def call(*args):
        with jax.ensure_compile_time_eval():
            return jax.tree.map(np.asarray, compiled(*args))

    return call


@_concrete
def _constraint_residuals(model, q, v, t):
    """Φ, Φ̇ and D of a concrete state in one compiled call (op by op, each operation compiles on its own: about
    a hundred small programs for the pool table)."""
    return model.constraint(q, t), model.constraint_velocity(q, v, t), model.jacobian(q, t)


def project_initial_state(model, state, iterations=10):
    """Correct ``state`` onto Φ = 0, Φ̇ = 0 by the direct-correction projection (eqs. (2.24)–(2.29)), with
    ``iterations`` (an int ≥ 1) Gauss–Newton steps on the positions."""
    q, v = project(model, state.q, state.v, state.t, check_count("iterations", iterations, 1))
    return State(q, v, state.t)


def simulate(
    model,
    state0,
    save_times,
    formulation,
    *,
    solver=None,
    steps=AdaptiveSteps(),
    events=ContactEvents(),
    derivatives=ReverseMode(),
    max_steps=100_000,
    constraint_tolerance=CONSTRAINT_TOLERANCE,
    contact_history=False,
    progress=False,
):
    """Integrate the equations of motion from ``state0`` and save at ``save_times``.

    Parameters
    ----------
    model : ``Model``.
    state0 : ``State`` consistent with the constraints (see
        ``project_initial_state``).
    save_times : increasing times (s), none before ``state0.t``; the integration runs from ``state0.t``
        to the last one. They may be passed to a ``jax.jit`` of yours or
        closed over by it: the same program runs either way (an
        optimisation barrier hides constant ones from XLA, which otherwise
        made the 4-s break 1.4× slower: docs/design/event-engine.md, "Save times closed over by a caller's `jit`").
    formulation : a ``Formulation`` instance, e.g. ``Baumgarte()``.
    solver : a diffrax ODE solver, ``None`` (default) for ``diffrax.Tsit5()``.
        An implicit one (``diffrax.Kvaerno5()``) takes fewer steps through
        stiff phases, but forms and factors the Jacobian of the
        accelerations at every step: for the 16-ball table that costs far
        more than it saves (docs/design/performance.md, "Where the break's time goes").
        An IMEX one (``IMEX_SOLVERS``: ``diffrax.KenCarp3()``, ``KenCarp4()``,
        ``KenCarp5()``, ``Sil3()``) integrates the contacts' friction
        implicitly and the rest explicitly (``integrate.segments``); only
        for models with ``Contact``s with friction.
    steps : how the steps are chosen: ``AdaptiveSteps(rtol=..., atol=..., ...)`` (default: rtol = atol = 1e-10,
        with the bounds of ``integrate.step_control``) or ``FixedSteps(dt)``.
    events : how a run with ``Contact``s is split at contact events: ``ContactEvents(max_events=..., ...)``
        (default: at most 16 events).
    derivatives : how the run is differentiated: ``ReverseMode()`` (default; ``jax.grad``, ``jax.jacrev``)
        or ``ForwardMode()`` (``jax.jvp``, ``jax.jacfwd``), cheaper for a few parameters, whose derivatives'
        errors the steps also bound.
    max_steps : cap on the solver's steps (of each segment, in a run with ``Contact``s).
    constraint_tolerance : largest accepted initial constraint residual, > 0.
    contact_history : also save each contact family's penetration, gap and
        forces at the save times (``Trajectory.contact_history``, evaluated
        inside each segment with the laws that acted there). Off by default:
        it adds about a quarter to the compile time of a contact model and
        costs run time at every save time (measured side by side on the table's break).
        Only for models with ``Contact``s.
    progress : show a tqdm progress bar of the simulated time, one for the whole run, never going back
        (``integrate.progress``); derivatives and ``jax.vmap`` pass through it.

    Returns
    -------
    ``Trajectory``.
    """
    require_float64("diffimpact.multibody.simulate")
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
    state0 = State(*(check_range(f"state0.{name}", getattr(state0, name)) for name in ("q", "v", "t")))
    check_positive("constraint_tolerance", constraint_tolerance)  # (a Python number: the checks compare with it)
    state0 = check_initial_state(model, state0, constraint_tolerance)
    if solver is None:
        solver = dfx.Tsit5()
    elif not isinstance(solver, dfx.AbstractSolver):
        raise TypeError(f"solver must be a diffrax solver, e.g. diffrax.Tsit5(); got {solver!r}")
    for name, value, kind, examples in (
            ("steps", steps, StepSizes, "AdaptiveSteps(rtol=..., atol=...) or FixedSteps(dt)"),
            ("events", events, ContactEvents, "ContactEvents(max_events=...)"),
            ("derivatives", derivatives, Derivatives, "ReverseMode() or ForwardMode()")):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be {examples}; got {value!r}")
    save_times = _check_save_times(save_times, state0.t)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"max_steps must be an int >= 1; got {max_steps!r}")
    families = contact_families(model)
    if isinstance(solver, IMEX_SOLVERS) and not with_friction(families, model):
        raise ValueError(f"an IMEX solver ({type(solver).__name__}) integrates the contacts' friction "
                         "implicitly; this model has no Contact with friction: use an explicit or implicit solver")
    if not families:
        return solve(model, state0, save_times, formulation, solver, steps.checked(), derivatives, max_steps,
                     progress)
    _check_contacts_at_start(model, state0)
    if events.near_distance is not None and isinstance(steps, FixedSteps):
        raise ValueError("near_distance bounds adaptive steps; it cannot be combined with fixed steps (FixedSteps)")
    if isinstance(steps, AdaptiveSteps):
        steps = dataclasses.replace(
            steps, friction_steps=_bounded_families(model, "friction_steps", steps.friction_steps, frictional=True),
            contact_steps=_bounded_families(model, "contact_steps", steps.contact_steps))
    # what the laws set at onset do not take from the impact, once for the run, and outside the compiled run
    # where the model is concrete (its compilation is then shared by every run)
    model = eqx.tree_at(lambda m: [m.forces[k] for k in families], model,
                        [model.forces[k].prepared() for k in families])
    return solve_segments(model, state0, save_times, formulation, solver, steps.checked(), events.checked(),
                          derivatives, max_steps, bool(contact_history), progress)


def _check_save_times(save_times, t0):
    """``save_times`` as a float array after checking: 1-D, at least one time, finite, non-decreasing, none
    before the start ``t0`` (the run goes forward from it)."""
    save_times = jnp.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size == 0:
        raise ValueError(f"save_times must be a 1-D array of at least one time (s); got shape {save_times.shape}")
    save_times = check_range("save_times", save_times)
    save_times = refuse_where(save_times, jnp.diff(save_times) < 0, "save_times must be non-decreasing",
                              lambda: np.asarray(save_times))
    return refuse_where(save_times, save_times[0] < t0,
                        "save_times must not start before state0.t (the run goes forward from state0.t)",
                        lambda: f"save_times[0] = {float(save_times[0])!r} s, state0.t = {float(t0)!r} s")


def _bounded_families(model, name, value, frictional=False):
    """``AdaptiveSteps``' ``contact_steps`` or ``friction_steps`` (``name``: ``value``) as the tuple of the indices in
    ``model.forces`` of the families it bounds: every ``Contact`` (with friction, where ``frictional``) for True, none
    for False, or those of a sequence of indices (checked)."""
    kind = "Contact family with friction" if frictional else "Contact family"
    eligible = with_friction(contact_families(model), model) if frictional else contact_families(model)
    if isinstance(value, bool):
        return tuple(eligible) if value else ()
    for k in value:
        if k not in eligible:
            raise ValueError(f"{name} names model.forces[{k}], which is not a {kind}")
    return tuple(sorted({int(k) for k in value}))


OVERLAP_WARNING = 0.01


def _check_contacts_at_start(model, state):
    """The contacts at a concrete start, from one compiled evaluation (``_contacts_at_start``).

    Contacts whose law is set at onset (impact-dependent or impulsive) must start apart (δ < 0, or δ = 0
    receding). A warning for each family with a member that starts overlapping by more than
    ``OVERLAP_WARNING`` of its geometry's radius (``Geometry.radius_scale``; a resting ball's sink under its
    weight is some 1e-4 of it): its law then pushes the bodies apart from that depth, with the energy stored
    there.
    """
    if not is_concrete(model, state):
        return
    families = contact_families(model)
    starts = _contacts_at_start(model, state.q, state.v)
    for k, (closed, _) in zip(families, starts):
        contact = model.forces[k]
        closed = np.flatnonzero(closed)
        if not isinstance(contact.law, NormalForceLaw) and closed.size:
            raise ValueError(
                f"state0 is in contact (or touching and approaching) at forces[{k}] "
                f"(contact {int(closed[0])} of the family; "
                f"{type(contact.law).__name__}), whose law is set at contact onset; start the simulation "
                "before the contact"
            )
    for k, (_, depths) in zip(families, starts):
        deep = np.flatnonzero(depths > OVERLAP_WARNING)
        if deep.size:
            m = int(deep[np.argmax(depths[deep])])
            geometry = model.forces[k].member(m).geometry
            warnings.warn(
                f"state0 starts deeply overlapping at model.forces[{k}] (contact {m} of the family, bodies "
                f"{_body_name(geometry.body_i)} and {_body_name(geometry.body_j)}): penetration "
                f"{depths[m] * float(geometry.radius_scale[0]):.4g} m, {100 * depths[m]:.3g} % of the radius; its "
                "law pushes the bodies apart from that depth (start the bodies apart, or touching)", stacklevel=3)


def _body_name(index):
    return "ground" if int(index[0]) < 0 else str(int(index[0]))


@_concrete
def _contacts_at_start(model, q, v):
    """For each contact family at ``q``, ``v``: which members ``starts_closed``, and their penetrations over
    their geometries' ``radius_scale`` (0 where that is 0); compiled as one call (see ``_constraint_residuals``)."""
    poses, rates = model.split(q), model.split(v)
    starts = []
    for k in contact_families(model):
        contact = model.forces[k]
        penetration, rate = contact.penetration_rate(poses, rates)
        scale = contact.geometry.radius_scale
        starts.append((starts_closed(penetration, rate),
                       jnp.where(scale > 0, penetration / jnp.where(scale > 0, scale, 1.0), 0.0)))
    return tuple(starts)
