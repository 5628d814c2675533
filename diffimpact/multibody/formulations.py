"""Ways to solve the constrained equations of motion ([Gismeros Moreno 2022], section 2.3).

A ``Formulation`` turns the model and a state (q, v, t) into accelerations v̇.
Pick one by passing an instance to ``simulate``:

- ``LagrangeMultipliers``: the index-1 system of eq. (2.20); constraint
  violations drift.
- ``Baumgarte``: eq. (2.23), the acceleration equations with feedback on Φ̇
  and Φ.
- ``AugmentedLagrangian``: the penalty iteration of eqs. (2.21)–(2.22).
- ``DirectCorrection``: eq. (2.20) plus the projection of eqs. (2.24)–(2.29)
  of positions and velocities onto Φ = 0, Φ̇ = 0 after every step.

Formulations may also wrap the ODE solver (``wrap_solver``); only
``DirectCorrection`` does.
"""

import abc

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._math import dot
from diffimpact._validation import check_positive, check_range
from diffimpact.multibody.bodies import SPATIAL_SIZE
from diffimpact.rotations import euler_g, matvec
from diffimpact.multibody.constraints import EulerParameters


def _saddle_point_solve(mass_matrix, jacobian, force, rhs):
    """Solve [[M, Dᵀ], [D, 0]] [v̇; λ] = [g; rhs] for v̇ ([Gismeros Moreno 2022], eq. (2.20))."""
    n, k = mass_matrix.shape[0], jacobian.shape[0]
    matrix = jnp.block([[mass_matrix, jacobian.T], [jacobian, jnp.zeros((k, k))]])
    return jnp.linalg.solve(matrix, jnp.concatenate([force, rhs]))[:n]


def _rows_per_body(model):
    """Constraint rows of each body, (bodies, c), if no constraint couples two bodies and each has c rows; else None.

    Then M (block diagonal) and D have the same blocks, and eq. (2.20)
    splits into one (s + c)-square system per body (free bodies: c = 0, or
    c = 1 for the Euler-parameter normalisation of a spatial body).
    """
    rows, start = [[] for _ in model.bodies], 0
    for constraint in model.constraints:
        bodies = {index for index in constraint.body_indices if index is not None}
        if len(bodies) != 1:
            return None
        rows[bodies.pop()].extend(range(start, start + constraint.size))
        start += constraint.size
    if len({len(r) for r in rows}) != 1:
        return None
    return np.array(rows, dtype=int).reshape(len(rows), -1)


def _inverse3(matrix):
    """The inverse of a 3×3 matrix by its cofactors, elementwise arithmetic that XLA fuses."""
    a, b, c = matrix[0], matrix[1], matrix[2]
    cofactors = jnp.stack([jnp.cross(b, c), jnp.cross(c, a), jnp.cross(a, b)])
    return cofactors.T / dot(a, cofactors[0])


def _normalised_acceleration(mass, inertia, q, force, rhs):
    """v̇ of one spatial body constrained by its Euler-parameter normalisation alone: eq. (2.20) in closed form.

    M = diag(m I, 4 Gᵀ J' G / (pᵀp)²) (``SpatialBody.mass_matrix``), D = (0, 2 pᵀ), D v̇ = ``rhs``. With
    G Gᵀ = pᵀp I, G p = 0 and Gᵀ G = pᵀp I − p pᵀ (any p ≠ 0; ``bodies.euler_g``), the solution is
    r̈ = f_r / m and p̈ = Gᵀ J'⁻¹ G f_p / 4 + rhs p / (2 pᵀp): p̈ = Gᵀ x + μ p, the rows G of the first block
    equation give x, the constraint row μ.
    """
    p, norm = q[3:], dot(q[3:], q[3:])
    g = euler_g(p)
    angular = matvec(_inverse3(inertia), matvec(g, force[3:])) / 4.0
    return jnp.concatenate([force[:3] / mass, matvec(g.T, angular) + rhs * p / (2.0 * norm)])


def constrained_acceleration(model, q, t, force, rhs):
    """v̇ of eq. (2.20) with D v̇ = ``rhs``: body by body when the system splits (``_rows_per_body``), else whole.

    Body by body, the bodies' small saddle-point systems are solved together
    (``jax.vmap``), in place of one dense solve of size n + k: for the
    16-ball table 16 systems of size 8 instead of one of size 128. Spatial
    bodies whose only constraints are their Euler-parameter normalisations
    (free bodies: the balls of a table) take the closed form of
    ``_normalised_acceleration`` instead of a solve.
    """
    rows = _rows_per_body(model)
    if rows is None:
        return _saddle_point_solve(model.mass_matrix(q), model.jacobian(q, t), force, rhs)
    bodies, size = len(model.bodies), model.bodies[0].size
    if all(isinstance(c, EulerParameters) for c in model.constraints) and rows.shape[1] == 1 and size == SPATIAL_SIZE:
        return jax.vmap(_normalised_acceleration)(
            jnp.stack([body.mass for body in model.bodies]), jnp.stack([body.inertia for body in model.bodies]),
            q.reshape(bodies, size), force.reshape(bodies, size), rhs[rows[:, 0]],
        ).reshape(-1)
    masses = jnp.stack([body.mass_matrix(qi) for body, qi in zip(model.bodies, model.split(q))])
    blocks = model.jacobian(q, t).reshape(-1, bodies, size)[rows, np.arange(bodies)[:, None]]
    return jax.vmap(_saddle_point_solve)(masses, blocks, force.reshape(bodies, size), rhs[rows]).reshape(-1)


