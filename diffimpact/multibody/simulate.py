"""Forward dynamics of a multibody ``Model`` with diffrax.

``simulate`` integrates the first-order system q̇ = v, v̇ = formulation's
accelerations with an adaptive Tsit5 solver (or the ``solver`` given; fixed steps when given ``dt``)
and returns the saved states with their diagnostics. It is a pure function of pytrees: it works under ``jit``,
``vmap`` and ``grad`` (gradients by diffrax's recursive checkpointing).

Contact events. When the model has ``Contact`` forces, the integration is split
into segments at the contact onsets and separations, so that no step straddles
the initial instant of a contact ([Poursina 2020] §1) and impact-dependent laws can be
set up at each onset. A ``lax.scan`` over at most ``max_events + 1`` segments
runs one ``diffeqsolve`` per segment, terminated by a ``diffrax.Event`` (a
down-crossing located on the dense output). What each contact's status is,
which functions end a segment and what happens at an event (impacts, laws set
at onsets, removals, contacts at a distance) is ``diffimpact.multibody.events``;
how the steps are bounded and judged (fast spins, each segment's first step,
stiff friction, power laws, forward-mode derivatives) is
``diffimpact.multibody.step_control``; what a run returns is
``diffimpact.multibody.trajectory``.

Only the closed contacts push (``max_closed``). Inside ``simulate`` a
contact exerts its force only while closed, and the closed set changes only
at events, so with ``max_closed`` each segment gathers the closed members
of every larger family (at most ``max_closed``) and its accelerations sum
only their forces: for the 16-ball table, at most 48 of the 120 pairs and
of the 96 ball–cushion contacts (docs/design/event-engine.md, "Only the closed contacts
push"). Given increasing sizes, (4, 16, 48) for the table, a segment sums
the least size that holds its closed members, so that an evaluation costs
what is closed (a ``lax.switch``; docs/design/event-engine.md, "Evaluations that cost
what is closed").

Finished segments are skipped by ``lax.cond``; each segment is given the save
times still ahead of it, at most ``SAVE_WINDOW`` (64), and keeps the values of
those it reaches (a save time at an event gets the state after it); where
more follow, it ends at the last of its window if no event ends it first (a
step then ends there: with fixed steps ``dt``, the grid restarts from it).

Gradients include the sensitivity of the event times (diffrax
differentiates the located root; ``events`` says where they are taken as
constants), so ``jax.grad`` through impacts is exact up to the tolerances.
The contact forces themselves are the continuous laws in every segment: the
events only place the steps and switch the laws. Models without contacts
take the single-solve path.

With ``contact_history=True`` each segment also evaluates, at the save times
it covers, every contact's penetration, gap, normal and friction force with
its own laws and status (``ContactHistory``): what the integrator applied,
which a rebuild from the saved states and the final model would not give
once a law set at an onset has changed.

The friction implicit (``IMEX_SOLVERS``). Given an IMEX solver (diffrax's
``KenCarp3``, ``KenCarp4``, ``KenCarp5``, ``Sil3``), each segment's vector
field is split in two: the explicit term is the motion with every contact
family's friction law removed, the implicit term the friction's part of the
accelerations (the difference of the two: the formulations' accelerations
are linear in the applied forces). The stages then solve for the friction
implicitly (diffrax's chord Newton: the Jacobian of the whole state once a
step), and the forward-mode derivatives are those of the stages' solutions,
stable on the stiff friction at any step: a disc sliding into rolling on a
regularised Coulomb law has its rolling speed's derivative right at
rtol = 1e-3 without ``friction_steps``. With ``friction_steps`` only the
passages' bound is kept. Each evaluation of the implicit term evaluates the
accelerations twice. On the four-ball break it does not pay (docs/design/derivatives.md,
"The break's gradient with an implicit solver (not adopted)").

Resting contact with a law re-resolved at every new impact can chatter
(bounces of decreasing height, as with a rigid ball and a coefficient of
restitution): each bounce costs events, and a run that needs more than
``max_events`` stops with an error.
"""

import warnings

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._validation import check_count, check_positive, check_range, is_concrete, refuse_where, require_float64
from diffimpact.contact.normal import NormalForceLaw
from diffimpact.multibody import _progress, step_control
from diffimpact.multibody.contact import Contact
from diffimpact.multibody.events import (
    REMOVED,
    _apply_events,
    _contact_histories,
    _event_function,
    _event_time_shifts,
    _event_values,
    _EventBisection,
    _removals,
    _select,
    _start,
    _starts_closed,
)
from diffimpact.multibody.formulations import Formulation, project
from diffimpact.multibody.model import Model, State
from diffimpact.multibody.step_control import (
    IMEX_SOLVERS,
    _differentiated,
    _friction_guard,
    _friction_guard_messages,
    _friction_step,
    _FrictionGuard,
    _reverse_friction_message,
    _SegmentController,
    _spin_bounded,
    _SpinController,
    _stages_loop,
    _tangent_check,
    _tangent_errors,
    _TangentErrors,
    _with_friction,
)
from diffimpact.multibody.trajectory import Events, Trajectory

