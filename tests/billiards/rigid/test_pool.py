"""The pool table as the rigid engine's table: a ball rolled into each pocket along its axis is captured, a ball
banked off each long cushion leaves at the model's angle, a ball aimed at each lip reflects off the lip's normal;
the four-ball break to rest, without overlaps and without a gain of energy."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.billiards.rigid import (
    BALL_BALL,
    BALL_CUSHION,
    BALL_POCKET,
    BALL_TIP,
    FINISHED,
    POCKETED,
    STATIONARY,
    Engine,
    Parameters,
    StickingFriction,
    ball_gaps,
    ball_states,
    cushion_gaps,
    kinetic_energy,
    rolling_spin,
    simulate,
    states_at,
)
from diffimpact.billiards.rigid.pool import break_balls, pool_table
from diffimpact.scenes import billiard

PARAMS = Parameters()
R, MU_R, G = PARAMS.radius, PARAMS.rolling_friction, PARAMS.gravity
P = billiard.Parameters()
TABLE = pool_table(P)
NOSES = np.asarray(billiard.table_cushions(P))
ENGINE = Engine(max_events=60)


def rolling_time(speed, distance):
    """The time a ball rolling at ``speed`` takes to cover ``distance``: s = v t − μ_r g t²/2."""
    return (speed - np.sqrt(speed**2 - 2 * MU_R * G * distance)) / (MU_R * G)


def roll(start, direction, speed, engine=ENGINE):
    """One ball rolling from ``start`` along ``direction`` (unit) at ``speed``, simulated to rest."""
    velocity = speed * np.asarray(direction)
    return simulate(ball_states(PARAMS, [start], [velocity], [rolling_spin(velocity, R)]), PARAMS, TABLE, engine)


def left(direction):
    """The unit normal to the left of ``direction``: towards the table for every nose segment."""
    return np.array([-direction[1], direction[0]]) / np.linalg.norm(direction)


def test_the_table_has_the_scenes_cushions_tips_and_pockets():
    """18 segments that join into the six nose polylines, their 24 vertices as tips of radius 0, six holes."""
    segments = np.asarray(TABLE.cushions).reshape(6, 3, 2, 2)
    np.testing.assert_array_equal(segments[:, :, 0], NOSES[:, :3])
    np.testing.assert_array_equal(segments[:, :, 1], NOSES[:, 1:])
    np.testing.assert_array_equal(np.asarray(TABLE.tips), NOSES.reshape(-1, 2))
    np.testing.assert_array_equal(np.asarray(TABLE.tip_radii), 0.0)
    np.testing.assert_array_equal(np.asarray(TABLE.pocket_centres), np.asarray(billiard.pockets(P).centres))


@pytest.mark.parametrize("pocket", range(6))
def test_a_ball_rolled_along_a_pockets_axis_is_captured_at_the_drop(pocket):
    """From 0.4 m in front of the mouth along the axis, the centre passes the jaws untouched and enters the hole
    at the slate's drop, the shelf behind the mouth line: one event, at the rolling closed form."""
    holes = billiard.pockets(P)
    axis = np.asarray(holes.axes[pocket])
    mouth = np.asarray(holes.lips[pocket]).mean(0)
    speed, run = 1.0, 0.4
    shot = roll(mouth - run * axis, axis, speed)
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_POCKET, 0, pocket)
    assert int(shot.events) == 1 and int(shot.status) == FINISHED
    shelf = P.corner_shelf if billiard.CORNER_POCKETS[pocket] else P.side_shelf
    np.testing.assert_allclose(shot.time[1], rolling_time(speed, run + shelf), rtol=1e-12)
    np.testing.assert_allclose(shot.states.position[1, 0], holes.drops[pocket], rtol=0, atol=1e-12)
    assert int(shot.states.motion[1, 0]) == POCKETED