class Formulation(eqx.Module):
    """Abstract constraint formulation: ``acceleration(model, q, v, t)`` returns v̇."""

    @abc.abstractmethod
    def acceleration(self, model, q, v, t):
        """Generalised accelerations v̇ (n,)."""

    def wrap_solver(self, model, solver):
        """The diffrax solver to integrate with; unchanged by default."""
        del model
        return solver


class LagrangeMultipliers(Formulation):
    """Standard Lagrange multipliers: eq. (2.20) with D v̇ = γ (eq. (2.11))."""

    def acceleration(self, model, q, v, t):
        return constrained_acceleration(model, q, t, model.generalized_force(q, v, t), model.gamma(q, v, t))


class Baumgarte(Formulation):
    """Baumgarte stabilisation, Φ̈ + 2α Φ̇ + β² Φ = 0 ([Gismeros Moreno 2022], eq. (2.23)).

    Eq. (2.20) with γ replaced by γ − 2α Φ̇ − β² Φ. The defaults α = β = 5 (1/s)
    are the paper's choice.
    """

    alpha: jnp.ndarray
    beta: jnp.ndarray

    def __init__(self, alpha=5.0, beta=5.0):
        self.alpha = check_range("alpha", alpha, 0.0, shape=())
        self.beta = check_range("beta", beta, 0.0, shape=())

    def acceleration(self, model, q, v, t):
        rhs = (
            model.gamma(q, v, t)
            - 2 * self.alpha * model.constraint_velocity(q, v, t)
            - self.beta**2 * model.constraint(q, t)
        )
        return constrained_acceleration(model, q, t, model.generalized_force(q, v, t), rhs)


class AugmentedLagrangian(Formulation):
    """Augmented Lagrangian penalty iteration ([Gismeros Moreno 2022], eqs. (2.21)–(2.22)).

    (M + α DᵀD) v̇_{i+1} = M v̇_i − α Dᵀ(−γ + 2μω Φ̇ + ω² Φ), started (i = 0)
    from (M + α DᵀD) v̇_0 = g − α Dᵀ(−γ + 2μω Φ̇ + ω² Φ), i.e. with zero
    multipliers; the fixed point satisfies D v̇ = γ − 2μω Φ̇ − ω² Φ. Iterates
    until ‖v̇_{i+1} − v̇_i‖ ≤ ε (eq. (2.22)), at most ``max_iterations`` times
    (a fixed-length loop that freezes once converged, so it differentiates in
    reverse mode).

    Parameters
    ----------
    penalty : α, the penalty number (1/(kg-normalised) units of M/D²); 1e7 is
        large enough that each iteration cuts the constraint error by about
        m/(α |D|²) ≈ 1e-7 for kg-scale bodies, so 2–3 iterations converge.
    damping_ratio : μ of the penalty system (the paper's order of the words
        "natural frequency and damping ratio" is swapped; μ multiplies 2ω as a
        damping ratio does). Default 1 (critical).
    natural_frequency : ω of the penalty system (rad/s). Default 10.
    tolerance : ε of eq. (2.22), in the units of v̇. Default 1e-10.
    max_iterations : cap on the iterations. Default 10.
    """

    penalty: jnp.ndarray
    damping_ratio: jnp.ndarray
    natural_frequency: jnp.ndarray
    tolerance: jnp.ndarray
    max_iterations: int = eqx.field(static=True)

    def __init__(
        self,
        penalty=1e7,
        damping_ratio=1.0,
        natural_frequency=10.0,
        tolerance=1e-10,
        max_iterations=10,
    ):
        self.penalty = check_positive("penalty", penalty, shape=())
        self.damping_ratio = check_range("damping_ratio", damping_ratio, 0.0, shape=())
        self.natural_frequency = check_range("natural_frequency", natural_frequency, 0.0, shape=())
        self.tolerance = check_positive("tolerance", tolerance, shape=())
        if int(max_iterations) < 1:
            raise ValueError(f"max_iterations must be >= 1; got {max_iterations}")
        self.max_iterations = int(max_iterations)

    def acceleration(self, model, q, v, t):
        mass_matrix = model.mass_matrix(q)
        jacobian = model.jacobian(q, t)
        omega = self.natural_frequency
        feedback = (
            -model.gamma(q, v, t)
            + 2 * self.damping_ratio * omega * model.constraint_velocity(q, v, t)
            + omega**2 * model.constraint(q, t)
        )
        penalised = jax.scipy.linalg.cho_factor(mass_matrix + self.penalty * jacobian.T @ jacobian)
        correction = self.penalty * jacobian.T @ feedback

        def iterate(_, carry):
            accel, converged = carry
            new = jax.scipy.linalg.cho_solve(penalised, mass_matrix @ accel - correction)
            new = jnp.where(converged, accel, new)
            return new, converged | (jnp.linalg.norm(new - accel) <= self.tolerance)

        start = jax.scipy.linalg.cho_solve(penalised, model.generalized_force(q, v, t) - correction)
        accel, _ = jax.lax.fori_loop(0, self.max_iterations, iterate, (start, jnp.array(False)))
        return accel