#: Largest constraint residual accepted in an initial state (m or rad, m/s or rad/s).
CONSTRAINT_TOLERANCE = 1e-8
#: The norm of the adaptive steps' error control over the state's scaled errors e_i / (atol + rtol |y_i|):
#: diffrax's root mean square. Over the 16-ball table's 224 coordinates and velocities it averages the errors of
#: two colliding balls with those of the resting ones, where Matlab's ``ode45`` (the paper's runs) takes the
#: largest, ``optimistix.max_norm`` (docs/design/table-settings.md, "A ball's inertia under a drift of |p|")
ERROR_NORM = optx.rms_norm

#: Checkpoints of a segment's solve for a reverse-mode derivative (``diffrax.RecursiveCheckpointAdjoint``, where
#: none are given). Every slot of the scan of segments keeps its own, used or not, and diffrax's default for a solve
#: of ``max_steps`` steps, √(2 max_steps) of them, held 16 GB and took 8.6 s for the derivative of one ball's 0.9-s
#: shot on the table (``max_steps`` 10⁷, 2,001 slots), against 2.4 GB and 0.47 s with 16 (``python
#: validation/reverse_mode.py``; docs/design/derivatives.md, "Reverse-mode derivatives through friction").
SEGMENT_CHECKPOINTS = 16

