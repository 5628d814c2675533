"""Whole shots: a head-on collision against momentum and Newton's law, a bank off a cushion at the model's angle,
mirror symmetry, the event budget, and forward derivatives against central differences."""

import json
import os
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.billiards.rigid import (
    BALL_BALL,
    BALL_CUSHION,
    BALL_POCKET,
    FINISHED,
    POCKETED,
    SLIDING,
    STATIONARY,
    TRANSITION,
    Balls,
    Engine,
    EventBudgetExceeded,
    Frictionless,
    Parameters,
    StickingFriction,
    Table,
    ball_gaps,
    ball_states,
    evolve,
    rolling_spin,
    simulate,
    states_at,
)

PARAMS = Parameters()
R, M, G = PARAMS.radius, PARAMS.mass, PARAMS.gravity
X, Y = 1.27, 0.635
#: The cushions of a 9-ft table's playing surface and four corner pockets of radius 6 cm.
TABLE = Table(np.array([[[-X, -Y], [X, -Y]], [[X, -Y], [X, Y]], [[X, Y], [-X, Y]], [[-X, Y], [-X, -Y]]]),
              [[-X, -Y], [X, -Y], [X, Y], [-X, Y]], [0.06] * 4)
ENGINE = Engine(max_events=60)


def two_balls(params, position, velocity, angular_velocity):
    """Three balls, the third out of play (every shot here has the same shapes, so one compiled program)."""
    balls = ball_states(params, jnp.concatenate([jnp.asarray(position, float), jnp.array([[1.0, 0.5]])]),
                        jnp.concatenate([jnp.asarray(velocity, float), jnp.zeros((1, 2))]),
                        jnp.concatenate([jnp.asarray(angular_velocity, float), jnp.zeros((1, 3))]))
    return Balls(balls.position, balls.velocity, balls.angular_velocity, balls.motion.at[2].set(POCKETED))


