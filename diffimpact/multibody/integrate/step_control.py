"""How ``simulate`` bounds and judges its adaptive steps (``AdaptiveSteps``): where the error control of the state
alone would give a wrong motion or wrong derivatives. The reasons and the measurements behind each bound are in
docs/design/step-control.md; each bound's number is a field of ``AdaptiveSteps`` or ``ForwardMode``.

* Fast spins (``spin_step``): a step turns no spatial body by more than 1 rad (``SpinController`` in runs
  without contacts; with contacts, ``SegmentController``).
* Each segment after the first starts at the step size the controller proposed at the end of the one
  before (``SegmentController``), not at diffrax's initial step selection.
* Stiff friction (``friction_steps``): every step is also bounded by h λ_F ≤ ``friction_step`` (scaled to
  the solver's stability interval, ``stability_interval``), λ_F the largest of the bodies' sums of
  ``Contact.slip_rates``, and a step that moves a loaded slip by more than ``passage_step`` max(d, band)
  is rejected and retried shorter (the slips' passages through a friction band). Given indices in
  ``model.forces``, only those families bound the steps.
* The friction guard (``ForwardMode``'s ``friction_guard`` and ``tangent_guard``, ``FrictionGuard``): a
  differentiated forward-mode run whose steps the state's error alone sets stops at an accepted step with
  h λ_F beyond ``friction_guard`` stability intervals, or with its tangents' error estimate beyond
  ``tangent_guard``. A reverse-mode derivative through friction that ``friction_steps`` does not bound is
  refused (``segments``).
* Power laws (``contact_steps``): every step is also bounded by h |δ̇| ≤ ``contact_step`` max(δ, atol) over
  the closed contacts, so that the steps shrink geometrically towards each onset and separation.
* The tangents' errors (``ForwardMode``'s ``tangent_errors``, ``TangentErrors``): in forward mode a step is
  accepted where the state's and its tangents' scaled error estimates are both below 1, the next step
  following from the larger; of the several directions of ``jax.jacfwd`` the largest error sets the step
  (``_worst_of_directions``). There the passages' bound of ``friction_steps`` is on for every family with
  friction, and its stability bound is left to the tangents' errors.
"""

import functools

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody.bodies import SPATIAL_SIZE, SpatialBody
from diffimpact.multibody.contact import body_mobilities
from diffimpact.multibody.formulations import WrappedSolver
from diffimpact.multibody.integrate.events import CLOSED, REMOVED
from diffimpact.multibody.integrate.options import ForwardMode

#: diffrax's IMEX solvers: given one, ``simulate`` integrates the contacts' friction implicitly, the rest explicitly.
IMEX_SOLVERS = (dfx.KenCarp3, dfx.KenCarp4, dfx.KenCarp5, dfx.Sil3)


def tangent_errors(controller, derivatives):
    """The PID ``controller`` as ``TangentErrors`` where forward-mode derivatives get their errors bounded
    (``ForwardMode``'s ``tangent_errors``)."""
    return TangentErrors(controller) if isinstance(derivatives, ForwardMode) and derivatives.tangent_errors \
        else controller


def stability_interval(solver):
    """How far the stability interval of ``solver`` reaches along the negative real axis: the largest x with
    |R| ≤ 1 on [−x, 0], R(z) = 1 + z bᵀ (I − z A)⁻¹ 1 the stability function of its Butcher tableau (A, b); ``inf``
    where |R| ≤ 1 on the whole axis (A-stable methods); ``None`` for a solver without a Butcher tableau.

    Found on a grid (steps of 2e-4 up to 20, then geometric up to 1e6): the last point before the first where
    |R| > 1. Euler's (R = 1 + z, no tableau in diffrax) is 2. A class's tableau is the class's: computed once a
    class.
    """
    return _classstability_interval(type(solver))