#: Most save times one segment carries: a segment that reaches the last of its window without an event ends
#: there, and the next carries the following ones. A segment's cost grows with the save times it carries
#: (its solve allocates and fills their rows), and a 4-s break with 2,001 save times has about 2,800 segments.
SAVE_WINDOW = 64


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
    rtol=1e-10,
    atol=1e-10,
    dt=None,
    max_step=None,
    max_steps=100_000,
    constraint_tolerance=CONSTRAINT_TOLERANCE,
    progress=False,
    adjoint=None,
    max_events=16,
    event_tol=1e-15,
    rest_speed=1e-8,
    near_distance=None,
    contact_history=False,
    friction_steps=False,
    contact_steps=False,
    max_closed=None,
    tangent_errors=True,
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
        implicitly and the rest explicitly (see the module docstring); only
        for models with ``Contact``s with friction.
    rtol, atol : tolerances of the PID step-size controller, rtol in (0, 1), atol > 0 (a step is accepted where
        its error estimate is within atol + rtol |y|).
    dt : ``None`` (default) for adaptive steps; a step size (s, > 0) for
        fixed steps of that size (``diffrax.ConstantStepSize``; rtol and atol
        are then unused). Fixed steps take (t_end − t0)/dt steps: raise
        ``max_steps`` to match. Contact events still end a step exactly at
        the located event.
    max_step : largest adaptive step (s, > 0), ``None`` (default) for no
        limit: the "default time step" of [Gismeros Moreno 2022] §4.1, kept while the
        error allows it and reduced where it does not (e.g. at a contact
        onset). Not with ``dt``.
    max_steps : cap on solver steps.
    constraint_tolerance : largest accepted initial constraint residual, > 0.
    progress : show a tqdm progress bar of the simulated time, one for the whole run, never going back
        (``_progress``); derivatives and ``jax.vmap`` pass through it.
    adjoint : how diffrax differentiates the solves: ``None`` (default) for
        ``diffrax.RecursiveCheckpointAdjoint()``, reverse mode (``jax.grad``,
        ``jax.jacrev``; in runs with ``Contact``s each segment's solve keeps
        ``SEGMENT_CHECKPOINTS`` checkpoints where none are given);
        ``diffrax.ForwardMode()`` for forward mode (``jax.jvp``,
        ``jax.jacfwd``), cheaper for a few parameters, whose derivatives'
        errors the steps also bound (``tangent_errors``). In reverse mode a
        derivative through contacts with friction needs ``friction_steps``
        on every family with friction, or it raises an error (the steps the
        state's error sets give it wrong through a friction law's band, by
        factors up to thousands, in ways no check of the steps sees:
        ``step_control``), and one through the onsets of power laws
        ``contact_steps``.
    max_events : most events in the run: contact onsets and separations, and
        the turning points of open contacts' gaps (where the bodies stop
        receding or approaching); more raise an error at run time. Only for
        models with ``Contact``s.
    event_tol : rtol and atol of the bisection on the event times (s), in (0, 1): the events are located
        to within atol + rtol |t|.
    rest_speed : v_r (m/s, > 0): the turning points of an open gap are where
        its rate ġ passes −v_r (starting to approach) and +v_r (starting to
        recede), so that bodies at rest relative to each other do not end
        segments on round-off.
    near_distance : d_n (m, > 0), or ``None`` (default) to watch the turning
        points of every open contact's gap. With d_n, only contacts whose gap
        is below d_n end segments at their turning points, and each step is
        bounded so that no farther contact can close its gap within it (see
        ``events``): for scenes of many bodies. Adaptive steps only.
    friction_steps : also bound every step by the stability of the
        friction laws at the closed contacts (see ``step_control``): for
        derivatives (``jax.jvp``, ``jax.grad``) through phases where a slip
        sits in a friction law's regularisation band, which are wrong without
        it (reverse mode refuses them; forward mode on the state's steps
        raises an error where a step was far beyond that stability:
        ``FRICTION_GUARD``), and by the passage of a loaded slip through that
        band. It costs
        steps where the friction is stiff and where a slip reverses. The
        stability bound is scaled to the solver's stability interval; with
        an A-stable implicit solver or an IMEX one (friction implicit) only
        the passages' bound. A lower-order explicit solver (``Bosh3``) can
        cost less than Tsit5 here, where the bounds, not the error control,
        set the steps (docs/design/step-control.md, "Friction steps for any solver").
        True: every ``Contact`` family with friction; or a sequence of the
        indices in ``model.forces`` of the families with friction to bound
        (in forward mode the others' steps are then still watched by
        ``FRICTION_GUARD``; reverse mode refuses a derivative through them).
        In forward mode with ``tangent_errors`` (the default) it is not
        needed: the passages' bound is then on for every family with friction
        by itself, and the tangents' errors do the stability bound's work.
        Adaptive steps only; only for models with ``Contact``s.
    contact_steps : also bound every step by the depth and rate of the
        closed contacts (see ``step_control``): for derivatives through
        the onsets and separations of power laws k δⁿ, n > 1 (Hertz), which
        otherwise converge only as about rtol^0.6. It costs 50–70 steps
        per contact. True: every ``Contact`` family; or a sequence of the
        indices in ``model.forces`` of the families to bound (e.g. a table's
        soft cushions, whose contacts the error control alone resolves
        loosely: docs/design/table-settings.md, "The energy check"). Adaptive steps only; only for models with
        ``Contact``s.
    max_closed : most contacts of one family closed at the same time, or
        ``None`` (default) for no limit. With it, each segment's
        accelerations evaluate, of every larger family, only its closed
        members (the others exert no force until an event closes them), at
        most ``max_closed``: for scenes of many bodies, where few of the
        pairs touch at once (16 balls on a table: at most 6 neighbours in
        the plane each, 48 pairs of 120). More raise an error at run time.
        Increasing sizes (a tuple, the last the most closed at once) make
        an evaluation cost what is closed: the accelerations sum the least
        of them that holds every such family's closed members of the
        segment (a ``lax.switch`` over the sizes, each compiled; under
        ``vmap`` a select that evaluates every size). Only for models with
        ``Contact``s.
    tangent_errors : in forward mode (``adjoint=diffrax.ForwardMode()``), True (default): the step-size control
        also bounds the local errors of the derivatives that the run carries, with the same rtol, atol (in the
        state's units per unit of the parameter: differentiate by parameters of order one, or scale the
        directions so) and norm; of several directions (``jax.jacfwd``) the worst sets the steps, which all
        share (see ``step_control``). It takes the derivatives through Hertz onsets and a friction law's
        stiff band to the tolerance without ``contact_steps`` or ``friction_steps``, at the steps they need
        (the friction guard is then off); a slip's passage through a band inside one step, which no error
        estimate sees, is bounded as ``friction_steps`` bounds it, on every family with friction. False: the
        steps are the state's alone, as in reverse mode. A run that is not differentiated takes the same steps
        either way. Adaptive steps only.
    contact_history : also save each contact family's penetration, gap and
        forces at the save times (``Trajectory.contact_history``, evaluated
        inside each segment with the laws that acted there). Off by default:
        it adds about a quarter to the compile time of a contact model and
        costs run time at every save time (measured side by side on the table's break).
        Only for models with ``Contact``s.

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
    if adjoint is None:
        adjoint = dfx.RecursiveCheckpointAdjoint()
    elif not isinstance(adjoint, dfx.AbstractAdjoint):
        raise TypeError(f"adjoint must be a diffrax adjoint, e.g. diffrax.ForwardMode(); got {adjoint!r}")
    save_times = _check_save_times(save_times, state0.t)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"max_steps must be an int >= 1; got {max_steps!r}")
    max_closed = _check_sizes(max_closed)
    if dt is None:
        rtol = check_range("rtol", rtol, 0.0, 1.0, low_open=True, high_open=True,
                           hint=" (relative tolerance of each step's error; at 1 or more the steps are not controlled)")
        atol = check_positive("atol", atol)
        dtmax = None if max_step is None else jnp.asarray(check_positive("max_step", max_step), dtype=float)
        controller, dt0 = dfx.PIDController(rtol=rtol, atol=atol, dtmax=dtmax, norm=ERROR_NORM), None
        controller = _tangent_errors(controller, adjoint, tangent_errors)
    elif max_step is not None:
        raise ValueError("max_step limits adaptive steps; it cannot be combined with a fixed step dt")
    else:
        controller, dt0 = dfx.ConstantStepSize(), check_positive("dt", dt)
    if isinstance(solver, IMEX_SOLVERS):
        if not _with_friction(_contact_indices(model), model):
            raise ValueError(f"an IMEX solver ({type(solver).__name__}) integrates the contacts' friction "
                             "implicitly; this model has no Contact with friction: use an explicit or implicit solver")
    if not any(isinstance(force, Contact) for force in model.forces):
        if dt is None and _spin_bounded(model):
            controller = _SpinController(controller)
        return _simulate(model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress,
                         adjoint, _tunables())
    max_events = check_count("max_events", max_events)
    _check_contacts_at_start(model, state0)
    if near_distance is not None:
        if dt is not None:
            raise ValueError("near_distance bounds adaptive steps; it cannot be combined with a fixed step dt")
        near_distance = jnp.asarray(check_positive("near_distance", near_distance), dtype=float)
    friction_steps = _bounded_families(model, "friction_steps", friction_steps, frictional=True)
    contact_steps = _bounded_families(model, "contact_steps", contact_steps)
    for name, flag in (("friction_steps", friction_steps), ("contact_steps", contact_steps)):
        if flag and dt is not None:
            raise ValueError(f"{name} bounds adaptive steps; it cannot be combined with a fixed step dt")
    # what the laws set at onset do not take from the impact, once for the run, and outside the compiled run
    # where the model is concrete (its compilation is then shared by every run)
    families = _contact_indices(model)
    model = eqx.tree_at(lambda m: [m.forces[k] for k in families], model,
                        [model.forces[k].prepared() for k in families])
    if isinstance(adjoint, dfx.RecursiveCheckpointAdjoint) and adjoint.checkpoints is None:
        adjoint = dfx.RecursiveCheckpointAdjoint(checkpoints=SEGMENT_CHECKPOINTS)
    return _simulate_events(
        model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint, max_events,
        check_range("event_tol", event_tol, 0.0, 1.0, low_open=True, high_open=True),
        jnp.asarray(check_positive("rest_speed", rest_speed), dtype=float),
        near_distance, bool(contact_history), friction_steps, contact_steps, max_closed, _tunables(),
    )


