"""Static multibody model and evolving state (MJX style).

``Model`` holds the bodies, constraints and forces; ``State`` holds the
generalised coordinates q, velocities v = q̇ and the time t. The flat vectors q
and v stack the bodies' blocks in order ([Gismeros Moreno 2022], eq. (2.8) per body). A model
is planar (``PlanarBody``) or spatial (``SpatialBody``), not both; for every
spatial body the model appends the Euler-parameter normalisation
``EulerParameters`` (eq. (2.7)) to the user's constraints. The
constraint Jacobian D, the velocity equations Φ̇ = D v + Φ_t and the right-hand
side γ of the acceleration equations D v̇ = γ (eqs. (2.10)–(2.11)) are
obtained from Φ(q, t) by forward-mode autodiff, never by hand.
"""

import itertools

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact.multibody.bodies import Body, SpatialBody, gyroscopic_forces
from diffimpact.multibody.constraints import Constraint, EulerParameters
from diffimpact.multibody.forces import Force, Gravity


class State(eqx.Module):
    """Coordinates ``q`` (n,), velocities ``v`` (n,) and time ``t`` (s)."""

    q: jnp.ndarray
    v: jnp.ndarray
    t: jnp.ndarray

    def __init__(self, q, v, t=0.0):
        self.q = jnp.asarray(q, dtype=float)
        self.v = jnp.asarray(v, dtype=float)
        self.t = jnp.asarray(t, dtype=float)