@functools.cache
def _classstability_interval(kind):
    if issubclass(kind, dfx.Euler):
        return 2.0
    tableau = getattr(kind, "tableau", None)
    if not isinstance(tableau, dfx.ButcherTableau):
        return None
    stages = len(tableau.b_sol)
    diagonal = np.zeros(stages) if tableau.a_diagonal is None else np.asarray(tableau.a_diagonal)
    x = np.concatenate([np.arange(1, 100_001) * 2e-4, np.geomspace(20.0, 1e6, 2000)[1:]])
    # (I − zA) g = 1 at z = −x, A lower triangular (explicit or diagonally implicit): forward substitution
    g = []
    for row in range(stages):
        below = sum(coefficient * g[j] for j, coefficient in enumerate(tableau.a_lower[row - 1])) if row else 0.0
        g.append((1.0 - x * below) / (1.0 + x * diagonal[row]))
    unstable = np.abs(1.0 - x * sum(b * g_i for b, g_i in zip(np.asarray(tableau.b_sol), g))) > 1.0 + 1e-12
    if not unstable.any():
        return np.inf
    first = np.argmax(unstable)
    return float(x[first - 1]) if first else 0.0


def friction_step(solver, step):
    """h λ_F of ``friction_steps`` for ``solver``: ``step`` (``AdaptiveSteps``' ``friction_step``, Tsit5's) scaled by
    its stability interval over Tsit5's (``step`` itself for a solver without a Butcher tableau); ``None`` (no
    stability bound) where the interval is the whole axis (an A-stable implicit solver) or the friction is implicit
    (``IMEX_SOLVERS``)."""
    if isinstance(solver, IMEX_SOLVERS):
        return None
    interval = stability_interval(solver)
    if interval is None:
        return step
    return None if np.isinf(interval) else step * (interval / stability_interval(dfx.Tsit5()))


def friction_guard(solver, factor, bound):
    """h λ_F at which ``FrictionGuard`` stops a derivative: ``factor`` (``ForwardMode``'s ``friction_guard``)
    stability intervals of ``solver``; ``None`` (no guard) where the solver is stable on the friction (A-stable, or
    the friction implicit: an IMEX solver), where its interval is unknown (no Butcher tableau), where ``factor`` is
    infinite, or where ``bound`` (``friction_steps``' h λ_F where it bounds every family with friction, else
    ``None``) already keeps every step within it."""
    interval = None if isinstance(solver, IMEX_SOLVERS) else stability_interval(solver)
    if interval is None or np.isinf(interval) or np.isinf(factor):
        return None
    limit = factor * interval
    return None if bound is not None and bound <= limit else limit


class FrictionGuard(WrappedSolver):
    """Wrap a diffrax solver so that a forward-mode derivative with a step unstable on the friction raises an error.

    Without ``friction_steps`` an explicit solver's steps may be longer than
    the friction's stability allows while the error control is content: the
    run stays right, but its derivatives are amplified by the solver's
    |R(−h λ_F)| at every such step and come out silently wrong (the
    four-ball break's 3-s derivative 10⁸⁷ m at rtol 1e-3). Each step's end
    state passes through an identity whose derivative rule (a
    ``jax.custom_jvp``) checks h λ_F at the step's start, λ_F as
    ``friction_steps`` computes it (``_friction_rate``), against ``limit``,
    and flags the step in the solver's state (the first unstable step's
    family); diffrax keeps the flag only for accepted steps (a rejected
    trial step may be as long as it likes), and the segment raises at its
    end where a step was flagged. A run that is not differentiated computes
    nothing more. (Reverse mode, whose steps cannot be judged so, refuses a
    derivative through friction that ``friction_steps`` does not bound:
    ``segments``.)

    The error names the family with the largest share of h λ_F at the body
    where it was beyond ``limit`` (``friction_guard_messages``), so that a
    user can name it in ``friction_steps``.

    A few steps a little beyond the interval amplify a derivative by a
    bounded factor and leave it right (the ball rolling and hopping on the
    cloth at rtol 1e-6 has steps beyond one interval and its derivative
    2.3e-6 off), so ``limit`` is ``friction_guard`` intervals: on the scenes
    measured it stops every derivative that blew up and passes every right
    one (docs/design/step-control.md, "The friction guard"). It cannot see a slip that
    passes through a law's band inside one step (``friction_steps``' other
    bound).
    """

    families: tuple = eqx.field(static=True)
    limit: float = eqx.field(static=True)
    tolerances: tuple = None  # forward mode's check of the tangents' error (``tangent_check``): (rtol, atol)
    check: tuple = eqx.field(static=True, default=None)  # and (limit, norm); None for none

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args), jnp.full((), -1)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        state, flagged = solver_state
        y1, y_error, dense_info, state, result = self.solver.step(terms, t0, t1, y0, args, state, made_jump)
        families, limit = self.families, self.limit

        def unstable(model, y0, h):
            # which of ``families`` has the largest share of h λ_F at the body where it is beyond ``limit``, or -1
            q, v = (model.split(x) for x in y0)
            rates = _slip_rates(model, families, q, v)
            total = sum(rates)
            worst = jnp.argmax(total)
            return jnp.where(h * total[worst] > limit, jnp.argmax(jnp.stack(rates)[:, worst]), -1)

        arrays, static = eqx.partition((args.model, y0, t1 - t0), eqx.is_array)
        extra = eqx.combine(jax.lax.stop_gradient(arrays), static)  # (the check is no function of the parameters)
        y1, flag = _tangent_flagged(y1, unstable, *extra)
        if self.check is not None:
            tangent_limit, norm = self.check
            inaccurate = _tangents_error(y_error, y0, y1, *self.tolerances, norm) > tangent_limit
            flag = jnp.where(flag >= 0, flag, jnp.where(inaccurate, len(families), -1))
        # the first unstable step's family; the tangents' check (len(families)) until a family is flagged
        flagged = jnp.where((flagged < 0) | ((flagged == len(families)) & (flag >= 0)), flag, flagged)
        return y1, y_error, dense_info, (state, flagged), result


