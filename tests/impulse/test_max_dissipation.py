"""Maximum-dissipation impacts (Preclik, Eibl & Rüde 2017): every case of Fig. 5, against independent references."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import LinearConstraint, NonlinearConstraint, minimize

from diffimpact.impulse import max_dissipation as md
from diffimpact.reproduce import max_dissipation as examples

single = jax.jit(lambda W, u, mu: md.MaxDissipation(mu)(W, u).impulse)


def gauss_seidel(W, u, mu, sweeps=100):
    return md.MaxDissipationGaussSeidel(mu, sweeps)(W, u).impulse


def random_problem(rng, colliding=True):
    L = rng.normal(size=(3, 3))
    W = L @ L.T + 0.05 * np.eye(3)
    u = rng.normal(size=3)
    if colliding:
        u[0] = -abs(u[0])
    return W, u


def energy_change(W, u, impulse):
    return 0.5 * impulse @ W @ impulse + impulse @ u


def generic_minimum(W, u, mu, starts=6, tolerance=1e-9, fallback=True):
    """The same problem by SciPy: SLSQP from several starts, then trust-constr if none is feasible to ``tolerance``.

    Returns the best feasible result, or None.
    """
    def violation(x):
        return max(abs(u[0] + W[0] @ x), -x[0], np.hypot(x[1], x[2]) - mu * x[0])

    constraints = [{"type": "eq", "fun": lambda x: u[0] + W[0] @ x}, {"type": "ineq", "fun": lambda x: x[0]},
                   {"type": "ineq", "fun": lambda x: (mu * x[0]) ** 2 - x[1] ** 2 - x[2] ** 2}]
    results = [minimize(lambda x: energy_change(W, u, x), np.random.default_rng(seed).normal(size=3),
                        constraints=constraints, method="SLSQP", options={"ftol": 1e-15, "maxiter": 500})
               for seed in range(starts)]
    feasible = [r for r in results if violation(r.x) < tolerance]
    if not feasible and fallback:
        constraints = [LinearConstraint(W[:1], -u[0], -u[0]),
                       NonlinearConstraint(lambda x: np.array([x[0], (mu * x[0]) ** 2 - x[1] ** 2 - x[2] ** 2]),
                                           0.0, np.inf)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # its quasi-Newton update on the quadratic objective
            results = [minimize(lambda x: energy_change(W, u, x), np.random.default_rng(seed).normal(size=3),
                                method="trust-constr", constraints=constraints,
                                options={"xtol": 1e-12, "gtol": 1e-12, "maxiter": 3000}) for seed in range(2)]
        feasible = [r for r in results if violation(r.x) < tolerance]
    return min(feasible, key=lambda r: r.fun, default=None)


def test_random_problems_match_a_generic_convex_solver():
    rng = np.random.default_rng(0)
    for _ in range(30):
        W, u = random_problem(rng)
        mu = rng.uniform(0.0, 2.0)
        impulse = np.asarray(single(W, u, mu))
        reference = generic_minimum(W, u, mu)
        assert energy_change(W, u, impulse) == pytest.approx(reference.fun, abs=1e-9)
        np.testing.assert_allclose(impulse, reference.x, atol=2e-5 * (1 + np.abs(reference.x).max()))


def _draw_problem(seed, mu):
    rng = np.random.default_rng(seed)
    W, u = random_problem(rng, colliding=False)
    return W, u * rng.uniform(0.01, 100.0), mu


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mu=st.floats(0.0, 5.0))
def test_energy_never_increases_impulses_are_repulsive_and_in_the_cone(seed, mu):
    W, u, mu = _draw_problem(seed, mu)
    impulse = np.asarray(single(W, u, mu))
    after = u + W @ impulse
    scale = np.abs(u).max() * max(1.0, np.abs(W).max())
    assert energy_change(W, u, impulse) <= 1e-12 * scale * np.abs(impulse).max(initial=1.0)
    assert impulse[0] >= 0
    assert np.hypot(impulse[1], impulse[2]) <= mu * impulse[0] * (1 + 1e-9) + 1e-14
    if u[0] < 0:  # colliding: the impact ends at zero normal velocity
        assert after[0] == pytest.approx(0.0, abs=1e-9 * scale)
    else:  # separating: no impulse (the pressure condition of eq. (3))
        np.testing.assert_array_equal(impulse, 0.0)


def test_rotating_the_tangent_plane_rotates_the_impulse():
    rng = np.random.default_rng(5)
    for angle in (0.3, 1.7, -2.5):
        W, u = random_problem(rng)
        R = np.eye(3)
        R[1:, 1:] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
        impulse = np.asarray(single(W, u, 0.6))
        np.testing.assert_allclose(np.asarray(single(R @ W @ R.T, R @ u, 0.6)), R @ impulse, atol=1e-10)


def test_closed_form_cases_of_the_structogram():
    W, u = random_problem(np.random.default_rng(1))
    # frictionless: x = (b_n / A_nn, 0, 0)
    np.testing.assert_allclose(single(W, u, 0.0), [-u[0] / W[0, 0], 0.0, 0.0], rtol=1e-12)
    # P₁, friction large enough: the sticking impulse W⁻¹(−u), after which the contact is at rest
    np.testing.assert_allclose(W @ np.asarray(single(W, u, 1e6)) + u, 0.0, atol=1e-12)
    # grazing (u_n = 0) with a stiff normal row (P₂): no impulse
    W2 = np.diag([3.0, 1.0, 2.0])
    W2[0, 1] = W2[1, 0] = 0.5
    np.testing.assert_array_equal(single(W2, [0.0, 1.0, -0.5], 0.5), 0.0)


def test_grazing_wedge_case_matches_the_generic_solver():
    # u_n = 0, A_nn < μ‖(A_nt, A_no)‖: the feasible set is the wedge between the asymptote rays (eq. (9))
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(40):
        W, u = random_problem(rng)
        u[0] = 0.0
        mu = 3.0 * W[0, 0] / np.hypot(W[0, 1], W[0, 2])
        x0 = np.linalg.solve(W, -u)
        if x0[0] >= 0 and np.hypot(*x0[1:]) <= mu * x0[0]:
            continue
        impulse = np.asarray(single(W, u, mu))
        if np.any(impulse != 0):
            assert energy_change(W, u, impulse) == pytest.approx(generic_minimum(W, u, mu).fun, abs=1e-9)
            checked += 1
            if checked == 6:
                break
        else:  # the apex: optimal only where the energy rises along both of the wedge's rays
            assert min(u @ ray for ray in wedge_rays(W, mu)) >= -1e-12
    assert checked == 6


def wedge_rays(W, mu):
    """The two edge directions d (d_n = 1, ‖d_t‖ = μ, W[0] d = 0) of the grazing wedge, where A_nn < μ‖(A_nt, A_no)‖."""
    a = W[0, 1:]
    along, across = -W[0, 0] * a / (a @ a), np.array([-a[1], a[0]]) / np.linalg.norm(a)
    half = np.sqrt(mu**2 - W[0, 0] ** 2 / (a @ a))
    return [np.concatenate([[1.0], along + sign * half * across]) for sign in (1.0, -1.0)]


def test_grazing_wedge_apex_is_the_impulse_exactly_where_both_rays_ascend():
    # u_n = 0 in the wedge case: ΔE(x) = ½ xᵀWx + uᵀx is convex on the wedge, so x = 0 is the minimum if and only if
    # uᵀd ≥ 0 along both edge rays d; tangential velocities along the rays' sum (both ascend) and against it (both
    # descend), each turned by a random angle up to ±0.4 rad
    rng = np.random.default_rng(5)
    apexes = []
    for sign in (1.0, -1.0):
        for _ in range(4):
            W, _ = random_problem(rng)
            mu = 3.0 * W[0, 0] / np.hypot(W[0, 1], W[0, 2])
            rays = wedge_rays(W, mu)
            for ray in rays:  # on the cone and on the plane of zero normal velocity
                assert np.hypot(*ray[1:]) == pytest.approx(mu) and W[0] @ ray == pytest.approx(0.0, abs=1e-12)
            angle = rng.uniform(-0.4, 0.4)
            turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            u = np.concatenate([[0.0], sign * turn @ (rays[0][1:] + rays[1][1:]) * rng.uniform(0.1, 3.0)])
            ascends = min(u @ ray for ray in rays) > 0
            impulse = np.asarray(single(W, u, mu))
            if ascends:
                np.testing.assert_array_equal(impulse, 0.0)
            else:
                assert energy_change(W, u, impulse) == pytest.approx(generic_minimum(W, u, mu).fun, abs=1e-9)
                assert energy_change(W, u, impulse) < 0
            apexes.append(ascends)
    assert 0 < sum(apexes) < len(apexes)  # both outcomes met


@pytest.mark.parametrize("shape", ["ellipse", "hyperbola"])
def test_the_two_sliding_conic_sections(shape):
    # ellipse: A_nn > μ‖a‖ (every angle feasible); hyperbola: A_nn < μ‖a‖ (angles in I of eq. (6))
    W = np.array([[1.0, 0.6, -0.3], [0.6, 2.0, 0.4], [-0.3, 0.4, 1.5]])
    mu = 0.5 if shape == "ellipse" else 3.0
    assert (W[0, 0] > mu * np.hypot(W[0, 1], W[0, 2])) == (shape == "ellipse")
    u = np.array([-1.0, 2.0, 1.0]) if shape == "ellipse" else np.array([-1.0, -3.0, 5.0])
    x0 = np.linalg.solve(W, -u)
    assert not (x0[0] >= 0 and np.hypot(*x0[1:]) <= mu * x0[0])  # the sticking impulse is outside the cone
    impulse = np.asarray(single(W, u, mu))
    assert np.hypot(*impulse[1:]) == pytest.approx(mu * impulse[0], rel=1e-10)  # sliding: on the cone
    assert energy_change(W, u, impulse) == pytest.approx(generic_minimum(W, u, mu).fun, abs=1e-9)


def test_stationarity_is_eq_8_of_appendix_a_and_the_derivative_of_f_obj():
    rng = np.random.default_rng(3)
    W, u = random_problem(rng)
    A, b, mu = W, -u, 0.8
    (Ann, Ant, Ano), Att, Ato, Aoo = A[0], A[1, 1], A[1, 2], A[2, 2]
    bn, bt, bo = b
    # Appendix A, transcribed
    c0 = 1.5 * mu * Ann * (Ano * bt - Ant * bo)
    c1 = np.sqrt(
        mu**4 * ((Ano**2 * (Att**2 + Ato**2) - 2 * Ant * Ano * Ato * (Att + Aoo) + Ant**2 * (Ato**2 + Aoo**2)) * bn**2
                 + 2 * (Ant * bo - Ano * bt) * (Ano**2 * Ato + Ant * Ano * (Att - Aoo) - Ant**2 * Ato) * bn
                 + (Ant**2 + Ano**2) * (Ant * bo - Ano * bt) ** 2)
        + 2 * mu**2 * Ann * ((2 * Ant * Ano * Ato - Ano**2 * Att - Ant**2 * Aoo) * bn**2
                             + Ann * (Ano * (Att * bo - Ato * bt) - Ant * (Ato * bo - Aoo * bt)) * bn
                             + Ann * (Ant * bo - Ano * bt) ** 2)
        + Ann**2 * ((Ant**2 + Ano**2) * bn**2 - 2 * Ann * (Ant * bt + Ano * bo) * bn + Ann**2 * (bt**2 + bo**2)))
    c2 = mu * Ann * np.sqrt((0.25 * (Att**2 + Aoo**2) + Ato**2 - 0.5 * Att * Aoo) * bn**2
                            + (Ano * (0.5 * (Att - Aoo) * bo - Ato * bt) - Ant * (Ato * bo + 0.5 * (Att - Aoo) * bt)) * bn
                            + 0.25 * (Ant**2 + Ano**2) * (bo**2 + bt**2))
    phi1 = np.arctan2(mu**2 * ((Ano * Ato - Ant * Aoo) * bn - Ano**2 * bt + Ant * Ano * bo) - Ann**2 * bt + Ann * Ant * bn,
                      mu**2 * ((Ant * Ato - Ano * Att) * bn + Ant * Ano * bt - Ant**2 * bo) - Ann**2 * bo + Ann * Ano * bn)
    phi2 = np.arctan2((Att - Aoo) * bn - Ant * bt + Ano * bo, 2 * Ato * bn - Ano * bt - Ant * bo)
    alphas = np.linspace(-3.0, 3.0, 13)
    G = np.array([float(md.stationarity(A, b, mu, a)) for a in alphas])
    np.testing.assert_allclose(G, c0 + c1 * np.cos(alphas + phi1) + c2 * np.cos(2 * alphas + phi2),
                               atol=1e-12 * c1)
    # G = f_obj'(α) f_r³ / (μ b_n) on the boundary
    for alpha in alphas:
        f_r, _, _ = md._boundary(A, b, mu, alpha)
        slope = jax.grad(lambda a: md._boundary(A, b, mu, a)[2])(alpha)
        assert float(slope * f_r**3 / (mu * bn)) == pytest.approx(float(md.stationarity(A, b, mu, alpha)), rel=1e-10)


def test_gradients_match_central_differences_while_sliding(central_jacobian):
    W = np.array([[1.0, 0.6, -0.3], [0.6, 2.0, 0.4], [-0.3, 0.4, 1.5]])
    u = np.array([-1.0, 2.0, 1.0])
    mu = 0.5

    def post(params):
        velocity, friction = params[:3], params[3]
        return md.MaxDissipation(friction)(W, velocity).velocity

    params = jnp.concatenate([jnp.asarray(u), jnp.array([mu])])
    jacobian = np.asarray(jax.jit(jax.jacfwd(post))(params))
    reverse = np.asarray(jax.jit(jax.jacrev(post))(params))
    np.testing.assert_allclose(jacobian, central_jacobian(jax.jit(post), params, 1e-6), atol=1e-7)
    np.testing.assert_allclose(reverse, jacobian, atol=1e-12)


def test_bad_input_is_refused_with_the_argument_named():
    W, u = random_problem(np.random.default_rng(2))
    model = md.MaxDissipation(0.5)
    with pytest.raises(ValueError, match="delassus must be finite, symmetric and positive definite"):
        model(-W, u)
    with pytest.raises(ValueError, match="delassus must be finite, symmetric and positive definite"):
        model(np.where(np.eye(3) > 0, np.nan, W), u)
    with pytest.raises(ValueError, match="friction must be finite and in"):
        md.MaxDissipation(-0.1)
    with pytest.raises(ValueError, match="velocity must be finite"):
        model(W, [np.inf, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"delassus and velocity must have shapes \(\.\.\., 3, 3\) and \(\.\.\., 3\)"):
        model(W[:2, :2], u)
    with pytest.raises(ValueError, match=r"must have shapes \(\.\.\., 3, 3\) and \(\.\.\., 3\); got \(6, 6\)"):
        model(np.eye(6), np.zeros(6))
    with pytest.raises(ValueError, match=r"MaxDissipation resolves spatial contacts \(dimension 3\); got dimension 2"):
        model(W[:2, :2], u[:2], dimension=2)
    with pytest.raises(ValueError, match=r"must have shapes \(\.\.\., 3m, 3m\) and \(\.\.\., 3m\) for m contacts"):
        gauss_seidel(np.eye(4), np.zeros(4), 0.5)
    # (no sweep at all gave zero impulses for approaching contacts)
    for sweeps in (0, -5):
        with pytest.raises(ValueError, match=f"sweeps must be an int >= 1, got {sweeps}"):
            md.MaxDissipationGaussSeidel(0.2, sweeps=sweeps)
    with pytest.raises(ValueError, match=r"friction must be a scalar or one value per contact, shape \(2,\); got "
                                         r"shape \(3,\)"):
        gauss_seidel(np.eye(6), -np.ones(6), [0.2, 0.1, 0.3])


def test_academic_problem_reproduces_table_1_in_the_frame_as_printed():
    A, b, mu = examples.academic_problem(orthonormal=False)
    star = np.asarray(single(A, -b, mu))
    printed, printed_energy = examples.TABLE_1["max_dissipation"]
    np.testing.assert_allclose(star, printed, atol=0.05 * np.abs(printed).max())
    assert examples.energy(A, b, star) == pytest.approx(printed_energy, abs=1e-3)
    coulomb = examples.coulomb_solutions(A, b, mu)
    assert len(coulomb) == 3
    for x, (x_printed, e_printed) in zip(sorted(coulomb, key=lambda x: x[0]), examples.TABLE_1["coulomb"]):
        np.testing.assert_allclose(x, x_printed, atol=0.015 * np.abs(x_printed).max() + 0.005)
        assert examples.energy(A, b, x) == pytest.approx(e_printed, abs=1e-3)
        assert examples.energy(A, b, x) > examples.energy(A, b, star)  # less dissipative than x*
    # in an orthonormal frame it is another problem: the generic solver agrees with us there
    A, b, mu = examples.academic_problem(orthonormal=True)
    star = np.asarray(single(A, -b, mu))
    assert examples.energy(A, b, star) == pytest.approx(generic_minimum(A, -b, mu).fun, abs=1e-9)
    np.testing.assert_allclose(star, [2.778, -1.051, -10.226], atol=1e-3)


def test_paradox_rod_delassus_threshold_and_stick_impulse():
    theta = 0.7
    A, u, _ = examples.rod_problem(theta, mass=2.0, length=0.5)
    s, c = np.sin(theta), np.cos(theta)
    # §4.2's A(t₀) in (x, y) = (t, n), transcribed, against the rod built from its mass and inertia
    paper = np.array([[1 + 3 * s**2, -3 * s * c], [-3 * s * c, 1 + 3 * c**2]]) / 2.0
    np.testing.assert_allclose(A[np.ix_([1, 0], [1, 0])], paper, rtol=1e-12)
    assert A[2, 2] == pytest.approx(4 / 2.0)  # the transcribed (1 + 3 cos² 2θ)/m is not the rod's
    thetas = np.radians([20.0, 45.0, 70.0])
    np.testing.assert_allclose(examples.paradox_threshold(thetas), examples.paradox_friction(thetas), atol=1e-8)
    theta_min = 0.5 * np.arccos(-0.6)
    assert examples.paradox_friction(theta_min) == pytest.approx(4 / 3, rel=1e-12)
    A, u, _ = examples.rod_problem(theta_min)
    np.testing.assert_allclose(single(A, u, 1.5), examples.stick_impulse(theta_min), atol=1e-12)
    np.testing.assert_array_equal(single(A, u, 1.3), 0.0)


def test_gauss_seidel_one_contact_decoupled_and_symmetric():
    rng = np.random.default_rng(8)
    W1, u1 = random_problem(rng)
    W2, u2 = random_problem(rng)
    np.testing.assert_allclose(gauss_seidel(W1, u1, 0.4, sweeps=1), single(W1, u1, 0.4), atol=1e-14)
    W = np.zeros((6, 6))
    W[:3, :3], W[3:, 3:] = W1, W2
    np.testing.assert_allclose(gauss_seidel(W, np.concatenate([u1, u2]), jnp.array([0.4, 0.9]), sweeps=2),
                               np.concatenate([single(W1, u1, 0.4), single(W2, u2, 0.9)]), atol=1e-14)


def test_gauss_seidel_converges_to_a_fixed_point_that_dissipates():
    # a flat plate of mass m, inertia J about its centre, landing on two points at x = ±l
    m, J, arm = 2.0, 0.3, 0.4
    # rows: (normal, t, o) of each point; body velocity (v_x, v_y, v_z, ω_x, ω_y, ω_z), normal = +z
    jacobian = np.zeros((6, 6))
    for k, x in enumerate((-arm, arm)):
        r = np.array([x, 0.0, -0.05])
        for row, direction in enumerate(np.eye(3)[[2, 0, 1]]):
            jacobian[3 * k + row, :3] = direction
            jacobian[3 * k + row, 3:] = np.cross(r, direction)
    inverse_mass = np.diag([1 / m] * 3 + [1 / J] * 3)
    W = jacobian @ inverse_mass @ jacobian.T + 1e-9 * np.eye(6)
    body = np.array([0.0, 1.0, -2.0, 0.0, 0.0, 0.0])  # sliding along y: mirror-symmetric in x
    u = jacobian @ body
    impulse = np.asarray(gauss_seidel(W, u, 0.3, sweeps=200))
    after = u + W @ impulse
    np.testing.assert_allclose(after[[0, 3]], 0.0, atol=1e-7)  # both points stop approaching
    # mirror symmetry x → −x: equal normal and o impulses, opposite t (= x) impulses
    np.testing.assert_allclose(impulse[:3], impulse[3:] * [1, -1, 1], rtol=1e-6)
    # each contact solves its own problem given the other's impulse (fixed point of the sweep)
    for j in range(2):
        own = slice(3 * j, 3 * j + 3)
        rest = u[own] + W[own] @ impulse - W[own, own] @ impulse[own]
        np.testing.assert_allclose(single(W[own, own], rest, 0.3), impulse[own], atol=1e-8)
    assert energy_change(W, u, impulse) < 0


def test_block_gauss_seidel_skips_only_what_the_single_contact_model_would_zero():
    rng = np.random.default_rng(11)
    L = rng.normal(size=(9, 9))
    W = L @ L.T + 0.1 * np.eye(9)
    u = rng.normal(size=9)
    u[[0, 3, 6]] = [0.5, -1.0, 0.0]  # separating, approaching, grazing
    expected = gauss_seidel(W, u, 0.7, sweeps=20)
    batched = jax.vmap(lambda v: gauss_seidel(W, v, 0.7, sweeps=20))(u[None])[0]  # cond → select under vmap
    np.testing.assert_allclose(batched, expected, atol=1e-14)


def test_reverse_mode_is_finite_without_normal_tangential_coupling(central_jacobian):
    # A_nt = A_no = 0 (a sphere's contact): the grazing branch's arctan2 and norm of (A_nt, A_no) are unused
    # there, but their derivatives at the origin (NaN) must not reach the gradient with respect to W
    coupling = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.0], [0.5, 0.0, 0.0]])

    def post(params):  # W = diag(w) + c · coupling, at c = 0
        W = jnp.diag(params[:3]) + params[3] * coupling
        u = params[4:]
        return md.MaxDissipation(0.3)(W, u).velocity

    for u in ([-1.0, 2.0, 1.0], [-1.0, 0.1, -0.05]):  # sliding, sticking
        params = jnp.array([0.5, 1.75, 1.25, 0.0, *u])
        reverse = np.asarray(jax.jacrev(post)(params))
        np.testing.assert_allclose(reverse, central_jacobian(jax.jit(post), params, 1e-6), atol=1e-7)