def _tunables():
    """The values of the module constants that the compiled runs read where they are traced (``SAVE_WINDOW``
    and ``step_control``'s bounds and guards), passed to them as a static argument: a process that changes one
    gets a run traced with the new value, where the jit's cache would otherwise serve the program traced with
    the old one."""
    return (SAVE_WINDOW, step_control.FRICTION_STEP, step_control.FRICTION_GUARD, step_control.TANGENT_GUARD,
            step_control.PASSAGE_STEP, step_control.CONTACT_STEP, step_control.SPIN_STEP)


def _check_sizes(max_closed):
    """``max_closed`` as a tuple of increasing ints ≥ 1 (``None`` as it is)."""
    if max_closed is None:
        return None
    sizes = tuple(max_closed) if isinstance(max_closed, (tuple, list)) else (max_closed,)
    sizes = tuple(check_count("max_closed", size, 1) for size in sizes)
    if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"max_closed must be an int >= 1 or increasing ints >= 1; got {max_closed!r}")
    return sizes


@eqx.filter_jit
def _acceleration(formulation, model, q, v, t):
    """``formulation.acceleration(model, q, v, t)``, traced once per model structure and shapes.

    diffrax traces a solve's vector field several times (five for Tsit5 with
    an event), and each trace of the 16-ball table's accelerations takes
    about 0.4 s; this jit's cache serves the later traces, and XLA inlines
    the call (docs/design/event-engine.md, "Tracing the accelerations once").
    """
    return formulation.acceleration(model, q, v, t)


@eqx.filter_jit
def _simulate(model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint,
              tunables):
    del tunables  # (the cache's key: ``_tunables``)
    def vector_field(t, y, args):
        q, v = y
        return v, _acceleration(formulation, model, q, v, t)

    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        formulation.wrap_solver(model, solver),
        t0=state0.t,
        t1=save_times[-1],
        dt0=dt0,
        y0=(state0.q, state0.v),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=adjoint,
        progress_meter=_meter(progress, state0.t, save_times[-1], state0.t, save_times[-1]),
    )
    if progress:
        _progress.finish(solution.ys)
    return _trajectory(model, save_times, *solution.ys, solution.stats["num_accepted_steps"], jnp.asarray(1))


def _meter(progress, start, end, t0, t1):
    """The progress meter of a solve over [t0, t1] in a run over [start, end] (``_progress``), or none."""
    return _progress.RunProgress(start, end, t0, t1) if progress else dfx.NoProgressMeter()


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


def _trajectory(model, save_times, q, v, steps, segments, events=None, contact_history=None, removed=None):
    """The ``Trajectory`` of the saved states, with their diagnostics.

    ``removed``: (family index, removal times) pairs, the time each contact of
    that family was removed (``Geometry.removal``; inf if it was not): from
    then on its elastic energy is not counted (a fallen ball under the
    surface is not stored in the plane); ``None`` for a model without contacts.
    """
    def diagnostics(q, v, t):
        gone = sum(jnp.sum(jnp.where(t >= times, model.forces[k].elastic_energies(model.split(q)), 0.0))
                   for k, times in removed or ())
        return (
            jnp.linalg.norm(model.constraint(q, t)),
            jnp.linalg.norm(model.constraint_velocity(q, v, t)),
            model.energy(q, v) - gone,
            model.linear_momentum(q, v),
            model.angular_momentum(q, v),
        )

    removals = None if removed is None else tuple(dict(removed).get(k) for k in range(len(model.forces)))
    return Trajectory(save_times, q, v, *jax.vmap(diagnostics)(q, v, save_times), steps, segments, events,
                      contact_history, removals)


def _contact_indices(model):
    return [k for k, force in enumerate(model.forces) if isinstance(force, Contact)]


