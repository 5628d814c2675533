"""Newton's kinematic restitution for one or several contacts: u⁺_n = −e u⁻_n.

The reference model of the textbooks (e.g. Kane & Levinson, *Dynamics:
Theory and Applications*, 1985; Stronge, *Impact Mechanics*, 2000, §4):
each contact j takes a normal impulse p_j ≥ 0 so that its normal velocity
after the impact is at least −e_j times the approach velocity (0 for a
contact in proximity that is not approaching), with equality where p_j > 0:

    w = N p + q ≥ 0,  p ≥ 0,  pᵀ w = 0,   q_j = u⁻_n,j + e_j min(u⁻_n,j, 0),

a linear complementarity problem, solved exactly by ``_problem.solve_lcp``.
With friction the tangential impulse is −μ_j p_j d_j along the fixed
pre-impact slip direction d_j (no friction where a contact does not slip),
so N_ij = n_iᵀ W (n_j − μ_j d_j) (the contact frame: normal first). It is the
law with which Kane & Levinson's double pendulum gains energy when the slip
stops and reverses during the impact; ``diffimpact.impulse.routh`` follows
the slip instead. For one contact Newton's impulse equals Poisson's
(``poisson``): they differ only where the set of active contacts changes
between compression and the end of the impact.
"""

from typing import ClassVar

import jax.numpy as jnp

from diffimpact._validation import check_range, refuse_where
from diffimpact.impulse._problem import check_problem, per_contact, sliding_directions, solve_lcp
from diffimpact.impulse.base import Impact, ImpulseModel


def _directions(velocity, friction, contacts, dimension):
    """B (contacts·dimension, contacts): contact j's impulse per unit normal impulse, (1, −μ_j d_j) in its block."""
    d = sliding_directions(velocity, contacts, dimension)
    blocks = jnp.concatenate([jnp.ones((contacts, 1)), -friction[:, None] * d], axis=1)
    return (jnp.eye(contacts)[:, None, :] * blocks[:, :, None]).reshape(contacts * dimension, contacts)


def normal_problem(delassus, velocity, friction, dimension):
    """(N, B, u⁻_n): the normal-impulse problem of contacts sliding in fixed directions (shared with ``poisson``)."""
    contacts = velocity.shape[0] // dimension
    B = _directions(velocity, jnp.broadcast_to(friction, (contacts,)), contacts, dimension)
    normal_rows = jnp.arange(contacts) * dimension
    return (delassus @ B)[normal_rows], B, velocity[normal_rows]


class _Restitution(ImpulseModel):
    """What Newton's and Poisson's laws share: their parameters, their checks and the normal problem's set-up."""

    restitution: jnp.ndarray
    friction: jnp.ndarray
    dimensions: ClassVar[tuple] = (2, 3)
    several: ClassVar[bool] = True

    def __init__(self, restitution, friction=0.0):
        self.restitution = check_range("restitution", restitution, 0.0, 1.0)
        self.friction = check_range("friction", friction, 0.0)

    def _problem(self, delassus, velocity, dimension):
        """(W, u⁻, dimension, N, B, u⁻_n, e) of m ≤ 12 contacts of ``dimension`` (2, 3; None: one contact, from u⁻'s
        length); W of one impact, not a batch."""
        if dimension is None:
            if jnp.ndim(velocity) != 1 or jnp.shape(velocity)[0] not in (2, 3):
                raise ValueError(f"velocity of shape {jnp.shape(velocity)} is not one contact (2 or 3 components); "
                                 "for several contacts pass dimension=2 or 3")
            dimension = jnp.shape(velocity)[0]
        if dimension not in (2, 3):
            raise ValueError(f"dimension must be 2 (planar contacts), 3 (spatial) or None (one contact); got "
                             f"{dimension}")
        velocity = jnp.asarray(velocity, float)
        if velocity.ndim != 1 or velocity.shape[0] % dimension or not 0 < velocity.shape[0] <= 12 * dimension:
            raise ValueError(f"velocity must have shape ({dimension}m,) for 1 ≤ m ≤ 12 contacts of dimension "
                             f"{dimension}; got {velocity.shape}")
        W, u = check_problem(delassus, velocity, sizes=(velocity.shape[0],))
        contacts = velocity.shape[0] // dimension
        mu = per_contact("friction", self.friction, contacts)
        e = per_contact("restitution", self.restitution, contacts)
        N, B, approach = normal_problem(W, u, mu, dimension)
        return W, u, N, B, approach, jnp.broadcast_to(e, approach.shape)


class Newton(_Restitution):
    """Newton's impact of m ≤ 12 simultaneous contacts (module docstring), planar or spatial.

    ``Newton(restitution, friction=0.0)``: e ∈ [0, 1] and μ ≥ 0, each a
    scalar or one per contact. Called as every ``ImpulseModel``:
    ``model(W, u⁻, dimension)``, ``dimension`` 2 or 3 (None: a single contact,
    the length of u⁻). Returns an ``Impact``.
    """

    def __call__(self, delassus, velocity, dimension=None):
        W, u, N, B, approach, e = self._problem(delassus, velocity, dimension)
        p, found = solve_lcp(N, approach + e * jnp.minimum(approach, 0.0))
        p = refuse_where(p, ~found, "no Newton impulse exists: friction at the fixed sliding directions makes the "
                         "normal velocities fall with the normal impulse (a Painlevé jam)")
        impulse = B @ p
        return Impact(impulse, u + W @ impulse)
