"""[Sypniewska-Kamińska 2017] figs. 8–9: the joint forces of the double pendulum between collisions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.scenes import double_pendulum as dp


@pytest.fixture(scope="module")
def p():
    return dp.Parameters()


def test_hanging_at_rest_the_joints_carry_the_weights(p):
    R, P, H, V = np.asarray(dp.joint_reactions(p, 0.0, jnp.zeros(2), jnp.zeros(2)))
    assert R == pytest.approx(0.0, abs=1e-12) and H == pytest.approx(0.0, abs=1e-12)
    assert P == pytest.approx(float((p.m1 + p.m2) * p.g))  # O carries both links
    assert V == pytest.approx(-float(p.m2 * p.g))  # link 2 hangs from A: it receives −V = m₂ g


def test_the_force_at_o_is_the_rate_of_the_total_momentum(p):
    # Between collisions only O, gravity act on the whole pendulum (H, V are internal):
    # d/dt Σ m v = (−R, P − (m₁ + m₂) g); the momentum from the simulated motion, differentiated numerically.
    times = jnp.linspace(0.0, 0.4, 401)  # before the first collision (1.478 s)
    psi, dpsi = dp.simulate_minimal(p, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES), times)
    velocity = jax.vmap(lambda a, b: dp.absolute_coordinates(p, a, b)[1])(psi, dpsi)
    momentum = p.m1 * velocity[:, :2] + p.m2 * velocity[:, 3:5]
    rate = np.gradient(np.asarray(momentum), np.asarray(times), axis=0, edge_order=2)
    forces = np.asarray(jax.vmap(lambda t, a, b: dp.joint_reactions(p, t, a, b))(times, psi, dpsi))
    inner = slice(5, -5)
    np.testing.assert_allclose(-forces[inner, 0], rate[inner, 0], atol=1e-4 * np.abs(forces[:, 0]).max())
    np.testing.assert_allclose(forces[inner, 1] - float((p.m1 + p.m2) * p.g), rate[inner, 1],
                               atol=1e-4 * np.abs(forces[:, 1]).max())
    # and link 2 alone: only A's force (−H, −V) and gravity act on it, d/dt m₂ v₂ = (−H, −V − m₂ g)
    rate_2 = np.gradient(np.asarray(p.m2 * velocity[:, 3:5]), np.asarray(times), axis=0, edge_order=2)
    np.testing.assert_allclose(-forces[inner, 2], rate_2[inner, 0], atol=1e-4 * np.abs(forces[:, 2]).max())
    np.testing.assert_allclose(-forces[inner, 3] - float(p.m2 * p.g), rate_2[inner, 1],
                               atol=1e-4 * np.abs(forces[:, 3]).max())
