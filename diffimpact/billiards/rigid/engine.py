r"""The event loop of the rigid engine: from one event to the next until every ball is at rest.

Each pass of a ``lax.while_loop``, the event-based algorithm of [Leckie 2005]:

1. the earliest of every candidate event's time (``detection.next_event``),
   kept from pass to pass as absolute times;
2. every ball carried to it in closed form (``motion.evolve``);
3. the event resolved by the model of its kind (``Engine.ball_ball``,
   ``Engine.ball_cushion`` for segments and tips, ``Engine.ball_pocket``; a
   change of motion state by ``motion.end_state``), and the balls it touched
   put in the motion state their new kinematics give (``motion.settle``);
4. the times of the candidates of the one or two balls it touched
   recomputed (``detection.event_times`` of their rows): every other ball
   keeps its polynomial, so its candidates keep their times (as event-driven
   simulators of many particles keep theirs; pooltool keeps its balls'
   transition times so);
5. the event and every ball's state after it recorded.

The first ⌈n/2⌉ passes fill in the candidates' times two balls at a time
(one compiled computation of rows serves both).

The loop has a fixed budget of events (``Engine.max_events``, a shape of the
program): a shot that needs more ends with ``Shot.status`` =
``EVENTS_EXHAUSTED``, and ``simulate`` raises ``EventBudgetExceeded`` after
the run (no callback inside the program). ``states_at`` evaluates every
ball's state at any times from the recorded states, in closed form.

Derivatives: the event times are differentiable (``roots``), so is the
motion between them and each model, so ``jax.jacfwd`` of any output holds
while the sequence of events stays the same; where a parameter changes the
sequence (a ball that now misses another) the output jumps, and no
derivative sees the jump (docs/design/rigid-engine.md, "When the sequence
of events changes"). ``lax.while_loop`` has no reverse mode: use forward
mode (``jax.jacfwd``, ``jax.jvp``).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_count, check_range, is_concrete, require_float64
from diffimpact.billiards.rigid.ball_ball import BallBallModel, Frictionless
from diffimpact.billiards.rigid.ball_cushion import BallCushionModel, StickingFriction
from diffimpact.billiards.rigid.ball_pocket import BallPocketModel, Capture
from diffimpact.billiards.rigid.detection import (
    BALL_BALL,
    BALL_CUSHION,
    BALL_POCKET,
    BALL_TIP,
    EVENT_NAMES,
    TRANSITION,
    EventTimes,
    ball_pairs,
    cushion_normals,
    event_times,
    next_event,
)
from diffimpact.billiards.rigid.motion import POCKETED, Balls, _ended, evolve, settle

#: ``Shot.status``: every ball at rest or pocketed; the event budget spent with events still to come.
FINISHED, EVENTS_EXHAUSTED = 0, 1
_RUNNING = 2
#: ``Shot.kind`` of the first row (the start) and of the rows after the last event.
START, UNUSED = -1, -2


class EventBudgetExceeded(RuntimeError):
    """A shot needed more events than ``Engine.max_events``."""


class Engine(eqx.Module):
    """The rigid engine's models, one per kind of event, and its event budget.

    ``ball_ball``, ``ball_cushion``, ``ball_pocket``: the models (objects with a call; see each interface);
    ``max_events``: the most events one shot may take (static: the size of the recorded arrays);
    ``rest_speed`` (m/s): below it a slip, a velocity or a spin's surface speed counts as zero (``settle``);
    ``parting_speed`` (m/s, ≥ 0): the least normal speed at which a collision parts two balls, or a ball and a
    cushion. A rigid event-driven model has no law for a sustained contact: two balls pressed together at no
    normal speed (a slower ball decelerating ahead of a faster one), or the train of ever closer collisions that
    leads there with restitution below 1 (the inelastic collapse of event-driven granular simulation, McNamara
    and Young 1994), would overlap, or take events without end. Parted at this speed, the pair meets again after
    a time of order 2 × ``parting_speed`` over its relative deceleration, a train of collisions in place of the
    contact, and a collision at a normal speed above ``parting_speed`` / e is left as its model resolves it.
    """

    ball_ball: BallBallModel = eqx.field(default_factory=Frictionless)  # built per Engine: none at import
    ball_cushion: BallCushionModel = eqx.field(default_factory=StickingFriction)
    ball_pocket: BallPocketModel = eqx.field(default_factory=Capture)
    max_events: int = eqx.field(static=True, default=200)
    rest_speed: float = 1e-12
    parting_speed: float = 1e-3

    def __check_init__(self):
        """Each model an instance of its interface; ``max_events`` ≥ 1; ``rest_speed``, ``parting_speed`` ≥ 0
        (when concrete)."""
        for name, kind in (("ball_ball", BallBallModel), ("ball_cushion", BallCushionModel),
                           ("ball_pocket", BallPocketModel)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}; got {type(getattr(self, name)).__name__}")
        check_count("max_events", self.max_events, low=1)
        for name in ("rest_speed", "parting_speed"):
            if is_concrete(getattr(self, name)):
                check_range(name, getattr(self, name), 0.0, shape=())


class Shot(eqx.Module):
    """A simulated shot: its events and every ball's state after each.

    Row 0 is the start (``kind`` ``START``, time 0); row k ≥ 1 the k-th event: ``time`` (s), ``kind``
    (``detection.BALL_BALL`` …), ``ball`` and ``other`` (the second ball, the cushion, the tip or the pocket; −1
    for a change of state) and ``states`` (a ``Balls`` with a leading axis of rows) just after it. Rows after the
    last event have kind ``UNUSED`` and time ∞. ``events``: how many events; ``status``: ``FINISHED`` or
    ``EVENTS_EXHAUSTED``.
    """

    time: jax.Array
    kind: jax.Array
    ball: jax.Array
    other: jax.Array
    states: Balls
    events: jax.Array
    status: jax.Array

    def event_list(self):
        """[(time, kind name, ball, other), …]: the events, for reading (concrete values only)."""
        count = int(self.events)
        return [(float(t), EVENT_NAMES[int(k)], int(b), int(o)) for t, k, b, o in
                zip(self.time[1:count + 1], self.kind[1:count + 1], self.ball[1:count + 1],
                    self.other[1:count + 1], strict=True)]


def _resolve(balls, event, params, table, engine):
    """The balls after ``event`` (their states at its time), by the model of its kind (a collision parting at
    ``Engine.parting_speed`` at least), and the balls it touched put in the motion state their kinematics give."""
    count = balls.motion.shape[0]
    ball, other = event.ball, event.other
    me = jnp.arange(count) == ball

    def ball_ball(balls):
        first, second = engine.ball_ball(balls.take(ball), balls.take(other), params)
        offset = balls.position[other] - balls.position[ball]
        normal = offset / jnp.linalg.norm(offset)
        short = jnp.maximum(engine.parting_speed - jnp.dot(second.velocity - first.velocity, normal), 0.0)
        first = first._replace(velocity=first.velocity - 0.5 * short * normal)
        return balls.put(ball, first).put(other, second._replace(velocity=second.velocity + 0.5 * short * normal))

    def off_cushion(balls, normal):
        after = engine.ball_cushion(balls.take(ball), normal, params)
        short = jnp.maximum(engine.parting_speed - jnp.dot(after.velocity, normal), 0.0)
        return balls.put(ball, after._replace(velocity=after.velocity + short * normal))

    def ball_cushion(balls):
        normal = cushion_normals(table)[other]
        side = jnp.where(jnp.dot(balls.position[ball] - table.cushions[other, 0], normal) >= 0, 1.0, -1.0)
        return off_cushion(balls, side * normal)

    def ball_tip(balls):
        offset = balls.position[ball] - table.tips[other]
        return off_cushion(balls, offset / jnp.linalg.norm(offset))

    def ball_pocket(balls):
        new, captured = engine.ball_pocket(balls.take(ball), table.pocket_centres[other],
                                           table.pocket_radii[other], params)
        after = balls.put(ball, new)
        return Balls(after.position, after.velocity, after.angular_velocity,
                     jnp.where(me & captured, POCKETED, after.motion))

    def transition(balls):
        return _ended(balls, params, me)

    branches = [None] * 5
    branches[BALL_BALL], branches[BALL_CUSHION], branches[BALL_TIP] = ball_ball, ball_cushion, ball_tip
    branches[BALL_POCKET], branches[TRANSITION] = ball_pocket, transition
    if table.pocket_centres.shape[0] == 0:
        branches[BALL_POCKET] = lambda balls: balls
    if table.tips.shape[0] == 0:
        branches[BALL_TIP] = lambda balls: balls
    if count < 2:
        branches[BALL_BALL] = lambda balls: balls
    touched = me | ((jnp.arange(count) == other) & (event.kind == BALL_BALL))
    return settle(jax.lax.switch(event.kind, branches, balls), params, touched, rest_speed=engine.rest_speed)


def _update(times, which, rows):
    """``times`` with the rows of the balls ``which`` replaced by ``rows`` (their pairs in row and column)."""
    pairs = times.ball_ball.at[which].set(rows.ball_ball)
    return EventTimes(pairs.at[:, which].set(rows.ball_ball.T), times.ball_cushion.at[which].set(rows.ball_cushion),
                      times.ball_tip.at[which].set(rows.ball_tip), times.ball_pocket.at[which].set(rows.ball_pocket),
                      times.transition.at[which].set(rows.transition))


@eqx.filter_jit
def _simulate(balls, params, table, engine):
    rows = engine.max_events + 1
    rowed = jax.tree.map(lambda x: jnp.broadcast_to(x, (rows, *x.shape)), balls)
    record = (jnp.full(rows, jnp.inf).at[0].set(0.0), jnp.full(rows, UNUSED).at[0].set(START),
              jnp.full(rows, -1), jnp.full(rows, -1), rowed)
    size = balls.motion.shape[0]
    setup = -(-size // 2)  # the first passes fill in the candidates' times, two balls' rows at a time
    never = EventTimes(jnp.full((size, size), jnp.inf), *(jnp.full((size, width), jnp.inf) for width in (
        table.cushions.shape[0], table.tips.shape[0], table.pocket_centres.shape[0])), jnp.full(size, jnp.inf))

    def step(carry):
        balls, now, count, passes, _, pending_times, (times, kinds, first, second, states) = carry
        event = next_event(pending_times)
        started = passes >= setup
        pending = jnp.isfinite(event.time) | ~started
        go = started & pending & (count < engine.max_events)
        later = jnp.where(go, event.time, now)
        resolved = _resolve(evolve(balls, params, later - now), event, params, table, engine)
        balls = jax.tree.map(lambda new, old: jnp.where(go, new, old), resolved, balls)
        filling = jnp.minimum(2 * passes + jnp.arange(2), size - 1)
        touched = jnp.where(started, jnp.stack([event.ball, jnp.where(event.kind == BALL_BALL, event.other,
                                                                      event.ball)]), filling)
        fresh = jax.tree.map(lambda t: t + later, event_times(balls, params, table, touched))
        pending_times = _update(pending_times, touched, fresh)
        row = jnp.where(go, count + 1, 0)
        keep = lambda array, value: array.at[row].set(jnp.where(go, value, array[row]))  # noqa: E731
        record = (keep(times, later), keep(kinds, event.kind), keep(first, event.ball), keep(second, event.other),
                  jax.tree.map(keep, states, balls))
        status = jnp.where(go | ~started, _RUNNING, jnp.where(pending, EVENTS_EXHAUSTED, FINISHED))
        return balls, later, count + go, passes + 1, status, pending_times, record

    carry = (balls, jnp.asarray(0.0), jnp.asarray(0), jnp.asarray(0), jnp.asarray(_RUNNING), never, record)
    _, _, count, _, status, _, (times, kinds, first, second, states) = jax.lax.while_loop(
        lambda carry: carry[4] == _RUNNING, step, carry)
    return Shot(times, kinds, first, second, states, count, status)


def _as_arrays(tree):
    """``tree`` with its Python floats as arrays, so that a new value of a field reuses the compiled program."""
    return jax.tree.map(lambda x: jnp.asarray(x, float) if isinstance(x, float) else x, tree)


def _check_start(balls, params):
    """Refuse, when concrete, balls in play whose centres are closer than 2R (overlapping)."""
    if not is_concrete(balls, params) or balls.motion.shape[0] < 2:
        return
    first, second = ball_pairs(balls.motion.shape[0])
    position = np.asarray(balls.position)
    playing = np.asarray(balls.motion) != POCKETED
    distance = np.linalg.norm(position[first] - position[second], axis=-1)
    overlapping = (distance < 2 * float(params.radius) * (1 - 1e-12)) & playing[first] & playing[second]
    if overlapping.any():
        pairs = [(int(i), int(j)) for i, j in zip(first[overlapping], second[overlapping], strict=True)][:5]
        raise ValueError(f"balls must not overlap at the start (centres closer than 2R); got the pairs {pairs}")


def simulate(balls, params, table, engine=None):
    """Simulate a shot from ``balls`` (``motion.Balls``, e.g. from ``ball_states``) until every ball is at rest.

    Parameters
    ----------
    balls : the start; ``params``: ``motion.Parameters``; ``table``: ``detection.Table``.
    engine : an ``Engine`` (its models and event budget); default ``Engine()``.

    Returns
    -------
    A ``Shot``. Raises ``EventBudgetExceeded`` after the run if the budget was spent with events still to come
    (when the status is concrete: under a transformation read ``Shot.status`` instead).
    """
    require_float64("diffimpact.billiards.rigid.simulate")
    engine = Engine() if engine is None else engine
    _check_start(balls, params)
    shot = _simulate(balls, _as_arrays(params), _as_arrays(table), _as_arrays(engine))
    if is_concrete(shot.status) and int(shot.status) == EVENTS_EXHAUSTED:
        raise EventBudgetExceeded(f"the shot needs more than max_events={engine.max_events} events; pass "
                                  f"Engine(max_events=...) with a larger budget")
    return shot


def states_at(shot, params, times):
    """Every ball's state at each of ``times`` (s, any shape), from the recorded states in closed form: a
    ``Balls`` whose arrays have the leading shape of ``times``."""
    return _states_at(shot, _as_arrays(params), jnp.asarray(times, float))


@eqx.filter_jit
def _states_at(shot, params, times):
    row = jnp.clip(jnp.searchsorted(shot.time, times, side="right") - 1, 0, shot.time.shape[0] - 1)
    start = jax.tree.map(lambda x: x[row], shot.states)
    flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[times.ndim:]), start)
    evolved = jax.vmap(evolve, in_axes=(0, None, 0))(flat, params, (times - shot.time[row]).ravel())
    return jax.tree.map(lambda x: x.reshape(times.shape + x.shape[1:]), evolved)