def tangent_check(controller, derivatives):
    """``FrictionGuard``'s ``tolerances`` and ``check`` (keywords): forward mode's check of the tangents' error at
    ``ForwardMode``'s ``tangent_guard`` under an adaptive ``controller``; none (``{}``) in reverse mode, with fixed
    steps, or where ``tangent_guard`` is infinite."""
    if (not isinstance(derivatives, ForwardMode) or not isinstance(controller, WrappedController)
            or np.isinf(derivatives.tangent_guard)):
        return {}
    return {"tolerances": (controller.rtol, controller.atol), "check": (derivatives.tangent_guard, controller.norm)}


def _tangents_error(y_error, y0, y1, rtol, atol, norm):
    """0; in a forward-mode derivative, a step's estimate of its tangents' error relative to the tangents: rtol
    times their scaled error (``_scaled_error``), ``norm``(ė / (atol/rtol + max(|ẏ0|, |ẏ1|))) for a homogeneous
    norm, ė the tangent of its error estimate ``y_error`` and ẏ0, ẏ1 those of ``y0``, ``y1`` (the largest of
    ``jax.jacfwd``'s directions'; infinite where not finite). A primal output of the tangents, with no derivative
    of its own, as ``TangentErrors``' scaled error."""

    @jax.custom_jvp
    def relative(y_error, y0, y1, rtol, atol):
        return jnp.zeros(())

    @relative.defjvp
    def relative_jvp(primals, tangents):
        _, _, _, rtol, atol = primals
        error, tangent0, tangent1, _, _ = tangents
        value = rtol * _scaled_error(error, tangent0, tangent1, rtol, atol, norm)[0]
        value = jnp.where(jnp.isfinite(value), value, jnp.inf)
        return _worst_of_directions(jnp.zeros(()), value), jnp.zeros(())

    return relative(y_error, y0, y1, *(jax.lax.stop_gradient(jnp.asarray(x, dtype=float)) for x in (rtol, atol)))


def stages_loop(solver, derivatives):
    """``solver`` with the stages' loop that forward mode differentiates ("lax"), as diffrax sets it for a
    Runge–Kutta solver under ``diffrax.ForwardMode`` (the loop of reverse mode's checkpointed adjoint has no
    forward-mode derivative). diffrax sets it through a wrapper of the solver, but its solvers' metaclass looks one
    wrapper in, and with the friction guard a formulation's wrapper (``DirectCorrection``'s projection) is the
    second."""
    if (not isinstance(derivatives, ForwardMode) or not isinstance(solver, dfx.AbstractRungeKutta)
            or solver.scan_kind is not None):
        return solver
    return eqx.tree_at(lambda s: s.scan_kind, solver, "lax", is_leaf=lambda x: x is None)


