"""Purely inelastic impacts with friction by the maximum dissipation principle.

T. Preclik, S. Eibl, U. Rüde, "The maximum dissipation principle in
rigid-body dynamics with purely inelastic impacts" (arXiv:1706.00221, 2017;
Computational Particle Mechanics 5, 2018), §§2–3.

**One contact** (§3.2, eq. (3)). In the contact frame (normal first, then the
two tangents t, o) the contact velocity after an impulse λ is
u⁺ = u⁻ + W λ, W = J M⁻¹ Jᵀ the (3×3, SPD) Delassus operator, and the kinetic
energy changes by ½ λᵀ W λ + λᵀ u⁻. In the paper's notation A = W, b = −u⁻,
x = λ. The impulse minimises the post-impact energy

    ½ xᵀ A x − xᵀ b   over   ‖x_to‖ ≤ μ x_n,   (A x − b)_n = 0

when the contact is colliding (b_n > 0: u⁻_n < 0, approaching) and is zero
when it separates (b_n < 0). The analytic solution follows the structogram of
Fig. 5:

1. b_n < 0 (separating): x = 0.
2. μ = 0: x = (b_n / A_nn, 0, 0).
3. P₁, the unconstrained minimum x₀ = A⁻¹ b in the cone (sticking): x = x₀.
4. b_n = 0 (grazing; the plane of maximum compression passes through the
   apex): P₂ = A_nn > μ ‖(A_nt, A_no)‖ (degenerate ellipse) gives x = 0;
   otherwise the feasible set is the wedge between the two asymptote rays at
   α₀ ± Δα (eq. (6)) and the minimum lies on one of them, eq. (9). The paper
   chooses the ray by the side of x₀; here both rays are minimised and the
   lower energy taken, which is the same answer whenever the paper's rule is
   right and the exact one otherwise.
5. otherwise (b_n > 0, sliding): the minimum lies on the boundary of the conic
   section, x_to = γ(α) = r̄(α)(cos α, sin α), r̄ = μ b_n / f_r(α),
   f_r(α) = A_nn + μ (A_nt cos α + A_no sin α), over the angles I where
   f_r > 0 (eq. (6)). Its stationary points solve eq. (7), which is the
   trigonometric polynomial eq. (8) of degree two,

       G(α) = μ b_n A_nn uᵀÂv + μ² b_n (a ∧ Â u) − f_r(α) (A_nn b̂·v + μ a ∧ b̂) = 0,

   u = (cos α, sin α), v = (−sin α, cos α), a = (A_nt, A_no), p ∧ q =
   p₁q₂ − p₂q₁, Â and b̂ the Schur complements of the paper (normal component
   eliminated). G is f_obj'(α) f_r³ / (μ b_n), derived here from f_obj of
   §3.2; its constant term is the paper's c₀ = 3/2 μ A_nn (A_no b_t −
   A_nt b_o) and its harmonics have the amplitudes c₁, c₂ of Appendix A
   (tests check both). With y = e^{iα}, y² G(α) is the quartic of §3.2: its
   coefficients are G's Fourier coefficients (exact from five samples), its
   roots the eigenvalues of the companion matrix. Every root's angle inside I
   is a point of the feasible boundary, so the candidate of least energy is
   the minimum (no check of eq. (7) is needed: a spurious candidate can only
   have more energy than the true stationary minimum, which is among them).

The result is differentiable: in case 5 the angle is refined by Newton steps
on G and carries its derivative by the implicit-function theorem (one Newton
step taken with gradients on, at the converged angle). The solution is only
piecewise smooth: derivatives jump where the case changes (stick ↔ slide,
colliding ↔ separating).

``MaxDissipation`` is the model of one contact.

**Many contacts** (§3.1, eq. (5)): ``MaxDissipationGaussSeidel`` sweeps the
contacts, solving each one's single-contact problem with the impulses of the
others fixed (the non-linear block Gauss–Seidel the paper uses);
``block_gauss_seidel`` is its unchecked core, which the time stepping of
``rigid_spheres`` calls with the gap term ξ/δt.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._validation import check_count, check_range
from diffimpact.impulse._problem import check_problem, per_contact
from diffimpact.impulse.base import Impact, ImpulseModel

#: Newton steps polishing the quartic's roots on G(α) (the roots come from an eigenvalue solve).
POLISH_STEPS = 2


def _wedge(p, q):
    return p[0] * q[1] - p[1] * q[0]


def _schur(A, b):
    """Â, b̂ of §3.2: the tangential block and right-hand side with the normal component eliminated."""
    a = A[0, 1:]
    Ahat = A[1:, 1:] - jnp.outer(a, a) / A[0, 0]
    bhat = b[1:] - a * b[0] / A[0, 0]
    return a, Ahat, bhat


def _boundary(A, b, mu, alpha):
    """Radius r̄(α), tangential impulse γ(α) and energy f_obj(α) on the conic section's boundary (f_r > 0)."""
    a, Ahat, bhat = _schur(A, b)
    u = jnp.stack([jnp.cos(alpha), jnp.sin(alpha)])
    f_r = A[0, 0] + mu * (a @ u)
    gamma = mu * b[0] / f_r * u
    return f_r, gamma, 0.5 * gamma @ Ahat @ gamma - gamma @ bhat


