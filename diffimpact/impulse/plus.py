"""The PLUS impact model for simultaneous frictional impacts (Uchida, Sherman & Delp 2015).

T. K. Uchida, M. A. Sherman, S. L. Delp, "Making a meaningful impact:
modelling simultaneous frictional collisions in spatial multibody systems",
*Proc. R. Soc. A* 471: 20140859 (2015). Equation, table and algorithm numbers
below are the paper's. Its contact frame is (x, y, z) with z the normal; here,
as everywhere in ``diffimpact.impulse``, each contact is **normal first**
(n, t, o), π_z ↔ λ_n, π_xy ↔ λ_to, A = W = J M⁻¹ Jᵀ and v = u.

The model
---------
Time and configuration are frozen; the impact is followed in the accumulated
impulse (Darboux–Keller). It is a sequence of **rounds** (Algorithm 2), each a
sequence of **intervals** (Algorithm 1):

* At the start of a round every proximal point is *expanding* (it compressed
  in the previous round, received a normal impulse there and has a non-zero
  restitution: it must now take π_z^(exp) = e π_z^(comp), Poisson's
  hypothesis (2.4)), *observing* (otherwise, and not approaching: v_n ≥ 0,
  it takes no impulse) or *compressing* (otherwise: its normal velocity is to
  be driven to zero, (2.3)). Each compressing point's restitution e_k is taken
  from its approach speed −v_n at the start of the round by the law of
  Fig. 2 (``restitution_law``): 0 below v_capture, e_min above v_plastic,
  1 − (1 − e_min)(−v_n)/v_plastic in between (the line from (0, 1) to
  (v_plastic, e_min) that Simbody's ``calcEffectiveCOR`` uses; the figure
  itself is not in the transcription).
* At the start of an interval every non-observing point is *sliding* if its
  slip speed is at least v_transition, otherwise *rolling* (§3b).
* Algorithm 1 (active set): with all compressing normals and all rolling
  constraints active, solve Table 1's equations B π = w for the minimum-norm
  least-squares π (pseudoinverse; the load spreading of §3a):
  compressing and active: W_n π = −v_n (2.3); expanding: π_n = π_n^(exp);
  observing or inactive: π_n = 0; rolling: W_to π = −v_to (2.7); sliding:
  π_to = −μ π_n ŝ with ŝ the slip direction at the start of the interval
  (2.8)–(2.9); impending slip: π_to = −μ π_n v̂_to^(end), v^(end) = v + W π,
  which is implicit and solved by Gauss–Newton (the paper: Newton's method
  with an analytical Jacobian; here the Jacobian comes from ``jax.jacfwd``).
  The impending row is (2.8) itself, π_to + μ π_n v^(end)_to/‖v^(end)_to‖ = 0
  (with the norm regularised by 10⁻¹² of the velocity scale): multiplied by
  ‖v^(end)_to‖, as Simbody's implementation writes it, it has the spurious
  roots v^(end)_to = 0 of a rolling point outside its cone, into which
  Newton's method fell in tests. Steps are backtracked until the residual
  falls. Then find the largest violation: a rolling
  point outside its cone (‖π_to‖ > μ π_n, (2.6)) or a compressing normal that
  pulls (π_n < 0, (2.5)). A rolling offender becomes impending slip; any
  other offender loses its normal constraint. Repeat until nothing is
  violated (at most 3m times for m points).
* Step length: each sliding point limits the fraction α of π applied
  (§2e): α = 1 if its slip at the end is below v_transition; else
  α_CP (2.13), the closest approach of the slip to the origin along the
  interval, if that approach is below v_transition; else, if the slip turns
  by more than θ_max, α_DC of (2.14), bounded to [α_min, 1]. α is the least
  over the points. Then π_total += α π, v += α W π, the pending expansion
  impulses shrink to (1 − α) of themselves, and e_k α π_n of every
  compressing point is booked for the next round's expansion.
* A round ends with an interval of α = 1; the impact ends when no point
  approaches (v_n ≥ −tolerance) and no expansion is pending.

These rules go beyond the paper, for systems it does not discuss (found on
random, strongly coupled W with μ up to 1.5):

* Impending slip can have no consistent direction: the friction that opposes
  the final slip turns that slip around (the coupling of the points through
  W reverses it). Such a point counts as a violation in Algorithm 1 and, not
  being rolling, loses its normal constraint (the paper's rule for a sliding
  or impending offender); an expanding point, whose normal impulse is
  prescribed, loses its friction for the interval instead (friction state
  ``RELEASED``). Without these rules the friction pushed along the slip and
  the kinetic energy grew.
* A round whose intervals apply no impulse while points still approach can
  only repeat itself: no repulsive normal impulse stops those points
  because their sliding friction drives them further in (Painlevé's case,
  where ``newton`` and ``poisson`` refuse a "jam"). The impact then stops
  with what it has applied and ``converged`` False. So does an interval
  whose least-squares π misses its own velocity equations by more than 10⁻⁶
  of the velocity scale: near such a jam the equations become nearly
  contradictory, the pseudoinverse returns an enormous impulse that meets
  none of them, and applying it created energy.
* Frictionless points (μ = 0) do not limit α: their slip direction carries
  no impulse.

α_DC (2.14) is solved here in closed form instead of through its quadratic:
with a = v_to^(start), d = W_to π = d_∥ â + d_⊥ ê (ê ⟂ a in the tangent
plane), the slip a + α d makes the angle atan2(α d_⊥, ‖a‖ + α d_∥) with a,
which grows monotonically with α (a straight line seen from the origin), so
tan θ_max = α d_⊥ / (‖a‖ + α d_∥) gives α_DC = ‖a‖ tan θ_max / (d_⊥ − d_∥ tan θ_max):
the positive root of (2.14) (checked numerically in the tests). The
closest-point fraction (2.13) is −a·d/‖d‖² as printed.

Parameters and their defaults are those of Table A1 (v_capture 0.01 m/s,
v_plastic 0.1 m/s, v_transition 0.1 m/s, θ_max 0.01 rad). α_min is not given
in the paper; the default here is 10⁻⁶: a larger bound lets a slip turn far
past θ_max in one interval, and with 10⁻³ a random near-jam interval whose
slip turned round within it created energy.

Energy
------
The paper lists the conservation of energy among PLUS's principles, but
Poisson's hypothesis with friction does not bound the energy in general:
prescribed expansion impulses of coupled points in impending slip can raise
the normal velocities more than compression lowered them. Redundant points
(W singular) can gain energy even without friction: three frictionless
points at e = 1 on five freedoms gain 1.56, and so can independent points
close to redundant ones (the gain depends continuously on W): three
frictionless points at e = 1, W of full rank with condition number 1.5e4,
gain 0.065. Tests keep both, and a counterexample with friction at μ = 0.7;
the random property test checks impulses repulsive, in the cone and
separating, not the energy.

Differentiability
-----------------
The rounds, intervals, active sets and Newton iterations are ``while_loop``s
of data-dependent length, so the model supports **forward-mode**
differentiation (``jax.jvp``, ``jax.jacfwd``) but not reverse mode
(``jax.grad`` raises). Away from the switches (a change of the number of
intervals, of which limit sets α, of an active set or of a point's state)
the post-impact velocity is a smooth function of W, u⁻, e_min and μ, and
the forward derivatives are exact there (tests compare them with central
differences). Across switches the result is continuous in most cases (an
interval ending at α_DC = 1 versus the next one starting) but not
everywhere: the restitution law jumps at v_capture, and a slip crossing
v_transition changes a point from sliding to rolling.

The proximity tolerance (Fig. 6) decides which points enter the problem;
``proximal`` selects them from their gaps before the problem is assembled.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._math import safe_norm
from diffimpact._validation import check_count, check_range, refuse_where
from diffimpact.impulse._problem import per_contact
from diffimpact.impulse.base import Impact, ImpulseModel

#: Normal states of a point in an interval (``PlusImpact.normal_state``).
OBSERVING, COMPRESSING, INACTIVE, EXPANDING = 0, 1, 2, 3
#: Tangential states of a point in an interval (``PlusImpact.friction_state``); NONE for observing points.
NONE, ROLLING, SLIDING, IMPENDING, RELEASED = 0, 1, 2, 3, 4
NORMAL_STATES = ("observing", "compressing", "compressing, normal inactive", "expanding")
FRICTION_STATES = ("none", "rolling", "sliding", "impending slip", "impending slip without a direction: no friction")

#: Relative tolerance of the active-set checks, of "approaching" and of the Newton iterations.
TOLERANCE = 1e-9
#: Relative singular-value cutoff of the minimum-norm least-squares solves (redundant constraints).
RANK_CUTOFF = 1e-10
NEWTON_ITERATIONS = 40
FRACTIONS = 0.5 ** np.arange(8)


class PlusImpact(Impact):
    """``Impact`` with the PLUS record.

    ``intervals``, ``rounds``: how many were taken; ``converged``: False if
    ``max_intervals`` or ``max_rounds`` cut the impact short or it jammed
    (module docstring). Per interval
    i < ``intervals`` (rows beyond are padding: zeros, states −1):
    ``interval_round`` (1-based), ``interval_step`` α, ``normal_state`` and
    ``friction_state`` (m,) of each point (``NORMAL_STATES``,
    ``FRICTION_STATES``), ``accumulated`` π_total and ``velocities`` u after
    the interval (3m,).
    """

    intervals: jax.Array
    rounds: jax.Array
    converged: jax.Array
    interval_round: jax.Array
    interval_step: jax.Array
    normal_state: jax.Array
    friction_state: jax.Array
    accumulated: jax.Array
    velocities: jax.Array


def restitution_law(approach_speed, min_restitution, capture_velocity=0.01, plastic_velocity=0.1):
    """The velocity-dependent coefficient of restitution of Fig. 2.

    0 for approach speeds at or below ``capture_velocity`` (no rebound, as a
    compliant model captures slow impacts), ``min_restitution`` at or above
    ``plastic_velocity``, and on the line from 1 at rest to
    ``min_restitution`` at ``plastic_velocity`` in between.
    """
    speed = jnp.asarray(approach_speed, float)
    slope = (1.0 - min_restitution) / jnp.where(plastic_velocity > 0, plastic_velocity, 1.0)
    return jnp.where(speed <= capture_velocity, 0.0,
                     jnp.where(speed >= plastic_velocity, min_restitution, 1.0 - slope * speed))


def proximal(gaps, tolerance):
    """Indices of the proximal points: gap ≤ ``tolerance`` (Fig. 6; concrete gaps, one per candidate point).

    Every point this close may be touching within the known uncertainty of
    the positions, so all of them take part in the impact together (this
    keeps symmetric impacts symmetric, Example 2).
    """
    gaps = np.asarray(gaps, float)
    tolerance = float(check_range("tolerance", tolerance, 0.0))
    return np.flatnonzero(gaps <= tolerance)


def _unit(v):
    norm = safe_norm(v)[..., None]
    return jnp.where(norm > 0, v / jnp.where(norm > 0, norm, 1.0), 0.0)


def step_lengths(start, change, transition_velocity, max_direction_change, min_step):
    """α of every sliding point (§2e): (2.13), the direction limit (2.14), or 1. ``start``, ``change`` (m, 2); the
    limits scalars or one per point (m,)."""
    end = start + change
    start_speed, end_speed = safe_norm(start), safe_norm(end)
    squared = jnp.sum(change * change, -1)
    closest = -jnp.sum(start * change, -1) / jnp.where(squared > 0, squared, 1.0)  # (2.13)
    interior = (squared > 0) & (closest > 0) & (closest < 1)
    stops = interior & (safe_norm(start + jnp.where(interior, closest, 0.0)[:, None] * change) < transition_velocity)
    unit = _unit(start)
    along = jnp.sum(change * unit, -1)
    across = safe_norm(change - along[:, None] * unit)
    tangent = jnp.tan(max_direction_change)
    cosine = jnp.sum(start * end, -1) / jnp.where(start_speed * end_speed > 0, start_speed * end_speed, 1.0)
    turns = cosine < jnp.cos(max_direction_change)
    denominator = across - along * tangent
    turn = start_speed * tangent / jnp.where(turns & (denominator > 0), denominator, 1.0)  # (2.14), module docstring
    turn = jnp.clip(jnp.where(turns & (denominator > 0), turn, 1.0), min_step, 1.0)
    return jnp.where(end_speed < transition_velocity, 1.0, jnp.where(stops, closest, jnp.where(turns, turn, 1.0)))


def _interval(W, v, state, pending, mu, options):
    """Algorithm 1: the impulse π (m, 3) of one interval, its step α and the states of the points."""
    transition_velocity, max_direction_change, min_step = options
    m = v.shape[0]
    participating = state != OBSERVING
    slip = safe_norm(v[:, 1:])
    sliding = participating & (slip >= transition_velocity)
    direction = _unit(v[:, 1:])
    known_normal = jnp.where(state == EXPANDING, pending, 0.0)
    # Row scales: velocity rows as they are, impulse rows (sliding, impending) times a typical W entry,
    # so that the pseudoinverse's rank decision does not depend on the units.
    w_scale = jnp.max(jnp.abs(jnp.diag(W)))
    v_scale = jnp.maximum(jnp.max(jnp.abs(v)), jnp.max(transition_velocity))

    def residual(p, normal_active, rolling, friction, directions=None):
        """Table 1's equations for the free components; impending slip along ``directions`` if given."""
        end = v + (W @ p.reshape(-1)).reshape(m, 3)
        impending = participating & ~sliding & ~rolling
        end_t = end[:, 1:]
        if directions is None:
            slip = jnp.sqrt(jnp.sum(end_t * end_t, -1) + (1e-12 * v_scale) ** 2)[:, None]
            directions = end_t / slip
        r_n = jnp.where(normal_active, end[:, 0], 0.0)
        along = jnp.where(sliding[:, None], direction, directions)
        r_friction = w_scale * (p[:, 1:] + friction[:, None] * p[:, :1] * along)  # (2.8), (2.9)
        r_t = jnp.where(rolling[:, None], end_t, jnp.where((sliding | impending)[:, None], r_friction, 0.0))
        return jnp.concatenate([r_n[:, None], jnp.where(participating[:, None], r_t, 0.0)], 1).reshape(-1)

    def free_and_start(normal_active):
        free = jnp.concatenate([normal_active[:, None], jnp.broadcast_to(participating[:, None], (m, 2))], 1)
        start = jnp.zeros((m, 3)).at[:, 0].set(jnp.where(normal_active, 0.0, known_normal))
        return free.reshape(-1), start

    def least_squares(J, r, free):
        return (jnp.linalg.pinv(J * free[None, :], rtol=RANK_CUTOFF) @ r).reshape(m, 3)

    def linear(normal_active, rolling, friction, directions):
        """The minimum-norm least-squares π of the (affine) equations with impending slip along ``directions``."""
        free, start = free_and_start(normal_active)
        f = lambda q: residual(q.reshape(m, 3), normal_active, rolling, friction, directions)  # noqa: E731
        return start - least_squares(jax.jacfwd(f)(start.reshape(-1)), f(start.reshape(-1)), free)

    def solve(normal_active, rolling, friction, guess):
        impending = participating & ~sliding & ~rolling
        # impending slip starts opposite the last (rolling) friction impulse, as in Simbody
        first = linear(normal_active, rolling, friction, -_unit(guess[:, 1:]))

        def newton_loop(p):
            free, _ = free_and_start(normal_active)
            f = lambda q: residual(q.reshape(m, 3), normal_active, rolling, friction)  # noqa: E731
            scale = jnp.max(jnp.abs(p)) + jnp.max(jnp.abs(v)) / w_scale

            def newton(carry):
                p, _, k = carry
                r = f(p.reshape(-1))
                step = least_squares(jax.jacfwd(f)(p.reshape(-1)), r, free)
                # backtracking: the first of 1, 1/2, 1/4, ... that lowers the residual (else the shortest)
                trials = p[None] - FRACTIONS[:, None, None] * step[None]
                norms = jax.vmap(lambda q: jnp.sum(f(q.reshape(-1)) ** 2))(trials)
                better = norms < jnp.sum(r * r)
                pick = jnp.where(jnp.any(better), jnp.argmax(better), FRACTIONS.size - 1)
                return trials[pick], jnp.asarray(FRACTIONS)[pick] * jnp.max(jnp.abs(step)), k + 1

            def going(carry):
                p, size, k = carry
                return (k < NEWTON_ITERATIONS) & (size > 1e-13 * (jnp.max(jnp.abs(p)) + scale))

            p, _, _ = jax.lax.while_loop(going, newton, (p, jnp.inf, 0))
            # A last affine solve along the slip found keeps every linear row exact and the impending
            # impulses on their cones even where Newton stopped short.
            end_t = v[:, 1:] + (W @ p.reshape(-1)).reshape(m, 3)[:, 1:]
            return linear(normal_active, rolling, friction, _unit(end_t))

        return jax.lax.cond(jnp.any(impending), newton_loop, lambda p: p, first)

    def violations(p, normal_active, rolling, friction):
        cone = safe_norm(p[:, 1:]) - mu * p[:, 0]
        # impending slip that found no direction (the friction would not oppose the slip it leaves):
        # a violation at a point that is not rolling, so its normal is released (beyond the paper)
        impending = participating & ~sliding & ~rolling
        end_t = v[:, 1:] + (W @ p.reshape(-1)).reshape(m, 3)[:, 1:]
        mismatch = safe_norm(p[:, 1:] + friction[:, None] * p[:, :1] * _unit(end_t))
        mismatch = jnp.where(mismatch > 1e-6 * (friction * jnp.abs(p[:, 0]) + 1e-300), mismatch, -jnp.inf)
        return jnp.maximum(jnp.maximum(jnp.where(rolling, cone, -jnp.inf), jnp.where(normal_active, -p[:, 0], -jnp.inf)),
                           jnp.where(impending, mismatch, -jnp.inf))

    def active_set(carry):
        normal_active, rolling, released, guess, _, k = carry
        friction = jnp.where(released, 0.0, mu)
        p = solve(normal_active, rolling, friction, guess)
        excess = violations(p, normal_active, rolling, friction)
        worst = jnp.argmax(excess)
        bad = excess[worst] > TOLERANCE * (jnp.max(jnp.abs(p)) + 1e-300)
        point = bad & (jnp.arange(m) == worst)
        release_rolling = point & rolling
        release_normal = point & ~rolling & normal_active
        release_friction = point & ~rolling & ~normal_active  # an expanding point in impending slip
        # the next guess: the offender's impulse brought into the cone, as a start for impending slip
        cone_scale = jnp.where(release_rolling, mu * jnp.maximum(p[:, 0], 0.0)
                               / jnp.where(safe_norm(p[:, 1:]) > 0, safe_norm(p[:, 1:]), 1.0), 1.0)
        guess = p.at[:, 1:].multiply(cone_scale[:, None]).at[:, 0].set(jnp.maximum(p[:, 0], 0.0))
        return (normal_active & ~release_normal, rolling & ~release_rolling, released | release_friction,
                jnp.where(bad, guess, p), bad, k + 1)

    rolling0 = participating & ~sliding
    normal0 = state == COMPRESSING
    carry = (normal0, rolling0, jnp.zeros(m, bool), jnp.zeros((m, 3)), jnp.array(True), 0)
    normal_active, rolling, released, p, _, _ = jax.lax.while_loop(lambda c: c[4] & (c[5] <= 3 * m), active_set,
                                                                    carry)

    change = (W @ p.reshape(-1)).reshape(m, 3)[:, 1:]
    limits = sliding & (normal_active | (state == EXPANDING)) & (mu > 0)  # frictionless: no direction to keep
    alphas = step_lengths(jnp.where(limits[:, None], v[:, 1:], 1.0), jnp.where(limits[:, None], change, 0.0),
                          transition_velocity, max_direction_change, min_step)
    alpha = jnp.min(jnp.where(limits, alphas, 1.0))
    normal_state = jnp.where((state == COMPRESSING) & ~normal_active, INACTIVE, state)
    friction_state = jnp.where(~participating, NONE, jnp.where(sliding, SLIDING, jnp.where(
        rolling, ROLLING, jnp.where(released, RELEASED, IMPENDING))))
    # the least-squares π must meet its velocity equations (2.3), (2.7): it misses them only where the
    # equations are (nearly) contradictory, an ill-conditioned jam
    end = v + (W @ p.reshape(-1)).reshape(m, 3)
    missed = jnp.maximum(jnp.max(jnp.where(normal_active, jnp.abs(end[:, 0]), 0.0)),
                         jnp.max(jnp.where(rolling, safe_norm(end[:, 1:]), 0.0)))
    return p, alpha, normal_state, friction_state, missed <= 1e-6 * v_scale