def _tangent_flagged(y1, unstable, model, y0, h):
    """(``y1``, -1); differentiated, (``y1``, ``unstable(model, y0, h)``) with ``y1``'s tangent unchanged."""
    arrays, static = eqx.partition(model, eqx.is_array)

    @jax.custom_jvp
    def flagged(y1, arrays, y0, h):
        return y1, jnp.full((), -1)

    @flagged.defjvp
    def flagged_jvp(primals, tangents):
        y1, arrays, y0, h = primals
        flag = unstable(eqx.combine(arrays, static), y0, h)
        return (y1, flag), (tangents[0], np.zeros((), dtype=jax.dtypes.float0))

    return flagged(y1, arrays, y0, h)


def reverse_friction_message(families):
    """The error of a reverse-mode derivative of a run whose steps do not bound the friction of ``families``
    (indices in ``model.forces``; ``segments``)."""
    named = ", ".join(f"model.forces[{k}]" for k in families)
    return (f"a reverse-mode derivative through the friction of {named} needs friction_steps (and adaptive "
            "steps): on the steps the state's error sets, a derivative through a friction law's band (a slide into "
            "rolling, a slip reversing in a collision) comes out wrong, by factors up to thousands; pass "
            "AdaptiveSteps(friction_steps=True) (every family with friction), or differentiate in forward mode "
            "(derivatives=ForwardMode(), whose steps judge the derivatives' own errors)")


def friction_guard_messages(model, families):
    """The friction guard's error for each of ``families`` (indices in ``model.forces``), naming it, and last the
    error of forward mode's check of the tangents' error (``ForwardMode``'s ``tangent_guard``)."""
    return tuple(
        f"a differentiated step was unstable on the friction of model.forces[{k}] "
        f"({type(model.forces[k].friction).__name__} friction; h lambda_F beyond ForwardMode's friction_guard "
        "stability intervals of the solver): the derivatives of this run through stiff friction would be wrong; "
        f"pass AdaptiveSteps(friction_steps=True), or friction_steps naming model.forces[{k}] among others (or "
        "integrate the friction implicitly: an IMEX solver)" for k in families) + (
        "a differentiated step's estimate of the error of its derivatives was beyond ForwardMode's tangent_guard of "
        "them (the steps set by the state's error alone, tangent_errors=False, through friction): the derivatives "
        "of this run would be wrong; pass ForwardMode(tangent_errors=True) (the default) or "
        "AdaptiveSteps(friction_steps=True)",)


def step_bound(families, t, y, args, near, friction, contact, floor, spin):
    """Largest step (s): the least of the bounds of the near distance (``near``), the friction (``friction``:
    (h λ_F, the indices of the families it bounds) or ``None``), the closed contacts' depths (``contact``:
    (``contact_step``, the indices of the families it bounds) or ``None``) and the spatial bodies' spins
    (``spin``: ``spin_step`` or ``None``), at the state ``y`` of a segment with ``SegmentArgs`` ``args``.

    With a near distance d_n: min over the approaching open contacts of
    max(−δ, d_n)/(2 δ̇), with the bodies' own approach δ̇ > 0 and distance −δ
    (at most the gap), not the gap's rate: a zone recovering after a
    zero-force separation moves the gap fast while the bodies do not move.
    With ``friction``, the solver's h λ_F (``friction_step``): that over the
    largest of the bodies' ``Contact.slip_rates`` summed over the families named. With ``contact_steps``:
    min over their closed contacts of ``contact_step`` max(δ, ``floor``)/|δ̇|. With ``spin``: ``spin_bound``.
    """
    model, status, near_distance = args.model, args.status, args.near_distance
    q, v = (model.split(x) for x in y)

    def least(where, length, speed):
        # min of length/speed over the members ``where`` holds (inf if none)
        return jnp.min(jnp.where(where, length / jnp.where(where, speed, 1.0), jnp.inf))

    bounds = []
    for k, status_k in zip(families, status if near or contact is not None else ()):
        penetration, rate = model.forces[k].penetration_rate(q, v)
        # (a family that is not located has no open and closed statuses: its penetration says)
        closed = status_k == CLOSED if model.forces[k].located else (status_k < REMOVED) & (penetration > 0)
        if near:
            approaching = (status_k < REMOVED) & ~closed & (rate > 0)
            bounds.append(least(approaching, jnp.maximum(-penetration, near_distance), 2.0 * rate))
        if contact is not None and k in contact[1]:
            moving = closed & (rate != 0)
            bounds.append(least(moving, contact[0] * jnp.maximum(penetration, floor), jnp.abs(rate)))
    if friction is not None:
        step, bounded = friction
        bounds.append(step / _friction_rate(model, bounded, q, v))
    if spin is not None:
        bounds.append(spin_bound(q, v, spin))
    return jnp.min(jnp.stack(bounds))