def stationarity(A, b, mu, alpha):
    """G(α) of eq. (8) (module docstring): zero where the boundary energy f_obj is stationary."""
    a, Ahat, bhat = _schur(A, b)
    u = jnp.stack([jnp.cos(alpha), jnp.sin(alpha)])
    v = jnp.stack([-jnp.sin(alpha), jnp.cos(alpha)])
    f_r = A[0, 0] + mu * (a @ u)
    return (mu * b[0] * A[0, 0] * (u @ Ahat @ v) + mu**2 * b[0] * _wedge(a, Ahat @ u)
            - f_r * (A[0, 0] * (bhat @ v) + mu * _wedge(a, bhat)))


def quartic(A, b, mu):
    """Coefficients of y² G(α), y = e^{iα}, highest power first (the quartic of §3.2)."""
    samples = 2 * jnp.pi * jnp.arange(5) / 5
    values = jax.vmap(lambda s: stationarity(A, b, mu, s))(samples)
    k = jnp.arange(2, -3, -1)
    return jnp.exp(-1j * jnp.outer(k, samples)) @ values / 5


def _sliding_angle(A, b, mu):
    """The angle α* of case 5: the quartic's root of least boundary energy inside I."""
    coefficients = quartic(A, b, mu)
    scale = jnp.max(jnp.abs(coefficients))
    # The harmonic of order two can vanish (then y² G has lower degree); a tiny leading
    # coefficient sends the spare roots far from the unit circle, whose angles are then
    # ordinary (harmless) candidates.
    lead = jnp.where(jnp.abs(coefficients[0]) > 1e-13 * scale, coefficients[0], 1e-13 * scale)
    companion = jnp.zeros((4, 4), complex).at[0, :].set(-coefficients[1:] / lead)
    companion = companion.at[1:, :-1].set(jnp.eye(3))
    candidates = jnp.angle(jnp.linalg.eigvals(companion))

    G = lambda alpha: stationarity(A, b, mu, alpha)  # noqa: E731
    dG = jax.grad(G)

    def polish(alpha):
        step = G(alpha) / dG(alpha)
        return jnp.where(jnp.isfinite(step) & (jnp.abs(step) < 0.1), alpha - step, alpha)

    for _ in range(POLISH_STEPS):
        candidates = jax.vmap(polish)(candidates)
    f_r, _, energy = jax.vmap(lambda alpha: _boundary(A, b, mu, alpha))(candidates)
    energy = jnp.where(f_r > 0, energy, jnp.inf)
    alpha = jax.lax.stop_gradient(candidates[jnp.argmin(energy)])
    # Implicit-function derivative: a Newton step at the converged root has the root's value
    # and the derivative -∂G/∂θ / ∂G/∂α.
    return alpha - G(alpha) / dG(alpha)