def _plus(W, u, mu, e_min, options, max_intervals, max_rounds):
    capture_velocity, plastic_velocity, transition_velocity, max_direction_change, min_step = options
    m = u.shape[0] // 3
    v0 = u.reshape(m, 3)
    tolerance = TOLERANCE * jnp.max(jnp.abs(u))
    negligible = TOLERANCE * jnp.max(jnp.abs(u)) / jnp.max(jnp.abs(W))  # an impulse that changes no velocity

    def new_round(v, booked, rounds):
        expanding = booked > negligible  # "had a non-zero impulse applied" (§3b), beyond round-off
        state = jnp.where(expanding, EXPANDING, jnp.where(v[:, 0] < -tolerance, COMPRESSING, OBSERVING))
        restitution = restitution_law(-v[:, 0], e_min, capture_velocity, plastic_velocity)
        nothing = ~jnp.any(state != OBSERVING)
        return state, restitution, booked, rounds + jnp.where(nothing, 0, 1), nothing

    state, restitution, pending, rounds, done = new_round(v0, jnp.zeros(m), 0)
    padding = max_intervals
    record = (jnp.zeros(padding, int), jnp.zeros(padding), -jnp.ones((padding, m), int), -jnp.ones((padding, m), int),
              jnp.zeros((padding, 3 * m)), jnp.zeros((padding, 3 * m)))
    carry = (v0, jnp.zeros((m, 3)), state, restitution, pending, jnp.zeros(m), rounds, 0, done, jnp.array(False),
             jnp.zeros(()), record)

    def body(carry):
        v, total, state, restitution, pending, booked, rounds, count, done, _, round_impulse, record = carry
        p, alpha, normal_state, friction_state, solved = _interval(
            W, v, state, pending, mu, (transition_velocity, max_direction_change, min_step))
        alpha = jnp.where(solved, alpha, 0.0)
        step = alpha * p
        total = total + step
        v = v + (W @ step.reshape(-1)).reshape(m, 3)
        pending = jnp.where(state == EXPANDING, (1 - alpha) * pending, pending)
        booked = booked + jnp.where(normal_state == COMPRESSING, restitution * step[:, 0], 0.0)
        record = tuple(r.at[count].set(x) for r, x in zip(record, (
            rounds, alpha, normal_state, friction_state, total.reshape(-1), v.reshape(-1))))
        ends = alpha >= 1.0
        # a round that ends as it began, with points approaching and nothing applied, would repeat for ever:
        # no repulsive impulse can stop them (a Painlevé jam of the sliding friction); stop, unconverged
        stuck = (ends & (round_impulse + jnp.max(jnp.abs(step)) <= negligible) & jnp.all(state != EXPANDING)) | ~solved
        round_impulse = jnp.where(ends, 0.0, round_impulse + jnp.max(jnp.abs(step)))
        next_state, next_restitution, next_pending, next_rounds, nothing = new_round(v, booked, rounds)
        state = jnp.where(ends, next_state, state)
        restitution = jnp.where(ends, next_restitution, restitution)
        pending = jnp.where(ends, next_pending, pending)
        booked = jnp.where(ends, 0.0, booked)
        return (v, total, state, restitution, pending, booked, jnp.where(ends, next_rounds, rounds), count + 1,
                ends & nothing, stuck, round_impulse, record)

    def going(carry):
        rounds, count, done, stuck = carry[6:10]
        return ~done & ~stuck & (count < max_intervals) & (rounds <= max_rounds)

    v, total, _, _, _, _, rounds, count, done, _, _, record = jax.lax.while_loop(going, body, carry)
    impulse = total.reshape(-1)
    return PlusImpact(impulse, u + W @ impulse, count, rounds, done, *record)


