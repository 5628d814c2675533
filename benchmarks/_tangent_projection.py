"""A design tried for the stiff friction's derivatives: the slips' tangents projected after every step.

Not part of the package: ``rolling_hop.py --project-tangents θ`` measures it (docs/design/derivatives.md, "The stiff
slips' tangents projected after each step (not adopted)").

Forward-mode derivatives through a stiff friction law grow without bound when an explicit solver's steps are
longer than the friction's stability allows (``simulate``'s ``friction_steps``). In the exact motion, a slip
inside the law's band relaxes at a rate λ far above the motion's, so the slip's tangent δs is driven to its
quasi-steady value, about 0, within 1/λ. This design keeps the solver's steps and the motion itself (every
primal bit) and, after each step, sets the tangent's stiff part to that value:

* the slip of a frictional contact is s = W v + (terms in q), W = ∂s/∂v; the friction force's Jacobian in
  the slip, −∂F_t/∂s = D (symmetric, ≥ 0 for the isotropic laws of ``diffimpact.contact.friction``), has
  eigenvectors u_a and eigenvalues d_a;
* a tangential force along u_a changes the velocities at the rate A Wᵀ u_a, A the formulation's response to
  a generalised force (``constrained_acceleration`` with zero constraint right-hand side), and the slip
  along u_b at G_ba = u_bᵀ W A Wᵀ u_a; so the slip along u_a relaxes at λ_a = d_a G_aa;
* after a step of length h, for the stiff directions (h λ_a > θ) the velocity tangent gets the impulse
  that zeroes them: δv ← δv + A Wᵀ U c with (Uᵀ W A Wᵀ U) c = −Uᵀ δs, δs = ∂s/∂q δq + W δv.

The projection is a ``jax.custom_jvp`` identity on the step's end state: its value is that state, its tangent
the projected one. The solver's first-same-as-last evaluation is redone at the end state (as
``formulations.ProjectedSolver`` does) so that the next step starts from the projected tangent.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact.multibody.contact import Contact
from diffimpact.multibody.formulations import Baumgarte, WrappedSolver, constrained_acceleration


def with_tangent(y, args, rule, *extra):
    """``y`` unchanged, with the tangent ``rule(model, y, dy, *extra)``: a ``jax.custom_jvp`` identity on a step's
    end state, ``model`` simulate's segment model (``args[0]``), ``extra`` held constant (no derivatives)."""
    arrays, static = eqx.partition(args[0], eqx.is_array)

    @jax.custom_jvp
    def identity(y, arrays, extra):
        return y

    @identity.defjvp
    def identity_jvp(primals, tangents):
        y, arrays, extra = primals
        return y, rule(eqx.combine(jax.lax.stop_gradient(arrays), static), y, tangents[0], *extra)

    return identity(y, arrays, jax.lax.stop_gradient(extra))


def projected_velocity_tangent(model, q, v, t, h, theta, dq, dv):
    """δv with the tangents of the slips that relax faster than θ/h set to zero (module docstring)."""
    families = [k for k, force in enumerate(model.forces)
                if isinstance(force, Contact) and force.frictional and not force.impulsive]

    def slips(q, v):
        return [model.forces[k].slips(model.split(q), model.split(v)) for k in families]

    def slip_velocities(v):
        return [slip for _, slip in slips(q, v)]

    _, tangents = jax.jvp(lambda q, v: [slip for _, slip in slips(q, v)], (q, v), (dq, dv))
    _, pullback = jax.vjp(slip_velocities, v)
    rows, values, targets, forces = [], [], [], []
    for i, (k, (normal, slip), tangent) in enumerate(zip(families, slips(q, v), tangents)):
        law = model.forces[k].friction
        jacobian = jax.vmap(lambda law, n, s: jax.jacfwd(lambda s: -law(n, s))(s))(law, normal, slip)
        eigenvalues, eigenvectors = jnp.linalg.eigh(0.5 * (jacobian + jnp.swapaxes(jacobian, 1, 2)))
        count, size = slip.shape
        directions = jnp.swapaxes(eigenvectors, 1, 2)  # [member, a] = u_a
        # one row a member and direction: the member's slip along u_a, as a cotangent of the family's slips
        row = (jnp.eye(count)[:, None, :, None] * directions[:, :, None, :]).reshape(count * size, count, size)
        rows.append(row)
        values.append(eigenvalues.reshape(-1))
        targets.append(jnp.einsum("mad,md->ma", directions, tangent).reshape(-1))

        def generalised(cotangent, i=i):
            cotangents = [jnp.zeros_like(s) for s in slip_velocities(v)]
            cotangents[i] = cotangent
            return pullback(cotangents)[0]

        forces.append(jax.vmap(generalised)(row))
    responses = jax.vmap(lambda force: constrained_acceleration(
        model, q, t, force, jnp.zeros(model.constraint(q, t).shape)))(jnp.concatenate(forces))
    gram = jax.vmap(lambda response: jnp.concatenate([
        jnp.einsum("rmd,md->r", row, change)
        for row, change in zip(rows, jax.jvp(slip_velocities, (v,), (response,))[1])]))(responses).T
    stiff = jnp.concatenate(values) * jnp.diag(gram) * h > theta
    system = jnp.where(stiff[:, None] & stiff[None, :], gram, 0.0) + jnp.diag(jnp.where(stiff, 0.0, 1.0))
    impulse = jnp.linalg.solve(system, jnp.where(stiff, -jnp.concatenate(targets), 0.0))
    return dv + impulse @ responses


class TangentProjectedSolver(WrappedSolver):
    """Wrap a diffrax solver so that every step's end state carries projected tangents (module docstring)."""

    theta: float = eqx.field(static=True)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, _, result = self.solver.step(terms, t0, t1, y0, args, solver_state, made_jump)

        def projected(model, y, dy, t, h):
            (q, v), (dq, dv) = y, dy
            return dq, projected_velocity_tangent(model, q, v, t, h, self.theta, dq, dv)

        y1 = with_tangent(y1, args, projected, t1, t1 - t0)
        return y1, y_error, dense_info, self.solver.init(terms, t1, t1, y1, args), result


class ProjectedTangents(Baumgarte):
    """Baumgarte's formulation with the solver wrapped by ``TangentProjectedSolver`` at threshold ``theta``."""

    theta: float = eqx.field(static=True)

    def __init__(self, alpha, beta, theta):
        super().__init__(alpha, beta)
        self.theta = theta

    def wrap_solver(self, model, solver):
        return TangentProjectedSolver(solver, self.theta)