def _grazing(A, b, mu):
    """Case 4, b_n = 0 without P₂: the lower-energy minimum over the two asymptote rays (eq. (9))."""
    a, Ahat, bhat = _schur(A, b)
    # a = 0 (no normal–tangential coupling, e.g. a sphere's contact) always has P₂ and never reaches this case;
    # a stand-in keeps arctan2 and the norm off the origin, whose NaN derivatives would reach the gradient.
    a = jnp.where(a @ a > 0, a, jnp.array([1.0, 0.0]))
    alpha0 = jnp.arctan2(a[1], a[0])
    delta = jnp.arccos(jnp.clip(-A[0, 0] / (mu * jnp.sqrt(a @ a)), -1.0, 1.0))

    def ray(angle):
        c = jnp.stack([jnp.cos(angle), jnp.sin(angle)])
        r = jnp.maximum(0.0, c @ bhat / (c @ Ahat @ c))
        return r * c, 0.5 * r**2 * (c @ Ahat @ c) - r * (c @ bhat)

    x1, e1 = ray(alpha0 - delta)
    x2, e2 = ray(alpha0 + delta)
    return jnp.where(e1 <= e2, x1, x2)


def _normal_from_tangential(A, b, x_to):
    return jnp.concatenate([((b[0] - A[0, 1:] @ x_to) / A[0, 0])[None], x_to])


def _single(A, b, mu):
    """The structogram of Fig. 5 for one problem (A 3×3 SPD, b (3,), μ ≥ 0)."""
    b_n = b[0]
    x0 = jnp.linalg.solve(A, b)
    in_cone = (x0[0] >= 0) & (jnp.sqrt(x0[1] ** 2 + x0[2] ** 2) <= mu * x0[0])
    frictionless = jnp.zeros(3).at[0].set(b_n / A[0, 0])
    p2 = A[0, 0] > mu * jnp.sqrt(A[0, 1] ** 2 + A[0, 2] ** 2)

    # Each branch is evaluated on safe inputs so that no NaN leaks into the others' gradients.
    sliding_case = (b_n > 0) & (mu > 0) & ~in_cone
    safe_b = jnp.where(sliding_case, b, jnp.array([1.0, 0.0, 0.0]))
    safe_mu = jnp.where(sliding_case, mu, 1.0)

    def sliding():
        alpha = _sliding_angle(A, safe_b, safe_mu)
        _, gamma, _ = _boundary(A, safe_b, safe_mu, alpha)
        return _normal_from_tangential(A, b, gamma)

    grazing_case = (b_n == 0) & (mu > 0) & ~in_cone & ~p2
    grazing = _normal_from_tangential(A, b, _grazing(A, b, jnp.where(grazing_case, mu, 1.0)))

    def closed_form():
        return jnp.select([b_n < 0, mu == 0, in_cone], [jnp.zeros(3), frictionless, x0],
                          jnp.where(p2, jnp.zeros(3), grazing))

    # The quartic (an eigenvalue solve) only where the contact slides: a branch taken alone outside vmap (as in
    # the Gauss–Seidel sweep), a select of both inside it.
    return jax.lax.cond(sliding_case, sliding, closed_form)


class MaxDissipation(ImpulseModel):
    """The maximally dissipative inelastic impulse of one spatial contact (§3.2, Fig. 5).

    ``MaxDissipation(friction)``: the friction coefficient μ ≥ 0. Called as
    every ``ImpulseModel``, ``model(W, u⁻)``: W = J M⁻¹ Jᵀ in the contact frame
    (normal, t, o), (..., 3, 3), SPD; u⁻ (..., 3), normal first (u⁻_n < 0
    approaches). Leading dimensions broadcast with μ's.

    Returns an ``Impact``: λ (..., 3), normal first, and u⁺ = u⁻ + W λ, which
    has u⁺_n = 0 when the contact collides (λ = 0, a documented no-op, when it
    separates, u⁻_n > 0), ‖λ_to‖ ≤ μ λ_n, and minimises the kinetic energy
    over that set. Works under ``jit``, ``vmap`` and ``grad`` (piecewise
    smooth: see the module docstring).
    """

    friction: jnp.ndarray
    dimensions: ClassVar[tuple] = (3,)
    several: ClassVar[bool] = False

    def __init__(self, friction):
        self.friction = check_range("friction", friction, 0.0)

    def __call__(self, delassus, velocity, dimension=None):
        self._own_dimension(dimension)
        W, u = check_problem(delassus, velocity, sizes=(3,))
        impulse = jnp.vectorize(_single, signature="(3,3),(3),()->(3)")(W, -u, self.friction)
        return Impact(impulse, u + jnp.einsum("...ij,...j->...i", W, impulse))