def _bounded_families(model, name, value, frictional=False):
    """``simulate``'s ``contact_steps`` or ``friction_steps`` (``name``: ``value``) as the tuple of the indices in
    ``model.forces`` of the families it bounds: every ``Contact`` (with friction, where ``frictional``) for True, none
    for False, or those of a sequence of indices (checked)."""
    kind = "Contact family with friction" if frictional else "Contact family"
    eligible = _with_friction(_contact_indices(model), model) if frictional else _contact_indices(model)
    if isinstance(value, bool):
        return tuple(eligible) if value else ()
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in value):
        raise TypeError(f"{name} must be True, False or a sequence of indices in model.forces, each of a {kind}; "
                        f"got {value!r}")
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
    families = _contact_indices(model)
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
    """For each contact family at ``q``, ``v``: which members ``_starts_closed``, and their penetrations over
    their geometries' ``radius_scale`` (0 where that is 0); compiled as one call (see ``_constraint_residuals``)."""
    poses, rates = model.split(q), model.split(v)
    starts = []
    for k in _contact_indices(model):
        contact = model.forces[k]
        penetration, rate = contact.penetration_rate(poses, rates)
        scale = contact.geometry.radius_scale
        starts.append((_starts_closed(penetration, rate),
                       jnp.where(scale > 0, penetration / jnp.where(scale > 0, scale, 1.0), 0.0)))
    return tuple(starts)


def _depending_on(tree, anchor):
    """``tree``'s values, made to depend on every inexact leaf of ``anchor`` (selected against, never used).

    Differentiating or batching a ``lax.scan``, JAX finds which parts of its carry have nonzero tangents (or
    a batch axis) by a fixpoint: it linearises, JVPs or batches the whole body once per round and adds what
    came out nonzero (batched), until nothing is added. ``_simulate_events``' carry starts with zero tangents
    in its state, gains them one segment later and in the laws set at onsets one more, so the whole segment
    (solver, events, impacts) was linearised three times. Tied to the inputs from the start, once: the
    four-ball break's ``jacfwd`` traces in 31–32 s instead of 51–56 s, a ball's reverse-mode rebound in 22–24 s
    instead of 29–31 s (docs/design/derivatives.md, "Derivatives traced once"). Where nothing of ``anchor`` is
    differentiated or batched, nothing changes; no value changes anywhere.
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
    """s v̇ (shifts s, (contacts,), of value zero: ``_event_time_shifts``): zeros (contacts, n), derivative ds v̇.

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
    return zeros, d_shift[:, None] * _acceleration(formulation, model, q, v, t)


def _velocity_shift(shift, forward_mode, *, formulation, model, q, v, t):
    """s v̇ of ``_lazy_velocity_shift``, but under ``diffrax.ForwardMode`` the plain product s v̇ (zero, derivative ds v̇).

    The lazy custom JVP's tangent keeps a ``vmap``'s batch axis under ``jacfwd`` of a ``vmap`` (the compliant
    cushion fit's Jacobian failed with a slice error), and the plain product makes every iteration of the scan
    of segments slower, skipped ones too (docs/design/performance.md, "Compiling without the fusion emitters"):
    forward mode, which differentiates anyway, takes the product; runs with the
    default adjoint keep the lazy one.
    """
    if forward_mode:
        return shift[:, None] * _acceleration(formulation, model, q, v, t)
    return _lazy_velocity_shift(shift, formulation=formulation, model=model, q=q, v=v, t=t)


def _frictionless(model):
    """``model`` with the friction laws of its contact families removed."""
    frictional = _with_friction(_contact_indices(model), model)
    return eqx.tree_at(lambda m: [m.forces[k].friction for k in frictional], model, [None] * len(frictional))


def _imex_terms(vector_field):
    """The terms of an IMEX solver from a segment's ``vector_field``: explicit, the motion without friction (the
    segment's model, ``args[-2]``, without its friction laws); implicit, the friction's part of the accelerations,
    their difference (the formulations' accelerations are linear in the applied forces)."""

    def explicit(t, y, args):
        return vector_field(t, y, args[:-2] + (_frictionless(args[-2]), args[-1]))

    def implicit(t, y, args):
        (q, full), (_, without) = vector_field(t, y, args), explicit(t, y, args)
        return jnp.zeros_like(q), full - without

    return dfx.MultiTerm(dfx.ODETerm(explicit), dfx.ODETerm(implicit))


def _gathered(model, families, sizes):
    """The families whose closed members ``_closed_members`` gathers (static): the non-impulsive, located ones
    with more members than the largest of ``sizes`` (``simulate``'s ``max_closed``, ``None`` for none)."""
    if sizes is None:
        return ()
    return tuple(k for k in families if not model.forces[k].impulsive and model.forces[k].located
                 and model.forces[k].count > sizes[-1])