def project(model, q, v, t, iterations=3):
    """Project (q, v) onto Φ = 0 and Φ̇ = 0 ([Gismeros Moreno 2022], eqs. (2.24)–(2.29)).

    Positions: q ← q − D⁺ Φ(q), repeated ``iterations`` times (Gauss–Newton;
    D⁺ = Dᵀ(DDᵀ)⁻¹ is the Moore–Penrose inverse, which eq. (2.27)–(2.28) as
    printed lack). Velocities: v ← v − D⁺ Φ̇(q, v) at the corrected q (eq.
    (2.29)), exact since Φ̇ is linear in v.
    """

    def correct_positions(_, q):
        return q - jnp.linalg.pinv(model.jacobian(q, t)) @ model.constraint(q, t)

    q = jax.lax.fori_loop(0, iterations, correct_positions, q)
    v = v - jnp.linalg.pinv(model.jacobian(q, t)) @ model.constraint_velocity(q, v, t)
    return q, v


class DirectCorrection(Formulation):
    """Lagrange multipliers plus the direct correction of Marqués et al. (eqs. (2.24)–(2.29)).

    Accelerations come from eq. (2.20); after every step of the ODE solver the
    new (q, v) is projected by ``project`` (``iterations`` Gauss–Newton
    position corrections, then one velocity correction). The projection lives
    in a solver wrapper, ``ProjectedSolver``, so the adaptive step control,
    dense output and derivatives of diffrax (reverse mode and ``ForwardMode``)
    are kept, with explicit, implicit and IMEX solvers.
    """

    iterations: int = eqx.field(static=True, default=3)

    def acceleration(self, model, q, v, t):
        return LagrangeMultipliers().acceleration(model, q, v, t)

    def wrap_solver(self, model, solver):
        return ProjectedSolver(solver, model, self.iterations)


class WrappedSolver(dfx.AbstractAdaptiveSolver, dfx.AbstractWrappedSolver):
    """A diffrax solver wrapped by a subclass's ``step``: everything else is the wrapped ``solver``'s.

    Its ``scan_kind`` and ``root_finder`` too: diffrax's solver metaclass makes a wrapper of a Runge–Kutta
    solver an instance of the wrapped class, so diffrax sets them through the wrapper: ``ForwardMode`` the
    stages' loop (whose default, checkpointed for reverse mode, has no forward-mode derivative),
    ``diffeqsolve`` an implicit solver's root finder's tolerances (those of the step-size controller).
    """

    solver: dfx.AbstractSolver

    @property
    def scan_kind(self):
        return self.solver.scan_kind

    @property
    def root_finder(self):
        return self.solver.root_finder

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):
        return self.solver.interpolation_cls

    def order(self, terms):
        return self.solver.order(terms)

    def strong_order(self, terms):
        return self.solver.strong_order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args)

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


class ProjectedSolver(WrappedSolver):
    """Wrap a diffrax solver so every step ends on the constraint manifold.

    The wrapped step's result y1 = (q, v) is projected; its error estimate (of
    the unprojected step) drives the step-size controller, and rejected steps
    are discarded by diffrax as usual. The solver state is re-initialised at
    the projected point, so first-same-as-last solvers (Tsit5, Dopri5)
    evaluate the vector field afresh there instead of reusing f(y1) of the
    unprojected point. Dense output between steps is the wrapped solver's
    interpolant, so values saved between steps can deviate from the manifold
    by one step's drift, which does not accumulate.
    """

    model: eqx.Module
    iterations: int = eqx.field(static=True)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, _, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, made_jump
        )
        y1 = project(self.model, *y1, t1, self.iterations)
        return y1, y_error, dense_info, self.solver.init(terms, t1, t1, y1, args), result
