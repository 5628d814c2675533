"""Alciatore's closed forms: TP A.14 throw and the 30° rule ([Gismeros Moreno 2022] eq. (4.1)), against independent solutions."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import diffimpact  # noqa: F401  (enables float64)
from diffimpact.contact import Alciatore
from diffimpact.impulse.alciatore import cut_angle, deflection_angle, throw_angle

RADIUS = 0.028575
MPH = 0.44704  # m/s


def sphere_pair_throw(cut, speed, topspin, sidespin, mu, steps=2_000):
    """Throw of two equal solid spheres integrated in the normal impulse (independent of the closed form).

    The cue ball moves along +y with ω = (ω_x, 0, ω_z); the line of centres is n = (−sin φ, cos φ, 0).
    The normal impulse grows to m v cos φ (elastic, equal masses: the normal relative velocity is
    reversed); at each increment dP, friction μ dP opposes the current slip of the contact points
    (Coulomb, μ fixed), unless the slip would reverse, when the slip is stopped instead.
    """
    m, radius = 1.0, RADIUS
    inertia = 0.4 * m * radius**2
    n = np.array([-np.sin(cut), np.cos(cut), 0.0])
    v1, w1 = np.array([0.0, speed, 0.0]), np.array([topspin, 0.0, sidespin])
    v2, w2 = np.zeros(3), np.zeros(3)
    total = m * speed * np.cos(cut)
    dp = total / steps
    for _ in range(steps):
        slip = (v1 + np.cross(w1, radius * n)) - (v2 + np.cross(w2, -radius * n))
        slip = slip - (slip @ n) * n
        speed_slip = np.linalg.norm(slip)
        # a tangential impulse J on ball 2 (−J on ball 1) changes the slip by −7 J/m
        friction = -min(mu * dp, m * speed_slip / 7.0) * slip / speed_slip if speed_slip > 0 else np.zeros(3)
        impulse_on_2 = dp * n - friction
        v1, v2 = v1 - impulse_on_2 / m, v2 + impulse_on_2 / m
        w1 = w1 + np.cross(radius * n, -impulse_on_2) / inertia
        w2 = w2 + np.cross(-radius * n, impulse_on_2) / inertia
    tangent = np.array([np.cos(cut), np.sin(cut), 0.0])
    return np.arctan2(-(v2 @ tangent), v2 @ n)


@pytest.mark.parametrize(
    "cut_deg, speed, topspin_ratio, sidespin_ratio",
    [(30, 3 * MPH, 0.0, 0.0), (30, 3 * MPH, 1.0, 0.0), (10, 1 * MPH, 0.0, 0.0), (45, 7 * MPH, 1.0, -0.3),
     (20, 3 * MPH, 0.5, 0.2), (20, 3 * MPH, 0.0, 0.9)],  # the last: side spin past gearing throws the other way
)
def test_throw_matches_an_impulse_integration_of_two_spheres(cut_deg, speed, topspin_ratio, sidespin_ratio):
    # TP A.14 takes μ at the initial slip speed; so does the integration (its slip keeps its direction).
    cut = np.radians(cut_deg)
    topspin, sidespin = topspin_ratio * speed / RADIUS, sidespin_ratio * speed / RADIUS
    slip = np.hypot(speed * np.sin(cut) - RADIUS * sidespin, RADIUS * topspin * np.cos(cut))
    mu = float(Alciatore().coefficient(slip))
    expected = sphere_pair_throw(cut, speed, topspin, sidespin, mu)
    # The integration's friction acts against the slip of the *ball 1 − ball 2* contact points, so
    # ball 2 moves along −(tangent of the slip); the sign convention of TP A.14 is towards the cue path.
    got = float(throw_angle(cut, speed, topspin, sidespin))
    assert abs(got) > np.radians(0.1)
    np.testing.assert_allclose(got, -expected, rtol=2e-3)


def test_stun_shots_at_small_cuts_throw_by_the_no_slip_limit():
    # With no spin and a small cut, friction could remove more slip than there is: the slip stops
    # (throw = atan(tan φ / 7)), whatever the speed.
    cut = np.radians(np.array([2.0, 5.0, 8.0]))
    for speed in (1 * MPH, 3 * MPH):
        np.testing.assert_allclose(throw_angle(cut, speed), np.arctan(np.tan(cut) / 7), rtol=1e-13)


def test_rolling_cue_ball_throws_by_mu_sin_phi():
    # Natural roll without side spin: v_rel = v exactly, μ(v) ≤ 0.118 < 1/7, so tan throw = μ(v) sin φ.
    cut = np.radians(np.linspace(5.0, 85.0, 9))
    for speed in (1 * MPH, 3 * MPH, 7 * MPH):
        expected = np.arctan(Alciatore().coefficient(speed) * np.sin(cut))
        np.testing.assert_allclose(throw_angle(cut, speed, speed / RADIUS), expected, rtol=1e-13)


def test_gearing_outside_english_has_no_throw_and_finite_gradients():
    cut, speed = np.radians(30.0), 1.0
    gearing = speed * np.sin(cut) / RADIUS
    assert float(throw_angle(cut, speed, 0.0, gearing)) == pytest.approx(0.0, abs=1e-15)
    gradient = jax.grad(throw_angle, argnums=(0, 1, 3))(cut, speed, 0.0, gearing)
    assert all(np.isfinite(float(g)) for g in gradient)
    # more side spin than gearing throws the other way
    assert float(throw_angle(cut, speed, 0.0, 1.2 * gearing)) < 0


def test_throw_gradient_matches_central_differences(central_difference):
    args = (np.radians(35.0), 1.2, 20.0, -5.0)
    gradient = jax.grad(throw_angle, argnums=(0, 1, 2, 3))(*args)
    for k, g in enumerate(gradient):
        np.testing.assert_allclose(float(g), central_difference(throw_angle, args, k), rtol=1e-6)


def rolling_deflection_by_integration(cut, mu=0.2, gravity=9.81):
    """A rolling cue ball after a frictionless elastic hit, sliding on the cloth until it rolls (SciPy).

    After the hit the ball keeps its spin (worth a rolling velocity v along +y) and only its velocity
    along the tangent line, v sin φ (cos φ, sin φ). Coulomb friction μ m g opposes the slip of the
    contact point, u = v_c − ω × R ẑ, until it vanishes.
    """
    speed = 1.0
    velocity = speed * np.sin(cut) * np.array([np.cos(cut), np.sin(cut)])
    spin_velocity = np.array([0.0, speed])  # ω × R ẑ of the rolling ball, a velocity

    def field(t, y):
        slip = y[:2] - y[2:]
        direction = slip / np.linalg.norm(slip)
        # dv/dt = −μ g û; the spin term changes by (5/2) μ g û (I = 2/5 m R²)
        return np.concatenate([-mu * gravity * direction, 2.5 * mu * gravity * direction])

    def rolls(t, y):
        return np.linalg.norm(y[:2] - y[2:]) - 1e-9

    rolls.terminal = True
    solution = solve_ivp(field, (0.0, 10.0), np.concatenate([velocity, spin_velocity]), events=rolls,
                         rtol=1e-12, atol=1e-14)
    final = solution.y[:2, -1]
    return np.arctan2(final[0], final[1])


def test_thirty_degree_rule_against_an_integrated_slide():
    cuts = np.radians([10.0, 20.0, 28.0, 40.0, 55.0])
    expected = [rolling_deflection_by_integration(c, mu) for c, mu in zip(cuts, (0.1, 0.2, 0.2, 0.3, 0.2))]
    np.testing.assert_allclose(deflection_angle(cuts), expected, rtol=1e-7)


def test_thirty_degree_rule_published_numbers():
    # "between a 1/4-ball and a 3/4-ball hit the cue ball deflects by very close to 30°" ([Gismeros Moreno 2022] §4.2);
    # the largest deflection is 33.75° at φ = atan √(2/7) (d/dφ of eq. (4.1) vanishes there).
    fractions = np.linspace(0.25, 0.75, 51)
    degrees = np.degrees(deflection_angle(cut_angle(fractions)))
    assert np.all((degrees > 27.0) & (degrees < 34.0))
    best = np.arctan(np.sqrt(2.0 / 7.0))
    assert np.degrees(float(deflection_angle(best))) == pytest.approx(33.75, abs=0.005)
    assert float(jax.grad(deflection_angle)(best)) == pytest.approx(0.0, abs=1e-12)
    assert float(cut_angle(0.5)) == pytest.approx(np.pi / 6, rel=1e-15)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cut_angle(0.0), r"fraction must be finite and in \(0, 1\]"),
        (lambda: cut_angle(1.2), r"fraction must be finite and in \(0, 1\]"),
        (lambda: deflection_angle(np.pi / 2), r"cut_angle must be finite and in \[0, 1.5708\)"),
        (lambda: deflection_angle(-0.1), r"cut_angle must be finite and in \[0, 1.5708\)"),
        (lambda: throw_angle(0.3, 0.0), r"speed must be finite and in \(0, inf\)"),
        (lambda: throw_angle(0.3, 1.0, np.nan), r"topspin must be finite"),
        (lambda: throw_angle(0.3, 1.0, 0.0, np.inf), r"sidespin must be finite"),
        (lambda: throw_angle(0.3, 1.0, radius=-1.0), r"radius must be finite and in \(0, inf\)"),
        (lambda: throw_angle(0.3, 1.0, friction=Alciatore(amplitude=-0.1)), r"amplitude must be finite and in \[0, inf\)"),
    ],
)
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_input_under_jit_raises_with_the_message():
    with pytest.raises(eqx.EquinoxRuntimeError, match="speed must be finite"):
        jax.block_until_ready(eqx.filter_jit(throw_angle)(jnp.asarray(0.3), jnp.asarray(-1.0)))


def test_vmap_over_cut_and_speed():
    cuts, speeds = jnp.radians(jnp.array([10.0, 30.0, 50.0])), jnp.array([0.5, 1.3, 3.1])
    batched = jax.vmap(throw_angle)(cuts, speeds)
    np.testing.assert_allclose(batched, [float(throw_angle(c, s)) for c, s in zip(cuts, speeds)], rtol=1e-14)
    np.testing.assert_allclose(throw_angle(cuts, speeds), batched, rtol=1e-14)