def _closed_members(model, families, sizes):
    """The model whose contact families hold only their closed members, which of ``sizes`` holds them, and
    whether a family had more than allowed.

    Inside ``simulate`` only a closed contact exerts a force (``engaged``), and
    the closed set changes only at events, so a segment's accelerations need
    no other members. Each family of ``_gathered`` keeps ``sizes[-1]`` of
    them (``simulate``'s ``max_closed``): its closed ones, in the family's
    order, then copies of member 0 with ``engaged`` 0 (no force). The second
    result is the index of the least of ``sizes`` that holds every such
    family's closed members (``_accelerations`` sums only that many); the
    third is True where a family had more closed members than ``sizes[-1]``.
    ``sizes`` ``None``: the model as it is.
    """
    most, too_many = jnp.asarray(0), jnp.asarray(False)
    for k in _gathered(model, families, sizes):
        contact = model.forces[k]
        closed = contact.engaged > 0.5
        count = jnp.sum(closed)
        index = jnp.nonzero(closed, size=sizes[-1], fill_value=0)[0]
        kept = jax.tree.map(lambda x: x[index], contact)
        kept = eqx.tree_at(lambda c: c.engaged, kept, jnp.where(jnp.arange(sizes[-1]) < count, kept.engaged, 0.0))
        model = eqx.tree_at(lambda m: m.forces[k], model, kept)
        most, too_many = jnp.maximum(most, count), too_many | (count > sizes[-1])
    return model, jnp.sum(most > jnp.asarray((sizes or (0,))[:-1], dtype=int)), too_many


def _accelerations(formulation, model, size, gathered, sizes, q, v, t):
    """The formulation's accelerations of ``_closed_members``' model, its ``gathered`` families cut to ``sizes[size]``.

    A ``lax.switch`` over the sizes, so that an evaluation costs what its
    segment's closed members cost (docs/design/event-engine.md, "Evaluations that cost
    what is closed").
    """
    if not gathered or len(sizes) < 2:
        return _acceleration(formulation, model, q, v, t)

    def cut(count):
        def accelerations(q, v):
            first = eqx.tree_at(lambda m: [m.forces[k] for k in gathered], model,
                                [jax.tree.map(lambda x: x[:count], model.forces[k]) for k in gathered])
            return _acceleration(formulation, first, q, v, t)
        return accelerations

    return jax.lax.switch(size, [cut(count) for count in sizes], q, v)


