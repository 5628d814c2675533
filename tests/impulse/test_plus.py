"""The PLUS impact model (Uchida, Sherman & Delp 2015): invariants, exact special cases, the paper's numbers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from diffimpact.impulse import Newton, Plus, Poisson, Routh, plus
from diffimpact.impulse.base import kinetic_energy_change
from diffimpact.reproduce import plus as examples


def _impact(W, u, e, mu, capture, plastic, transition, theta):
    return Plus(e, mu, capture_velocity=capture, plastic_velocity=plastic, transition_velocity=transition,
                max_direction_change=theta)(W, u)


# one compiled function per problem size: every parameter is traced
plus_jit = jax.jit(_impact)


def run(W, u, e, mu, capture=0.01, plastic=0.1, transition=0.1, theta=0.01):
    return plus_jit(jnp.asarray(W, float), jnp.asarray(u, float), e, mu, capture, plastic, transition, theta)


def random_system(seed, contacts=3):
    """W = J M⁻¹ Jᵀ and u⁻ = J q̇ of ``contacts`` spatial contacts on a system of 3 to 3m freedoms.

    Redundant (W singular) when there are fewer freedoms than 3m; u⁻ = J q̇ keeps the contact velocities
    those of a motion of the system, as in every real impact.
    """
    rng = np.random.default_rng(seed)
    freedoms = rng.integers(3, 3 * contacts + 1)
    J = rng.normal(size=(3 * contacts, freedoms))
    L = rng.normal(size=(freedoms, freedoms))
    M = L @ L.T + 0.5 * np.eye(freedoms)
    W = J @ np.linalg.solve(M, J.T)
    u = J @ rng.normal(size=freedoms) * rng.uniform(0.05, 3.0)
    if u[0] > 0:
        u = -u  # at least one point approaches
    return 0.5 * (W + W.T), u


# --- invariants on random systems --------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.floats(0.0, 1.0), mu=st.floats(0.0, 0.5))
def test_impulses_are_repulsive_in_the_cone_and_separating(seed, e, mu):
    # (the energy is not bounded on coupled points, redundant or independent, with or without friction: the three
    # tests after this one)
    W, u = random_system(seed)
    result = run(W, u, e, mu, theta=0.05)
    impulse = np.asarray(result.impulse)
    assert np.all(np.isfinite(impulse))
    by_contact = impulse.reshape(-1, 3)
    size = np.abs(impulse).max() + 1e-300
    assert np.all(by_contact[:, 0] >= -1e-9 * size)
    assert np.all(np.linalg.norm(by_contact[:, 1:], axis=1) <= mu * by_contact[:, 0] + 1e-9 * size)
    if bool(result.converged):  # no point approaches any more (jammed impacts stop early: module docstring)
        assert np.all(np.asarray(result.velocity)[::3] >= -1e-8 * np.abs(u).max())


def _full_rank(W):
    """Whether the contacts are independent: W = J M⁻¹ Jᵀ nonsingular."""
    return bool(np.linalg.eigvalsh(W).min() > 1e-9 * np.abs(W).max())


def test_redundant_contacts_can_gain_energy_even_without_friction():
    # Found by the random test above: three frictionless points at e = 1 on 5 freedoms
    # (W of rank 6 of 9), one point barely approaching (u_n = −0.0045): PLUS's expansion gains 1.56, and still
    # 1.38 at e = 0.99, while e = 0.5 loses energy. A scan of 3000 random systems (e = 0.7–1, μ ≤ 0.5) found
    # one more gain, again redundant (rank 4); none in 3000 with independent contacts (9 and 12 freedoms).
    W, u = random_system(501743)
    assert not _full_rank(W)
    assert kinetic_energy_change(W, u, np.asarray(run(W, u, 1.0, 0.0, theta=0.05).impulse)) > 1.0
    assert kinetic_energy_change(W, u, np.asarray(run(W, u, 0.5, 0.0, theta=0.05).impulse)) < 0.0


def test_independent_but_strongly_coupled_contacts_can_gain_energy_without_friction():
    # Found by the random test above (independent points do not always keep energy): three frictionless points at e = 1 on 9 freedoms, W of full rank but condition
    # number 1.5e4, close to the redundant systems of the test above. The gain depends continuously on W, so
    # systems near a redundant one that gains energy gain it too; at e = 0.5 this one loses energy.
    W, u = random_system(3358354)
    assert _full_rank(W) and np.linalg.cond(W) > 1e4
    assert kinetic_energy_change(W, u, np.asarray(run(W, u, 1.0, 0.0, theta=0.05).impulse)) > 0.05
    assert kinetic_energy_change(W, u, np.asarray(run(W, u, 0.5, 0.0, theta=0.05).impulse)) < 0.0


def test_poissons_hypothesis_with_friction_can_create_energy_on_strongly_coupled_systems():
    # Found by a scan of 2000 random systems with μ ≤ 1.5 and constant e (2 gains; none in 2000 with μ ≤ 0.5,
    # none in 2000 single contacts with μ ≤ 1.5): the expansion impulses of three coupled points, two of them
    # in impending slip, are prescribed (2.4) and the friction they bring drives the normal velocities up
    # more than the compression took away. Kinetic restitution with friction is known not to bound the
    # energy in general (Stronge, Impact Mechanics, 2000, §5); PLUS inherits it.
    W, u = random_system(2000870)
    result = run(W, u, 0.9496119397321673, 0.6966499619805391, capture=0.0, plastic=0.0, theta=0.05)
    assert bool(result.converged)
    assert kinetic_energy_change(W, u, np.asarray(result.impulse)) > 10.0


def test_most_random_impacts_converge_and_jams_stop_early():
    outcomes = []
    for seed in range(60):
        W, u = random_system(seed)
        result = run(W, u, 0.5, 0.5, theta=0.05)
        outcomes.append((bool(result.converged), int(result.intervals) < 256 and int(result.rounds) < 64))
    converged, within = np.array(outcomes).T
    assert converged.mean() > 0.85
    # most of the others are jams, which stop in the round where nothing moves (the rest, strongly redundant
    # systems of three freedoms, reach max_intervals)
    assert (~converged & within).sum() > (~converged & ~within).sum()


def test_frame_invariance_and_the_order_of_the_contacts():
    rng = np.random.default_rng(5)
    for seed in range(12):
        W, u = random_system(seed + 100)
        angles = rng.uniform(0, 2 * np.pi, 3)
        R = np.zeros((9, 9))
        for k, a in enumerate(angles):
            R[3 * k, 3 * k] = 1.0
            R[3 * k + 1:3 * k + 3, 3 * k + 1:3 * k + 3] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
        order = rng.permutation(3)
        P = np.zeros((9, 9))
        for k, j in enumerate(order):
            P[3 * k:3 * k + 3, 3 * j:3 * j + 3] = np.eye(3)
        T = P @ R
        a = run(W, u, 0.6, 0.4, theta=0.05)
        b = run(T @ W @ T.T, T @ u, 0.6, 0.4, theta=0.05)
        assert int(a.intervals) == int(b.intervals)
        np.testing.assert_allclose(T.T @ np.asarray(b.impulse), np.asarray(a.impulse),
                                   atol=1e-9 * np.abs(np.asarray(a.impulse)).max())


# --- exact special cases ------------------------------------------------------------------------------


def test_one_frictionless_contact_is_poissons_and_newtons_impact():
    rng = np.random.default_rng(2)
    for _ in range(5):
        L = rng.normal(size=(3, 3))
        W = L @ L.T + 0.1 * np.eye(3)
        u = rng.normal(size=3)
        u[0] = -abs(u[0])
        e = rng.uniform()
        result = run(W, u, e, 0.0, capture=0.0, plastic=0.0)  # e constant: Fig. 2 without its ends
        for model in (Poisson, Newton):
            np.testing.assert_allclose(np.asarray(result.impulse), np.asarray(model(e)(W, u).impulse),
                                       rtol=1e-12, atol=1e-14)
        assert int(result.rounds) == 2  # compression, then expansion


def test_planar_impacts_follow_rouths_method_in_all_five_cases():
    # A planar contact (the out-of-plane direction decoupled): PLUS's sliding intervals stop where the slip
    # does (α_CP of (2.13)), then roll (Routh's sticking) or slip back (impending slip), which is Routh's
    # impulse-space path with Poisson's restitution exactly; v_transition → 0 removes the tolerance band.
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(120):
        L = rng.normal(size=(2, 2))
        W2 = L @ L.T + 0.05 * np.eye(2)
        u2 = np.array([-abs(rng.normal()), rng.normal()])
        mu, k = rng.uniform(0.0, 1.5), rng.uniform()
        if W2[0, 0] - mu * np.sign(u2[1]) * W2[0, 1] <= 0:
            continue  # Painlevé's case: compression cannot start sliding, a jam for PLUS (module docstring)
        reference = Routh(mu, k)(W2, u2)
        seen.add(int(reference.case))
        W = np.zeros((3, 3))
        W[:2, :2], W[2, 2] = W2, 1.0
        result = run(W, np.append(u2, 0.0), k, mu, capture=0.0, plastic=0.0, transition=1e-9)
        np.testing.assert_allclose(np.asarray(result.impulse)[:2], np.asarray(reference.impulse),
                                   rtol=1e-9, atol=1e-9 * np.abs(reference.impulse).max())
    assert seen == {0, 1, 2, 3, 4}


def test_example_1_sliding_throughout_converges_to_the_impulse_space_ode_as_theta_max_falls():
    # Independent reference: the same model integrated in the normal impulse, dv/dπ_n = W (1, −μ v̂_t),
    # to the end of compression (v_n = 0) and then to (1 + e) times that impulse; μ = 0.125 slides throughout.
    W, u, _ = examples.example_1_problem()
    mu, e = 0.125, 0.392

    def rate(_, v):
        return W @ np.concatenate([[1.0], -mu * v[1:] / np.linalg.norm(v[1:])])

    def compressed(_, v):
        return v[0]

    compressed.terminal = True
    first = solve_ivp(rate, (0.0, 100.0), u, rtol=1e-12, atol=1e-12, events=compressed)
    p_c = first.t_events[0][0]
    second = solve_ivp(rate, (p_c, (1 + e) * p_c), first.y[:, -1], rtol=1e-12, atol=1e-12)
    reference = second.y[:, -1]
    errors = []
    for theta in (0.08, 0.04, 0.02):
        result = run(W, u, e, mu, theta=theta)
        assert set(np.asarray(result.friction_state[:int(result.intervals), 0]).tolist()) == {plus.SLIDING}
        errors.append(np.abs(np.asarray(result.velocity) - reference).max())
    assert errors[2] < 1e-2 * np.abs(u).max()
    assert errors[0] > 1.7 * errors[1] > 1.7**2 * errors[2]  # first order in θ_max


# --- the paper's Example 1 ----------------------------------------------------------------------------


def test_example_1_states_and_the_interval_counts_of_figure_10():
    W, u, _ = examples.example_1_problem()
    p = examples.EXAMPLE_1
    kinds = []
    for mu, e in zip(p["friction"], p["min_restitution"]):
        result = run(W, u, e, mu)
        n = int(result.intervals)
        friction_state = np.asarray(result.friction_state[:n, 0])
        rounds = np.asarray(result.interval_round[:n])
        rolls = friction_state == plus.ROLLING
        kinds.append("slides" if not rolls.any() else f"rolls in round {rounds[rolls][0]}")
        assert bool(result.converged) and int(result.rounds) == 2
    assert kinds == ["slides", "rolls in round 2", "rolls in round 1"]  # throughout / in expansion / in compression
    mu, e = p["friction"][2], p["min_restitution"][2]
    counts = [int(run(W, u, e, mu, theta=theta).intervals) for theta, _ in examples.FIGURE_10]
    assert counts == [n for _, n in examples.FIGURE_10]  # 116, 11, 8


def test_forward_derivatives_match_central_differences_away_from_switches(central_jacobian):
    W, u, _ = examples.example_1_problem()
    post = jax.jit(lambda x: run(W, u, x[0], x[1], theta=0.25).velocity)
    jacobian = jax.jit(jax.jacfwd(post))  # forward mode through the while loops (reverse mode is not supported)
    for mu in (0.125, 0.325):  # sliding throughout; rolling from α_CP on in compression
        x = jnp.array([0.39, mu])
        exact = np.asarray(jacobian(x))
        assert np.abs(exact).max() > 0.5
        np.testing.assert_allclose(exact, central_jacobian(post, x, 1e-6), rtol=1e-6, atol=1e-6)


# --- pieces -------------------------------------------------------------------------------------------


def test_the_direction_limit_turns_the_slip_by_exactly_theta_max():
    rng = np.random.default_rng(3)
    start = rng.normal(size=(50, 2))
    change = 4 * rng.normal(size=(50, 2))
    theta = 0.2
    alpha = np.asarray(plus.step_lengths(start, change, 1e-6, theta, 1e-9))
    end = start + alpha[:, None] * change
    cosine = np.sum(start * end, 1) / np.linalg.norm(start, axis=1) / np.linalg.norm(end, axis=1)
    limited = alpha < 1
    closest = -np.sum(start * change, 1) / np.sum(change * change, 1)
    turned = limited & ~np.isclose(alpha, closest)
    assert turned.sum() > 20
    np.testing.assert_allclose(np.arccos(np.clip(cosine[turned], -1, 1)), theta, rtol=1e-9)


def test_the_restitution_law_of_figure_2():
    speeds = np.array([0.0, 0.005, 0.01, 0.0100001, 0.05, 0.1, 5.0])
    e = np.asarray(plus.restitution_law(speeds, 0.4, 0.01, 0.1))
    np.testing.assert_allclose(e, [0, 0, 0, 1 - 0.6 * 0.100001, 1 - 0.6 * 0.5, 0.4, 0.4], rtol=1e-12)


def test_redundant_identical_contacts_share_the_load_equally():
    # two contacts at the same place on one body (W singular) and a third elsewhere, separating; the
    # minimum-norm impulse splits evenly between the two and sums to the single contact's
    W1 = np.array([[1.0, 0.2, 0.0], [0.2, 2.0, 0.1], [0.0, 0.1, 1.5]])
    Z = np.zeros((3, 3))
    W = np.block([[W1, W1, Z], [W1, W1, Z], [Z, Z, W1]])
    u = np.array([-2.0, 0.5, 0.1, -2.0, 0.5, 0.1, 1.0, 0.0, 0.0])
    result = run(W, u, 0.5, 0.3)
    parts = np.asarray(result.impulse).reshape(3, 3)
    np.testing.assert_allclose(parts[0], parts[1], rtol=1e-10)
    np.testing.assert_array_equal(parts[2], 0.0)
    single = run(W1, u[:3], 0.5, 0.3)
    np.testing.assert_allclose(parts[0] + parts[1], np.asarray(single.impulse), rtol=1e-10)


def test_a_separating_impact_is_a_no_op_and_bad_input_is_refused():
    W = np.eye(3)
    result = run(W, [1.0, 0.3, 0.0], 0.5, 0.3)
    assert int(result.intervals) == 0 and bool(result.converged)
    np.testing.assert_array_equal(np.asarray(result.impulse), 0.0)
    cases = [
        (dict(delassus=-np.eye(3)), "delassus must be finite, symmetric, positive semi-definite"),
        (dict(delassus=np.full((3, 3), np.nan)), "delassus must be finite"),
        (dict(delassus=np.eye(6)), r"delassus must have shape \(3, 3\)"),
        (dict(velocity=[-1.0, 0.0]), r"velocity must have shape \(3m,\)"),
        (dict(velocity=[-np.inf, 0.0, 0.0]), "velocity must be finite"),
        (dict(friction=-0.1), "friction must be finite and in"),
        (dict(friction=[0.1, 0.2]), r"friction must be a scalar or one value per contact, shape \(1,\)"),
        (dict(restitution=1.5), r"restitution must be finite and in \[0, 1\]"),
        (dict(capture_velocity=0.2), "capture_velocity must not exceed plastic_velocity"),
        (dict(transition_velocity=0.0), "transition_velocity must be finite and in"),
        (dict(max_direction_change=2.0), "max_direction_change must be finite and in"),
        (dict(min_step=0.0), "min_step must be finite and in"),
        (dict(capture_velocity=[0.0, 0.01]),
         r"capture_velocity must be a scalar or one value per contact, shape \(1,\)"),
        (dict(dimension=2), r"Plus resolves spatial contacts \(dimension 3\); got dimension 2"),
    ]
    base = dict(delassus=W, velocity=[-1.0, 0.3, 0.0], restitution=0.5, friction=0.3)
    for change, message in cases:
        arguments = {**base, **change}
        problem = [arguments.pop(name) for name in ("delassus", "velocity")] + [arguments.pop("dimension", None)]
        with pytest.raises(ValueError, match=message):
            Plus(**arguments)(*problem)
    # traced: jax.jit wraps equinox's EquinoxRuntimeError (as JaxRuntimeError, or ValueError under pytest here)
    wrapped = (jax.errors.JaxRuntimeError, ValueError)
    with pytest.raises(wrapped, match="delassus must be finite"):
        run(-np.eye(3), [-1.0, 0.3, 0.0], 0.5, 0.3)
    with pytest.raises(wrapped, match="restitution must be finite"):
        run(W, [-1.0, 0.3, 0.0], 1.5, 0.3)