def spin_bounded(model, spin_step):
    """Whether ``spin_step`` (``AdaptiveSteps``') bounds the adaptive steps of ``model``: its bodies are spatial and
    the bound finite."""
    return isinstance(model.bodies[0], SpatialBody) and bool(np.isfinite(spin_step))


def spin_bound(q, v, spin_step):
    """``spin_step`` over the largest angular speed of the spatial bodies' rows ``q``, ``v`` (bodies, 7), taken as
    2 |ṗ|/|p| (≥ |ω| = 2 |ṗ − p (pᵀṗ)/pᵀp|/|p|)."""
    speeds = 2.0 * jnp.linalg.norm(v[:, 3:], axis=1) / jnp.linalg.norm(q[:, 3:], axis=1)
    return spin_step / jnp.max(speeds)


def _friction_rate(model, families, q, v):
    """λ_F: the largest of the bodies' sums of ``Contact.slip_rates`` over the contact ``families`` (indices in
    ``model.forces``), at the split coordinates and velocities ``q``, ``v``."""
    return jnp.max(sum(_slip_rates(model, families, q, v)))


def _slip_rates(model, families, q, v):
    """Each of the contact ``families``' ``Contact.slip_rates``, per body, at ``q``, ``v``: a list of (bodies,)."""
    mobilities = body_mobilities(model.bodies)
    return [model.forces[k].slip_rates(mobilities, q, v) for k in families]


def with_friction(families, model):
    """The families that exert friction (``Contact.frictional``)."""
    return [k for k in families if model.forces[k].frictional]


def _loaded_slips(families, y, model):
    """(f_N, v_t) of each of the ``families`` with friction (``Contact.slips``; indices in ``model.forces``, those
    ``friction_steps`` bounds) at the state ``y``, for ``_slip_passage``."""
    q, v = (model.split(x) for x in y)
    return tuple(model.forces[k].slips(q, v) for k in families)


def _slip_passage(families, slips0, slips1, model, passage_step):
    """Largest ratio, over the loaded contacts of the ``families`` with friction, of a step's slip change
    |v_t1 − v_t0| to ``passage_step`` max(d, band): d the least distance of the straight path v_t0 → v_t1 from
    zero, band the friction law's ``band``. Above 1 the step passed through (or towards) the law's band too fast.
    ``slips0`` and ``slips1``: ``_loaded_slips`` at the step's start and end."""
    ratios = [jnp.zeros(())]
    for k, (f0, s0), (f1, s1) in zip(families, slips0, slips1, strict=True):
        change = s1 - s0
        along = jnp.clip(-jnp.sum(s0 * change, axis=-1) / jnp.maximum(jnp.sum(change**2, axis=-1), 1e-300), 0, 1)
        distance = jnp.linalg.norm(s0 + along[:, None] * change, axis=-1)
        band = model.forces[k].friction.band
        ratio = jnp.linalg.norm(change, axis=-1) / (passage_step * jnp.maximum(distance, band))
        ratios.append(jnp.max(jnp.where((f0 > 0) | (f1 > 0), ratio, 0.0)))
    return jnp.max(jnp.stack(ratios))