@eqx.filter_jit
def _simulate_events(
    model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint, max_events,
    event_tol, rest_speed, near_distance, contact_history, friction_steps, contact_steps, max_closed, tunables,
):
    del tunables  # (the cache's key: ``_tunables``)
    families = _contact_indices(model)
    counts = [model.forces[k].count for k in families]
    slots = np.cumsum([0] + counts)
    frictional = tuple(_with_friction(families, model))
    reverse = isinstance(adjoint, dfx.RecursiveCheckpointAdjoint)
    unbounded = tuple(k for k in frictional if k not in friction_steps) if reverse else ()
    if unbounded:
        # a reverse-mode derivative is taken on the state's steps, which through a friction law's band (a slide
        # into rolling, a slip reversing in a collision) give it wrong, by factors up to thousands that no check of
        # the steps sees (docs/design/derivatives.md, "Reverse-mode derivatives through friction"): refused where it
        # is taken
        differentiated = _differentiated((eqx.filter(model, eqx.is_inexact_array), state0, save_times)) > 0
        state0 = eqx.error_if(state0, differentiated, _reverse_friction_message(unbounded))
    q0, v0 = model.split(state0.q), model.split(state0.v)
    model, status0 = _start(model, families, q0, v0)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    # constant save times (closed over by a caller's ``jit``) made XLA compile a 1.4× slower program
    save_times = jax.lax.optimization_barrier(save_times)
    t_end = save_times[-1]
    # Each segment saves the next SAVE_WINDOW times ahead of it, in order, padded with t_end (not reached by a
    # segment that an event ends), and runs to the window's last time where more follow: those segments (at
    # most ``window_ends``, each window but the first starting at the last one's end) are added to the scan.
    n_saves = len(save_times)
    window = min(n_saves, SAVE_WINDOW)
    window_ends = 0 if window == n_saves else -(-(n_saves - 1) // (window - 1))
    padded_times = jnp.concatenate([save_times, jnp.full(window, t_end)])
    imex = isinstance(solver, IMEX_SOLVERS)
    tangents = isinstance(controller, _TangentErrors)
    # a slip's passage through a band inside one step, which no error estimate sees, bounds the steps of every
    # family with friction where the derivatives' errors set them (``passages``: those friction_steps does not
    # name); the stability bound is friction_steps' only
    # (only in a derivative: a run that is not differentiated takes the steps it takes without them)
    passages = tuple(k for k in frictional if k not in friction_steps) if tangents else ()
    if isinstance(controller, (dfx.PIDController, _TangentErrors)):
        controller = _SegmentController(controller, tuple(families), near_distance is not None, friction_steps,
                                        passages, contact_steps,
                                        _friction_step(solver) if friction_steps else None, _spin_bounded(model))
    adaptive = isinstance(controller, _SegmentController)
    # (reverse mode's steps bound every family with friction, or its derivative is refused above)
    guard = (_friction_guard(solver, friction_steps, frictional) if frictional and not tangents and not reverse
             else None)
    forward = isinstance(adjoint, dfx.ForwardMode)
    flags = guard is not None  # (the guard's flags, read at each segment's end)
    if guard is not None:
        solver = _stages_loop(solver, adjoint)

    def wrapped_solver(model):
        wrapped = formulation.wrap_solver(model, solver)
        return wrapped if guard is None else _FrictionGuard(wrapped, frictional, guard,
                                                            **_tangent_check(controller, forward))

    # one event function, the least of all: its first down-crossing is the earliest of any
    # contact's, which bisection then locates
    event = dfx.Event(
        lambda t, y, args, **kwargs: _event_function(families, t, y, args),
        root_finder=_EventBisection(rtol=event_tol, atol=event_tol, flip=True),
        direction=False,
    )

    # A segment's args: (model, status, residual, released, rest_speed, near_distance, the controller's step
    # hint, the model with its closed contacts only and the size that holds them: ``_closed_members``), the
    # last two for the accelerations.
    gathered = _gathered(model, families, max_closed)

    def vector_field(t, y, args):
        q, v = y
        return v, _accelerations(formulation, *args[-2:], gathered, max_closed, q, v, t)

    terms = _imex_terms(vector_field) if imex else dfx.ODETerm(vector_field)

    if contact_history:
        def to_save(t, y, args):
            return y, _contact_histories(families, t, y, args)
    else:
        def to_save(t, y, args):
            return y

    def segment(carry, _):
        params, status, residual, released, t0, q, v, ys, hint, done = carry
        model = eqx.combine(params, static)
        # the save buffer stays out of the ``lax.cond``: its window is read and written back here, so that XLA
        # updates it in place (passed through a branch, inside a caller's ``jit`` it was copied at every slot)
        passed = jnp.sum(save_times < t0)
        old_rows = jax.tree.map(lambda x: jax.lax.dynamic_slice_in_dim(x, passed, window), ys)

        def run(_):
            ahead = jax.lax.dynamic_slice_in_dim(padded_times, passed, window)
            closed_only, size, too_many = _closed_members(model, families, max_closed)
            segment_args = (model, status, residual, released, rest_speed, near_distance, hint, closed_only, size)
            horizon = jnp.where(passed + window < n_saves, ahead[-1], t_end)
            solution = dfx.diffeqsolve(
                terms,
                wrapped_solver(model),
                t0=t0,
                t1=horizon,
                dt0=dt0,
                y0=(eqx.error_if(q, too_many, f"more than max_closed = {max_closed and max_closed[-1]} contacts "
                                 "of one family closed at once; increase max_closed"), v),
                args=segment_args,
                saveat=dfx.SaveAt(
                    subs=(dfx.SubSaveAt(ts=ahead, fn=to_save), dfx.SubSaveAt(t1=True)),
                    controller_state=adaptive,
                    solver_state=flags,
                ),
                stepsize_controller=controller,
                event=event,
                max_steps=max_steps,
                adjoint=adjoint,
                progress_meter=_meter(progress, state0.t, t_end, t0, horizon),
            )
            t1 = solution.ts[1][0]
            if flags:  # a forward-mode derivative's accepted steps flagged by ``_FrictionGuard`` (the family, or -1)
                family = solution.solver_state[1]
                t1 = eqx.branched_error_if(t1, family >= 0, jnp.maximum(family, 0),
                                           _friction_guard_messages(model, frictional))
            q1, v1 = (y[0] for y in solution.ys[1])
            happened = solution.event_mask
            saved = (ahead < t1) | ~happened
            new_rows = _select(saved, solution.ys[0], old_rows)
            # every function below zero just past the crossing is due: the earliest one, and any
            # other that crossed at the same instant (simultaneous impacts of a symmetric system)
            values, landing = _event_values(families, t1, (q1, v1), segment_args)
            due = happened & (values <= 0)
            shift = _event_time_shifts(families, model, status, values, landing, due, t1, q1, v1, segment_args)
            # the state at the event (recorded in ``Events``) and each onset's m and ⁻δ̇ move with its time
            velocity_shift = _velocity_shift(shift, forward, **_without_derivatives(
                {"formulation": formulation, "model": model, "q": q1, "v": v1, "t": t1}))
            first_due = jnp.argmin(jnp.where(due, values, jnp.inf).min(axis=1))  # whose crossing ended the segment
            def handle(model, status, residual, released, v, due, leaving, removed, shift, velocity_shift):
                # the events ``due`` (the rows' first two functions) at t1, family by family (``_apply_events``);
                # returns the new model, statuses, residuals, release times, velocities, event times and onsets
                statuses, residuals, releases, times, onsets = [], [], [], [], []
                for f, k in enumerate(families):
                    part = slice(slots[f], slots[f + 1])
                    rows = due[part]
                    hit = rows[:, 0] | rows[:, 1]
                    shift_f, velocity_shift_f = (None, None) if shift is None else (shift[part], velocity_shift[part])
                    model, status_f, residual_f, released_f, v, event_f, onset_f = _apply_events(
                        model, k, status[f], residual[f], released[f], hit, rows[:, 1] & ~rows[:, 0], leaving[f],
                        removed[f], q1, v, t1, rest_speed, shift_f, velocity_shift_f,
                    )
                    statuses.append(status_f)
                    residuals.append(residual_f)
                    releases.append(released_f)
                    times.append(jnp.where(hit & event_f, t1 if shift is None else t1 + shift_f, jnp.inf))
                    onsets.append(hit & onset_f)
                return model, statuses, residuals, releases, v, times, onsets

            leaving, removed = _removals(model, families, [due[slots[f] : slots[f + 1], 2]
                                                           for f in range(len(families))], status)
            new_model, new_status, new_residual, new_released, v1, times, onsets = handle(
                model, status, residual, released, v1, due, leaving, removed, shift, velocity_shift)
            if any(model.forces[k].impulsive for k in families):
                # An impulse changes the velocities, and with them the rates in the other contacts' functions
                # (a turning point's ġ ± v_r, a separation that depends on δ̇): any that the jump took to zero or
                # below is due now, and handled as the segment's own events (else it would start the next
                # segment below zero, where no crossing is seen, and hide every later event).
                after = (new_model, tuple(new_status), tuple(new_residual), tuple(new_released), rest_speed,
                         near_distance)
                jumped = _event_values(families, t1, (q1, v1), after)[0][:, :2] <= 0
                none = [jnp.zeros(count, bool) for count in counts]
                new_model, new_status, new_residual, new_released, v1, more_times, more_onsets = handle(
                    new_model, new_status, new_residual, new_released, v1, jumped, none, none, None, None)
                times = [jnp.minimum(a, b) for a, b in zip(times, more_times)]
                onsets = [a | b for a, b in zip(onsets, more_onsets)]
            new_params = eqx.filter(new_model, eqx.is_inexact_array)
            record = (jnp.concatenate(times), jnp.concatenate(onsets), q1 + shift[first_due] * v1,
                      v1 + velocity_shift[first_due])
            steps = jnp.asarray(solution.stats["num_accepted_steps"], dtype=int)
            carry = (
                new_params, tuple(new_status), tuple(new_residual), tuple(new_released), t1, q1, v1,
                solution.controller_state[1] if adaptive else hint, ~happened & (t1 >= t_end),
            )
            return carry, new_rows, (record, steps, jnp.asarray(True))

        def skip(_):
            record = (jnp.full(slots[-1], jnp.inf), jnp.zeros(slots[-1], bool), q, v)
            nothing = (record, jnp.asarray(0, dtype=int), jnp.asarray(False))
            return (params, status, residual, released, t0, q, v, hint, done), old_rows, nothing

        (params, status, residual, released, t0, q, v, hint, done), new_rows, out = jax.lax.cond(done, skip, run, None)
        ys = jax.tree.map(lambda x, rows: jax.lax.dynamic_update_slice_in_dim(x, rows, passed, 0), ys, new_rows)
        return (params, status, residual, released, t0, q, v, ys, hint, done), out

    zeros = tuple(jnp.zeros(count) for count in counts)
    shapes = jax.eval_shape(
        to_save, state0.t, (state0.q, state0.v),
        (model, status0, zeros, zeros, rest_speed, near_distance, 0.0, model, 0),
    )
    # rows past the last save time take the padding's rows
    nan = jax.tree.map(lambda x: jnp.full((n_saves + window,) + x.shape, jnp.nan), shapes)
    # what the segments change starts tied to the inputs (``_depending_on``): the contact families (their laws
    # set at onsets, ``engaged``), the residual surfaces, the time, the state, the saved rows and the step hint
    changing = _depending_on(
        ([params.forces[k] for k in families], zeros, zeros, state0.t, state0.q, state0.v, nan, jnp.zeros(())),
        (params, state0, save_times),
    )
    contacts, residual0, released0, t_start, q_start, v_start, nan, hint0 = changing
    params = eqx.tree_at(lambda p: [p.forces[k] for k in families], params, contacts)
    carry = (params, status0, residual0, released0, t_start, q_start, v_start, nan, hint0, jnp.array(False))
    carry, (records, steps, ran) = jax.lax.scan(segment, carry, None, length=max_events + 1 + window_ends)
    count = jnp.sum(jnp.isfinite(records[0]))
    # the check rides on everything returned, so that it is kept when only the events are used
    saved, (times, onsets, q_events, v_events), steps = eqx.error_if(
        (carry[7], records, steps), ~carry[-1] | (count > max_events),
        f"more than max_events = {max_events} events (contact onsets and separations, and turning "
        "points of open contacts' gaps); increase max_events",
    )
    # contact events in time order (simultaneous ones in the order of the contacts): the segments' events in
    # the segments' order (each segment's events are at its end, in the order of the contacts; a sort of all
    # the slots took 1.4 s for a 4-s break); the turning points only ended segments
    order = jnp.nonzero(jnp.isfinite(times.reshape(-1)), size=max_events, fill_value=0)[0]
    used = jnp.arange(max_events) < count
    segment_of, slot_of = order // slots[-1], order % slots[-1]
    family_of = np.repeat(families, counts)
    member_of = np.concatenate([np.arange(count) for count in counts])
    events = Events(
        count,
        jnp.where(used, times.reshape(-1)[order], jnp.inf),
        jnp.asarray(family_of)[slot_of],
        jnp.asarray(member_of)[slot_of],
        used & onsets.reshape(-1)[order],
        q_events[segment_of],
        v_events[segment_of],
    )
    saved = jax.tree.map(lambda x: x[:n_saves], saved)
    if progress:
        _progress.finish(saved)
    histories = None
    if contact_history:
        saved, by_family = saved
        by_force = dict(zip(families, by_family))
        histories = tuple(by_force.get(k) for k in range(len(model.forces)))
    removed = [(k, jnp.where(status >= REMOVED, released, jnp.inf)) for k, status, released in
               zip(families, carry[1], carry[3])]
    return _trajectory(eqx.combine(carry[0], static), save_times, *saved, jnp.sum(steps), jnp.sum(ran), events,
                       histories, removed)
