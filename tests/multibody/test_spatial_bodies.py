"""Spatial rigid bodies in Euler parameters and spatial joints of diffimpact.multibody."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation
from scipy.special import ellipk

from diffimpact.multibody import (
    AdaptiveSteps,
    AppliedTorque,
    AugmentedLagrangian,
    Baumgarte,
    DirectCorrection,
    Gravity,
    Ground,
    LagrangeMultipliers,
    Model,
    PlanarBody,
    RevoluteSpatial,
    SpatialBody,
    Spherical,
    State,
    angular_velocity,
    euler_parameters,
    euler_rates,
    euler_rotation,
    simulate,
)
from diffimpact.multibody import formulations
from diffimpact.multibody.bodies import gyroscopic_forces, point_force, point_position, point_velocity
from diffimpact.rotations import euler_g

G = 9.81
# A full (non-diagonal) body-frame inertia tensor with distinct principal moments.
INERTIA = np.array([[0.12, 0.01, -0.02], [0.01, 0.20, 0.015], [-0.02, 0.015, 0.27]])


def quaternion(rotation):
    """Euler parameters (e0, e1, e2, e3) of a SciPy rotation (which stores (x, y, z, w))."""
    x, y, z, w = rotation.as_quat()
    return np.array([w, x, y, z])


def spatial_state(position, p, velocity, omega):
    """State of one spatial body from its centre, Euler parameters, ṙ and global ω."""
    p = jnp.asarray(p)
    return jnp.concatenate([jnp.asarray(position, float), p]), jnp.concatenate(
        [jnp.asarray(velocity, float), euler_rates(p, omega)]
    )


# --- kinematics and the mass matrix -----------------------------------------------------


def test_mass_matrix_gives_rigid_body_kinetic_energy_and_gyroscopic_force_is_lagrangian():
    body = SpatialBody(2.0, INERTIA, name="block")
    p = euler_parameters([1.0, -2.0, 0.5], 2.3)
    q, v = spatial_state([0.3, 0.1, -0.2], p, [0.5, -1.0, 2.0], [1.5, -0.7, 2.2])
    omega_body = np.asarray(angular_velocity(q, v, body_frame=True))
    A = np.asarray(euler_rotation(p))
    np.testing.assert_allclose(A @ A.T, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(A @ omega_body, [1.5, -0.7, 2.2], atol=1e-14)
    expected = 0.5 * 2.0 * (0.25 + 1.0 + 4.0) + 0.5 * omega_body @ INERTIA @ omega_body
    assert float(0.5 * v @ body.mass_matrix(q) @ v) == pytest.approx(expected, rel=1e-14)
    assert float(body.kinetic_energy(q, v)) == pytest.approx(expected, rel=1e-14)
    # Lagrange's equations in p give −8 Ġᵀ J' G ṗ; the two forms differ only along p.
    lagrangian = -8 * euler_g(v[3:]).T @ INERTIA @ euler_g(p) @ v[3:]
    gyroscopic = body.gyroscopic_force(q, v)
    projector = np.eye(4) - np.outer(p, p)
    assert np.max(np.abs(lagrangian)) > 1.0
    np.testing.assert_allclose(projector @ (lagrangian - gyroscopic[3:]), 0.0, atol=1e-13)
    np.testing.assert_allclose(gyroscopic[:3], 0.0)
    np.testing.assert_allclose(body.angular_momentum(q, v), A @ INERTIA @ omega_body + 2.0 * np.cross(q[:3], v[:3]))


def test_off_the_unit_sphere_a_body_still_answers_by_eulers_equations_and_lagrange():
    """At |p| ≠ 1 and pᵀṗ ≠ 0 (drift), v̇ of eq. (2.20) turns the body by J' ω̇' = n' − ω' × J' ω'.

    ω' is the rate of A(p/|p|). Checked against Euler's equations written here (J' ω̇' of the torque of two
    point forces), and the gyroscopic force against Lagrange's equations of T = ½ ω'ᵀ J' ω' by autodiff
    (equal up to the direction p, which the multiplier takes).
    """
    body = SpatialBody(2.0, INERTIA, name="block")
    model = Model([body])
    rng = np.random.default_rng(11)
    for drift in (1.1, 0.9):
        p = drift * euler_parameters([1.0, -2.0, 0.5], 2.3)
        q = jnp.concatenate([jnp.array([0.3, 0.1, -0.2]), p])
        v = jnp.asarray(rng.standard_normal(7))
        assert abs(float(p @ v[3:])) > 0.1  # a rate along p too
        arm, force = jnp.asarray(rng.standard_normal(3)), jnp.asarray(rng.standard_normal(3))
        applied = point_force(q, q[:3] + arm, force) + point_force(q, q[:3] - arm, -force)
        generalised = applied + body.gyroscopic_force(q, v)
        rhs = model.gamma(q, v, 0.0)
        for acceleration in (formulations.constrained_acceleration(model, q, 0.0, generalised, rhs),
                             formulations._saddle_point_solve(model.mass_matrix(q), model.jacobian(q, 0.0),
                                                              generalised, rhs)):
            _, rate = jax.jvp(lambda x, y: angular_velocity(x, y, body_frame=True), (q, v), (v, acceleration))
            A = np.asarray(euler_rotation(p))
            omega = np.asarray(angular_velocity(q, v, body_frame=True))
            torque = A.T @ np.cross(2 * np.asarray(arm), np.asarray(force))
            euler = np.linalg.solve(INERTIA, torque - np.cross(omega, INERTIA @ omega))
            np.testing.assert_allclose(rate, euler, rtol=1e-12, atol=1e-12 * np.max(np.abs(euler)))

        def kinetic(x, y):
            omega = 2.0 * euler_g(x) @ y / (x @ x)
            return 0.5 * omega @ INERTIA @ omega

        p_rate = v[3:]
        momentum = lambda x: jax.grad(kinetic, argnums=1)(x, p_rate)
        lagrangian = jax.grad(kinetic, argnums=0)(p, p_rate) - jax.jvp(momentum, (p,), (p_rate,))[1]
        gyroscopic = body.gyroscopic_force(q, v)[3:]
        turning = np.max(np.abs(euler_g(p) @ lagrangian))
        assert turning > 0.1
        np.testing.assert_allclose(euler_g(p) @ (lagrangian - gyroscopic), 0.0, atol=1e-13 * turning)
        np.testing.assert_allclose(body.kinetic_energy(q, v), 0.5 * 2.0 * v[:3] @ v[:3] + kinetic(p, p_rate), rtol=1e-14)


def test_gamma_of_spatial_joints_matches_second_difference(check_gamma):
    bodies = [SpatialBody(1.0, [0.1, 0.2, 0.25], name="a"), SpatialBody(2.0, INERTIA, name="b"),
              SpatialBody(1.5, [0.3, 0.3, 0.3], name="c")]
    model = Model(
        bodies,
        [
            Spherical(0, (0.1, 0.2, -0.3), None, (0.0, 0.0, 1.0)),
            RevoluteSpatial(0, (0.0, 0.1, 0.2), (1.0, 1.0, 0.0), 1, (-0.2, 0.0, 0.1), (0.0, 1.0, 2.0)),
            Ground(2, (0.1, 0.2, 0.3, 1.0, 0.5, -0.3, 0.2)),
        ],
    )
    assert [c.size for c in model.constraints] == [3, 5, 6, 1, 1, 1]
    rng = np.random.default_rng(0)
    q0, v0, a0 = (jnp.asarray(rng.normal(size=model.size)) for _ in range(3))
    check_gamma(model, q0, v0, a0)


# --- torque-free asymmetric body ----------------------------------------------------------

MASS = 3.0
OMEGA0_BODY = np.array([0.8, -1.5, 2.5])  # rad/s, body frame
P0 = quaternion(Rotation.from_rotvec([0.4, -0.9, 1.3]))
TIMES = np.linspace(0.0, 4.0, 9)


def free_body():
    return Model([SpatialBody(MASS, INERTIA, name="free")])


def free_state():
    omega = Rotation.from_quat(np.roll(P0, -1)).as_matrix() @ OMEGA0_BODY
    return State(*spatial_state([0.1, -0.2, 0.3], P0, [0.4, 0.2, -0.1], omega))


@pytest.fixture(scope="module")
def euler_solution():
    """ω'(t) from Euler's equations J' ω̇' = −ω' × J' ω' and A(t) from Ȧ = A ω̃' (SciPy)."""
    inverse = np.linalg.inv(INERTIA)

    def rhs(t, y):
        omega, A = y[:3], y[3:].reshape(3, 3)
        skew = np.array([[0, -omega[2], omega[1]], [omega[2], 0, -omega[0]], [-omega[1], omega[0], 0]])
        return np.concatenate([-inverse @ np.cross(omega, INERTIA @ omega), (A @ skew).ravel()])

    A0 = Rotation.from_quat(np.roll(P0, -1)).as_matrix()
    solution = solve_ivp(rhs, (0, TIMES[-1]), np.concatenate([OMEGA0_BODY, A0.ravel()]), method="DOP853",
                         t_eval=TIMES, rtol=1e-12, atol=1e-12)
    return solution.y[:3].T, solution.y[3:].T.reshape(-1, 3, 3)


@pytest.fixture(scope="module")
def free_run():
    return simulate(free_body(), free_state(), TIMES, LagrangeMultipliers(),
                    steps=AdaptiveSteps(rtol=1e-10, atol=1e-12))


def test_torque_free_body_follows_eulers_equations(free_run, euler_solution):
    omega_ref, A_ref = euler_solution
    omega = np.asarray(jax.vmap(lambda q, v: angular_velocity(q, v, body_frame=True))(free_run.q, free_run.v))
    # Observed 3e-10 rad/s on |ω'| ≈ 3 rad/s after 4 s (about 2 turns) at rtol = 1e-10; A: 2e-10.
    np.testing.assert_allclose(omega, omega_ref, atol=1e-8)
    assert np.ptp(omega[:, 0]) > 0.5  # the body tumbles: ω' is far from constant
    A = np.asarray(jax.vmap(euler_rotation)(free_run.q[:, 3:]))
    np.testing.assert_allclose(A, A_ref, atol=1e-8)


def test_torque_free_body_conserves_energy_momenta_and_unit_quaternion(free_run):
    np.testing.assert_allclose(free_run.energy, free_run.energy[0], rtol=1e-10)
    np.testing.assert_allclose(free_run.linear_momentum - free_run.linear_momentum[0], 0.0, atol=1e-12)
    assert free_run.angular_momentum.shape == (len(TIMES), 3)
    np.testing.assert_allclose(free_run.angular_momentum - free_run.angular_momentum[0], 0.0, atol=1e-9)
    norms = np.linalg.norm(np.asarray(free_run.q[:, 3:]), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-10)
    assert float(np.max(free_run.constraint_violation)) < 1e-9


@pytest.mark.parametrize("formulation", [Baumgarte(), AugmentedLagrangian(), DirectCorrection()])
def test_stabilised_formulations_agree_for_the_free_body(formulation, free_run):
    times = TIMES[:3]
    run = simulate(free_body(), free_state(), times, formulation, steps=AdaptiveSteps(rtol=1e-10, atol=1e-12))
    # Observed 4e-11 (Baumgarte), 2e-11 (DirectCorrection), 9e-9 (AugmentedLagrangian, whose
    # penalty iteration stops at ‖Δv̇‖ ≤ 1e-10).
    np.testing.assert_allclose(run.v, free_run.v[:3], atol=1e-7)
    np.testing.assert_allclose(run.q, free_run.q[:3], atol=1e-7)


# --- spatial revolute pendulum against the planar closed form -----------------------------

LENGTH, ROD_MASS, AMPLITUDE = 0.8, 1.2, 1.0
# A frame for the whole pendulum, so the hinge axis and gravity are not along global axes.
FRAME = Rotation.from_rotvec([0.3, -0.5, 0.2])


def revolute_pendulum():
    j = ROD_MASS * LENGTH**2 / 12
    rod = SpatialBody(ROD_MASS, [j, 0.05 * j, j], name="rod")  # a thin rod along its body y axis
    hinge = RevoluteSpatial(0, (0.0, LENGTH / 2, 0.0), (0.0, 0.0, 1.0), None, (0.0, 0.0, 0.0),
                            FRAME.apply([0.0, 0.0, 1.0]))
    return Model([rod], [hinge], [Gravity(FRAME.apply([0.0, -G, 0.0]))])


def pendulum_angle(q):
    """Hinge angle from the relative rotation FRAMEᵀ A(p) = rot_z(θ)."""
    relative = FRAME.as_matrix().T @ np.asarray(euler_rotation(q[3:]))
    return np.arctan2(relative[1, 0], relative[0, 0])


def test_revolute_pendulum_matches_large_amplitude_closed_form():
    # Compound pendulum: T = 4 sqrt(I_O/(m g d)) K(sin(θ₀/2)), I_O = m L²/3, d = L/2.
    period = 4 * np.sqrt((LENGTH**2 / 3) / (G * LENGTH / 2)) * ellipk(np.sin(AMPLITUDE / 2) ** 2)
    attitude = FRAME * Rotation.from_rotvec([0.0, 0.0, AMPLITUDE])
    centre = attitude.apply([0.0, -LENGTH / 2, 0.0])
    state = State(jnp.concatenate([jnp.asarray(centre), jnp.asarray(quaternion(attitude))]), jnp.zeros(7))
    times = np.array([period / 4, period / 2, period])
    run = simulate(revolute_pendulum(), state, times, LagrangeMultipliers(),
                   steps=AdaptiveSteps(rtol=1e-11, atol=1e-12))
    angles = [pendulum_angle(q) for q in np.asarray(run.q)]
    # Observed 2e-12 rad.
    np.testing.assert_allclose(angles, [0.0, -AMPLITUDE, AMPLITUDE], atol=1e-9)
    np.testing.assert_allclose(run.energy, run.energy[0], rtol=1e-9)
    assert float(np.max(run.constraint_violation)) < 1e-9


# --- heavy symmetric top: steady precession ------------------------------------------------

TOP_MASS, ARM, SPIN, TILT = 0.5, 0.03, 100.0, 0.6
TOP_INERTIA = np.array([2.2e-4, 2.2e-4, 4.0e-4])  # about the centre of mass, symmetric about body z


def heavy_top():
    top = SpatialBody(TOP_MASS, TOP_INERTIA, name="top")
    return Model([top], [Spherical(0, (0.0, 0.0, -ARM), None, (0.0, 0.0, 0.0))], [Gravity((0.0, 0.0, -G))])


def top_state(precession, nutation_rate=0.0):
    """Tip at the origin, axis k̂ tilted by TILT about x, ω = Ω ẑ + ψ̇ k̂ + θ̇ x̂, spin ω·k̂ = SPIN."""
    p = euler_parameters([1.0, 0.0, 0.0], TILT)
    axis = np.array([0.0, -np.sin(TILT), np.cos(TILT)])
    omega = precession * np.array([0.0, 0.0, 1.0]) + (SPIN - precession * np.cos(TILT)) * axis
    omega = omega + nutation_rate * np.array([1.0, 0.0, 0.0])
    centre = ARM * axis
    return State(*spatial_state(centre, p, np.cross(omega, centre), omega))


def steady_precession():
    """Slow root of m g l = Ω (C ω₃ − A Ω cos θ) (Goldstein, the heavy symmetric top)."""
    a, c = TOP_INERTIA[0] + TOP_MASS * ARM**2, TOP_INERTIA[2]
    b = c * SPIN
    return (b - np.sqrt(b**2 - 4 * a * np.cos(TILT) * TOP_MASS * G * ARM)) / (2 * a * np.cos(TILT))


@pytest.fixture(scope="module")
def top_runs():
    precession = steady_precession()
    times = np.linspace(0.0, 2 * np.pi / precession, 9)
    runs = [simulate(heavy_top(), top_state(precession, rate), times, LagrangeMultipliers(),
                     steps=AdaptiveSteps(rtol=1e-11, atol=1e-12)) for rate in (0.0, 3.0)]
    return precession, times, runs


def top_axis(run):
    return np.asarray(jax.vmap(lambda q: euler_rotation(q[3:])[:, 2])(run.q))


def test_heavy_top_precesses_steadily_at_the_closed_form_rate(top_runs):
    precession, times, (steady, _) = top_runs
    axis = top_axis(steady)
    # Observed tilt drift 3e-11 rad and azimuth error 3e-10 rad over one precession period.
    np.testing.assert_allclose(np.arccos(axis[:, 2]), TILT, atol=1e-7)
    azimuth = np.unwrap(np.arctan2(axis[:, 0], -axis[:, 1]))
    np.testing.assert_allclose(azimuth, precession * times, atol=1e-7)


def test_nutating_top_conserves_energy_vertical_momentum_and_spin(top_runs):
    _, _, (_, nutating) = top_runs
    tilt = np.arccos(top_axis(nutating)[:, 2])
    assert np.ptp(tilt) > 0.01  # it nutates
    np.testing.assert_allclose(nutating.energy, nutating.energy[0], rtol=1e-9)
    # The pivot is the origin, so gravity and the joint exert no torque about z there.
    lz = np.asarray(nutating.angular_momentum[:, 2])
    np.testing.assert_allclose(lz, lz[0], rtol=1e-9)
    spin = np.asarray(jax.vmap(lambda q, v: angular_velocity(q, v, body_frame=True)[2])(nutating.q, nutating.v))
    np.testing.assert_allclose(spin, SPIN, rtol=1e-9)


# --- bad input ---------------------------------------------------------------------------


def test_bad_inertia_and_mass_are_named():
    with pytest.raises(ValueError, match="top.mass"):
        SpatialBody(-1.0, [1.0, 1.0, 1.0], name="top")
    with pytest.raises(ValueError, match="top.inertia must be symmetric"):
        SpatialBody(1.0, [[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], name="top")
    with pytest.raises(ValueError, match="top.inertia must be positive definite"):
        SpatialBody(1.0, [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], name="top")
    with pytest.raises(ValueError, match="top.inertia .* triangle inequality"):
        SpatialBody(1.0, [1.0, 1.0, 3.0], name="top")
    with pytest.raises(ValueError, match="top.inertia must be a 3×3"):
        SpatialBody(1.0, [1.0, 1.0], name="top")
    SpatialBody(1.0, [1.0, 1.0, 2.0], name="disc")  # flat bodies meet the inequality with equality


def test_traced_bad_inertia_raises_at_run_time():
    make = jax.jit(lambda scale: SpatialBody(1.0, scale * jnp.array([1.0, 1.0, 1.0]), name="top").inertia)
    assert float(make(1.0)[0, 0]) == 1.0
    with pytest.raises(Exception, match="top.inertia"):
        make(-1.0).block_until_ready()
    # the principal moments as a list of traced values (``billiard.ball``'s [J] * 3): a derivative by J, here of
    # the rotational energy ½ ωᵀ J ω of a spin ω about the body's axes, which is |ω|²/2
    q, v = spatial_state([0.0, 0.0, 0.0], euler_parameters([0.0, 0.0, 1.0], 0.0), [0.0, 0.0, 0.0], [3.0, -1.0, 2.0])
    energy = jax.grad(lambda moment: SpatialBody(1.0, [moment] * 3, name="ball").kinetic_energy(q, v))
    assert float(energy(2.0)) == pytest.approx(7.0, rel=1e-14)


def test_non_unit_quaternion_names_the_euler_parameter_constraint():
    model = free_body()
    state = free_state()
    bad = State(state.q.at[3:].multiply(1.01), state.v)
    with pytest.raises(ValueError, match=r"constraints\[0\] \(EulerParameters of body 0 'free'\): position"):
        simulate(model, bad, [1.0], LagrangeMultipliers())
    assert model.constraint_names == ["constraints[0] (EulerParameters of body 0 'free')"]
    # Passing one explicitly does not add a second (which would be redundant).
    assert len(Model(model.bodies, model.constraints).constraints) == 1


def test_planar_and_spatial_bodies_do_not_mix():
    with pytest.raises(ValueError, match="all planar or all spatial"):
        Model([PlanarBody(1.0, 0.1, name="disc"), SpatialBody(1.0, [0.1, 0.1, 0.1], name="ball")])
    with pytest.raises(ValueError, match="Gravity"):
        Model([SpatialBody(1.0, [0.1, 0.1, 0.1])], [], [Gravity((0.0, -G))])


def test_harmonic_torque_about_a_principal_axis_spins_the_body_as_in_closed_form():
    """From rest, M₀ cos Ωt about the z principal axis: ω_z = M₀ sin(Ωt)/(Ω J_z), no other rotation."""
    moments, amplitude, frequency = np.array([0.12, 0.20, 0.27]), 0.5, 3.0
    model = Model([SpatialBody(2.0, moments, name="rotor")], forces=[AppliedTorque(0, amplitude, frequency, (0, 0, 2.0))])
    times = jnp.linspace(0.0, 2.0, 21)
    run = simulate(model, State(*spatial_state([0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0], [0, 0, 0])), times,
                   LagrangeMultipliers())
    omega = np.asarray(jax.vmap(angular_velocity)(run.q, run.v))
    expected = amplitude * np.sin(frequency * np.asarray(times)) / (frequency * moments[2])
    np.testing.assert_allclose(omega[:, 2], expected, atol=1e-9)
    np.testing.assert_allclose(omega[:, :2], 0.0, atol=1e-12)
    # the rotation angle is ∫ω dt = M₀(1 − cos Ωt)/(Ω² J_z), about z
    angle = 2 * np.arctan2(np.asarray(run.q)[:, 6], np.asarray(run.q)[:, 3])
    np.testing.assert_allclose(angle, amplitude * (1 - np.cos(frequency * np.asarray(times))) / (frequency**2 * moments[2]),
                               atol=1e-9)


def test_applied_torque_axis_must_match_the_body():
    planar = Model([PlanarBody(1.0, 0.1)], forces=[AppliedTorque(0, 1.0, 1.0, (0, 0, 1))])
    with pytest.raises(ValueError, match="planar: AppliedTorque takes no axis"):
        planar.generalized_force(jnp.zeros(3), jnp.zeros(3), 0.0)
    spatial = Model([SpatialBody(1.0, [0.1, 0.1, 0.1])], forces=[AppliedTorque(0, 1.0, 1.0)])
    with pytest.raises(ValueError, match="spatial: give AppliedTorque the global axis"):
        spatial.generalized_force(jnp.array([0, 0, 0, 1.0, 0, 0, 0]), jnp.zeros(7), 0.0)
    with pytest.raises(ValueError, match="norm of axis"):
        AppliedTorque(0, 1.0, 1.0, (0, 0, 0))


# --- eq. (2.20) body by body ------------------------------------------------------------


def random_spatial_state(rng, bodies):
    p = rng.standard_normal((bodies, 4))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    q = np.concatenate([rng.standard_normal((bodies, 3)), p], axis=1).reshape(-1)
    return jnp.asarray(q), jnp.asarray(rng.standard_normal(7 * bodies))


def test_free_bodies_are_solved_body_by_body_as_the_dense_saddle_point_system():
    """Uncoupled bodies (Euler-parameter rows only, or none) split eq. (2.20); coupled ones keep one solve."""
    rng = np.random.default_rng(3)
    bodies = [SpatialBody(1.0 + k, INERTIA * (1.0 + 0.5 * k)) for k in range(3)]
    free = Model(bodies, forces=[Gravity((0.0, 0.0, -G))])
    q, v = random_spatial_state(rng, 3)
    force, rhs = jnp.asarray(rng.standard_normal(21)), jnp.asarray(rng.standard_normal(3))
    rows = formulations._rows_per_body(free)
    np.testing.assert_array_equal(rows, [[0], [1], [2]])
    # the closed form of the free bodies holds off the unit sphere too (|p| drifts under Lagrange multipliers)
    for drift in (1.0, 1.03):
        q_drift = q.reshape(3, 7).at[:, 3:].multiply(drift).reshape(-1)
        dense = formulations._saddle_point_solve(free.mass_matrix(q_drift), free.jacobian(q_drift, 0.0), force, rhs)
        split = formulations.constrained_acceleration(free, q_drift, 0.0, force, rhs)
        np.testing.assert_allclose(split, dense, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(dense))))
    # planar bodies without constraints: M⁻¹ g, body by body
    discs = Model([PlanarBody(2.0, 0.5), PlanarBody(3.0, 0.25)])
    force = jnp.asarray(rng.standard_normal(6))
    assert formulations._rows_per_body(discs).shape == (2, 0)
    np.testing.assert_allclose(formulations.constrained_acceleration(discs, jnp.zeros(6), 0.0, force, jnp.zeros(0)),
                               force / jnp.array([2.0, 2.0, 0.5, 3.0, 3.0, 0.25]), rtol=1e-14)
    # a joint between two bodies, or bodies with different numbers of rows, keep the dense solve
    assert formulations._rows_per_body(Model(bodies[:2], [Spherical(0, (0.0, 0.0, 0.1), 1, (0.0, 0.0, -0.1))])) is None
    assert formulations._rows_per_body(Model(bodies[:2], [Ground(0, (0.0,) * 3 + (1.0,) + (0.0,) * 3)])) is None


def test_point_velocity_and_force_are_the_derivative_of_a_material_point():
    """ṙ + ω × s and (F, 2 Eᵀ (s × F)/pᵀp) are the jvp and vjp of point_position at fixed s', for |p| ≠ 1 too."""
    rng = np.random.default_rng(5)
    for drift in (1.0, 0.97):
        pose = jnp.concatenate([jnp.asarray(rng.standard_normal(3)), drift * jnp.asarray(random_spatial_state(rng, 1)[0][3:])])
        planar = jnp.asarray(rng.standard_normal(3))
        for block in (pose, planar):
            rate, local = jnp.asarray(rng.standard_normal(block.shape)), jnp.asarray(rng.standard_normal(3 if len(block) == 7 else 2))
            force = jnp.asarray(rng.standard_normal(local.shape))
            point, velocity = jax.jvp(lambda b: point_position(b, local), (block,), (rate,))
            generalised = jax.vjp(lambda b: point_position(b, local), block)[1](force)[0]
            np.testing.assert_allclose(point_velocity(block, rate, point), velocity, rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(point_force(block, point, force), generalised, rtol=1e-13, atol=1e-13)


def test_gravity_and_gyroscopic_forces_of_all_bodies_at_once():
    """Gravity's m g rows are −∂V/∂q; the stacked gyroscopic forces are each body's own, planar and spatial."""
    rng = np.random.default_rng(7)
    spatial = [SpatialBody(1.0 + k, INERTIA * (1.0 + 0.5 * k)) for k in range(3)]
    q, v = random_spatial_state(rng, 3)
    planar, xy = [PlanarBody(2.0, 0.5), PlanarBody(3.0, 0.25)], jnp.asarray(rng.standard_normal(6))
    for bodies, g, coordinates, rates in ((spatial, (0.3, -0.2, -G), q, v), (planar, (0.0, -G), xy, xy)):
        gravity, rows = Gravity(g), coordinates.reshape(len(bodies), -1)
        np.testing.assert_allclose(gravity(bodies, rows, None, 0.0),
                                   -jax.grad(lambda r: gravity.potential_energy(bodies, r))(rows), rtol=1e-15)
        np.testing.assert_allclose(
            gyroscopic_forces(bodies, rows, rates.reshape(rows.shape)),
            jnp.stack([b.gyroscopic_force(qi, vi) for b, qi, vi in zip(bodies, rows, rates.reshape(rows.shape))]),
            rtol=1e-14, atol=1e-14)
