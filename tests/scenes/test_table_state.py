"""Starts of shots on the full table (``billiard.table_state``, ``break_state``): bad ones refused, no simulation.

A rack that overlaps, a ball off the table, over a pocket, overlapping or inside a cushion, a non-finite number, a
break speed ≤ 0: a ``ValueError`` naming the ball and the problem with its numbers; under ``jit`` an
``EquinoxRuntimeError`` naming the problem. Touching (a gap of 0) is allowed.
"""

import re

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffimpact.scenes import billiard

P = billiard.Parameters()
R = P.radius
HALF = np.array([P.table_length, P.table_width]) / 2
RAILS = HALF + P.cushion_width
HOLES = billiard.pockets(P)
CUSHIONS = np.asarray(billiard.table_cushions(P))
STILL = np.zeros((2, 2))
NO_SPIN = np.zeros((2, 3))
#: The problems, as the traced check names them.
CENTRE = "every ball's centre must be finite"
MOTION = "every ball's velocity and spin must be finite"
OFF = "every ball must be on the table, its centre inside the rails"
POCKET = "no ball may start with its centre over a pocket's hole"
CUSHION = "no ball may overlap a cushion (touching is allowed)"
INSIDE = "no ball may start inside a cushion"
PAIR = "no two balls may overlap (touching is allowed)"
FAST = ("every ball's speed must be at most billiard.max_speed, at which its Hertz contact with a cushion would sink "
        "it by its radius (beyond that the contact laws cannot stop it)")
RAILS_TEXT = f"the rails at |x| = {RAILS[0]:.6g} m, |y| = {RAILS[1]:.6g} m"


def refused(centres, velocities=None, spins=None, **options):
    """The message of the ``ValueError`` that ``table_state`` raises (the balls at rest by default)."""
    count = len(np.atleast_2d(centres))
    velocities = np.zeros((count, 2)) if velocities is None else velocities
    spins = np.zeros((count, 3)) if spins is None else spins
    with pytest.raises(ValueError) as error:
        billiard.table_state(P, centres, velocities, spins, **options)
    return str(error.value)


def behind(k, depth):
    """The middle of cushion k's long face moved ``depth`` (m) off the table, into the rubber."""
    lip, other = CUSHIONS[k, 1], CUSHIONS[k, 2]
    along = (other - lip) / np.linalg.norm(other - lip)
    return (lip + other) / 2 + depth * np.array([along[1], -along[0]])


def test_the_break_and_a_touching_rack_are_accepted_and_rest_on_the_cloth():
    state = billiard.break_state(P)
    np.testing.assert_array_equal(state.q, billiard.ball_state(P, billiard.rack(P), np.zeros((16, 2)))[0])
    # rack(p, spacing=0): the neighbours touch, up to round-off (some pairs overlap by a unit in the last place)
    state = billiard.table_state(P, billiard.rack(P, spacing=0.0), np.zeros((16, 2)))
    np.testing.assert_array_equal(state.q.reshape(16, 7)[:, 2], P.resting_height())
    np.testing.assert_array_equal(state.v, 0.0)


def test_a_rack_that_overlaps_names_the_first_two_balls_and_the_overlap():
    # the touching rack of balls 10 µm smaller: neighbours 2 × 10 µm into each other, 30 pairs
    centres = np.asarray(billiard.rack(billiard.Parameters(radius=R - 1e-5), spacing=0.0))
    message = refused(centres)
    distance = np.linalg.norm(centres[2] - centres[1])
    assert message == (f"{PAIR}; got yellow at ({centres[1, 0]:.6g}, 0) m and blue at ({centres[2, 0]:.6g}, "
                       f"{centres[2, 1]:.6g}) m overlapping by {2 * R - distance:.3g} m (and 29 more)")
    assert f"{2 * R - distance:.3g}" == "2e-05"


@settings(deadline=None, max_examples=50)
@given(x=st.floats(-0.9, 0.9), y=st.floats(-0.3, 0.3), angle=st.floats(-np.pi, np.pi), gap=st.floats(0.0, 0.1))
def test_two_balls_any_gap_at_least_zero_is_accepted(x, y, angle, gap):
    # both clear of the cushions; touching up to the round-off of placing the second centre (within billiard.TOUCHING)
    first = np.array([x, y])
    second = first + (2 * R + gap) * np.array([np.cos(angle), np.sin(angle)])
    billiard.table_state(P, [first, second], STILL)