def _check_delassus(delassus, k):
    """W (k, k): finite, symmetric and positive semi-definite (redundant contacts make it singular), not zero."""
    delassus = jnp.asarray(delassus, float)
    if delassus.shape != (k, k):
        raise ValueError(f"delassus must have shape ({k}, {k}) to match velocity; got {delassus.shape}")
    message = "delassus must be finite, symmetric, positive semi-definite and non-zero"
    if isinstance(delassus, jax.core.Tracer):
        eigenvalues = jnp.linalg.eigvalsh(jnp.where(jnp.isfinite(delassus), delassus, 0.0))
        bad = (jnp.any(~jnp.isfinite(delassus)) | (eigenvalues[0] < -1e-10 * eigenvalues[-1])
               | (eigenvalues[-1] <= 0) | ~jnp.allclose(delassus, delassus.T, rtol=1e-10, atol=0.0))
        return eqx.error_if(delassus, bad, message)
    matrix = np.asarray(delassus)
    if not np.all(np.isfinite(matrix)) or not np.allclose(matrix, matrix.T, rtol=1e-10, atol=0.0):
        raise ValueError(message)
    eigenvalues = np.linalg.eigvalsh(matrix)
    if eigenvalues[-1] <= 0 or eigenvalues[0] < -1e-10 * eigenvalues[-1]:
        raise ValueError(message)
    return delassus