@pytest.mark.parametrize("cushion", range(6))
def test_a_ball_banks_off_each_long_cushion_at_the_models_angle(cushion):
    """Rolling at 30° from the normal into the middle of the long face: at the nose its slip is |v|, so
    v_t⁺ = v_t (1 − min(μ (1 + e) v_n, 2|v|/7)/|v|) and v_n⁺ = −e v_n (``StickingFriction``, e = 0.98,
    μ = 0.14), the contact R from the face."""
    start, end = NOSES[cushion, 1], NOSES[cushion, 2]
    along = (end - start) / np.linalg.norm(end - start)
    normal = left(along)
    contact = (start + end) / 2 + R * normal
    angle, speed, run = np.radians(30.0), 1.0, 0.4
    direction = -np.cos(angle) * normal + np.sin(angle) * along
    shot = roll(contact - run * direction, direction, speed)
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_CUSHION, 0, 3 * cushion + 1)
    v = np.sqrt(speed**2 - 2 * MU_R * G * run)
    np.testing.assert_allclose(shot.time[1], rolling_time(speed, run), rtol=1e-12)
    np.testing.assert_allclose(shot.states.position[1, 0], contact, rtol=0, atol=1e-12)
    cap = min(0.14 * 1.98 * v * np.cos(angle), 2 * v / 7)
    expected = v * np.sin(angle) * (1 - cap / v) * along + 0.98 * v * np.cos(angle) * normal
    np.testing.assert_allclose(shot.states.velocity[1, 0], expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("lip", range(12))
@pytest.mark.parametrize("turn", [-10.0, 10.0])
def test_a_ball_aimed_at_a_lip_reflects_off_the_lips_normal(lip, turn):
    """A lip is a convex corner of the nose: a ball meeting it with its centre on the bisector of the face's and
    the jaw's normals, n, touches neither segment (its foot lies beyond both) and reflects off n. Rolling in at
    ``turn`` degrees from −n against a cushion without friction (e = 0.98): v⁺ = v − (1 + e)(v·n) n, the centre
    R from the lip."""
    cushion, end = divmod(lip, 2)
    face = NOSES[cushion, 2] - NOSES[cushion, 1]
    jaw = NOSES[cushion, 3] - NOSES[cushion, 2] if end else NOSES[cushion, 1] - NOSES[cushion, 0]
    tip = NOSES[cushion, 1 + end]
    normal = left(face) + left(jaw)
    normal /= np.linalg.norm(normal)
    contact = tip + R * normal
    angle = np.radians(turn)
    direction = -(np.cos(angle) * normal + np.sin(angle) * left(normal))
    speed, run = 1.0, 0.15
    engine = eqx.tree_at(lambda e: e.ball_cushion, ENGINE, StickingFriction(0.98, 0.0))
    shot = roll(contact - run * direction, direction, speed, engine)
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_TIP, 0, 4 * cushion + 1 + end)
    np.testing.assert_allclose(shot.time[1], rolling_time(speed, run), rtol=1e-12)
    np.testing.assert_allclose(shot.states.position[1, 0], contact, rtol=0, atol=1e-12)
    v = np.sqrt(speed**2 - 2 * MU_R * G * run) * direction
    np.testing.assert_allclose(shot.states.velocity[1, 0], v - 1.98 * (v @ normal) * normal, rtol=1e-12,
                               atol=1e-14)


def test_the_break_starts_from_the_rack():
    balls = break_balls(PARAMS, P, speed=10.70)
    np.testing.assert_array_equal(balls.position, billiard.rack(P))
    np.testing.assert_array_equal(balls.velocity[0], [10.70, 0.0])
    np.testing.assert_array_equal(balls.velocity[1:], 0.0)
    with pytest.raises(ValueError, match="balls must be at most 16"):
        break_balls(PARAMS, P, balls=17)


def test_the_four_ball_break_runs_to_rest_without_overlaps_or_a_gain_of_energy():
    """The cue ball at 10.70 m/s into the first three balls of the rack, on the full table, until every ball is at
    rest or pocketed. After every event and at 4,001 times between them no two balls overlap and no ball overlaps
    a cushion by more than the rounding of a contact's quartic (16 ε Σ|terms| over 4R: about 1e-13 m for centres
    of order 1 m; 1e-12 m allowed), and the kinetic energy never grows from one event to the next."""
    balls = break_balls(PARAMS, P, balls=4, speed=10.70)
    shot = simulate(balls, PARAMS, TABLE, Engine(max_events=150))
    count = int(shot.events)
    kinds = {int(k) for k in shot.kind[1:count + 1]}
    assert int(shot.status) == FINISHED and {BALL_BALL, BALL_CUSHION} <= kinds
    last = np.asarray(shot.states.motion[count])
    assert np.all((last == STATIONARY) | (last == POCKETED))
    recorded = jax.tree.map(lambda x: x[:count + 1], shot.states)
    between = states_at(shot, PARAMS, jnp.linspace(0.0, float(shot.time[count]), 4001))
    for states in (recorded, between):
        assert np.min(ball_gaps(states, PARAMS)) > -1e-12
        assert np.min(cushion_gaps(states, PARAMS, TABLE)) > -1e-12
    energy = np.asarray(kinetic_energy(recorded, PARAMS).sum(-1))
    assert np.all(np.diff(energy) <= 1e-12 * energy[0])