class WrappedController(dfx.AbstractAdaptiveStepSizeController):
    """A PID ``controller`` whose steps a subclass bounds; its tolerances and norm are the PID's."""

    controller: dfx.PIDController

    @property
    def rtol(self):
        return self.controller.rtol

    @property
    def atol(self):
        return self.controller.atol

    @property
    def norm(self):
        return self.controller.norm


class TangentErrors(WrappedController):
    """A PID ``controller`` whose error control, in a forward-mode derivative, also bounds the tangents' errors.

    Differentiated in forward mode, an explicit Runge–Kutta step carries the
    tangents (the state's derivatives with respect to the parameters, one set
    a direction of ``jax.jvp`` or column of ``jax.jacfwd``) through the same
    stages as the state: its tangents are the step of the variational
    equations, and the tangent of its local error estimate is that step's
    error estimate. The PID controller alone judges the state's error, so a
    step that is accurate for the state but not for its derivatives is
    accepted: at a Hertz onset (the force's slope ∝ δ^½), in a friction
    law's band (the tangents' stiff modes) or through its corners. Here the
    controller judges max(‖e / (atol + rtol |y|)‖, ‖ė / (atol + rtol |ẏ|)‖),
    e the state's error estimate and ė its tangent, ẏ the tangents at the
    step's two ends, with the same rtol, atol and norm (``_with_tangent_error``;
    atol in the state's units per unit of the parameter, as CVODES's
    sensitivities with unit parameter scales): parameters of order one, or
    directions scaled to them, give it the meaning it has for the state.
    A run that is not differentiated computes nothing more and takes the
    same steps. Of several directions (``jax.jacfwd``), the step is judged
    by the worst, so that all share one run of the state.
    """

    def wrap(self, direction):
        return TangentErrors(self.controller.wrap(direction))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        return self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        y_error = _with_tangent_error(y_error, y0, y1_candidate, self.rtol, self.atol, self.norm)
        return self.controller.adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order,
                                               controller_state)


def _with_tangent_error(y_error, y0, y1, rtol, atol, norm):
    """``y_error``; differentiated (forward mode), scaled up where the tangents' error estimate is the larger:
    the PID's scaled error of the result is the larger of the state's and the tangents' (``TangentErrors``)."""

    @jax.custom_jvp
    def scaled(y_error, y0, y1, rtol, atol):
        return y_error

    @scaled.defjvp
    def scaled_jvp(primals, tangents):
        y_error, y0, y1, rtol, atol = primals  # (the tolerances as arguments: they may be traced)
        tangent_error, tangent0, tangent1, _, _ = tangents

        state, scale = _scaled_error(y_error, y0, y1, rtol, atol, norm)
        tangent, _ = _scaled_error(tangent_error, tangent0, tangent1, rtol, atol, norm)
        # a NaN or infinite tangent error rejects the step (as diffrax's NaN state error does), where the tangents
        # at its start are finite: at a start already non-finite it would only shrink the steps to nothing
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tangent0)]))
        tangent = jnp.where(finite, jnp.where(jnp.isnan(tangent), jnp.inf, tangent), 0.0)
        worst = _worst_of_directions(jax.lax.stop_gradient(state), jax.lax.stop_gradient(tangent))
        # where the tangents' error is the larger, the error ``scale`` · worst, whose scaled norm is worst (the rms
        # and the max norm of a constant are that constant); infinite, it is infinite, and the step shrinks
        return jax.tree.map(lambda e, s: jnp.where(worst > state, s * worst, e), y_error, scale), tangent_error

    return scaled(y_error, y0, y1, *(jax.lax.stop_gradient(jnp.asarray(x, dtype=float)) for x in (rtol, atol)))