class Model(eqx.Module):
    """Bodies, constraints and forces of a multibody system.

    All bodies must be planar or all spatial (``ValueError`` otherwise).

    Parameters
    ----------
    bodies : sequence of ``Body``.
    constraints : sequence of ``Constraint``; body indices refer to ``bodies``.
        An ``EulerParameters`` constraint is appended for every ``SpatialBody``
        that the sequence does not already normalise, so ``constraints``
        holds the user's constraints followed by those.
    forces : sequence of ``Force``.
    """

    bodies: tuple
    constraints: tuple
    forces: tuple

    def __init__(self, bodies, constraints=(), forces=()):
        self.bodies = tuple(bodies)
        if not self.bodies:
            raise ValueError("a Model needs at least one body; got bodies=[]")
        constraints = tuple(constraints)
        self.forces = tuple(forces)
        for kind, items, base in (
            ("bodies", self.bodies, Body),
            ("forces", self.forces, Force),
        ):
            for k, item in enumerate(items):
                if not isinstance(item, base):
                    raise TypeError(f"{kind}[{k}] must be a {base.__name__}, got {type(item).__name__}")
        for k, item in enumerate(constraints):
            if not isinstance(item, Constraint):
                raise TypeError(f"constraints[{k}] must be a Constraint, got {type(item).__name__}")
        dimensions = {body.dimension for body in self.bodies}
        if len(dimensions) > 1:
            kinds = ", ".join(f"{getattr(body, 'name', k)!r}: {type(body).__name__}" for k, body in enumerate(self.bodies))
            raise ValueError(f"a Model's bodies must be all planar or all spatial; got {kinds}")
        for k, force in enumerate(self.forces):
            if isinstance(force, Gravity) and dimensions and force.g.shape != (min(dimensions),):
                raise ValueError(
                    f"forces[{k}] (Gravity) has g of shape {force.g.shape} but the bodies are "
                    f"{min(dimensions)}-dimensional"
                )
        normalised = {c.body for c in constraints if isinstance(c, EulerParameters)}
        self.constraints = constraints + tuple(
            EulerParameters(k)
            for k, body in enumerate(self.bodies)
            if isinstance(body, SpatialBody) and k not in normalised
        )
        for k, item in enumerate(self.constraints + self.forces):
            for index in item.body_indices:
                if index is not None and not 0 <= index < len(self.bodies):
                    raise ValueError(
                        f"{type(item).__name__} refers to body {index}, "
                        f"but the model has {len(self.bodies)} bodies"
                    )

    @property
    def size(self):
        """Number n of generalised coordinates."""
        return sum(body.size for body in self.bodies)

    @property
    def constraint_names(self):
        """One label per constraint, for error messages."""
        return [
            f"constraints[{k}] (EulerParameters of body {c.body} {getattr(self.bodies[c.body], 'name', '')!r})"
            if isinstance(c, EulerParameters)
            else f"constraints[{k}] ({type(c).__name__})"
            for k, c in enumerate(self.constraints)
        ]

    def split(self, x):
        """The per-body blocks of a flat coordinate or velocity vector, as the rows of a (bodies, size) array.

        All bodies of a model have the same size (planar or spatial), so this is a reshape: contact families
        gather their bodies' rows from it without re-stacking the blocks.
        """
        return jnp.reshape(x, (len(self.bodies), -1))

    def mass_matrix(self, q):
        """Block-diagonal M of [Gismeros Moreno 2022], eq. (2.13)."""
        return jax.scipy.linalg.block_diag(
            *(body.mass_matrix(qi) for body, qi in zip(self.bodies, self.split(q)))
        )

    def generalized_force(self, q, v, t):
        """g of eq. (2.15): the applied forces plus the bodies' gyroscopic terms of eq. (2.16)."""
        blocks, rates = self.split(q), self.split(v)
        total = gyroscopic_forces(self.bodies, blocks, rates)
        for force in self.forces:
            total = total + jnp.reshape(jnp.asarray(force(self.bodies, blocks, rates, t)), total.shape)
        return total.reshape(-1)

    def constraint(self, q, t):
        """Stacked residuals Φ(q, t) of eq. (2.9), shape (k,).

        A run of ``EulerParameters`` (those appended for the spatial bodies)
        is evaluated at once (``EulerParameters.residuals``).
        """
        blocks, parts = self.split(q), []
        for kind, run in itertools.groupby(self.constraints, key=type):
            run = list(run)
            if kind is EulerParameters:
                parts.append(EulerParameters.residuals([c.body for c in run], blocks))
            else:
                parts.extend(c(blocks, t) for c in run)
        return jnp.concatenate(parts) if parts else jnp.zeros(0)

    def jacobian(self, q, t):
        """D = ∂Φ/∂q, shape (k, n), by autodiff."""
        return jax.jacfwd(self.constraint)(q, t)

    def constraint_velocity(self, q, v, t):
        """Φ̇ = D v + Φ_t, a directional derivative of Φ along (v, 1)."""
        return jax.jvp(self.constraint, (q, t), (v, jnp.ones_like(t)))[1]

    def gamma(self, q, v, t):
        """γ = −(D v)_q v − 2 D_t v − Φ_tt of eq. (2.11).

        Φ̈ = D v̇ + d/dt Φ̇|_{v̇=0}, so γ is minus the derivative of Φ̇ along
        (q̇, ṫ) = (v, 1) at fixed v.
        """
        return -jax.jvp(lambda q, t: self.constraint_velocity(q, v, t), (q, t), (v, jnp.ones_like(t)))[1]

    def kinetic_energy(self, q, v):
        return sum(b.kinetic_energy(qi, vi) for b, qi, vi in zip(self.bodies, self.split(q), self.split(v)))

    def potential_energy(self, q):
        return sum(f.potential_energy(self.bodies, self.split(q)) for f in self.forces)

    def energy(self, q, v):
        """Total mechanical energy, kinetic plus the forces' potentials (J)."""
        return self.kinetic_energy(q, v) + self.potential_energy(q)

    def linear_momentum(self, q, v):
        """Σ m_i ṙ_i (kg m/s)."""
        return sum(b.linear_momentum(qi, vi) for b, qi, vi in zip(self.bodies, self.split(q), self.split(v)))

    def angular_momentum(self, q, v):
        """Angular momentum about the origin (kg m²/s; a scalar for planar bodies, a 3-vector for spatial)."""
        return sum(b.angular_momentum(qi, vi) for b, qi, vi in zip(self.bodies, self.split(q), self.split(v)))
