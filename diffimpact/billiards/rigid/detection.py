r"""Every possible next event as arrays, and the earliest of them ([Leckie 2005]).

Until its next change of state each ball's centre moves on r(t) = c₀ + c₁ t
+ c₂ t² (``motion.trajectory_coefficients``), so each candidate event is the
first crossing of zero of a polynomial (``roots.first_crossing``), computed
for every candidate at once, or for every candidate of a few balls (their
rows: what an event changes), MJX-style (the balls, cushions, tips and
pockets are data, not code):

* ball i – ball j, i < j: |Δr(t)|² − (2R)², a quartic in t (Δc_k = c_k,i −
  c_k,j: coefficients |Δc₀|² − 4R², 2 Δc₀·Δc₁, |Δc₁|² + 2 Δc₀·Δc₂,
  2 Δc₁·Δc₂, |Δc₂|²);
* ball – cushion: a cushion is a straight segment of the nose line from A to
  B; with n̂ its unit normal towards the side the ball is on now, the contact
  is s n̂·(r(t) − A) − R = 0, a quadratic; it counts only where the centre's
  foot on the line falls between A and B;
* ball – tip: a cushion's tip is a circle (centre P, radius ρ ≥ 0) where
  its nose turns (a jaw's lip or end); the centre reaches R + ρ from P:
  |r(t) − P|² − (R + ρ)², a quartic, a ball pair's with a partner at rest;
* ball – pocket: the centre enters the pocket's circle (centre P, radius
  ρ): |r(t) − P|² − ρ², a quartic;
* each ball's change of motion state (``motion.transition_times``).

Every polynomial holds until the next change of state of the balls in it: a
pair's horizon is the earlier of its moving balls' transition times (a ball
that does not move holds its polynomial for ever), and balls at rest or
pocketed meet nothing.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_positive, check_range, is_concrete, refuse_where
from diffimpact.billiards.rigid.motion import POCKETED, _turned, moves, trajectory_coefficients, transition_times
from diffimpact.billiards.rigid.roots import first_crossing

#: Event-kind codes of ``Event.kind``.
BALL_BALL, BALL_CUSHION, BALL_TIP, BALL_POCKET, TRANSITION = 0, 1, 2, 3, 4
#: Each event-kind code's name.
EVENT_NAMES = ("ball-ball", "ball-cushion", "ball-tip", "ball-pocket", "transition")


class Table(eqx.Module):
    """The table as arrays: straight cushion segments (nose lines), round tips and round pockets (SI units).

    ``cushions`` (K, 2, 2): segment k from ``cushions[k, 0]`` to ``cushions[k, 1]`` (m); ``pocket_centres``
    (Q, 2) (m) and ``pocket_radii`` (Q,) (m), Q = 0 for a table without pockets (the default); ``tips`` (M, 2)
    (m) and ``tip_radii`` (M,) (m, ≥ 0; default 0, points), M = 0 by default: the circles that round a nose
    where two segments meet at a convex corner or where a segment ends (a pocket's jaws), which a segment's
    own contact (its foot between the end points) does not cover. Every field is a differentiable leaf.
    """

    cushions: jax.Array
    pocket_centres: jax.Array
    pocket_radii: jax.Array
    tips: jax.Array
    tip_radii: jax.Array

    def __init__(self, cushions, pocket_centres=None, pocket_radii=None, tips=None, tip_radii=None):
        cushions = check_range("cushions", cushions)
        if np.ndim(cushions) != 3 or np.shape(cushions)[1:] != (2, 2):
            raise ValueError(f"cushions must have shape (K, 2, 2): K segments, two end points each; got "
                             f"{np.shape(cushions)}")
        lengths = jnp.linalg.norm(cushions[:, 1] - cushions[:, 0], axis=-1)
        cushions = refuse_where(cushions, lengths <= 0, "every cushion segment must have two distinct end points")
        if (pocket_centres is None) != (pocket_radii is None):
            raise ValueError("pocket_centres and pocket_radii go together: give both or neither")
        centres = jnp.zeros((0, 2)) if pocket_centres is None else check_range("pocket_centres", pocket_centres)
        radii = jnp.zeros((0,)) if pocket_radii is None else pocket_radii
        if np.ndim(centres) != 2 or np.shape(centres)[1] != 2:
            raise ValueError(f"pocket_centres must have shape (Q, 2); got {np.shape(centres)}")
        if np.shape(radii) != (np.shape(centres)[0],):
            raise ValueError(f"pocket_radii must have shape ({np.shape(centres)[0]},), one per pocket; got "
                             f"{np.shape(radii)}")
        if np.shape(radii)[0] and is_concrete(radii):
            radii = check_positive("pocket_radii", radii)
        tips = jnp.zeros((0, 2)) if tips is None else check_range("tips", tips)
        if np.ndim(tips) != 2 or np.shape(tips)[1] != 2:
            raise ValueError(f"tips must have shape (M, 2); got {np.shape(tips)}")
        tip_radii = jnp.zeros(np.shape(tips)[0]) if tip_radii is None else tip_radii
        if np.shape(tip_radii) != (np.shape(tips)[0],):
            raise ValueError(f"tip_radii must have shape ({np.shape(tips)[0]},), one per tip; got "
                             f"{np.shape(tip_radii)}")
        if np.shape(tip_radii)[0] and is_concrete(tip_radii):
            tip_radii = check_range("tip_radii", tip_radii, 0.0)
        self.cushions = jnp.asarray(cushions, float)
        self.pocket_centres = jnp.asarray(centres, float)
        self.pocket_radii = jnp.asarray(radii, float)
        self.tips = jnp.asarray(tips, float)
        self.tip_radii = jnp.asarray(tip_radii, float)


class EventTimes(eqx.Module):
    """The time (s from now) of every candidate event, ∞ where there is none.

    ``ball_ball`` (n, n), ball i with ball j (symmetric, ∞ on the diagonal); ``ball_cushion`` (n, K);
    ``ball_tip`` (n, M); ``ball_pocket`` (n, Q); ``transition`` (n,). The rows of k balls (``event_times``'
    ``which``) have k in place of the first n.
    """

    ball_ball: jax.Array
    ball_cushion: jax.Array
    ball_tip: jax.Array
    ball_pocket: jax.Array
    transition: jax.Array


class Event(eqx.Module):
    """One event: its ``time`` (s), ``kind`` (``BALL_BALL`` …), ``ball`` and ``other`` (the second ball, the
    cushion, the tip or the pocket; −1 for a change of state)."""

    time: jax.Array
    kind: jax.Array
    ball: jax.Array
    other: jax.Array


def ball_pairs(count):
    """(first, second): the pairs i < j of ``count`` balls, as NumPy index arrays (the order of ``ball_ball``)."""
    return np.triu_indices(count, 1)


def _length(vector):
    """|x| over the last axis, with a finite derivative at 0."""
    squared = jnp.sum(vector**2, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def _distance_quartic(relative, magnitude, reach):
    """|d(t)|² − reach² for d(t) = d₀ + d₁ t + d₂ t² (``relative``: (..., 3, 2)), and the scale of its terms
    from ``magnitude`` (..., 3), bounds of |d_k| and of what was subtracted to form it."""
    d0, d1, d2 = relative[..., 0, :], relative[..., 1, :], relative[..., 2, :]
    m0, m1, m2 = magnitude[..., 0], magnitude[..., 1], magnitude[..., 2]
    dot = lambda a, b: jnp.sum(a * b, axis=-1)  # noqa: E731
    coefficients = jnp.stack([dot(d0, d0) - reach**2, 2 * dot(d0, d1), dot(d1, d1) + 2 * dot(d0, d2),
                              2 * dot(d1, d2), dot(d2, d2)], axis=-1)
    scale = jnp.stack([m0 * m0 + reach**2, 2 * m0 * m1, m1 * m1 + 2 * m0 * m2, 2 * m1 * m2, m2 * m2], axis=-1)
    return coefficients, scale


def cushion_normals(table):
    """(K, 2): each cushion segment's unit normal, (−d_y, d_x)/|d| for d = B − A."""
    direction = table.cushions[:, 1] - table.cushions[:, 0]
    return _turned(direction) / _length(direction)[:, None]


def event_times(balls, params, table, which=None):
    """Every candidate event's time from now (``EventTimes``; see the module docstring), or with ``which`` (k,
    ball indices) only the rows of those balls: their pairs with every ball (k, n), cushions, tips, pockets and
    changes of state. The balls, tips and pockets are partners of one quartic (the tips' and pockets' centres at
    rest), and all the polynomials go to one ``roots.first_crossing``."""
    count = balls.motion.shape[0]
    which = jnp.arange(count) if which is None else jnp.asarray(which)
    coefficients = trajectory_coefficients(balls, params)  # (n, 3, 2)
    moving = moves(balls)
    playing = balls.motion != POCKETED
    transition = transition_times(balls, params)
    horizon = jnp.where(moving, transition, jnp.inf)
    mine = coefficients[which]  # (k, 3, 2)
    my_sizes, my_horizon = _length(mine), horizon[which]
    active = moving[which] & playing[which]

    fixed = jnp.concatenate([table.tips, table.pocket_centres])
    partners = jnp.concatenate([coefficients, jnp.zeros((fixed.shape[0], 3, 2)).at[:, 0].set(fixed)])
    reach = jnp.concatenate([jnp.full(count, 2 * params.radius), params.radius + table.tip_radii,
                             table.pocket_radii])
    relative = mine[:, None] - partners  # (k, n + M + Q, 3, 2)
    circle, circle_scale = _distance_quartic(relative, _length(relative) + my_sizes[:, None] + _length(partners),
                                             reach)
    pair_active = (playing[which][:, None] & playing & (moving[which][:, None] | moving)
                   & (which[:, None] != jnp.arange(count)))
    circle_active = jnp.concatenate([pair_active, jnp.broadcast_to(active[:, None], (which.shape[0],
                                                                                        fixed.shape[0]))], 1)
    circle_horizon = jnp.minimum(my_horizon[:, None], jnp.concatenate([horizon, jnp.full(fixed.shape[0],
                                                                                         jnp.inf)]))

    start = table.cushions[:, 0]  # (K, 2)
    normal = cushion_normals(table)
    offset = mine[:, None, 0] - start  # (k, K, 2)
    side = jnp.where(jnp.sum(offset * normal, -1) >= 0, 1.0, -1.0)[..., None] * normal  # towards the ball
    zeros = jnp.zeros(offset.shape[:2])
    line = jnp.stack([jnp.sum(side * offset, -1) - params.radius, jnp.sum(side * mine[:, None, 1], -1),
                      jnp.sum(side * mine[:, None, 2], -1), zeros, zeros], axis=-1)
    line_scale = jnp.stack([my_sizes[:, None, 0] + _length(start) + params.radius,
                            jnp.broadcast_to(my_sizes[:, None, 1], zeros.shape),
                            jnp.broadcast_to(my_sizes[:, None, 2], zeros.shape), zeros, zeros], axis=-1)

    live = jnp.concatenate([circle_active, jnp.broadcast_to(active[:, None], zeros.shape)], 1)
    horizons = jnp.concatenate([circle_horizon, jnp.broadcast_to(my_horizon[:, None], zeros.shape)], 1)
    found = first_crossing(jnp.concatenate([circle, line], 1), jnp.where(live, horizons, 0.0),
                           jnp.concatenate([circle_scale, line_scale], 1))
    found = jnp.where(live, found, jnp.inf)
    pairs, tips, pockets, hit = jnp.split(found, np.cumsum([count, table.tips.shape[0],
                                                            table.pocket_centres.shape[0]]), axis=1)

    at = jnp.where(jnp.isfinite(hit), hit, 0.0)[..., None]
    centre = mine[:, None, 0] + (mine[:, None, 1] + mine[:, None, 2] * at) * at
    direction = table.cushions[:, 1] - start
    along = jnp.sum((centre - start) * direction, -1) / jnp.sum(direction**2, -1)
    return EventTimes(pairs, jnp.where((along >= 0) & (along <= 1), hit, jnp.inf), tips, pockets,
                      transition[which])


def next_event(times):
    """The earliest event of ``times`` (an ``Event``; time ∞ when nothing will happen). Ties go to the first
    in the order ball–ball, ball–cushion, ball–tip, ball–pocket, transition, and by index within each."""
    count = times.transition.shape[0]
    first, second = (jnp.asarray(a, dtype=jnp.int32) for a in ball_pairs(count))
    flat = jnp.concatenate([times.ball_ball[first, second], times.ball_cushion.ravel(), times.ball_tip.ravel(),
                            times.ball_pocket.ravel(), times.transition])
    index = jnp.argmin(flat)
    widths = [times.ball_cushion.shape[1], times.ball_tip.shape[1], times.ball_pocket.shape[1]]
    starts = np.cumsum([0, first.shape[0]] + [count * width for width in widths])
    kind = jnp.sum(index >= starts[1:]).astype(jnp.int32)
    local = index - jnp.asarray(starts)[kind]
    pair = jnp.clip(local, 0, max(first.shape[0] - 1, 0))
    pair_ball, pair_other = (first[pair], second[pair]) if first.shape[0] else (0, 0)
    per_ball = [kind == BALL_CUSHION, kind == BALL_TIP, kind == BALL_POCKET]
    ball = jnp.select([kind == BALL_BALL, *per_ball], [pair_ball, *(local // max(w, 1) for w in widths)], local)
    other = jnp.select([kind == BALL_BALL, *per_ball], [pair_other, *(local % max(w, 1) for w in widths)], -1)
    return Event(flat[index], kind, ball.astype(jnp.int32), other.astype(jnp.int32))


def ball_gaps(balls, params):
    """|r_i − r_j| − 2R of every pair i < j (in the order of ``ball_pairs``), ∞ where either ball is pocketed:
    (..., P) (m), negative where two balls overlap. ``balls`` may carry leading axes (``Shot.states``, the
    result of ``engine.states_at``)."""
    first, second = ball_pairs(balls.motion.shape[-1])
    distance = _length(balls.position[..., first, :] - balls.position[..., second, :])
    playing = (balls.motion[..., first] != POCKETED) & (balls.motion[..., second] != POCKETED)
    return jnp.where(playing, distance - 2 * params.radius, jnp.inf)


def cushion_gaps(balls, params, table):
    """Each ball's distance from each cushion segment (to its nearest point, ends included) less R, and from each
    tip less R + ρ: (..., n, K + M) (m), ∞ for a pocketed ball, negative where a ball overlaps the rubber.
    ``balls`` may carry leading axes."""
    start, direction = table.cushions[:, 0], table.cushions[:, 1] - table.cushions[:, 0]
    offset = balls.position[..., None, :] - start  # (..., n, K, 2)
    along = jnp.clip(jnp.sum(offset * direction, -1) / jnp.sum(direction**2, -1), 0.0, 1.0)
    segments = _length(offset - along[..., None] * direction) - params.radius
    tips = _length(balls.position[..., None, :] - table.tips) - params.radius - table.tip_radii
    gaps = jnp.concatenate([segments, tips], axis=-1)
    return jnp.where((balls.motion != POCKETED)[..., None], gaps, jnp.inf)