@settings(deadline=None, max_examples=50)
@given(x=st.floats(-1.0, 1.0), y=st.floats(-0.4, 0.4), angle=st.floats(-np.pi, np.pi),
       overlap=st.floats(1e-14, 2 * R))
def test_two_balls_any_overlap_is_refused_with_both_names_and_the_overlap(x, y, angle, overlap):
    first = np.array([x, y])
    second = first + (2 * R - overlap) * np.array([np.cos(angle), np.sin(angle)])
    message = refused([first, second])
    text = f"{PAIR}; got cue at ({x:.6g}, {y:.6g}) m and yellow at ({second[0]:.6g}, {second[1]:.6g}) m overlapping by "
    assert message.startswith(text) and message.endswith(" m")
    # the overlap to 3 digits, up to the round-off of placing the centres
    assert float(message[len(text):-2]) == pytest.approx(overlap, rel=5e-3, abs=1e-15)


#: The one-ball table with the cushions touching at the ball's centre height and at the nose height h = 7R/5.
ONE_BALL = {None: billiard.table_model(P, balls=1), P.nose_height(): billiard.table_model(P, 1, P.nose_height())}


@eqx.filter_jit
def cushion_penetration(model, q):
    """The penetration of the one ball into each of the six cushions in ``model``, as the simulation sees it."""
    return model.forces[-1].penetration(model.split(q))  # one ball: no ball–ball family


@pytest.mark.parametrize("nose_height", ONE_BALL, ids=["centre-height", "nose-height"])
@settings(deadline=None, max_examples=25)
@given(x=st.floats(-1.0, 1.0), distance=st.floats(0.5 * R, 2 * R))
def test_a_ball_near_a_cushion_is_refused_exactly_where_the_models_cushion_contact_overlaps(nose_height, x, distance):
    # in front of the long face of the left-foot and left-head cushions (y = W/2), clear of the side pocket's jaws
    x = np.copysign(0.2 + abs(x) * 0.9, x)
    centre = np.array([[x, HALF[1] - distance]])
    q, _ = billiard.ball_state(P, centre, np.zeros(2))
    penetration = np.asarray(cushion_penetration(ONE_BALL[nose_height], q))
    # the model's contact against the closed form: the face's plane y = W/2 (at the centre height) or its nose, a
    # line at height h along it, R − √(d² + (h − z)²) with the resting centre at z = R − δ_s
    rise = 0.0 if nose_height is None else nose_height - P.resting_height()
    assert penetration.max() == pytest.approx(R - np.hypot(distance, rise), abs=1e-12)
    if penetration.max() <= billiard.TOUCHING:
        billiard.table_state(P, centre, np.zeros(2), nose_height=nose_height)
        return
    k = int(np.argmax(penetration))
    assert billiard.CUSHIONS[k] == ("left-foot" if x > 0 else "left-head")
    assert refused(centre, nose_height=nose_height) == (
        f"{CUSHION}; got cue at ({x:.6g}, {centre[0, 1]:.6g}) m overlapping the {billiard.CUSHIONS[k]} cushion by "
        f"{penetration[k]:.3g} m")


def test_the_nose_height_moves_the_limit_to_where_the_nose_touches_the_ball():
    # the nose at h = 7R/5 touches a resting ball (centre at z = R − δ_s) √(R² − (h − z)²) from its line, < R
    reach = np.sqrt(R**2 - (P.nose_height() - P.resting_height()) ** 2)
    centre = [[0.5, HALF[1] - (reach + R) / 2]]
    billiard.table_state(P, centre, np.zeros(2), nose_height=P.nose_height())
    assert refused(centre).startswith(f"{CUSHION}; got cue at (0.5, ")


@pytest.mark.parametrize("k", range(6), ids=billiard.CUSHIONS)
def test_a_ball_inside_a_cushions_rubber_is_refused_and_one_in_front_of_it_overlaps(k):
    # deeper than R (no overlap with the nose) but in front of the rail: inside the rubber
    centre = behind(k, (R + P.cushion_width) / 2)
    assert refused([centre]) == (
        f"{INSIDE}; got cue at ({centre[0]:.6g}, {centre[1]:.6g}) m, inside the {billiard.CUSHIONS[k]} cushion")
    centre = behind(k, -R / 2)
    assert refused([centre]) == (
        f"{CUSHION}; got cue at ({centre[0]:.6g}, {centre[1]:.6g}) m overlapping the {billiard.CUSHIONS[k]} "
        f"cushion by {R / 2:.3g} m")
    # just behind the nose: inside the rubber, though the ball overlaps the nose too (it was said to overlap it)
    centre = behind(k, R / 2)
    assert refused([centre]) == (
        f"{INSIDE}; got cue at ({centre[0]:.6g}, {centre[1]:.6g}) m, inside the {billiard.CUSHIONS[k]} cushion")


