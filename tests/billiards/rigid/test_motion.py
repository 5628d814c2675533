"""The closed-form motion on the cloth against results derived here independently: the stun shot's 5/7 and 12/49,
angular momentum about the contact point for draw and follow, the rolling and spinning ball's stop, energy."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.billiards.rigid import (
    POCKETED,
    ROLLING,
    SLIDING,
    SPINNING,
    STATIONARY,
    Balls,
    Parameters,
    ball_states,
    end_state,
    evolve,
    kinetic_energy,
    rolling_spin,
    slip,
    transition_times,
)

PARAMS = Parameters()
G = PARAMS.gravity
evolve_jit = jax.jit(evolve)
times_jit = jax.jit(transition_times)


def one_ball(params, velocity, angular_velocity, position=(0.1, -0.2)):
    return ball_states(params, [position], [velocity], [angular_velocity])


def test_a_stun_shot_rolls_at_five_sevenths_after_twelve_fortyninths_v_squared_over_mu_g():
    speed, direction = 2.0, np.array([0.6, 0.8])
    balls = one_ball(PARAMS, speed * direction, [0.0, 0.0, 0.0])
    assert int(balls.motion[0]) == SLIDING
    tau = times_jit(balls, PARAMS)[0]
    np.testing.assert_allclose(tau, 2 * speed / (7 * PARAMS.sliding_friction * G), rtol=1e-14)
    end = evolve_jit(balls, PARAMS, tau)
    np.testing.assert_allclose(end.velocity[0], 5 / 7 * speed * direction, rtol=1e-14)
    np.testing.assert_allclose(slip(end, PARAMS)[0], 0.0, atol=1e-14)
    travelled = end.position[0] - balls.position[0]
    np.testing.assert_allclose(travelled, 12 / 49 * speed**2 / (PARAMS.sliding_friction * G) * direction, rtol=1e-14)


@pytest.mark.parametrize("inertia_ratio", [0.4, 2 / 3])
@pytest.mark.parametrize("spin_ratio", [-3.0, -1.0, 0.0, 2.0])
def test_draw_stun_and_follow_end_at_the_speed_that_keeps_the_angular_momentum_about_the_contact_point(
        inertia_ratio, spin_ratio):
    """Friction and the cloth's normal force act at the contact point, gravity balances the normal force: the
    angular momentum about the contact point, I ω_y + m R v_x, is the same before and after the slip, and the
    rolling end has ω_y = v_x/R, so v_end = (m R v₀ + I ω₀) / (m R + I/R). spin_ratio = R ω₀/v₀ (−3: the
    ball comes back; 2: overspun follow); inertia_ratio = I/(m R²) (2/3: a hollow shell)."""
    params = eqx.tree_at(lambda p: p.inertia, PARAMS, inertia_ratio * PARAMS.mass * PARAMS.radius**2)
    speed, radius, mass, inertia = 1.5, params.radius, params.mass, params.inertia
    spin = spin_ratio * speed / radius
    balls = one_ball(params, [speed, 0.0], [0.0, spin, 0.0])
    end = evolve_jit(balls, params, times_jit(balls, params)[0])
    expected = (mass * radius * speed + inertia * spin) / (mass * radius + inertia / radius)
    np.testing.assert_allclose(end.velocity[0], [expected, 0.0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(end.angular_velocity[0, :2], [0.0, expected / radius], rtol=1e-13, atol=1e-12)


def test_a_rolling_ball_stops_after_v_squared_over_two_mu_r_g():
    speed, direction = 0.8, np.array([-0.28, 0.96])
    velocity = speed * direction
    balls = one_ball(PARAMS, velocity, rolling_spin(velocity, PARAMS.radius))
    assert int(balls.motion[0]) == ROLLING
    tau = times_jit(balls, PARAMS)[0]
    np.testing.assert_allclose(tau, speed / (PARAMS.rolling_friction * G), rtol=1e-14)
    end = evolve_jit(balls, PARAMS, tau)
    np.testing.assert_allclose(end.velocity[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(end.position[0] - balls.position[0],
                               speed**2 / (2 * PARAMS.rolling_friction * G) * direction, rtol=1e-13)


def test_a_ball_spinning_in_place_stops_at_two_r_omega_over_five_mu_sp_g():
    spin = -40.0
    balls = one_ball(PARAMS, [0.0, 0.0], [0.0, 0.0, spin])
    assert int(balls.motion[0]) == SPINNING
    tau = times_jit(balls, PARAMS)[0]
    np.testing.assert_allclose(tau, 2 * PARAMS.radius * abs(spin) / (5 * PARAMS.spinning_friction * G), rtol=1e-14)
    halfway = evolve_jit(balls, PARAMS, tau / 2)
    np.testing.assert_allclose(halfway.angular_velocity[0], [0.0, 0.0, spin / 2], rtol=1e-14)
    np.testing.assert_array_equal(halfway.position, balls.position)
    np.testing.assert_allclose(evolve_jit(balls, PARAMS, 2 * tau).angular_velocity[0, 2], 0.0, atol=0)


def random_balls(count=40):
    rng = np.random.default_rng(11)
    velocity = rng.normal(size=(count, 2))
    spin = rng.normal(size=(count, 3)) * 60.0
    # a quarter of them rolling, a quarter spinning in place, the rest sliding
    rolling = slice(0, count // 4)
    spin[rolling, :2] = rolling_spin(velocity[rolling], PARAMS.radius)[:, :2]
    velocity[count // 4: count // 2] = 0.0
    spin[count // 4: count // 2, :2] = 0.0
    return ball_states(PARAMS, rng.normal(size=(count, 2)), velocity, spin)


def test_the_kinetic_energy_never_rises_before_the_next_change_of_state():
    balls = random_balls()
    assert {int(c) for c in balls.motion} == {SLIDING, ROLLING, SPINNING}
    tau = times_jit(balls, PARAMS)
    fractions = jnp.linspace(0.0, 1.0, 41)
    energy = jax.jit(jax.vmap(lambda f: kinetic_energy(evolve(balls, PARAMS, f * tau), PARAMS)))(fractions)
    rises = np.diff(np.asarray(energy), axis=0)
    assert np.all(rises <= 1e-13 * np.asarray(energy[:-1]))
    assert np.all(energy[-1] < energy[0])


def test_evolving_in_two_steps_is_evolving_once():
    balls = random_balls()
    tau = times_jit(balls, PARAMS)
    once = evolve_jit(balls, PARAMS, 0.7 * tau)
    twice = evolve_jit(evolve_jit(balls, PARAMS, 0.3 * tau), PARAMS, 0.4 * tau)
    for a, b in zip(jax.tree.leaves(once), jax.tree.leaves(twice), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_the_velocity_is_the_rate_of_the_position():
    balls = random_balls()
    t, h = 0.5 * times_jit(balls, PARAMS), 1e-6
    difference = (evolve_jit(balls, PARAMS, t + h).position - evolve_jit(balls, PARAMS, t - h).position) / (2 * h)
    np.testing.assert_allclose(difference, evolve_jit(balls, PARAMS, t).velocity, atol=1e-8)


def test_each_change_of_state_leads_down_from_sliding_to_rest():
    """Draw with side spin: sliding, rolling, spinning in place, at rest; end_state at each τ gives the next."""
    balls = one_ball(PARAMS, [1.0, 0.0], [0.0, -30.0, 80.0])
    seen = [int(balls.motion[0])]
    for _ in range(3):
        balls = end_state(evolve_jit(balls, PARAMS, times_jit(balls, PARAMS)), PARAMS, jnp.array([True]))
        seen.append(int(balls.motion[0]))
    assert seen == [SLIDING, ROLLING, SPINNING, STATIONARY]
    np.testing.assert_array_equal(balls.velocity, 0.0)
    np.testing.assert_array_equal(balls.angular_velocity, 0.0)
    assert np.isinf(times_jit(balls, PARAMS)[0])


def test_a_pocketed_ball_does_not_move():
    balls = Balls(jnp.array([[0.3, 0.4]]), jnp.array([[1.0, 0.0]]), jnp.array([[0.0, 0.0, 3.0]]),
                  jnp.array([POCKETED]))
    np.testing.assert_array_equal(evolve_jit(balls, PARAMS, 2.0).position, balls.position)
    assert np.isinf(times_jit(balls, PARAMS)[0])


def test_the_stun_distance_is_differentiable_in_the_sliding_friction():
    """d/dμ_s of 12/49 v²/(μ_s g) through the transition time and the motion."""

    def distance(mu):
        params = eqx.tree_at(lambda p: p.sliding_friction, PARAMS, mu)
        balls = one_ball(params, [2.0, 0.0], [0.0, 0.0, 0.0])
        return evolve(balls, params, transition_times(balls, params)).position[0, 0]

    mu = 0.25
    np.testing.assert_allclose(jax.grad(distance)(mu), -12 / 49 * 4.0 / (mu**2 * G), rtol=1e-13)


@pytest.mark.parametrize("field", ["radius", "mass", "inertia", "sliding_friction", "rolling_friction",
                                   "spinning_friction", "gravity"])
def test_parameters_refuse_a_non_positive_field_by_name(field):
    with pytest.raises(ValueError, match=field):
        Parameters(**{field: 0.0})


def test_ball_states_refuse_rows_that_do_not_match():
    with pytest.raises(ValueError, match="velocity must have shape"):
        ball_states(PARAMS, [[0.0, 0.0], [1.0, 0.0]], [[1.0, 0.0]])
