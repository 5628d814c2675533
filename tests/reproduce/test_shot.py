"""``diffimpact shot``: any shot of the cue ball on the full table (``table.shot``, ``billiard.cue_strike``,
``billiard.ghost_ball_aim``)."""

import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.cli import main
from diffimpact.impulse.alciatore import throw_angle
from diffimpact.io import read_csv
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

P = billiard.Parameters()


def test_cue_strike_rolls_at_topspin_one_and_spins_about_the_vertical_with_sidespin():
    aim = np.radians(30.0)
    velocity, spin = billiard.cue_strike(P, 2.0, aim, topspin_ratio=1.0)
    np.testing.assert_allclose(velocity, 2.0 * np.array([np.cos(aim), np.sin(aim)]), rtol=1e-15)
    np.testing.assert_allclose(spin, billiard.rolling_spin(P, velocity), rtol=1e-14)
    # a rolling ball's contact point is at rest: v + ω × (−R ẑ) = 0
    np.testing.assert_allclose(np.r_[velocity, 0.0] + np.cross(spin, [0.0, 0.0, -P.radius]), 0.0, atol=1e-14)
    _, spin = billiard.cue_strike(P, 2.0, aim, topspin_ratio=-0.5, sidespin_ratio=0.25)
    np.testing.assert_allclose(spin, -0.5 * np.asarray(billiard.rolling_spin(P, velocity)) + [0.0, 0.0, 0.25 * 2.0 / P.radius],
                               rtol=1e-14)
    with pytest.raises(ValueError, match="speed"):
        billiard.cue_strike(P, 0.0, aim)


def test_ghost_ball_aim_sends_the_cue_ball_to_the_point_two_radii_behind_the_object_ball():
    cue, ball = np.array([0.6, 0.1]), np.array([1.0, 0.4])
    aim = billiard.ghost_ball_aim(P, cue, ball, "foot-left")
    hole = np.asarray(billiard.pockets(P).centres[billiard.POCKETS.index("foot-left")])
    towards = (hole - ball) / np.linalg.norm(hole - ball)
    ghost = ball - 2 * P.radius * towards
    direction = np.array([np.cos(aim), np.sin(aim)])
    path = ghost - cue
    assert abs(direction[0] * path[1] - direction[1] * path[0]) < 1e-12  # the aim line runs through G
    assert direction @ path > 0
    with pytest.raises(ValueError, match="the cut is 180.0°"):  # the cue ball beyond the ball, towards the pocket
        billiard.ghost_ball_aim(P, ball + 0.2 * towards, ball, "foot-left")
    with pytest.raises(ValueError, match="pocket must be one of"):
        billiard.ghost_ball_aim(P, cue, ball, "middle")


@pytest.mark.parametrize("cue, ball, message", [
    ((np.nan, 0.0), (0.9, 0.3), r"cue must be finite; got \[nan\]"),
    ((0.0, 0.0), (np.inf, 0.3), r"ball must be finite; got \[inf\]"),
    ((0.0, 0.0, 0.0), (0.9, 0.3), r"cue must be a centre \(x, y\) \(m\); got shape \(3,\)"),
    ((0.0, 0.0), "0.9", "ball must be a real number"),
])
def test_ghost_ball_aim_refuses_centres_that_are_not_finite_points(cue, ball, message):
    """(A NaN centre gave a NaN aim.)"""
    with pytest.raises((ValueError, TypeError), match=message):
        billiard.ghost_ball_aim(P, cue, ball, "foot-left")


def test_ghost_ball_aim_refuses_a_ball_on_the_holes_centre():
    hole = np.asarray(billiard.pockets(P).centres[billiard.POCKETS.index("foot-left")])
    with pytest.raises(ValueError, match="is on the centre of the foot-left pocket's hole"):
        billiard.ghost_ball_aim(P, (0.0, 0.0), hole, "foot-left")


