"""Spheres and planes by the time stepping of Preclik et al. 2017 §3.1, against closed forms and conservation laws."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact import rigid_spheres as rs
from diffimpact.rotations import euler_parameters, euler_rotation, skew

G = 9.81
FLOOR = ((0.0, 0.0, 1.0), (0.0, 0.0, 0.0))


def total_energy(scene, trajectory):
    return np.asarray(rs.kinetic_energy(scene, trajectory.state) + rs.potential_energy(scene, trajectory.state))


@pytest.mark.parametrize("normal", [(0.0, 0.0, 1.0), (0.3, -0.5, 0.8)])
def test_a_sphere_resting_on_a_plane_stays_at_rest_with_impulse_m_g_dt(normal):
    n = np.asarray(normal) / np.linalg.norm(normal)
    mass, radius, dt = 2.0, 0.1, 1e-3
    scene = rs.Scene([radius], mass, planes=[(n, (0.2, 0.1, -0.3))], friction=0.5, gravity=-G * n)
    start = np.array([0.2, 0.1, -0.3]) + radius * n + np.cross(n, [0.0, 0.0, 1.0]) * 0.7
    trajectory = rs.simulate(scene, rs.State([start]), dt, 200)
    np.testing.assert_allclose(trajectory.state.position[:, 0], np.broadcast_to(start, (201, 3)), atol=1e-15)
    np.testing.assert_allclose(trajectory.state.velocity, 0.0, atol=1e-13)
    np.testing.assert_allclose(trajectory.impulse[:, 0, 0], mass * G * dt, rtol=1e-11)
    # no tangential impulse, up to the round-off of the impulse itself (the tilted plane's gravity is split into
    # components and recombined): ε m g dt = 4.4e-18 N s (1e-18 held only with XLA's fused multiply-adds)
    np.testing.assert_allclose(trajectory.impulse[:, 0, 1:], 0.0, atol=np.finfo(float).eps * mass * G * dt)


V0, MU, RADIUS, MASS, DT = 2.0, 0.3, 0.1, 2.0, 1e-3
DIRECTION = np.array([np.cos(0.4), np.sin(0.4), 0.0])  # not along a frame axis


def slide(v0, mu, steps):
    scene = rs.Scene([RADIUS], MASS, planes=[FLOOR], friction=mu)
    return scene, rs.simulate(scene, rs.State([[0.0, 0.0, RADIUS]], velocity=v0 * DIRECTION[None]), DT, steps)


@pytest.fixture(scope="module")
def sliding():
    return slide(V0, MU, 400)[1]


def test_a_sliding_sphere_decelerates_at_mu_g_then_rolls_at_five_sevenths(sliding):
    speed = np.asarray(sliding.state.velocity[:, 0]) @ DIRECTION
    # contact point velocity v + ω × (−r e_z): the slip
    slip = np.asarray(sliding.state.velocity[:, 0] + jnp.cross(sliding.state.angular_velocity[:, 0],
                                                                jnp.array([0.0, 0.0, -RADIUS])))
    slip_speed = np.linalg.norm(slip, axis=-1)
    end = int(np.argmax(slip_speed < 1e-12))
    t_star, s_star = 2 * V0 / (7 * MU * G), 12 * V0**2 / (49 * MU * G)  # closed form of the solid sphere
    assert abs(end * DT - t_star) <= DT
    travelled = np.asarray(sliding.state.position[end, 0]) @ DIRECTION
    assert abs(travelled - s_star) <= 2 * V0 * DT  # O(δt) of the semi-implicit Euler positions
    # during the slip: dv/dt = −μg exactly, r dω/dt = 5/2 μg (I = 2/5 m r²), the slip keeps its direction
    np.testing.assert_allclose(np.diff(speed[: end - 1]), -MU * G * DT, rtol=1e-9)
    spin = np.linalg.norm(sliding.state.angular_velocity[:, 0], axis=-1) * RADIUS
    np.testing.assert_allclose(np.diff(spin[: end - 1]), 2.5 * MU * G * DT, rtol=1e-9)
    # the angular momentum about the contact point is conserved: rolling at 5/7 v0, to round-off, for good
    np.testing.assert_allclose(speed[end:], 5 / 7 * V0, rtol=1e-12)
    np.testing.assert_allclose(slip_speed[end:], 0.0, atol=1e-12)
    np.testing.assert_allclose(sliding.state.position[:, 0, 2], RADIUS, atol=1e-15)
    # maximum dissipation = Coulomb for a homogeneous sphere: the friction impulse is μ λ_n against the slip
    impulse, frame = np.asarray(sliding.impulse[: end - 1, 0]), np.asarray(rs.contacts(
        rs.Scene([RADIUS], MASS, planes=[FLOOR]), rs.State([[0.0, 0.0, RADIUS]])).frame[0])
    friction = impulse[:, 1:] @ frame[1:]
    np.testing.assert_allclose(np.linalg.norm(friction, axis=-1), MU * impulse[:, 0], rtol=1e-12)
    np.testing.assert_allclose(friction / np.linalg.norm(friction, axis=-1, keepdims=True),
                               -slip[1:end] / slip_speed[1:end, None], atol=1e-12)


def test_the_rolling_sphere_turns_by_the_quaternion_update_of_section_3_1(sliding):
    # rolling at ω = v/r about e_z × d, φ' = (φ + δt Q(φ) ω)/‖·‖ turns by 2 atan(δt ω/2) per step (the
    # quaternion (1, δt ω/2) normalised), δt ω − (δt ω)³/12 + …: over 100 steps 2e-5 rad short of ω t
    turn = 100 * 2 * np.arctan(DT * 5 / 7 * V0 / (2 * RADIUS))
    relative = euler_rotation(sliding.state.orientation[-1, 0]) @ euler_rotation(sliding.state.orientation[300, 0]).T
    axis = np.cross([0.0, 0.0, 1.0], DIRECTION)
    np.testing.assert_allclose(relative, euler_rotation(euler_parameters(axis, turn)), atol=1e-12)
    rolled = float((sliding.state.position[-1, 0] - sliding.state.position[300, 0]) @ DIRECTION)
    assert rolled / RADIUS - turn == pytest.approx(100 * (DT * 5 / 7 * V0 / RADIUS) ** 3 / 12, rel=1e-3)


def test_derivatives_of_the_speed_are_those_of_the_closed_form():
    def speeds(params):
        return slide(params[0], params[1], 400)[1].state.velocity[:, 0] @ DIRECTION

    # sliding (100 steps < t*): v = v0 − μ g t; rolling (400 steps): v = 5/7 v0, whatever μ
    jacobian = jax.jacfwd(speeds)(jnp.array([V0, MU]))
    np.testing.assert_allclose(jacobian[100], [1.0, -G * 100 * DT], rtol=1e-10)
    np.testing.assert_allclose(jacobian[400], [5 / 7, 0.0], atol=1e-10)


@pytest.mark.slow  # 11-20 s: compiles the reverse pass of 100 steps (test_max_dissipation checks the NaN case)
def test_reverse_mode_matches_the_closed_form():
    # a sphere's contact has no normal–tangential coupling (A_nt = 0): the grazing branch of Fig. 5 must not
    # send NaN through the unused arctan2(0, 0) into the gradient
    gradient = jax.grad(lambda params: slide(params[0], params[1], 100)[1].state.velocity[-1, 0] @ DIRECTION)
    np.testing.assert_allclose(gradient(jnp.array([V0, MU])), [1.0, -G * 100 * DT], rtol=1e-10)


def test_a_dropped_sphere_lands_without_bouncing_and_contacts_never_add_energy():
    scene = rs.Scene([RADIUS], MASS, planes=[FLOOR], friction=0.2)
    start = rs.State([[0.0, 0.0, RADIUS + 0.0537]], velocity=[[0.5, -0.2, 0.0]], angular_velocity=[[3.0, 1.0, 5.0]])
    trajectory = rs.simulate(scene, start, DT, 300)
    gap = np.asarray(trajectory.state.position[:, 0, 2]) - RADIUS
    landed = int(np.argmax(gap < 1e-15))
    assert 0 < landed < 150
    np.testing.assert_allclose(gap[landed:], 0.0, atol=1e-15)  # closes exactly at the step's end, stays closed
    assert np.all(trajectory.state.velocity[:, 0, 2] <= 1e-15)  # never moves up: purely inelastic
    np.testing.assert_allclose(trajectory.state.velocity[landed + 1:, 0, 2], 0.0, atol=1e-15)
    assert np.all(trajectory.contact_work <= 1e-15)
    assert np.all(np.diff(total_energy(scene, trajectory)) <= 1e-13)
    assert float(trajectory.contact_work[landed - 1]) < -0.5 * MASS * (0.9 * np.sqrt(2 * G * 0.0537)) ** 2


def test_two_spheres_colliding_head_on_stick_together_with_momentum_conserved():
    d = np.array([1.0, 2.0, -0.5]) / np.sqrt(5.25)
    masses, radii, speeds = np.array([1.0, 3.0]), np.array([0.1, 0.2]), np.array([2.0, -1.0])
    scene = rs.Scene(radii, masses, friction=0.5, gravity=(0.0, 0.0, 0.0))
    start = rs.State([[0.0, 0.0, 0.0], 0.35 * d], velocity=speeds[:, None] * d)
    trajectory = rs.simulate(scene, start, 1e-2, 60)
    momentum = np.einsum("i,tij->tj", masses, trajectory.state.velocity)
    np.testing.assert_allclose(momentum, np.broadcast_to(masses @ speeds * d, momentum.shape), atol=1e-14)
    common = masses @ speeds / masses.sum()
    np.testing.assert_allclose(trajectory.state.velocity[-1], np.broadcast_to(common * d, (2, 3)), atol=1e-14)
    lost = 0.5 * masses.prod() / masses.sum() * (speeds[0] - speeds[1]) ** 2  # perfectly inelastic
    assert float(-trajectory.contact_work.sum()) == pytest.approx(lost, rel=1e-12)
    np.testing.assert_allclose(trajectory.gap[-30:], 0.0, atol=1e-14)


def test_an_oblique_frictional_collision_conserves_both_momenta():
    masses, radii = np.array([1.0, 2.5]), np.array([0.1, 0.15])
    scene = rs.Scene(radii, masses, friction=0.4, gravity=(0.0, 0.0, 0.0))
    start = rs.State([[0.0, 0.0, 0.0], [0.3, 0.12, 0.05]], velocity=[[3.0, 0.0, 0.0], [-1.0, 0.2, 0.0]],
                     angular_velocity=[[0.0, 0.0, 30.0], [5.0, -4.0, 0.0]])
    trajectory = rs.simulate(scene, start, 1e-3, 200)
    assert float(trajectory.impulse[:, 0, 0].max()) > 0  # they do collide
    states = trajectory.state
    linear = np.einsum("i,tij->tj", masses, states.velocity)
    inertia = 0.4 * masses * radii**2
    angular = np.einsum("i,tij->tj", masses, np.cross(states.position, states.velocity)) + np.einsum(
        "i,tij->tj", inertia, states.angular_velocity)
    np.testing.assert_allclose(linear, np.broadcast_to(linear[0], linear.shape), atol=1e-13)
    np.testing.assert_allclose(angular, np.broadcast_to(angular[0], angular.shape), atol=1e-13)
    assert np.all(trajectory.contact_work <= 1e-15) and float(trajectory.contact_work.sum()) < -0.1


def test_the_delassus_blocks_are_eq_2_and_the_contact_velocities_those_of_section_2():
    rng = np.random.default_rng(3)
    inertia = np.array([[0.02, 0.03, 0.04], [0.05, 0.05, 0.09]])  # anisotropic principal moments
    scene = rs.Scene([0.1, 0.2], [1.5, 4.0], inertia=inertia, planes=[((0.2, 0.1, 1.0), (0.0, 0.0, -0.5))],
                     friction=0.3)
    orientation = np.stack([euler_parameters(rng.normal(size=3), a) for a in (0.7, -1.9)])
    state = rs.State([[0.0, 0.0, 0.0], [0.25, 0.2, 0.1]], rng.normal(size=(2, 3)), rng.normal(size=(2, 3)),
                     orientation)
    found, _, delassus, free, velocity = rs._problem(scene, state, 0.0)  # δt = 0: the state's own velocities
    first, second, plane = scene.pairs()
    for j in range(first.size):
        bodies = [(first[j], found.lever[j, 0])] + ([] if plane[j] else [(second[j], found.lever[j, 1])])
        block = sum(np.eye(3) / scene.mass[i] - skew(r) @ np.linalg.inv(
            euler_rotation(orientation[i]) @ np.diag(inertia[i]) @ euler_rotation(orientation[i]).T) @ skew(r)
            for i, r in bodies)  # eq. (2), world frame
        Q = np.asarray(found.frame[j])
        np.testing.assert_allclose(delassus[3 * j:3 * j + 3, 3 * j:3 * j + 3], Q @ block @ Q.T, rtol=1e-12, atol=1e-14)
        relative = sum(sign * (state.velocity[i] + np.cross(state.angular_velocity[i], r))
                       for sign, (i, r) in zip((1, -1), bodies))  # δv_j of §2
        np.testing.assert_allclose(velocity[3 * j:3 * j + 3], Q @ relative, rtol=1e-12)
    np.testing.assert_allclose(free, np.concatenate([state.velocity, state.angular_velocity], -1), atol=1e-15)


def test_the_gyroscopic_term_keeps_the_angular_momentum_to_first_order():
    inertia = np.array([[0.01, 0.02, 0.025]])
    scene = rs.Scene([0.1], 1.0, inertia=inertia, gravity=(0.0, 0.0, 0.0))
    start = rs.State([[0.0, 0.0, 0.0]], angular_velocity=[[1.0, 6.0, 2.0]])  # near the unstable middle axis

    def drift(dt):
        trajectory = rs.simulate(scene, start, dt, round(0.5 / dt))
        R = jax.vmap(euler_rotation)(trajectory.state.orientation[:, 0])
        momentum = np.einsum("tij,j,tkj,tk->ti", R, inertia[0], R, trajectory.state.angular_velocity[:, 0])
        return np.abs(momentum - momentum[0]).max() / np.linalg.norm(momentum[0])

    coarse, fine = drift(2e-3), drift(1e-3)
    assert coarse < 5e-3
    assert 1.7 < coarse / fine < 2.3  # O(δt)


def test_a_column_of_spheres_needs_the_gauss_seidel_sweeps():
    mass, radius, dt = 0.5, 0.05, 1e-3
    scene = rs.Scene(np.full(3, radius), mass, planes=[FLOOR], friction=0.4)
    start = rs.State([[0.0, 0.0, radius * (2 * k + 1)] for k in range(3)])
    column = rs.simulate(scene, start, dt, 100, sweeps=60)
    np.testing.assert_allclose(column.state.position, np.broadcast_to(start.position, (101, 3, 3)), atol=1e-12)
    # contacts: the three on the floor, then the pairs (0, 1), (0, 2), (1, 2)
    np.testing.assert_allclose(column.impulse[:, :, 0], np.broadcast_to(
        mass * G * dt * np.array([3, 0, 0, 2, 0, 1]), (100, 6)), rtol=1e-7, atol=1e-16)
    one_sweep = rs.simulate(scene, start, dt, 100, sweeps=1)
    assert float(-one_sweep.gap.min()) > 1e-5  # not converged: the column sinks into itself


def test_a_sphere_in_a_v_groove_rests_on_both_walls():
    half = np.radians(30.0)  # the walls' normals 30° from the vertical: not orthogonal, the contacts are coupled
    walls = [((side * np.sin(half), 0.0, np.cos(half)), (0.0, 0.0, 0.0)) for side in (1, -1)]
    mass, radius, dt = 1.0, 0.1, 1e-3
    scene = rs.Scene([radius], mass, planes=walls, friction=0.0)
    start = rs.State([[0.0, 0.3, radius / np.cos(half)]])
    groove = rs.simulate(scene, start, dt, 100, sweeps=60)
    np.testing.assert_allclose(groove.impulse[:, :, 0], mass * G * dt / (2 * np.cos(half)), rtol=1e-9)
    np.testing.assert_allclose(groove.state.position[-1], start.position, atol=1e-12)


#: four spheres filling a 2 × 2 box on the floor and a fifth dropped off-centre onto them
POCKET_RADIUS = 0.05
POCKET_START = np.array([[-0.05, -0.05, 0.05], [0.05, -0.05, 0.05], [-0.05, 0.05, 0.05], [0.05, 0.05, 0.05],
                         [0.012, -0.007, 0.2]])


@pytest.fixture(scope="module")
def pile():
    w = 2 * POCKET_RADIUS
    box = [FLOOR] + [(normal, -w * np.asarray(normal)) for normal in
                     ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))]
    scene = rs.Scene(np.full(5, POCKET_RADIUS), 0.5, planes=box, friction=0.5)
    return scene, {epsilon: rs.simulate(scene, rs.State(POCKET_START), 2e-3, 300, sweeps=20, error_reduction=epsilon)
                   for epsilon in (0.0, 0.2)}


def test_a_sphere_dropped_on_four_settles_in_their_pocket_and_energy_only_falls(pile):
    scene, runs = pile
    trajectory = runs[0.0]
    energy = total_energy(scene, trajectory)
    assert np.all(np.diff(energy) <= 1e-12)
    assert np.all(trajectory.contact_work <= 1e-12)
    final = jax.tree.map(lambda x: x[-1], trajectory.state)
    assert float(rs.kinetic_energy(scene, final)) < 1e-9 * (energy[0] - energy[-1])
    # at rest on the four: 2r from each centre, above the middle of the square of side 2r
    pocket = [0.0, 0.0, POCKET_RADIUS * (1 + np.sqrt(2))]
    np.testing.assert_allclose(final.position[4], pocket, atol=1e-4 * POCKET_RADIUS)
    np.testing.assert_allclose(final.position[:4], POCKET_START[:4], atol=1e-4 * POCKET_RADIUS)
    loaded = np.asarray(trajectory.impulse[-1, :, 0]) > 0
    assert loaded.sum() >= 13  # floor 4, walls, the four contacts under the top sphere: Gauss–Seidel's work
    penetration = np.maximum(0.0, -np.asarray(trajectory.gap)).max()
    assert penetration < 1e-4 * POCKET_RADIUS  # twenty sweeps leave little; ε = 0 undoes none of it


def test_error_reduction_undoes_penetrations_with_little_energy(pile):
    scene, runs = pile
    penetration = {epsilon: np.maximum(0.0, -np.asarray(run.gap)).max(axis=1) for epsilon, run in runs.items()}
    assert penetration[0.2][-50:].max() < 0.1 * penetration[0.0][-50:].max()
    assert penetration[0.2][-50:].max() <= penetration[0.2][:-50].max()  # no growth
    rise = np.diff(total_energy(scene, runs[0.2])).max()  # what ε > 0 may add: ½ m (ε ξ/δt)² per contact
    assert 0 < rise < 0.5 * 0.5 * (0.2 * penetration[0.2].max() / 2e-3) ** 2 * 20


def test_bad_input_is_refused_with_the_argument_named():
    scene = rs.Scene([0.1, 0.1], 1.0, planes=[FLOOR])
    good = rs.State([[0.0, 0.0, 0.1], [0.3, 0.0, 0.1]])
    for name, call in [
        ("radius", lambda: rs.Scene([0.1, -0.1], 1.0)),
        ("mass", lambda: rs.Scene([0.1], 0.0)),
        ("inertia", lambda: rs.Scene([0.1], 1.0, inertia=[[0.01, 0.01, 0.05]])),
        ("friction", lambda: rs.Scene([0.1], 1.0, friction=-0.1)),
        ("norm of planes\\[0\\] normal", lambda: rs.Scene([0.1], 1.0, planes=[((0, 0, 0), (0, 0, 0))])),
        ("gravity", lambda: rs.Scene([0.1], 1.0, gravity=(0.0, np.nan, 0.0))),
        ("dt", lambda: rs.simulate(scene, good, 0.0, 10)),
        ("error_reduction", lambda: rs.simulate(scene, good, 1e-3, 10, error_reduction=1.0)),
        ("steps", lambda: rs.simulate(scene, good, 1e-3, 0)),
        ("sweeps", lambda: rs.simulate(scene, good, 1e-3, 10, sweeps=0)),
        ("state.velocity must be finite", lambda: rs.simulate(scene, rs.State(good.position, [[np.inf, 0, 0]] * 2),
                                                              1e-3, 10)),
        ("state.position must have shape", lambda: rs.simulate(scene, rs.State([[0.0, 0.0, 0.1]]), 1e-3, 10)),
        ("state.orientation must hold unit quaternions",
         lambda: rs.simulate(scene, rs.State(good.position, orientation=[[1.0, 0.1, 0, 0]] * 2), 1e-3, 10)),
        ("sphere 0 and sphere 1 overlap by 0.05 m",
         lambda: rs.simulate(scene, rs.State([[0.0, 0.0, 0.1], [0.15, 0.0, 0.1]]), 1e-3, 10)),
        ("sphere 1 and plane 0 overlap", lambda: rs.simulate(scene, rs.State([[0.0, 0.0, 0.1], [0.3, 0.0, 0.09]]),
                                                             1e-3, 10)),
    ]:
        with pytest.raises(ValueError, match=name):
            call()


def test_a_traced_start_and_plane_are_checked_when_the_function_runs():
    """Under ``jit`` the checks of the start and of the planes' points are compiled into the run (before, their
    results were dropped: overlapping spheres ran on, a NaN point gave a NaN plane)."""
    scene = rs.Scene([0.1, 0.1], 1.0, planes=[FLOOR])
    run = eqx.filter_jit(lambda position: rs.simulate(scene, rs.State(position), 1e-3, 2).state.position[-1])
    np.testing.assert_allclose(run(jnp.array([[0.0, 0.0, 0.1], [0.3, 0.0, 0.1]]))[1], [0.3, 0.0, 0.1], atol=1e-5)
    with pytest.raises(eqx.EquinoxRuntimeError, match="spheres must not overlap"):
        run(jnp.array([[0.0, 0.0, 0.1], [0.15, 0.0, 0.1]])).block_until_ready()
    offset = eqx.filter_jit(lambda point: rs.Scene([0.1], 1.0, planes=[((0.0, 0.0, 1.0), point)]).plane_offset)
    assert float(offset(jnp.array([0.0, 0.0, 0.5]))[0]) == 0.5
    with pytest.raises(eqx.EquinoxRuntimeError, match="planes\\[0\\] point must be finite"):
        offset(jnp.array([0.0, np.nan, 0.5])).block_until_ready()
