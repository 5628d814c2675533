"""Event times against closed forms of rolling balls and against a dense scan of the motion; who takes part."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.billiards.rigid import Balls, Parameters, ball_states, evolve, rolling_spin, transition_times
from diffimpact.billiards.rigid.detection import (
    BALL_BALL,
    BALL_POCKET,
    TRANSITION,
    Table,
    ball_pairs,
    event_times,
    next_event,
)
from diffimpact.billiards.rigid.motion import POCKETED

PARAMS = Parameters()
R, MU_R, G = PARAMS.radius, PARAMS.rolling_friction, PARAMS.gravity
LENGTH, WIDTH = 2.54, 1.27
X, Y = LENGTH / 2, WIDTH / 2
#: The four cushions of a 9-ft table's playing surface, counter-clockwise, and two pockets.
CUSHIONS = np.array([[[-X, -Y], [X, -Y]], [[X, -Y], [X, Y]], [[X, Y], [-X, Y]], [[-X, Y], [-X, -Y]]])
TABLE = Table(CUSHIONS, [[0.0, Y + 0.03], [X, Y]], [0.06, 0.05])
times_jit = jax.jit(event_times)
next_jit = jax.jit(lambda balls, table: next_event(event_times(balls, PARAMS, table)))


def rolling_time(speed, distance):
    """The time a ball rolling at ``speed`` takes to cover ``distance``: s = v t − μ_r g t²/2."""
    return (speed - np.sqrt(speed**2 - 2 * MU_R * G * distance)) / (MU_R * G)


def three_balls(position, velocity, angular_velocity, pocketed=()):
    balls = ball_states(PARAMS, position, velocity, angular_velocity)
    return Balls(balls.position, balls.velocity, balls.angular_velocity,
                 balls.motion.at[jnp.asarray(pocketed, int)].set(POCKETED))


def test_a_rolling_ball_reaches_a_resting_ball_at_the_rolling_closed_form():
    speed, gap = 1.2, 0.5
    balls = three_balls([[-0.3, 0.1], [-0.3 + 2 * R + gap, 0.1], [0.8, -0.4]],
                        [[speed, 0.0], [0.0, 0.0], [0.0, 0.0]], [rolling_spin([speed, 0.0], R), [0, 0, 0], [0, 0, 0]])
    times = times_jit(balls, PARAMS, TABLE)
    np.testing.assert_allclose(times.ball_ball[0, 1], rolling_time(speed, gap), rtol=1e-13)
    np.testing.assert_array_equal(times.ball_ball, times.ball_ball.T)
    assert np.all(np.isinf(times.ball_ball[2])) and np.all(np.isinf(np.diagonal(times.ball_ball)))
    event = next_jit(balls, TABLE)
    assert (int(event.kind), int(event.ball), int(event.other)) == (BALL_BALL, 0, 1)


def test_a_rolling_ball_reaches_a_cushion_and_a_pocket_at_the_rolling_closed_form():
    speed = 2.0
    balls = three_balls([[0.5, -0.2], [0.0, 0.0], [0.0, Y - 0.2]], [[speed, 0.0], [0, 0], [0.0, speed]],
                        [rolling_spin([speed, 0.0], R), [0, 0, 0], rolling_spin([0.0, speed], R)])
    times = times_jit(balls, PARAMS, TABLE)
    np.testing.assert_allclose(times.ball_cushion[0, 1], rolling_time(speed, X - R - 0.5), rtol=1e-13)
    assert np.isinf(times.ball_cushion[0, [0, 2, 3]]).all()
    # the third ball enters the first pocket's circle (radius 0.06 about y = Y + 0.03) before its centre gets
    # within R of the cushion y = Y
    np.testing.assert_allclose(times.ball_pocket[2, 0], rolling_time(speed, 0.2 + 0.03 - 0.06), rtol=1e-13)
    np.testing.assert_allclose(times.ball_cushion[2, 2], rolling_time(speed, 0.2 - R), rtol=1e-13)
    assert np.isinf(times.ball_pocket[0]).all() and np.isinf(times.ball_pocket[1]).all()
    event = next_jit(balls, TABLE)
    assert (int(event.kind), int(event.ball), int(event.other)) == (BALL_POCKET, 2, 0)


def test_a_cushion_counts_only_between_its_end_points():
    """The right cushion cut short to y ∈ [0, Y]: a ball below its end passes, one above it hits."""
    cushions = CUSHIONS.copy()
    cushions[1, 0, 1] = 0.0
    table = Table(cushions, TABLE.pocket_centres, TABLE.pocket_radii)
    speed = 1.0
    balls = three_balls([[0.9, -0.1], [0.9, 0.1], [0.0, 0.0]], [[speed, 0.0], [speed, 0.0], [0, 0]],
                        [rolling_spin([speed, 0.0], R), rolling_spin([speed, 0.0], R), [0, 0, 0]])
    times = times_jit(balls, PARAMS, table)
    assert np.isinf(times.ball_cushion[0, 1])
    np.testing.assert_allclose(times.ball_cushion[1, 1], rolling_time(speed, X - R - 0.9), rtol=1e-13)


def test_balls_at_rest_spinning_or_pocketed_meet_nothing():
    """Touching, overlapping or in a pocket's circle: without motion only the spin's end is an event."""
    balls = three_balls([[0.0, 0.0], [2 * R, 0.0], [2 * R + 0.01, 0.0]], [[0, 0], [0, 0], [3.0, 0.0]],
                        [[0, 0, 0], [0, 0, 20.0], rolling_spin([3.0, 0.0], R)], pocketed=[2])
    times = times_jit(balls, PARAMS, TABLE)
    assert np.isinf(times.ball_ball).all() and np.isinf(times.ball_cushion).all()
    assert np.isinf(times.ball_pocket).all()
    np.testing.assert_allclose(times.transition, [np.inf, transition_times(balls, PARAMS)[1], np.inf])
    event = next_jit(balls, TABLE)
    assert (int(event.kind), int(event.ball), int(event.other)) == (TRANSITION, 1, -1)


@jax.jit
def gaps(balls, times):
    """At each of the six ``times``: the pairs' |Δr|² − (2R)² (three) and the balls' y + Y − R (three)."""
    states = jax.vmap(lambda t: evolve(balls, PARAMS, t))(times)
    first, second = ball_pairs(3)
    pairs = jnp.sum((states.position[:, first] - states.position[:, second]) ** 2, -1) - 4 * R**2
    cushion = states.position[..., 1] + Y - R
    return jnp.diagonal(jnp.concatenate([pairs, cushion], axis=-1))


def scan_first_contacts(balls, horizons, steps=4001):
    """The first time each of the six gaps (``gaps``) is ≤ 0 before its horizon, by a dense scan of ``evolve``
    and bisection (∞ where the scan finds none)."""
    grid = np.linspace(0.0, 1.0, steps)[:, None] * horizons
    values = np.stack([np.asarray(gaps(balls, row)) for row in grid])
    hit = (values <= 0).any(axis=0)
    step = np.argmax(values <= 0, axis=0)
    low, high = grid[np.maximum(step - 1, 0), range(6)], grid[step, range(6)]
    for _ in range(60):
        middle = 0.5 * (low + high)
        above = np.asarray(gaps(balls, middle)) > 0
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return np.where(hit, high, np.inf)


@pytest.mark.parametrize("case", range(4))
def test_curved_paths_of_sliding_balls_against_a_dense_scan_of_the_motion(case):
    """Balls struck with draw, follow and side spin slide on parabolas; the quartic's first root is where a
    scan of ``evolve`` first finds the centres 2R apart, and the quadratic's where a centre is R from the
    cushion y = −Y."""
    rng = np.random.default_rng(case)
    position = np.array([[-0.25, -0.45], [0.0, -0.4], [0.2, -0.5]]) + rng.uniform(-0.02, 0.02, (3, 2))
    velocity = np.array([[2.0, -0.5], [-0.5, -1.5], [-1.5, -0.5]]) * rng.uniform(0.8, 1.2, (3, 1))
    spin = rng.normal(scale=60.0, size=(3, 3))
    balls = ball_states(PARAMS, position, velocity, spin)
    times = times_jit(balls, PARAMS, TABLE)
    tau = np.asarray(transition_times(balls, PARAMS))
    first, second = ball_pairs(3)
    expected = scan_first_contacts(balls, np.concatenate([np.minimum(tau[first], tau[second]), tau]))
    pairs = times.ball_ball[first, second]
    np.testing.assert_allclose(np.concatenate([pairs, times.ball_cushion[:, 0]]), expected, rtol=1e-9)
    assert np.isfinite(pairs).sum() >= 2 and np.isfinite(times.ball_cushion[:, 0]).any()
    # the rows of two balls alone are those rows of every ball's
    rows = times_jit(balls, PARAMS, TABLE, jnp.array([2, 0]))
    for name in ("ball_ball", "ball_cushion", "ball_tip", "ball_pocket", "transition"):
        np.testing.assert_array_equal(getattr(rows, name), getattr(times, name)[np.array([2, 0])])


def test_the_contact_time_is_differentiable_in_the_speed():
    """d/dv of the rolling closed form (v − √(v² − 2 μ_r g s))/(μ_r g)."""
    gap = 0.5

    def contact_time(speed):
        balls = ball_states(PARAMS, jnp.array([[-0.3, 0.1], [-0.3 + 2 * R + gap, 0.1], [0.8, -0.4]]),
                            jnp.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]) * speed,
                            jnp.array([[0.0, 1.0 / R, 0.0], [0, 0, 0], [0, 0, 0]]) * speed)
        return event_times(balls, PARAMS, TABLE).ball_ball[0, 1]

    speed = 1.2
    root = np.sqrt(speed**2 - 2 * MU_R * G * gap)
    np.testing.assert_allclose(jax.jit(jax.grad(contact_time))(speed), (1 - speed / root) / (MU_R * G), rtol=1e-12)


def test_a_table_refuses_bad_arrays():
    with pytest.raises(ValueError, match=r"shape \(K, 2, 2\)"):
        Table(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="distinct end points"):
        Table(np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="give both or neither"):
        Table(CUSHIONS, pocket_centres=[[0.0, 0.0]])
    with pytest.raises(ValueError, match="pocket_radii"):
        Table(CUSHIONS, [[0.0, 0.0]], [-0.05])
    with pytest.raises(ValueError, match=r"tips must have shape \(M, 2\)"):
        Table(CUSHIONS, tips=[0.0, 0.0])
    with pytest.raises(ValueError, match="tip_radii"):
        Table(CUSHIONS, tips=[[0.0, 0.0]], tip_radii=[-0.01])