@pytest.mark.parametrize("centre", [(RAILS[0] + 0.01, 0.0), (0.3, -RAILS[1]), (-RAILS[0], RAILS[1])])
def test_a_ball_on_or_beyond_the_rails_is_off_the_table(centre):
    assert refused([centre]) == (
        f"{OFF}; got cue at ({centre[0]:.6g}, {centre[1]:.6g}) m, {RAILS_TEXT}")


@pytest.mark.parametrize("j", range(6), ids=billiard.POCKETS)
def test_a_ball_over_a_pockets_hole_is_refused_with_the_pocket(j):
    # on the pocket's axis, half the hole's radius past the slate's edge (inside the rails for every pocket)
    radius = float(HOLES.radii[j])
    centres = np.array(billiard.rack(P))
    centres[5] = np.asarray(HOLES.drops[j]) + radius / 2 * np.asarray(HOLES.axes[j])
    assert refused(centres) == (
        f"{POCKET}; got black at ({centres[5, 0]:.6g}, {centres[5, 1]:.6g}) m, {radius / 2:.3g} m inside the edge of "
        f"the {billiard.POCKETS[j]} pocket")


OK = np.array([[-0.6, 0.0], [0.6, 0.0]])


def bad_starts():
    """One bad start of two balls for each problem, (centres, velocities, spins, message): yellow is at fault.

    The same shapes throughout, so that the traced check compiles once.
    """
    def with_yellow(xy):
        centres = OK.copy()
        centres[1] = xy
        return centres

    velocities, spins = STILL.copy(), NO_SPIN.copy()
    velocities[1] = (np.inf, 0.0)
    spins[1, 2] = np.nan
    fast = STILL.copy()
    fast[1] = (0.0, 40.0)
    overlap = behind(0, -0.25 * R)
    inside = behind(0, (R + P.cushion_width) / 2)
    hole = np.asarray(HOLES.drops[0]) + float(HOLES.radii[0]) / 2 * np.asarray(HOLES.axes[0])
    return {
        "centre": (with_yellow((np.nan, 0.0)), STILL, NO_SPIN, f"{CENTRE}; got yellow at (nan, 0) m"),
        "velocity": (OK, velocities, NO_SPIN, f"{MOTION}; got yellow moving at (inf, 0) m/s, spinning at "
                                               "[0.0, 0.0, 0.0] rad/s"),
        "spin": (OK, STILL, spins, f"{MOTION}; got yellow moving at (0, 0) m/s, spinning at [nan, nan, nan] rad/s"),
        "fast": (OK, fast, NO_SPIN, f"{FAST}; got yellow moving at 40 m/s, max_speed "
                                    f"{float(billiard.max_speed(P)):.4g} m/s"),
        "off": (with_yellow((2.0, 0.0)), STILL, NO_SPIN, f"{OFF}; got yellow at (2, 0) m, {RAILS_TEXT}"),
        "pocket": (with_yellow(hole), STILL, NO_SPIN, f"{POCKET}; got yellow at ({hole[0]:.6g}, {hole[1]:.6g}) m, "
                                                      f"{float(HOLES.radii[0]) / 2:.3g} m inside the edge of the "
                                                      "foot-left pocket"),
        "cushion": (with_yellow(overlap), STILL, NO_SPIN, f"{CUSHION}; got yellow at ({overlap[0]:.6g}, 0) m "
                                                          f"overlapping the foot cushion by {0.75 * R:.3g} m"),
        "inside": (with_yellow(inside), STILL, NO_SPIN, f"{INSIDE}; got yellow at ({inside[0]:.6g}, 0) m, inside the "
                                                        "foot cushion"),
        "pair": (with_yellow((-0.6 + 2 * R - 1e-3, 0.0)), STILL, NO_SPIN,
                 f"{PAIR}; got cue at (-0.6, 0) m and yellow at ({-0.6 + 2 * R - 1e-3:.6g}, 0) m overlapping by "
                 "0.001 m"),
    }


