"""Gismeros Moreno et al.'s (2022) cut shot and cushion shot: conservation of angular momentum on the cloth, mirror symmetry,
Alciatore's closed forms, the central impact of a frictionless cushion.

Each fixture is one batch (one compilation) of ``billiard.cut_shots`` or
``billiard.cushion_rebounds``; the reproductions of ``diffimpact.reproduce.billiards``
run the same functions.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.contact import Alciatore
from diffimpact.contact.damping_factors import lankarani_nikravesh_law
from diffimpact.impact import central_impact
from diffimpact.impulse import alciatore
from diffimpact.reproduce.billiards import deflection_parameters
from diffimpact.scenes import billiard

SPEED = 1.0  # m/s, rolling cue ball
FRACTIONS = np.array([0.25, 0.5, 0.75, 0.5])
SIDES = np.array([1.0, 1.0, 1.0, -1.0])  # the last shot is the mirror image of the second


@pytest.fixture(scope="module")
def shots():
    p = deflection_parameters()
    cut = SIDES * np.asarray(alciatore.cut_angle(FRACTIONS))
    # The object ball sits 2R sin φ off the path; a negative φ puts it on the other side (a mirrored shot).
    outcome = billiard.cut_shots(p, Alciatore(), jnp.full(4, SPEED), jnp.asarray(cut), jnp.full(4, -0.1),
                                 jnp.zeros(4), jnp.full(4, 1.0))
    return p, {k: np.asarray(v) for k, v in outcome.items()}


def test_balls_roll_at_the_velocity_conserved_from_the_collision(shots):
    # The cloth's forces have no moment about the contact point, so the angular momentum there is kept
    # while the ball slides: the velocity it rolls at follows from the state right after the collision.
    # The simulation ends 0.7 s later, rolling; the contact lies R − δ_s/2 below the centre, not R.
    p, outcome = shots
    assert np.all(outcome["cue_slip_end"] < 2e-3)
    np.testing.assert_allclose(outcome["cue_speed_end"], np.linalg.norm(outcome["cue_rolling"], axis=1), rtol=2e-3)
    np.testing.assert_allclose(outcome["object_speed_end"], np.linalg.norm(outcome["object_rolling"], axis=1),
                               rtol=2e-3)
    np.testing.assert_allclose(outcome["deflection"], outcome["deflection_rolling"], atol=2e-3)


def test_rolling_cue_ball_follows_the_thirty_degree_rule(shots):
    # Eq. (4.1) of [Gismeros Moreno 2022] (Alciatore): frictionless, elastic balls; here e = 0.93 and μ(v) between the balls.
    _, outcome = shots
    np.testing.assert_allclose(outcome["cut"], np.abs(alciatore.cut_angle(FRACTIONS)), atol=1e-9)
    eq41 = np.asarray(alciatore.deflection_angle(outcome["cut"]))
    np.testing.assert_allclose(np.degrees(outcome["deflection_rolling"]), np.degrees(eq41), atol=1.0)


def test_throw_is_near_tp_a14(shots):
    # TP A.14 assumes an elastic collision with μ fixed at the initial slip speed; the simulation has
    # e = 0.93 and lets μ(v) follow the slip.
    _, outcome = shots
    assert np.all(outcome["throw"] > 0)
    np.testing.assert_allclose(outcome["throw"], outcome["throw_tpa14"], rtol=0.15)


def test_a_mirrored_cut_mirrors_everything(shots):
    _, outcome = shots
    for key in ("cut", "throw", "deflection", "deflection_rolling", "cue_speed_end", "object_speed_end"):
        np.testing.assert_allclose(outcome[key][3], outcome[key][1], rtol=1e-9, err_msg=key)
    np.testing.assert_allclose(outcome["cue_rolling"][3], outcome["cue_rolling"][1] * [1, -1], rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # half a minute to compile a batch of cushion impacts
def test_frictionless_centre_height_cushion_is_the_central_impact():
    # Faces at the ball's centre height, no friction anywhere: the ball meets the cushion head-on as a
    # 1-DOF Lankarani–Nikravesh impact of the ball's mass (the cloth's vertical force is normal to it).
    p = billiard.snooker(cushion_friction=0.0, cloth_friction=0.0)
    speeds = jnp.array([0.5, 1.0, 2.0, 3.0])
    velocity = np.asarray(billiard.cushion_rebounds(p, speeds, jnp.full(4, np.pi / 2), jnp.zeros(4), jnp.zeros(4),
                                                    nose=False))
    expected = [float(central_impact(lankarani_nikravesh_law(p.cushion_stiffness(), p.cushion_restitution, v), p.mass,
                                     v).restitution) * v for v in np.asarray(speeds)]
    np.testing.assert_allclose(-velocity[:, 1], expected, rtol=1e-6)
    np.testing.assert_allclose(velocity[:, [0, 2]], 0.0, atol=1e-12)


def test_shot_outcomes_are_nan_without_a_collision(shots):
    p, _ = shots
    miss = billiard.cut_shots(p, Alciatore(), jnp.full(4, SPEED), jnp.full(4, 0.3), jnp.full(4, -0.1),
                              jnp.full(4, 0.2), jnp.full(4, 0.05))  # the cue ball stops 0.15 m short
    assert all(np.all(np.isnan(np.asarray(v))) for v in miss.values())


def test_rolling_velocity_of_a_rolling_ball_is_its_velocity():
    p = billiard.Parameters()
    velocity = np.array([0.3, -0.7])
    q, v = billiard.ball_state(p, [[0.0, 0.0]], velocity[None], billiard.rolling_spin(p, velocity)[None])
    np.testing.assert_allclose(billiard.rolling_velocity(p, q, v, 0), velocity, rtol=1e-14)
    q, v = billiard.ball_state(p, [[0.0, 0.0]], velocity[None])  # sliding without spin: m R²/(m R² + J) of it
    np.testing.assert_allclose(billiard.rolling_velocity(p, q, v, 0), velocity / (1 + p.inertia / (p.mass * p.radius**2)),
                               rtol=1e-14)


@pytest.mark.parametrize("arguments, message", [
    ((0.0, np.pi / 2, 1.0, 0.0), r"speed must be finite and in \(0, inf\) m/s; got \[0.0"),
    ((1.0, 0.0, 1.0, 0.0), r"incidence must be finite and in \(0, 1.5708\] rad \(π/2: head-on\); got \[0.0"),
    ((1.0, 2.0, 1.0, 0.0), r"incidence must be finite and in \(0, 1.5708\]"),
    ((1.0, np.pi / 2, np.nan, 0.0), r"topspin_ratio must be finite"),
    ((1.0, np.pi / 2, 1.0, np.inf), r"sidespin_ratio must be finite"),
])
def test_cushion_shots_refuse_bad_numbers_before_any_solve(arguments, message):
    p = billiard.snooker()
    with pytest.raises(ValueError, match=message):
        billiard.cushion_impact(p, *arguments)
    with pytest.raises(ValueError, match=message):
        billiard.cushion_rebounds(p, *(np.full(3, x) for x in arguments))


@pytest.mark.parametrize("arguments, message", [
    ((-1.0, 0.3, 1.0), r"speed must be finite and in \(0, inf\) m/s; got \[-1.0"),
    ((1.0, np.pi / 2, 1.0), r"cut must be finite and in \(-1.5708, 1.5708\) rad"),
    ((1.0, 0.3, 0.0), r"duration must be finite and in \(0, inf\) s"),
])
def test_cut_shots_refuse_bad_numbers_before_any_solve(arguments, message):
    p = deflection_parameters()
    speed, cut, duration = arguments
    with pytest.raises(ValueError, match=message):
        billiard.cut_shot(p, Alciatore(), speed, cut, -0.1, 0.0, True, duration)
    with pytest.raises(ValueError, match=message):
        billiard.cut_shots(p, Alciatore(), *(np.full(2, x) for x in (speed, cut, -0.1, 0.0, duration)))