class Plus(ImpulseModel):
    """The PLUS impact of m simultaneous spatial contacts (module docstring).

    Called as every ``ImpulseModel``, ``model(W, u⁻)``: W = J M⁻¹ Jᵀ (3m, 3m),
    symmetric positive semi-definite: it is singular where the contacts are
    redundant (more constraints than the bodies have freedoms), which PLUS
    resolves by minimum-norm least squares (singular values below
    ``RANK_CUTOFF`` of the largest count as zero); u⁻ (3m,), each contact
    normal first (u⁻_n < 0 approaches). Returns a ``PlusImpact`` (impulse λ
    (3m,), velocity u⁺ = u⁻ + W λ and the record). An impact in which no point
    approaches returns λ = 0 with no intervals (a documented no-op). Each of
    the first seven parameters is a scalar or one value per point.

    Parameters
    ----------
    restitution : e_min ∈ [0, 1], the restitution at and above
        ``plastic_velocity`` (Fig. 2).
    friction : μ ≥ 0.
    capture_velocity, plastic_velocity : v_capture ≤ v_plastic (m/s) of
        Fig. 2. Both 0: the constant restitution e_min of Poisson's law.
    transition_velocity : v_transition > 0 (m/s), the slip speed below which
        a point may roll (§2d).
    max_direction_change : θ_max ∈ (0, π/2) (rad), the largest turn of a
        sliding velocity within one interval (2.14).
    min_step : α_min ∈ (0, 1], the least step the direction limit may take.
    max_intervals, max_rounds : bounds on the loops (static ints ≥ 1);
        ``converged`` in the record says whether the impact ended within them.
    """

    restitution: jnp.ndarray
    friction: jnp.ndarray
    capture_velocity: jnp.ndarray
    plastic_velocity: jnp.ndarray
    transition_velocity: jnp.ndarray
    max_direction_change: jnp.ndarray
    min_step: jnp.ndarray
    max_intervals: int = eqx.field(static=True)
    max_rounds: int = eqx.field(static=True)
    dimensions: ClassVar[tuple] = (3,)
    several: ClassVar[bool] = True

    def __init__(self, restitution, friction=0.0, *, capture_velocity=0.01, plastic_velocity=0.1,
                 transition_velocity=0.1, max_direction_change=0.01, min_step=1e-6, max_intervals=256, max_rounds=64):
        self.restitution = check_range("restitution", restitution, 0.0, 1.0)
        self.friction = check_range("friction", friction, 0.0)
        self.capture_velocity = check_range("capture_velocity", capture_velocity, 0.0)
        plastic_velocity = check_range("plastic_velocity", plastic_velocity, 0.0)
        self.plastic_velocity = refuse_where(plastic_velocity, self.capture_velocity > plastic_velocity,
                                             "capture_velocity must not exceed plastic_velocity")
        self.transition_velocity = check_range("transition_velocity", transition_velocity, 0.0, low_open=True)
        self.max_direction_change = check_range("max_direction_change", max_direction_change, 0.0, np.pi / 2,
                                                low_open=True, high_open=True)
        self.min_step = check_range("min_step", min_step, 0.0, 1.0, low_open=True)
        self.max_intervals = check_count("max_intervals", max_intervals, 1)
        self.max_rounds = check_count("max_rounds", max_rounds, 1)

    def __call__(self, delassus, velocity, dimension=None):
        self._own_dimension(dimension)
        velocity = jnp.asarray(velocity, float)
        if velocity.ndim != 1 or velocity.shape[0] % 3 or velocity.shape[0] == 0:
            raise ValueError(f"velocity must have shape (3m,) for m ≥ 1 spatial contacts; got {velocity.shape}")
        W = _check_delassus(delassus, velocity.shape[0])
        u = refuse_where(velocity, jnp.any(~jnp.isfinite(velocity)), "velocity must be finite")
        m = u.shape[0] // 3
        mu, e, *options = (jnp.broadcast_to(per_contact(name, getattr(self, name), m), (m,)) for name in (
            "friction", "restitution", "capture_velocity", "plastic_velocity", "transition_velocity",
            "max_direction_change", "min_step"))
        return _plus(W, u, mu, e, options, self.max_intervals, self.max_rounds)