def test_a_shot_aimed_at_the_ghost_ball_point_pockets_the_object_ball(tmp_path, capsys):
    """The cue ball, struck without spin, slides into rolling and cuts the yellow ball 5° into the foot-left pocket:
    the yellow ball leaves the collision along the line to the hole, off it by no more than Alciatore's throw of a
    stun shot at that cut (the largest throw: topspin lowers it), and drops."""
    cue, ball = (0.6, 0.1), (1.0, 0.4)
    status = main(["shot", "--cue", *map(str, cue), "--ball", *map(str, ball), "--pocket", "foot-left",
                   "--duration", "0.6", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0
    assert "pocketed: yellow in the foot-left pocket at 0.5" in out
    assert "cue–yellow" in out and "left the table: none" in out and "the cloth undamped (the paper's Hertz)" in out
    events = read_csv(tmp_path / "shot-events.csv")
    assert list(events["contact"]) == ["cue–yellow", "cue–yellow"] and list(events["onset"]) == [1.0, 0.0]
    columns = read_csv(tmp_path / "shot.csv")
    after = np.searchsorted(columns["t_s"], events["t_s"][1]) + 2  # a save clear of the collision
    departure = np.array([columns["x_yellow_m"][after + 5] - columns["x_yellow_m"][after],
                          columns["y_yellow_m"][after + 5] - columns["y_yellow_m"][after]])
    hole = np.asarray(billiard.pockets(P).centres[0])
    line = hole - np.asarray(ball)
    off = np.arctan2(line[0] * departure[1] - line[1] * departure[0], line @ departure)
    aim = billiard.ghost_ball_aim(P, cue, ball, "foot-left")
    cut = np.arccos(np.array([np.cos(aim), np.sin(aim)]) @ line / np.linalg.norm(line))
    assert 0 < abs(off) <= throw_angle(cut, 1.5)
    assert (tmp_path / "shot.png").stat().st_size > 10_000
    assert "a ball hopped higher than its radius" not in out
    # the summary's highest hop is the saves' (the cut's friction pushes the yellow ball down into the cloth, which
    # throws it up a fraction of a millimetre)
    height, hopper, when = re.search(r"on the cloth \(at the saves\): ([\d.]+) mm, (\w+) at ([\d.]+) s", out).groups()
    heights = np.stack([columns[f"z_{name}_m"] for name in ("cue", "yellow")], axis=1) - P.resting_height()
    save, ball = np.unravel_index(np.argmax(heights), heights.shape)
    assert (float(height), hopper, float(when)) == (round(1e3 * heights[save, ball], 2), ("cue", "yellow")[ball],
                                                    round(columns["t_s"][save], 3))


def test_a_ball_launched_sliding_rolls_at_the_closed_form_speed_and_keeps_it_at_the_shots_tolerance():
    """By the angular momentum about the contact point, a ball launched sliding without spin at v0 rolls at
    v0/(1 + J/(m a²)), a = R − δ_s/2 the lever of the contact point (the middle of the overlap), and keeps that speed:
    the cloth's friction exerts no force on a slip below its band. The program is the shot's of the test above
    (two balls, 0.6 s, ``table.SHOT_RTOL``): the yellow ball rests far away. At the break's rtol = 1e-3 the same
    ball rolls 0.34 % slow by 0.8 s and slows on (``validation/slide_to_roll.py``)."""
    lever = P.radius - P.static_deflection() / 2
    exact = 1.0 / (1.0 + P.inertia / (P.mass * lever**2))
    velocity, spin = billiard.cue_strike(P, 2.0, 0.0)
    state = billiard.table_state(P, [(-1.2, 0.0), (1.0, -0.5)], [velocity, (0.0, 0.0)], [spin, (0.0, 0.0, 0.0)])
    times = table.save_times(0.6)
    run = table.integrate(billiard.table_model(P, 2), state, times, table.MAX_EVENTS, rtol=table.SHOT_RTOL)
    speed = np.asarray(run.v)[:, 0] / 2.0
    sliding_ends = 2.0 * (1.0 - exact) / (P.cloth_friction * P.gravity)  # v0 (1 − ratio)/(μ g): 0.29 s
    assert speed[np.searchsorted(times, sliding_ends) - 10] > exact + 1e-3  # still sliding 20 ms before
    rolling = speed[np.asarray(times) > sliding_ends + 0.05]
    np.testing.assert_allclose(rolling, exact, rtol=3e-5)
    assert int(run.events.count) == 0


def test_a_pocketed_balls_contacts_with_the_other_balls_go_with_its_cushions_when_its_top_passes_below_the_cloth():
    """``table_cloth``: a pocketed ball falls on out of the scene, and where its top passes below the cloth
    (``HoledPlane.exit``) its ball–ball contacts are removed with its cushions', so that it meets nothing under the
    table; the other ball's contacts stay. The cue ball rolls down the foot-left pocket's axis at 1 m/s, the yellow
    ball rests at the table's centre; the program is the shot's (as in the test above). Its fall from the cloth's
    removal to the exit is the free fall of its centre from R − δ_s to −R that began where the cloth's force began to
    fade, at most δ_s/v' before the removal, v' its rolling speed (as for one ball, ``tests/scenes/test_table_model.py``)."""
    pocket = billiard.POCKETS.index("foot-left")
    holes = billiard.pockets(P)
    axis, centre = (np.asarray(x[pocket]) for x in (holes.axes, holes.centres))
    velocity = 1.0 * axis
    state = billiard.table_state(P, [centre - 0.3 * axis, (0.0, 0.0)], [velocity, (0.0, 0.0)],
                                 [billiard.rolling_spin(P, velocity), (0.0, 0.0, 0.0)])
    run = table.integrate(billiard.table_model(P, 2), state, table.save_times(0.6), table.MAX_EVENTS,
                          rtol=table.SHOT_RTOL)
    forces = billiard.table_forces(2)
    cloth, pair, cushions = (np.asarray(run.removals[forces.index(name)])
                             for name in ("cloth", "ball–ball", "ball–cushion"))
    assert [ball for _, ball, _ in billiard.pocketed(P, run, balls=2)] == ["cue"]
    assert np.isfinite(cloth[0]) and cloth[1] == np.inf
    cue, yellow = cushions[:6], cushions[6:]  # the family's members ball by ball, six cushions each
    assert np.all(cue == pair[0]) and np.all(yellow == np.inf)
    indentation = float(P.static_deflection())
    fall = np.sqrt(2 * (2 * P.radius - indentation) / P.gravity)
    assert fall - indentation / 0.999 <= pair[0] - cloth[0] <= fall  # (it rolls at v' within 4e-4 below 1 m/s)
    assert int(run.events.count) == 0  # the yellow ball was never touched
    np.testing.assert_allclose(np.asarray(run.q)[-1, 7:9], 0.0, atol=1e-12)


def test_bad_shots_are_one_line_naming_the_problem(tmp_path, capsys):
    assert main(["shot", "--ball", "-0.62", "0.0", "--full-ball", "--out", str(tmp_path)]) == 2
    assert "no two balls may overlap (touching is allowed); got cue at (-0.635, 0) m and yellow at (-0.62, 0) m" \
        in capsys.readouterr().err
    # placed before aimed: a cue ball off the table is said to be, not to make an impossible cut
    assert main(["shot", "--cue", "2", "0", "--out", str(tmp_path)]) == 2
    assert "every ball must be on the table, its centre inside the rails; got cue at (2, 0) m" \
        in capsys.readouterr().err
    assert main(["shot", "--pocket", "middle", "--out", str(tmp_path)]) == 2
    assert "pocket must be one of foot-left" in capsys.readouterr().err
    assert main(["shot", "--speed", "-1", "--out", str(tmp_path)]) == 2
    assert "speed must be" in capsys.readouterr().err
    # (at 1e6 m/s the cue ball tunnelled through a ball and the foot cushion and the run exited 0)
    assert main(["shot", "--speed", "1e6", "--duration", "0.02", "--out", str(tmp_path)]) == 2
    assert (f"got cue moving at 1e+06 m/s, max_speed {float(billiard.max_speed(P)):.4g} m/s" in
            capsys.readouterr().err)
    assert main(["shot", "--cloth-damping-ratio", "-0.1", "--out", str(tmp_path)]) == 2
    assert "cloth_damping_ratio must be finite and in [0, inf)" in capsys.readouterr().err
    assert main(["shot", "--sensitivity", "speed", "radius", "--out", str(tmp_path)]) == 2
    assert "sensitivity cannot differentiate by radius: name the strike's speed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["shot", "--aim", "10", "--pocket", "foot-left"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_rolling_ball_into_a_centre_height_cushion_is_thrown_up_by_its_friction_and_the_summary_says_so(
        tmp_path, capsys):
    """The paper's cushion face touches the ball at its centre height, where a rolling ball's surface moves
    straight down at its speed v: the face's friction pushes it up by μ P with P = (1 + e) m v, the normal impulse.
    The slip is not stopped (the impulse changes it by μ (1 + e) v (1 + m R²/J) = 2.93 of 3 m/s), so the ball leaves
    the face rising at w = μ (1 + e) v, less what gravity took while the cloth no longer carried it (at most
    g × the contact's duration), and its flight's apex lies between (w − g τ)²/(2g) and w²/(2g) + 2 δs/5 (the
    cloth's stored energy, test_table_model). In the same compiled run as the ghost-ball shot (two balls, 0.6 s)."""
    speed, mu, e = 3.0, P.cushion_friction, P.cushion_restitution
    assert main(["shot", "--aim", "90", "--topspin", "1", "--speed", str(speed), "--duration", "0.6",
                 "--out", str(tmp_path)]) == 0
    assert "a ball hopped higher than its radius" in capsys.readouterr().out
    events = read_csv(tmp_path / "shot-events.csv")
    assert list(events["contact"][:2]) == ["cue–left-head cushion"] * 2 and list(events["onset"][:2]) == [1.0, 0.0]
    onset, separation = events["t_s"][:2]
    columns = read_csv(tmp_path / "shot.csv")
    t, z = columns["t_s"], columns["z_cue_m"] - P.resting_height()
    assert np.abs(z[t < onset]).max() < 1e-12  # it rolled on the cloth until then
    w = mu * (1 + e) * speed
    apex = z[(t > onset) & (t < onset + 2 * w / P.gravity)].max()  # the first flight, at the 2-ms saves
    lower = (w - P.gravity * (separation - onset)) ** 2 / (2 * P.gravity) - P.gravity * 1e-3**2 / 2
    assert lower < apex < w**2 / (2 * P.gravity) + 0.4 * P.static_deflection()


def test_the_cloth_damping_ratio_reaches_the_shots_table(tmp_path, monkeypatch):
    given = {}
    monkeypatch.setattr(table, "shot", lambda *args, **options: given.update(options) or "the summary")
    assert main(["shot", "--cloth-damping-ratio", "0.2", "--out", str(tmp_path)]) == 0
    assert given["p"] == dataclasses.replace(P, cloth_damping_ratio=0.2)
    assert main(["shot", "--out", str(tmp_path)]) == 0
    assert given["p"] == P


@pytest.mark.slow
def test_the_shots_sensitivity_matches_central_differences(tmp_path):
    """``shot(..., sensitivity=...)``: d(each ball's final centre)/d(speed, aim, topspin, sidespin, and the table's
    ball–ball restitution and cloth friction) in forward mode (the steps judged by the derivatives' errors too),
    against central differences of
    plain runs at rtol 1e-10 (the README's shot, 0.4 s: past the collision, before the drop). About a minute."""
    cue, ball, duration = (0.6, 0.1), (1.0, 0.4), 0.4
    names = [name for name, _ in table.STRIKE] + ["ball_restitution", "cloth_friction"]
    table.shot(tmp_path, cue, (ball,), duration=duration, sensitivity=names)
    columns = read_csv(tmp_path / "shot-sensitivity.csv")
    assert list(columns["status"]) == ["on the table", "on the table"]
    derivative = np.array([[[columns[f"d{axis}_d_{name}"][b] for name in names] for axis in "xy"]
                           for b in range(2)])
    times = table.save_times(duration)

    @jax.jit
    def final(values):
        strike, (restitution, friction) = values[:4], values[4:]
        p = dataclasses.replace(P, ball_restitution=restitution, cloth_friction=friction)
        velocity, spin = billiard.cue_strike(p, *strike)
        state = billiard.table_state(p, jnp.array([cue, ball]), jnp.stack([velocity, jnp.zeros(2)]),
                                     jnp.stack([spin, jnp.zeros(3)]))
        run = table.integrate(billiard.table_model(p, 2), state, times, table.MAX_EVENTS, rtol=1e-10)
        return run.q[-1].reshape(2, 7)[:, :2]

    values = jnp.array([2.0, billiard.ghost_ball_aim(P, cue, ball, "foot-left"), 0.0, 0.0, P.ball_restitution,
                        P.cloth_friction])
    step = 1e-5
    central = np.stack([(final(values.at[k].add(step)) - final(values.at[k].add(-step))) / (2 * step)
                        for k in range(len(names))], axis=-1)
    central[..., 1] *= np.pi / 180  # per degree of aim, as the file
    # at the derivative's rtol (table.SENSITIVITY_RTOL = 1e-8) the yellow ball's speed, aim, restitution and
    # friction columns within 7.5e-6, 2.2e-6, 9.9e-5 and 3.9e-6 of their largest entries (measured), and every entry
    # within 3.8e-6 m per unit of the strike and 6.1e-6 per relative change of the table's parameters (x ∂/∂x); at
    # the shot's rtol 1e-5 they were up to 2.3e-4 (validation/shot_gradient.py), which these bounds refuse
    yellow = [0, 1, 4, 5]
    np.testing.assert_allclose(derivative[1][:, yellow], central[1][:, yellow], rtol=2e-4, atol=2e-6)
    scale = np.r_[1.0, 1.0, 1.0, 1.0, P.ball_restitution, P.cloth_friction]
    np.testing.assert_allclose(derivative * scale, central * scale, atol=5e-5)


@pytest.mark.slow
def test_the_default_shots_sensitivity_through_the_hops_and_the_drop_matches_central_differences(tmp_path):
    """``diffimpact shot --sensitivity speed aim`` with the defaults (4 s): the yellow ball drops into the foot-left
    pocket at 1.567 s and falls on under the table, the cue ball rebounds from the foot cushion and hops on the
    cloth (its landings are not events). Against central differences of plain runs at rtol 1e-10 (step 1e-5; 1e-6
    gives the same to 0.4 %): at the shot's rtol 1e-5 the cue ball's dx/d(speed) came out −0.93 against −0.642
    (−8.02 with the state's steps and both bounds); at ``table.SENSITIVITY_RTOL`` the cue ball's speed and aim
    columns are within 0.1 % and 0.5 % of their largest entries and the yellow ball's within 0.02 % (measured; 1.4 %
    and 0.2 % with the state's steps and both bounds). About 2 min."""
    table.shot(tmp_path, sensitivity=["speed", "aim"])
    columns = read_csv(tmp_path / "shot-sensitivity.csv")
    assert columns["status"][0] == "on the table"
    dropped = re.fullmatch(r"pocketed in the foot-left pocket at (\S+) s", columns["status"][1])
    derivative = np.array([[[columns[f"d{axis}_d_{name}"][b] for name in ("speed", "aim")] for axis in "xy"]
                           for b in range(2)])
    cue, ball = (P.cue_x, 0.0), table.SHOT_BALLS[0]
    model, times = billiard.table_model(P, 2), table.save_times(table.DURATION)

    @jax.jit
    def final(strike):
        # the balls' final (x, y) and the time the yellow ball left the cloth, of a run at rtol 1e-10
        velocity, spin = billiard.cue_strike(P, *strike)
        state = billiard.table_state(P, jnp.array([cue, ball]), jnp.stack([velocity, jnp.zeros(2)]),
                                     jnp.stack([spin, jnp.zeros(3)]))
        run = table.integrate(model, state, times, table.MAX_EVENTS, rtol=1e-10)
        return run.q[-1].reshape(2, 7)[:, :2], run.removals[1][1]

    strike = jnp.array([table.SHOT_SPEED, billiard.ghost_ball_aim(P, cue, ball, table.SHOT_POCKET), 0.0, 0.0])
    # the drop at the shot's rtol, printed to 0.1 ms, where the tight run drops it
    assert float(dropped.group(1)) == pytest.approx(float(final(strike)[1]), abs=1e-4)
    step = 1e-5
    central = np.stack([(final(strike.at[k].add(step))[0] - final(strike.at[k].add(-step))[0]) / (2 * step)
                        for k in range(2)], axis=-1)
    central[..., 1] *= np.pi / 180  # per degree of aim, as the file
    for b, tolerance in ((0, 3e-2), (1, 5e-3)):
        # (each column against its largest entry of that ball)
        assert np.all(np.abs(derivative[b] - central[b]) <= tolerance * np.abs(central[b]).max(axis=0)), \
            (derivative[b], central[b])


@pytest.mark.slow
def test_a_sliding_balls_sensitivity_to_its_speed_and_the_cloths_friction_is_the_closed_forms(tmp_path):
    """The cue ball alone, struck without spin along +x at v0 = 2 m/s, slides with friction μ m g for
    t_s = c v0, c = (1 − r)/(μ g), then rolls at r v0, r = 1/(1 + J/(m a²)) (a = R − δ_s/2, as in the rolling test
    above). At T = 0.4 s (it rolls from 0.29 s): s = v0² (c − μ g c²/2 − r c) + r v0 T, so ds/dv0 =
    2 v0 c (1 − r) − μ g c² v0 + r T and, with dc/dμ = −c/μ and μ g c = 1 − r, ds/dμ = −g c² v0²/2.
    ``shot``'s sensitivity (forward mode, the steps judged by the derivatives' errors too) against them (measured:
    1.1e-5 and 1.0e-4 off; 1.0e-5 and 9.2e-5 with the state's steps and both bounds). 35 s."""
    table.shot(tmp_path, balls=(), aim=0.0, duration=0.4, sensitivity=["speed", "cloth_friction"])
    columns = read_csv(tmp_path / "shot-sensitivity.csv")
    v0, duration, mu, g = 2.0, 0.4, P.cloth_friction, P.gravity
    lever = P.radius - P.static_deflection() / 2
    r = 1.0 / (1.0 + P.inertia / (P.mass * lever**2))
    c = (1.0 - r) / (mu * g)
    assert c * v0 < duration  # it rolls by the end
    # (to 1e-4, which tells the lever a from R: with a = R, ds/dv0 is 2.7e-4 smaller)
    np.testing.assert_allclose(columns["dx_d_speed"][0], 2 * v0 * c * (1 - r) - mu * g * c**2 * v0 + r * duration,
                               rtol=1e-4)
    np.testing.assert_allclose(columns["dx_d_cloth_friction"][0], -g * c**2 * v0**2 / 2, rtol=1e-3)
    np.testing.assert_allclose([columns["dy_d_speed"][0], columns["dy_d_cloth_friction"][0]], 0.0, atol=1e-12)