def _scaled_error(error, start, end, rtol, atol, norm):
    """The PID's scaled error ``norm``(error / scale) of ``error`` at a step from ``start`` to ``end`` (a NaN end as
    the start), scale = atol + rtol max(|start|, |end|), and the scale."""
    end = jax.tree.map(lambda a, b: jnp.where(jnp.isnan(b).any(), a, b), start, end)
    scale = jax.tree.map(lambda a, b: atol + rtol * jnp.maximum(jnp.abs(a), jnp.abs(b)), start, end)
    return norm(jax.tree.map(lambda x, s: x / s, error, scale)), scale


@jax.custom_jvp
def differentiated(x):
    """0.0, or 1.0 in a forward-mode derivative with respect to anything ``x`` depends on (the JVP rule's primal
    output), with no derivative of its own: for what only a derivative's steps do (``SegmentController``'s
    ``passages``)."""
    return jnp.zeros(())


@differentiated.defjvp
def differentiated_jvp(primals, tangents):
    return jnp.ones(()), jnp.zeros(())


@jax.custom_batching.custom_vmap
def _worst_of_directions(state, tangent):
    """max(``state``, ``tangent``); under ``vmap`` over the tangents only (``jax.jacfwd``: one state, one tangent
    error a direction), the largest of the directions', so that the state stays one run (unbatched)."""
    return jnp.maximum(state, tangent)


@_worst_of_directions.def_vmap
def _worst_of_directions_vmap(axis_size, in_batched, state, tangent):
    # A batch of the tangents only is one of directions: its largest. A batch of the states too (a user's vmap) is
    # one of runs: each its own, through this function again, so that a vmap over directions applied after it
    # (``jax.jacfwd`` of a ``jax.vmap``: the vmap batches first) still finds its directions.
    state_batched, tangent_batched = in_batched
    if tangent_batched and not state_batched:
        return _worst_of_directions(state, jnp.max(tangent, axis=0)), False
    state, tangent = (x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))
                      for x, batched in ((state, state_batched), (tangent, tangent_batched)))
    return _worst_of_directions(state, tangent), True


class SpinController(WrappedController):
    """The PID controller of a run without contacts whose bodies are spatial: no step turns one by more than
    ``spin_step`` (``spin_bound`` at the end of each accepted step limits the next; in runs with contacts
    ``SegmentController`` bounds the steps)."""

    spin_step: float = eqx.field(static=True)

    def wrap(self, direction):
        return SpinController(self.controller.wrap(direction), self.spin_step)

    def _bound(self, y):
        q, v = (x.reshape(-1, SPATIAL_SIZE) for x in y)
        # the solver's choice, not the parameters' (as diffrax's)
        return jax.lax.stop_gradient(spin_bound(q, v, self.spin_step))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        t_next, state = self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return jnp.minimum(t_next, t0 + self._bound(y0)), state

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        keep, next_t0, next_t1, jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state)
        next_t1 = jnp.where(keep, jnp.minimum(next_t1, next_t0 + self._bound(y1_candidate)), next_t1)
        return keep, next_t0, next_t1, jump, state, result