BAD = bad_starts()


@pytest.mark.parametrize("problem", BAD)
def test_each_problem_is_refused_with_its_message(problem):
    centres, velocities, spins, message = BAD[problem]
    assert refused(centres, velocities, spins) == message


TRACED = eqx.filter_jit(lambda centres, velocities, spins: billiard.table_state(P, centres, velocities, spins).q)


@pytest.mark.parametrize("problem", BAD)
def test_each_problem_is_refused_at_run_time_when_traced(problem):
    centres, velocities, spins, message = BAD[problem]
    np.testing.assert_array_equal(TRACED(OK, STILL, NO_SPIN), billiard.table_state(P, OK, STILL).q)
    with pytest.raises(eqx.EquinoxRuntimeError, match=re.escape(message.split("; got")[0])):
        TRACED(centres, velocities, spins)


BREAK = eqx.filter_jit(lambda speed: billiard.break_state(P, 4, speed).v)


@pytest.mark.parametrize("speed", [0.0, -1.0, np.nan, np.inf])
def test_a_break_speed_that_is_not_positive_and_finite_is_refused(speed):
    with pytest.raises(ValueError, match=re.escape(f"speed must be finite and in (0, inf); got [{speed}]")):
        billiard.break_state(P, speed=speed)
    with pytest.raises(ValueError, match=re.escape(f"speed must be finite and in (0, inf); got [{speed}]")):
        billiard.break_state(billiard.Parameters(speed=speed))


def test_a_traced_break_speed_of_zero_is_refused_at_run_time():
    assert float(BREAK(jnp.asarray(3.0))[0]) == 3.0
    with pytest.raises(eqx.EquinoxRuntimeError, match=re.escape("speed must be finite and in (0, inf)")):
        BREAK(jnp.asarray(0.0))


@pytest.mark.parametrize("shape", [(17, 2), (0, 2), (3, 3), (2,)])
def test_centres_must_be_one_row_per_ball_of_the_rack(shape):
    with pytest.raises(ValueError, match=re.escape(f"centres must have shape (n, 2), a row for each of the first n "
                                                   f"of RACK_BALLS (1 <= n <= 16); got shape {shape}")):
        billiard.table_state(P, np.zeros(shape), np.zeros(2))


@pytest.mark.parametrize("velocities, spins, message", [
    ([[2.0, 0.0]], None, "velocities must have shape (2, 2), a row (ṙ_x, ṙ_y) (m/s) for each of the 2 balls; got "
                         "shape (1, 2)"),
    ([[2.0, 0.0]] * 3, None, "velocities must have shape (2, 2), a row (ṙ_x, ṙ_y) (m/s) for each of the 2 balls; "
                             "got shape (3, 2)"),
    (STILL, [[0.0, 0.0, 5.0]], "spins must have shape (2, 3), a row ω (rad/s) for each of the 2 balls; got shape "
                               "(1, 3)"),
])
def test_velocities_and_spins_need_a_row_for_every_ball(velocities, spins, message):
    """(One row was broadcast to every ball: the object ball moved too.)"""
    with pytest.raises(ValueError, match=re.escape(message)):
        billiard.table_state(P, OK, velocities, spins)


def test_max_speed_sinks_a_ball_into_the_cushion_by_its_radius():
    """Hertz's impact m ẍ = −K x^(3/2) integrated by SciPy from ẋ = ``max_speed`` reaches x = R at rest: the
    cushion is the softer contact (the ball pair's limit, with m/2 and its own K, is faster)."""
    from scipy.integrate import solve_ivp

    speed, stiffness = float(billiard.max_speed(P)), float(P.cushion_stiffness())
    stop = lambda t, y: y[1]  # noqa: E731
    stop.terminal = True
    run = solve_ivp(lambda t, y: [y[1], -stiffness * max(y[0], 0.0) ** 1.5 / P.mass], (0.0, 1.0), [0.0, speed],
                    events=stop, rtol=1e-12, atol=1e-15)
    assert run.y[0, -1] == pytest.approx(R, rel=1e-8)
    assert np.sqrt(4 * float(P.ball_stiffness()) * R**2.5 / (5 * P.mass / 2)) > speed
