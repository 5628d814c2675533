"""Double pendulum of [Sypniewska-Kamińska 2017]: absolute coordinates under four formulations vs minimal coordinates."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import (
    AdaptiveSteps,
    AugmentedLagrangian,
    Baumgarte,
    DirectCorrection,
    FixedSteps,
    ForwardMode,
    LagrangeMultipliers,
    ReverseMode,
    simulate,
)
from diffimpact.scenes import double_pendulum as dp

TIMES = jnp.linspace(0.0, 5.0, 501)
FORMULATIONS = {
    "lagrange": LagrangeMultipliers(),
    "baumgarte": Baumgarte(),
    "augmented": AugmentedLagrangian(),
    "direct": DirectCorrection(),
}


def wrapped(angle):
    return np.arctan2(np.sin(angle), np.cos(angle))


@pytest.fixture(scope="module")
def params():
    return dp.Parameters()


@pytest.fixture(scope="module")
def minimal(params):
    return dp.simulate_minimal(params, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES), TIMES)


@pytest.fixture(scope="module")
def runs(params):
    model, state = dp.model(params), dp.initial_state(params)
    return {name: simulate(model, state, TIMES, f) for name, f in FORMULATIONS.items()}


@pytest.fixture(scope="module")
def loose_runs(params):
    model, state = dp.model(params), dp.initial_state(params)
    return {name: simulate(model, state, TIMES, f, steps=AdaptiveSteps(rtol=1e-6, atol=1e-6))
            for name, f in FORMULATIONS.items()}


def test_energy_at_stable_equilibrium_matches_paper(params):
    # [Sypniewska-Kamińska 2017], section 4: "the energy of the pendulum at the stable equilibrium
    # position ψ1 = 0 and ψ2 = 0 is about of −40.007 J".
    zero = jnp.zeros(2)
    state = dp.initial_state(params, zero, zero)
    assert abs(float(dp.minimal_energy(params, zero, zero)) - (-40.007)) < 1e-3
    assert abs(float(dp.energy(params, state.q, state.v)) - (-40.007)) < 1e-3


def test_initial_energy_agrees_between_descriptions(params):
    state = dp.initial_state(params)
    minimal_energy = dp.minimal_energy(params, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES))
    np.testing.assert_allclose(dp.energy(params, state.q, state.v), minimal_energy, rtol=1e-14)


#: Horizon of the comparison with minimal coordinates (s), and its number of save times.
HORIZON = 2.0
WITHIN = int(HORIZON / (TIMES[1] - TIMES[0])) + 1


def test_the_comparison_horizon_keeps_the_chaos_small(params, minimal):
    # The motion is chaotic: an error in the initial angles grows ~1.7e5-fold by 5 s, so there the
    # difference between two integrations is decided by round-off (thread counts, instruction sets)
    # and by the augmented Lagrangian's iteration tolerance. Up to HORIZON it grows < 100-fold, so
    # integration errors of order rtol = 1e-10 stay far below the 1e-6 rad bound on every machine.
    psi, _ = minimal
    shift = 1e-9
    perturbed, _ = dp.simulate_minimal(params, jnp.array(dp.INITIAL_ANGLES) + shift, jnp.array(dp.INITIAL_RATES), TIMES)
    growth = np.max(np.abs(wrapped(perturbed - psi)), axis=1) / shift
    assert np.max(growth[:WITHIN]) < 100
    assert np.max(growth) > 1e4  # and beyond it, comparing trajectories would compare round-off
    assert np.ptp(psi[:WITHIN, 1]) > 2 * np.pi  # link 2 turns over within the horizon: a demanding comparison


@pytest.mark.parametrize("name", FORMULATIONS)
def test_formulations_agree_with_minimal_coordinates(name, runs, minimal):
    psi, _ = minimal
    difference = wrapped(dp.angles(runs[name].q[:WITHIN]) - psi[:WITHIN])
    assert np.max(np.abs(difference)) < 1e-6


@pytest.mark.parametrize("name", FORMULATIONS)
def test_energy_is_conserved_without_damping(name, runs):
    energy = runs[name].energy
    assert np.ptp(energy) < 2e-7 * abs(energy[0])


def test_lagrange_multipliers_drift_more_than_stabilised_formulations(loose_runs):
    # [Gismeros Moreno 2022], section 2.3: the standard method accumulates constraint violation;
    # Baumgarte, augmented Lagrangian and direct correction keep it bounded.
    drift = {name: np.max(run.constraint_violation) for name, run in loose_runs.items()}
    assert drift["lagrange"] > 1e-5
    for name in ("baumgarte", "augmented", "direct"):
        assert drift["lagrange"] > 20 * drift[name], drift


def test_fixed_steps_converge_at_the_order_of_tsit5(params):
    # simulate(..., dt=h): Tsit5 is 5th order, so halving h cuts the error over 1 s by about 2^5.
    model, state = dp.model(params), dp.initial_state(params)
    times = TIMES[:101]
    psi, _ = dp.simulate_minimal(params, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES), times,
                                 rtol=1e-13, atol=1e-13)
    errors = []
    for h in (0.01, 0.005):
        run = simulate(model, state, times, LagrangeMultipliers(), steps=FixedSteps(h))
        assert int(run.steps) == round(1.0 / h)
        errors.append(np.max(np.abs(wrapped(dp.angles(run.q) - psi))))
    assert 16 < errors[0] / errors[1] < 64, errors
    for bad in (0.0, -1e-3):
        with pytest.raises(ValueError, match="dt"):
            simulate(model, state, TIMES[:101], LagrangeMultipliers(), steps=FixedSteps(bad))


def test_damping_and_torques_match_minimal_coordinates():
    params = dp.Parameters(c1=0.3, c2=0.2, M01=2.0, M02=-1.0, Omega1=3.0, Omega2=5.0)
    psi, _ = dp.simulate_minimal(params, jnp.array(dp.INITIAL_ANGLES), jnp.array(dp.INITIAL_RATES), TIMES)
    run = simulate(dp.model(params), dp.initial_state(params), TIMES, LagrangeMultipliers())
    assert np.max(np.abs(wrapped(dp.angles(run.q) - psi))) < 5e-5
    assert abs(float(run.energy[-1] - run.energy[0])) > 1e-2  # the forces do work


@pytest.mark.slow  # reverse mode through simulate is also checked by test_contact's stiffness gradient
def test_gradient_of_final_angle_with_respect_to_link_mass(central_difference):
    times = jnp.array([0.0, 1.0])

    def final_angle(m2):
        params = dp.Parameters(m2=m2)
        run = simulate(dp.model(params), dp.initial_state(params), times, LagrangeMultipliers(),
                       steps=AdaptiveSteps(rtol=1e-12, atol=1e-12))
        return dp.angles(run.q)[-1, 1]

    gradient = float(jax.grad(final_angle)(3.8))
    reference = central_difference(final_angle, [3.8], 0)
    assert abs(gradient) > 1e-3
    np.testing.assert_allclose(gradient, reference, rtol=1e-5)


def test_both_modes_through_direct_corrections_projection_match_central_differences(central_difference):
    # DirectCorrection projects every step in a solver wrapper (formulations.WrappedSolver). diffrax's
    # ForwardMode sets the stages' loop of the solver it is given (an AttributeError on the wrapper before),
    # and reverse mode needs that loop left as it is (a lax.while_loop, set for both, has no reverse mode).
    # (As many save times as ``runs``, so that the central differences run its compiled DirectCorrection program.)
    times = jnp.linspace(0.0, 1.0, TIMES.size)

    def final_angle(m2, derivatives=ReverseMode()):
        params = dp.Parameters(m2=m2)
        run = simulate(dp.model(params), dp.initial_state(params), times, DirectCorrection(),
                       steps=AdaptiveSteps(rtol=1e-12, atol=1e-12), derivatives=derivatives)
        return dp.angles(run.q)[-1, 1]

    _, forward = jax.jvp(lambda m2: final_angle(m2, ForwardMode()), (3.8,), (1.0,))
    reverse = jax.grad(final_angle)(3.8)
    reference = central_difference(final_angle, [3.8], 0)
    assert abs(reference) > 1e-3
    np.testing.assert_allclose([float(forward), float(reverse)], reference, rtol=1e-5)