class SegmentController(WrappedController):
    """The PID controller of the segments: it starts each segment at the step the last one proposed.

    A segment starts where an event ended the last one. Its first step is
    the step size the controller proposed at the end of the last segment
    (``SegmentArgs.hint``, 0 at the first segment, which takes diffrax's initial step
    selection); the proposal is kept in the controller's state and read back
    at the segment's end (``SaveAt(controller_state=True)``). With spatial
    bodies (``spin``: ``spin_step``), a ``near_distance`` (``near``), ``friction_steps`` (``friction``: the
    indices of the families it bounds) or ``contact_steps`` (``contact``, with ``contact_step``), every step is
    also bounded by ``step_bound``: the bound at the end of each
    accepted step limits the next one; a rejected step is retried shorter
    than it was, so within the bound of the last accepted state. On the
    families of ``friction``, and in a forward-mode derivative (``differentiated``) on those of ``passages``
    too (under ``TangentErrors``: the other families with friction), a step the error control accepts is also
    rejected where a loaded slip moved too far in it (``_slip_passage``, with ``passage_step``), and retried
    in proportion; the ratio of an accepted step bounds the next one. The
    slips of the accepted state are kept in the controller's state, where
    the next step starts. ``friction_step``: the solver's h λ_F
    (``friction_step``); ``None`` without ``friction_steps`` and where the
    solver is stable on the friction (A-stable, or the friction implicit: an
    IMEX solver), where ``friction_steps`` keeps only the passages' bound.
    The numbers are ``AdaptiveSteps``' fields.
    """

    families: tuple = eqx.field(static=True)
    near: bool = eqx.field(static=True)
    friction: tuple = eqx.field(static=True)
    passages: tuple = eqx.field(static=True)
    contact: tuple = eqx.field(static=True)
    friction_step: float | None = eqx.field(static=True)
    spin: float | None = eqx.field(static=True)
    passage_step: float = eqx.field(static=True)
    contact_step: float = eqx.field(static=True)

    @property
    def stability(self):
        """Whether ``friction_steps`` bounds the steps by the friction's stability (not where it is implicit)."""
        return self.friction_step is not None

    @property
    def bounded(self):
        return self.near or self.stability or bool(self.contact) or self.spin is not None

    @property
    def tracked(self):
        """The families whose loaded slips the controller keeps: those of ``friction`` and ``passages``."""
        return tuple(sorted(self.friction + self.passages))

    def _bound(self, t, y, args):
        # a step size is the solver's choice, not a function of the parameters: no derivative (as diffrax's
        # controllers), else the tangents would carry the grid's shifts, which cancel only at the end
        return jax.lax.stop_gradient(
            step_bound(self.families, t, y, args, self.near,
                       (self.friction_step, self.friction) if self.stability else None,
                       (self.contact_step, self.contact) if self.contact else None, self.controller.atol, self.spin))

    def wrap(self, direction):
        return SegmentController(self.controller.wrap(direction), self.families, self.near, self.friction,
                                 self.passages, self.contact, self.friction_step, self.spin, self.passage_step,
                                 self.contact_step)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        hint = jax.lax.stop_gradient(args.hint)
        t_next, state = jax.lax.cond(
            hint > 0,
            lambda: self.controller.init(terms, t0, t1, y0, hint, args, func, error_order),
            lambda: self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order),
        )
        if self.bounded:
            t_next = jnp.minimum(t_next, t0 + self._bound(t0, y0, args))
        slips = jax.lax.stop_gradient(_loaded_slips(self.tracked, y0, args.model)) if self.tracked else ()
        return t_next, (state, t_next - t0, slips)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        state, proposal, slips = controller_state
        keep, next_t0, next_t1, jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, state
        )
        if self.bounded:
            # only an accepted state bounds the next step: a rejected candidate can be far off (10²² m)
            bound = self._bound(t1, y1_candidate, args)
            next_t1 = jnp.where(keep, jnp.minimum(next_t1, next_t0 + bound), next_t1)
        if self.tracked:
            candidate = jax.lax.stop_gradient(_loaded_slips(self.tracked, y1_candidate, args.model))

            def passage(families):
                chosen = [k in families for k in self.tracked]
                return jax.lax.stop_gradient(_slip_passage(
                    families, *([s for s, c in zip(x, chosen) if c] for x in (slips, candidate)), args.model,
                    self.passage_step))

            ratio = passage(self.friction)
            if self.passages:
                ratio = jnp.maximum(ratio, jnp.where(differentiated(y_error) > 0, passage(self.passages), 0.0))
            # (a candidate the error control rejected can be far off: only an accepted one is judged)
            fast = keep & (ratio > 1.0)
            step = 0.9 * (t1 - t0) / jnp.maximum(ratio, 1e-300)
            next_t0 = jnp.where(fast, t0, next_t0)
            next_t1 = jnp.where(fast, t0 + step, jnp.where(keep, jnp.minimum(next_t1, next_t0 + step), next_t1))
            keep = keep & ~fast
        proposal = jnp.where(keep, next_t1 - next_t0, proposal)
        if self.tracked:
            # the accepted end is the next step's start (diffrax keeps y1_candidate as it is)
            slips = jax.tree.map(lambda new, old: jnp.where(keep, new, old), candidate, slips)
        return keep, next_t0, next_t1, jump, (state, proposal, slips), result