class MaxDissipationGaussSeidel(ImpulseModel):
    """Impulses of several coupled spatial contacts by non-linear block Gauss–Seidel (§3.1, eq. (5)).

    ``MaxDissipationGaussSeidel(friction, sweeps=100)``: μ ≥ 0, a scalar or
    one per contact; ``sweeps``, an int ≥ 1 (static). Called as every
    ``ImpulseModel``, ``model(W, u⁻)``: W (3m, 3m), SPD; u⁻ (3m,), each
    contact normal first. Each sweep solves every contact's single-contact
    problem (``MaxDissipation``) with the others' impulses fixed; a contact
    whose normal velocity separates gets no impulse. Returns an ``Impact``.
    """

    friction: jnp.ndarray
    sweeps: int = eqx.field(static=True)
    dimensions: ClassVar[tuple] = (3,)
    several: ClassVar[bool] = True

    def __init__(self, friction, sweeps=100):
        self.friction = check_range("friction", friction, 0.0)
        self.sweeps = check_count("sweeps", sweeps, 1)

    def __call__(self, delassus, velocity, dimension=None):
        self._own_dimension(dimension)
        W, u = check_problem(delassus, velocity)
        if W.ndim != 2:
            raise ValueError(f"delassus must be one (3m, 3m) matrix; got shape {W.shape}")
        m = u.shape[0] // 3
        friction = jnp.broadcast_to(per_contact("friction", self.friction, m), (m,))
        impulse = block_gauss_seidel(W, u, friction, jnp.zeros(m), self.sweeps)
        return Impact(impulse, u + W @ impulse)


def block_gauss_seidel(delassus, velocity, friction, offset, sweeps):
    """``MaxDissipationGaussSeidel`` without its checks, for callers that build W themselves (``rigid_spheres``).

    ``friction`` and ``offset`` (m,): ``offset`` is added to each normal
    velocity (the time-stepping term ξ_j/δt of eq. (5); zero for impacts). W need only be positive semi-definite
    with positive definite 3×3 diagonal blocks (more contacts than a body has
    degrees of freedom make it singular; each block solve sees its own block
    only). A contact whose normal velocity u_n + offset with the others'
    impulses separates (> 0) is skipped (``lax.cond``: its impulse is the zero
    that ``MaxDissipation`` would give), so far-apart candidate contacts
    cost little outside ``vmap``.
    """
    m = velocity.shape[0] // 3
    if m == 0:  # no contact (a free body): nothing to index
        return jnp.zeros(0, velocity.dtype)
    blocks = delassus.reshape(m, 3, m, 3)
    free = velocity.reshape(m, 3).at[:, 0].add(offset)

    def contact(impulse, j):
        u = free[j] + jnp.einsum("akb,kb->a", blocks[j], impulse) - blocks[j, :, j] @ impulse[j]
        own = jax.lax.cond(u[0] > 0, lambda: jnp.zeros(3, u.dtype), lambda: _single(blocks[j, :, j], -u, friction[j]))
        return impulse.at[j].set(own), None

    def sweep(impulse, _):
        return jax.lax.scan(contact, impulse, jnp.arange(m))[0], None

    impulse, _ = jax.lax.scan(sweep, jnp.zeros((m, 3), velocity.dtype), None, length=sweeps)
    return impulse.reshape(-1)