@pytest.mark.parametrize("restitution", [0.93, 0.5])
def test_a_head_on_collision_keeps_momentum_and_scales_the_approach_by_e(restitution):
    """A rolling cue ball meets a resting ball after a gap s: at contact it has v = √(V² − 2 μ_r g s), and after
    it the balls move at (1 − e) v/2 and (1 + e) v/2, both sliding (spins unchanged)."""
    speed, gap = 1.5, 0.6
    balls = two_balls(PARAMS, [[-0.4, 0.1], [-0.4 + 2 * R + gap, 0.1]], [[speed, 0.0], [0.0, 0.0]],
                      [rolling_spin([speed, 0.0], R), [0, 0, 0]])
    shot = simulate(balls, PARAMS, TABLE, eqx.tree_at(lambda e: e.ball_ball.restitution, ENGINE, restitution))
    assert int(shot.status) == FINISHED
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_BALL, 0, 1)
    mu_r = PARAMS.rolling_friction
    v = np.sqrt(speed**2 - 2 * mu_r * G * gap)
    np.testing.assert_allclose(shot.time[1], (speed - v) / (mu_r * G), rtol=1e-13)
    after = shot.states
    np.testing.assert_allclose(after.velocity[1, :2], [[(1 - restitution) * v / 2, 0.0],
                                                       [(1 + restitution) * v / 2, 0.0]], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(M * after.velocity[1, :2].sum(0), [M * v, 0.0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(after.angular_velocity[1, 0], rolling_spin([v, 0.0], R), rtol=1e-13)
    np.testing.assert_array_equal(after.motion[1, :2], [SLIDING, SLIDING])
    np.testing.assert_array_equal(after.motion[int(shot.events), :2], [STATIONARY, STATIONARY])


@pytest.mark.parametrize(("friction", "sticks"), [(0.14, False), (0.5, True)])
def test_a_ball_banks_off_a_cushion_at_the_models_angle(friction, sticks):
    """A rolling ball meets the cushion y = Y at 30° from its normal. At the nose (contact at the centre's
    height) its slip is (v_t, 0, −v_n): |slip| = |v|, and the tangential impulse per unit mass is
    min(μ (1 + e) v_n, 2|v|/7) along the slip. So v_t⁺ = v_t (1 − min(μ (1 + e) v_n, 2|v|/7)/|v|),
    v_n⁺ = −e v_n; the slip stops when μ (1 + e) v_n ≥ 2|v|/7 (μ = 0.5 here)."""
    speed, angle, path = 1.6, np.radians(30.0), 0.4
    direction = np.array([np.sin(angle), np.cos(angle)])
    start = np.array([0.1, Y - R]) - path * direction
    balls = two_balls(PARAMS, [start, [-0.9, -0.4]], [speed * direction, [0.0, 0.0]],
                      [rolling_spin(speed * direction, R), [0, 0, 0]])
    engine = eqx.tree_at(lambda e: e.ball_cushion, ENGINE, StickingFriction(0.98, friction))
    shot = simulate(balls, PARAMS, TABLE, engine)
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_CUSHION, 0, 2)
    v = np.sqrt(speed**2 - 2 * PARAMS.rolling_friction * G * path)
    along, normal = v * direction
    cap = min(friction * 1.98 * normal, 2 * v / 7)
    assert (cap == 2 * v / 7) == sticks
    expected = [along * (1 - cap / v), -0.98 * normal]
    np.testing.assert_allclose(shot.states.velocity[1, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(shot.states.position[1, 0], [0.1, Y - R], rtol=1e-12)


def test_a_ball_rolled_into_a_corner_is_captured_and_stays_out_of_play():
    """Along the diagonal to the corner (X, Y) the centre enters the pocket's circle 6 cm from the corner, before
    it gets within R of either cushion; the ball is then out of play and the other ball rolls through."""
    speed, corner = 2.0, np.array([X, Y])
    direction = np.array([1.0, 1.0]) / np.sqrt(2)
    start = corner - 0.5 * direction
    balls = two_balls(PARAMS, [start, [0.0, 0.0]], [speed * direction, [0.0, 0.0]],
                      [rolling_spin(speed * direction, R), [0, 0, 0]])
    shot = simulate(balls, PARAMS, TABLE, ENGINE)
    assert (int(shot.kind[1]), int(shot.ball[1]), int(shot.other[1])) == (BALL_POCKET, 0, 2)
    mu_r = PARAMS.rolling_friction
    np.testing.assert_allclose(shot.time[1], (speed - np.sqrt(speed**2 - 2 * mu_r * G * 0.44)) / (mu_r * G),
                               rtol=1e-13)
    assert int(shot.events) == 1 and int(shot.status) == FINISHED
    np.testing.assert_array_equal(shot.states.motion[1], [POCKETED, STATIONARY, POCKETED])
    np.testing.assert_array_equal(shot.states.velocity[1, 0], 0.0)


def mirror(balls):
    """The balls reflected in the plane x = 0 (ω is a pseudovector: ω_x stays, ω_y and ω_z change sign)."""
    flip = jnp.array([-1.0, 1.0])
    return Balls(balls.position * flip, balls.velocity * flip, balls.angular_velocity * jnp.array([1.0, -1.0, -1.0]),
                 balls.motion)


def test_two_balls_converging_symmetrically_stay_mirror_images():
    """Mirror images about x = 0, struck with draw and side spin, meet, bank off cushions and stop: at every
    time each ball is the other's reflection (to rounding: simultaneous events are taken one after the other)."""
    velocity, spin = np.array([1.8, 0.5]), np.array([10.0, -40.0, 25.0])
    position = np.array([-0.5, -0.2])
    flip, pseudo = np.array([-1.0, 1.0]), np.array([1.0, -1.0, -1.0])
    balls = two_balls(PARAMS, [position, position * flip], [velocity, velocity * flip], [spin, spin * pseudo])
    shot = simulate(balls, PARAMS, TABLE, ENGINE)
    kinds = shot.kind[1:int(shot.events) + 1]
    assert BALL_BALL in kinds and BALL_CUSHION in kinds
    states = states_at(shot, PARAMS, jnp.linspace(0.0, float(shot.time[int(shot.events)]) + 1.0, 301))
    reflected = jax.vmap(mirror)(states)
    np.testing.assert_allclose(states.position[:, 0], reflected.position[:, 1], atol=1e-12)
    np.testing.assert_allclose(states.velocity[:, 0], reflected.velocity[:, 1], atol=1e-12)
    np.testing.assert_allclose(states.angular_velocity[:, 0], reflected.angular_velocity[:, 1], atol=1e-9)


def test_states_at_the_event_times_are_the_recorded_states():
    balls = two_balls(PARAMS, [[-0.5, 0.0], [0.0, 0.02]], [[2.0, 0.0], [0.0, 0.0]], [[0.0, 0.0, 0.0], [0, 0, 0]])
    shot = simulate(balls, PARAMS, TABLE, ENGINE)
    count = int(shot.events)
    at = states_at(shot, PARAMS, shot.time[:count + 1])
    np.testing.assert_array_equal(at.position, shot.states.position[:count + 1])
    # and halfway between two events, the motion from the earlier one
    middle = 0.5 * (shot.time[1] + shot.time[2])
    after_first = jax.tree.map(lambda x: x[1], shot.states)
    np.testing.assert_array_equal(states_at(shot, PARAMS, middle).position,
                                  evolve(after_first, PARAMS, middle - shot.time[1]).position)
    assert [kind for _, kind, _, _ in shot.event_list()][:1] == ["ball-ball"]
    assert all(t2 >= t1 for (t1, *_), (t2, *_) in zip(shot.event_list(), shot.event_list()[1:], strict=False))


def test_a_spent_event_budget_is_reported_after_the_run():
    """On a slick cloth (μ_s = 0.02, μ_r = 0.002) with elastic cushions without friction, a ball rolling at 5 m/s
    runs hundreds of metres between cushions 1.27–2.54 m apart (the pockets closed): far more than 60 events."""
    params = Parameters(sliding_friction=0.02, rolling_friction=0.002)
    balls = two_balls(params, [[-0.5, 0.0], [0.9, 0.4]], [[4.0, 3.0], [0.0, 0.0]],
                      [rolling_spin([4.0, 3.0], R), [0, 0, 0]])
    engine = eqx.tree_at(lambda e: e.ball_cushion, ENGINE, StickingFriction(1.0, 0.0))
    closed = eqx.tree_at(lambda t: t.pocket_radii, TABLE, jnp.full(4, 1e-6))  # no centre gets this close
    with pytest.raises(EventBudgetExceeded, match="max_events=60"):
        simulate(balls, params, closed, engine)


def test_overlapping_balls_are_refused():
    balls = two_balls(PARAMS, [[0.0, 0.0], [R, 0.0]], [[1.0, 0.0], [0.0, 0.0]], [[0, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="must not overlap"):
        simulate(balls, PARAMS, TABLE, ENGINE)


def test_an_engine_refuses_bad_settings_by_name():
    with pytest.raises(ValueError, match="max_events"):
        Engine(max_events=0)
    with pytest.raises(ValueError, match="rest_speed"):
        Engine(rest_speed=-1.0)
    with pytest.raises(ValueError, match="parting_speed"):
        Engine(parting_speed=-1e-3)
    with pytest.raises(TypeError, match="ball_cushion must be a BallCushionModel"):
        Engine(ball_cushion=Frictionless())
    with pytest.raises(ValueError, match="restitution"):
        Frictionless(1.5)
    with pytest.raises(ValueError, match="friction"):
        StickingFriction(0.9, -0.1)


def cut_shot(theta):
    """A cut shot, the cue ball still sliding at contact: [restitution, μ_s, speed] -> every ball's final
    (resting) centre, (2, 2) flattened, and the sequence of events (kinds and balls) with their times."""
    restitution, sliding_friction, speed = theta[0], theta[1], theta[2]
    params = eqx.tree_at(lambda p: p.sliding_friction, PARAMS, sliding_friction)
    engine = eqx.tree_at(lambda e: e.ball_ball, ENGINE, Frictionless(restitution))
    balls = two_balls(params, jnp.array([[-0.3, -0.04], [0.0, 0.0]]), jnp.array([[1.0, 0.0], [0.0, 0.0]]) * speed,
                      jnp.zeros((2, 3)))
    shot = simulate(balls, params, TABLE, engine)
    final = states_at(shot, params, jnp.array(30.0)).position[:2].ravel()
    return final, (shot.kind, shot.ball, shot.other), shot.time


def test_forward_derivatives_of_the_final_positions_match_central_differences():
    """jacfwd with respect to the balls' restitution, the cloth's sliding friction and the cue ball's speed,
    against central differences where the sequence of events is the same on both sides."""
    theta = np.array([0.9, 0.2, 1.8])
    _, sequence, times = cut_shot(theta)
    kinds = sequence[0][1:]
    assert {int(k) for k in kinds} >= {BALL_BALL, BALL_CUSHION, TRANSITION}
    times = np.asarray(times)[np.isfinite(times)]
    assert np.diff(times).min() > 1e-3  # no two events so close that the steps below could swap them
    jacobian = np.asarray(jax.jacfwd(lambda t: cut_shot(t)[0])(theta))
    assert np.all(np.isfinite(jacobian)) and np.all(np.abs(jacobian).max(0) > 1e-3)
    for k in range(3):
        step = np.zeros(3)
        step[k] = 1e-6 * theta[k]
        (plus, plus_sequence, _), (minus, minus_sequence, _) = cut_shot(theta + step), cut_shot(theta - step)
        for a, b, c in zip(sequence, plus_sequence, minus_sequence, strict=True):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)
        difference = (np.asarray(plus) - np.asarray(minus)) / (2 * step[k])
        np.testing.assert_allclose(jacobian[:, k], difference, rtol=1e-6, atol=1e-6 * np.abs(difference).max())


def test_importing_the_engine_starts_no_computation():
    """Importing the engine and the pool table builds no array (an ``Engine``'s default models are built with
    it), so a ``diffimpact.configure()`` after the imports still comes before JAX's CPU backend starts (where it
    would warn, on x86)."""
    code = ("import json, warnings, diffimpact, diffimpact.billiards.rigid.pool\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    diffimpact.configure()\n"
            "print(json.dumps([str(w.message) for w in caught]))")
    environment = {name: value for name, value in os.environ.items() if name not in ("JAX_ENABLE_X64", "XLA_FLAGS")}
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                            timeout=120, cwd=Path(__file__).parents[3])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_balls_pressed_together_part_in_a_train_of_collisions_without_overlap():
    """A ball rolling at 0.5 m/s touches one sliding ahead of it at the same speed without spin: the one ahead
    decelerates at μ_s g, the other at μ_r g, so they press together at no normal speed. That contact counts at
    t = 0 and parts them at ``parting_speed`` (1 cm/s here, so that the train is short: a collision about every
    2 × 1 cm/s over μ_s g while the one ahead slides); they meet again and again until it rolls, with no overlap
    at any time and every collision parting them at ``parting_speed`` at least (with none, they would press
    together at t = 0 for ever)."""
    speed = 0.5
    balls = two_balls(PARAMS, [[-0.5, 0.1], [-0.5 + 2 * R, 0.1]], [[speed, 0.0], [speed, 0.0]],
                      [rolling_spin([speed, 0.0], R), [0, 0, 0]])
    engine = eqx.tree_at(lambda e: e.parting_speed, ENGINE, 0.01)
    shot = simulate(balls, PARAMS, TABLE, engine)
    count = int(shot.events)
    assert (float(shot.time[1]), int(shot.kind[1])) == (0.0, BALL_BALL)
    collisions = np.flatnonzero(np.asarray(shot.kind[1:count + 1]) == BALL_BALL) + 1
    assert len(collisions) >= 2
    parting = np.diff(np.asarray(shot.states.velocity[collisions, :2, 0]), axis=-1)
    assert np.all(parting >= 0.01 * (1 - 1e-12))
    times = jnp.linspace(0.0, float(shot.time[count]), 4001)
    assert np.min(ball_gaps(states_at(shot, PARAMS, times), PARAMS)) > -1e-12
    with pytest.raises(EventBudgetExceeded):
        simulate(balls, PARAMS, TABLE, eqx.tree_at(lambda e: e.parting_speed, ENGINE, 0.0))
