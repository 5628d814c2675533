"""Single pendulum, free bodies and the constraint kinematics of diffimpact.multibody."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import (
    AdaptiveSteps,
    Baumgarte,
    Driver,
    Gravity,
    Ground,
    LagrangeMultipliers,
    Model,
    PlanarBody,
    RevolutePlanar,
    SpringDamper,
    State,
    check_initial_state,
    project_initial_state,
    simulate,
)

LENGTH, G = 0.8, 9.81


def pendulum(mass):
    """Uniform rod of length LENGTH pinned at its top end to the origin."""
    rod = PlanarBody(mass, mass * LENGTH**2 / 12, name="rod")
    return Model([rod], [RevolutePlanar(0, (0.0, LENGTH / 2), None, (0.0, 0.0))], [Gravity((0.0, -G))])


def pendulum_state(angle):
    d = LENGTH / 2
    return State(jnp.stack([d * jnp.sin(angle), -d * jnp.cos(angle), angle]), jnp.zeros(3))


def test_small_oscillation_period_for_several_masses():
    # Compound pendulum: T = 2π sqrt(I_O / (m g d)), I_O = m L²/3, d = L/2, for any mass.
    d = LENGTH / 2
    period = 2 * np.pi * np.sqrt((LENGTH**2 / 3) / (G * d))
    amplitude = 1e-3
    masses = jnp.array([0.5, 1.0, 4.0])

    def run(mass):
        trajectory = simulate(pendulum(mass), pendulum_state(jnp.asarray(amplitude)),
                              jnp.array([period / 4, period / 2, period]), LagrangeMultipliers(),
                              steps=AdaptiveSteps(rtol=1e-12, atol=1e-14))
        return trajectory.q[:, 2]

    angles = jax.vmap(run)(masses) / amplitude
    # Finite-amplitude correction to the period is amplitude²/16 ≈ 6e-8 relative.
    np.testing.assert_allclose(angles[:, 0], 0.0, atol=1e-6)
    np.testing.assert_allclose(angles[:, 1], -1.0, atol=1e-6)
    np.testing.assert_allclose(angles[:, 2], 1.0, atol=1e-6)


def two_masses_on_a_spring(damping):
    bodies = [PlanarBody(1.0, 0.02, name="a"), PlanarBody(2.0, 0.05, name="b")]
    spring = SpringDamper(0, (0.1, 0.0), 1, (-0.1, 0.0), stiffness=50.0, damping=damping, free_length=0.5)
    return Model(bodies, [], [spring])


@pytest.fixture(scope="module")
def spring_runs():
    state = State([0.0, 0.0, 0.3, 1.0, 0.2, -0.4], [0.5, -0.2, 2.0, -0.3, 0.4, -1.0])
    times = jnp.linspace(0.0, 3.0, 61)
    return {c: simulate(two_masses_on_a_spring(c), state, times, LagrangeMultipliers()) for c in (0.0, 0.8)}


def test_free_bodies_conserve_momenta_and_energy_without_damping(spring_runs):
    run = spring_runs[0.0]
    assert np.ptp(run.q[:, 0]) > 0.1  # the spring does work
    np.testing.assert_allclose(run.energy, run.energy[0], rtol=1e-9)
    np.testing.assert_allclose(run.linear_momentum - run.linear_momentum[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(run.angular_momentum, run.angular_momentum[0], atol=1e-9)


def test_spring_damper_dissipates_but_conserves_momenta(spring_runs):
    run = spring_runs[0.8]
    assert np.all(np.diff(run.energy) < 0)
    assert run.energy[-1] < 0.9 * run.energy[0]
    np.testing.assert_allclose(run.linear_momentum - run.linear_momentum[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(run.angular_momentum, run.angular_momentum[0], atol=1e-9)


def test_gamma_matches_second_difference_of_constraints(check_gamma):
    # Along q(t) = q0 + v0 (t − t0) + ½ a0 (t − t0)², d²Φ/dt² = D a0 − γ(q0, v0, t0)
    # ([Gismeros Moreno 2022], eqs. (2.10)–(2.11)); the driver makes Φ depend on t explicitly.
    bodies = [PlanarBody(1.0, 0.1, name="crank"), PlanarBody(1.0, 0.1, name="rod")]
    model = Model(
        bodies,
        [
            RevolutePlanar(0, (0.0, 0.3), None, (0.1, -0.2)),
            RevolutePlanar(0, (0.0, -0.3), 1, (0.2, 0.4)),
            Driver(1, 2, lambda t: 0.3 * jnp.sin(2.0 * t) + 0.1 * t**2),
        ],
    )
    q0 = jnp.array([0.3, -0.1, 0.7, 0.5, -0.8, -1.1])
    v0 = jnp.array([0.4, -1.2, 2.0, 0.9, 0.3, -1.5])
    a0 = jnp.array([1.0, 0.5, -3.0, 2.0, -1.0, 0.7])
    check_gamma(model, q0, v0, a0)


def test_invalid_body_parameters_are_named():
    with pytest.raises(ValueError, match="rod.mass"):
        PlanarBody(-1.0, 0.1, name="rod")
    with pytest.raises(ValueError, match="rod.inertia"):
        PlanarBody(1.0, 0.0, name="rod")
    with pytest.raises(ValueError, match="alpha"):
        Baumgarte(alpha=-1.0)


def test_unknown_formulation_is_a_type_error():
    for bad in ("baumgarte", Baumgarte, None):
        with pytest.raises(TypeError, match="formulation must be an instance"):
            simulate(pendulum(1.0), pendulum_state(0.1), [1.0], bad)


def test_unknown_solver_is_a_type_error():
    for bad in ("tsit5", diffrax.Tsit5, 1):
        with pytest.raises(TypeError, match="solver must be a diffrax solver"):
            simulate(pendulum(1.0), pendulum_state(0.1), [1.0], Baumgarte(), solver=bad)


def test_reference_to_missing_body_is_rejected():
    with pytest.raises(ValueError, match="refers to body 3"):
        Model([PlanarBody(1.0, 0.1)], [RevolutePlanar(3, (0, 0), None, (0, 0))])
    with pytest.raises(ValueError, match=r"a Model needs at least one body; got bodies=\[\]"):
        Model([])


def test_violated_initial_state_is_named_and_projection_fixes_it():
    model = pendulum(1.0)
    good = pendulum_state(0.3)
    bad = State(good.q + jnp.array([1e-3, 0.0, 0.0]), good.v + jnp.array([0.0, 0.0, 0.5]))
    with pytest.raises(ValueError, match=r"constraints\[0\] \(RevolutePlanar\): position residual"):
        simulate(model, bad, [1.0], LagrangeMultipliers())
    # closed over by a caller's jit, the model and state are still concrete and checked as such
    with pytest.raises(ValueError, match=r"constraints\[0\] \(RevolutePlanar\): position residual"):
        jax.jit(lambda: simulate(model, bad, [1.0], LagrangeMultipliers())).trace()
    fixed = project_initial_state(model, bad)
    check_initial_state(model, fixed, tolerance=1e-12)
    jax.jit(lambda: simulate(model, fixed, [1.0], LagrangeMultipliers())).trace()
    # The minimum-norm correction moves the rod by less than the violation.
    assert np.linalg.norm(fixed.q - bad.q) <= 1e-3 * (1 + 1e-9)


def test_redundant_constraints_are_reported():
    state = pendulum_state(0.3)
    model = pendulum(1.0)
    redundant = Model(model.bodies, model.constraints + (Ground(0, state.q),), model.forces)
    with pytest.raises(ValueError, match="singular"):
        simulate(redundant, state, [1.0], LagrangeMultipliers())


@pytest.mark.parametrize(
    "save_times, message",
    [
        ([], "1-D array of at least one time"),
        (1.0, "1-D array of at least one time"),
        ([[0.5, 1.0]], "1-D array of at least one time"),
        ([0.5, np.nan], "save_times must be finite"),
        ([1.0, 0.5], "save_times must be non-decreasing"),
    ],
)
def test_bad_save_times_are_named(save_times, message):
    with pytest.raises(ValueError, match=message):
        simulate(pendulum(1.0), pendulum_state(0.1), save_times, Baumgarte())


@pytest.mark.parametrize("t0", [1e-3, 1.0])
def test_save_times_before_the_start_are_refused(t0):
    """The run goes forward from state0.t: an earlier save time has no state (it came out NaN), concrete or
    traced."""
    start = pendulum_state(0.1)
    with pytest.raises(ValueError, match=r"save_times must not start before state0.t.*save_times\[0\] = 0.0 s"):
        simulate(pendulum(1.0), State(start.q, start.v, t0), jnp.linspace(0.0, 8e-3, 9), Baumgarte())
    run = jax.jit(lambda t: simulate(pendulum(1.0), State(start.q, start.v, t), jnp.linspace(0.0, 8e-3, 9),
                                     Baumgarte()).q)
    with pytest.raises(Exception, match="save_times must not start before state0.t"):
        run(t0)


@pytest.mark.parametrize("field", ["q", "v", "t"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_state_that_is_not_finite_is_named(field, value):
    """(It ran to max_steps and blamed that.)"""
    start = pendulum_state(0.1)
    parts = {"q": start.q, "v": start.v, "t": start.t}
    parts[field] = parts[field].at[...].set(value) if field == "t" else parts[field].at[0].set(value)
    with pytest.raises(ValueError, match=f"state0.{field} must be finite"):
        simulate(pendulum(1.0), State(**parts), [1.0], Baumgarte())


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(rtol=-1.0), "rtol must be finite and in"),
        (dict(rtol=np.nan), "rtol must be finite and in"),
        (dict(rtol=1.0), r"rtol must be finite and in \(0, 1\)"),
        (dict(constraint_tolerance=-1.0), r"constraint_tolerance must be finite and in \(0, inf\)"),
        (dict(rtol=10.0, atol=10.0), r"rtol must be finite and in \(0, 1\)"),
        (dict(atol=0.0), "atol must be finite and in"),
        (dict(max_steps=0), "max_steps must be an int >= 1"),
        (dict(max_steps=2.5), "max_steps must be an int >= 1"),
    ],
)
def test_bad_solver_options_are_named(options, message):
    """(rtol and atol: ``AdaptiveSteps``' fields, checked as it is built.)"""
    tolerances = {name: value for name, value in options.items() if name in ("rtol", "atol")}
    others = {name: value for name, value in options.items() if name not in tolerances}
    with pytest.raises(ValueError, match=message):
        simulate(pendulum(1.0), pendulum_state(0.1), [1.0], Baumgarte(), steps=AdaptiveSteps(**tolerances), **others)
