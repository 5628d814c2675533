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

import jax.numpy as jnp

from diffimpact._validation import refuse_where
from diffimpact.impulse._problem import Impact, check_problem, per_contact, sliding_directions, solve_lcp


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


def check(delassus, velocity, friction, restitution, dimension):
    """Validated problem of ``dimension``-D contacts (2: planar, 3: spatial; None: one contact, from u⁻'s
    length); W of one impact, not a batch."""
    if dimension is None:
        if jnp.ndim(velocity) != 1 or jnp.shape(velocity)[0] not in (2, 3):
            raise ValueError(f"velocity of shape {jnp.shape(velocity)} is not one contact (2 or 3 components); "
                             "for several contacts pass dimension=2 or 3")
        dimension = jnp.shape(velocity)[0]
    if dimension not in (2, 3):
        raise ValueError(f"dimension must be 2 (planar contacts), 3 (spatial) or None (one contact); got {dimension}")
    velocity = jnp.asarray(velocity, float)
    if velocity.ndim != 1 or velocity.shape[0] % dimension or not 0 < velocity.shape[0] <= 12 * dimension:
        raise ValueError(f"velocity must have shape ({dimension}m,) for 1 ≤ m ≤ 12 contacts of dimension "
                         f"{dimension}; got {velocity.shape}")
    W, u, mu, e = check_problem(delassus, velocity, friction, restitution, sizes=(velocity.shape[0],))
    contacts = velocity.shape[0] // dimension
    return W, u, per_contact("friction", mu, contacts), per_contact("restitution", e, contacts), dimension


def impact(delassus, velocity, restitution, friction=0.0, *, dimension=None):
    """Newton's impact of m ≤ 12 simultaneous contacts (module docstring).

    ``delassus`` W (m·dimension, m·dimension), ``velocity`` u⁻ (m·dimension,),
    each contact normal first; ``restitution`` e ∈ [0, 1] and ``friction``
    μ ≥ 0, scalars or one per contact; ``dimension`` 2 or 3 (None: a single
    contact, the length of u⁻). Returns an ``Impact``.
    """
    W, u, mu, e, dimension = check(delassus, velocity, friction, restitution, dimension)
    N, B, approach = normal_problem(W, u, mu, dimension)
    e = jnp.broadcast_to(e, approach.shape)
    p, found = solve_lcp(N, approach + e * jnp.minimum(approach, 0.0))
    p = refuse_where(p, ~found, "no Newton impulse exists: friction at the fixed sliding directions makes the "
                     "normal velocities fall with the normal impulse (a Painlevé jam)")
    impulse = B @ p
    return Impact(impulse, u + W @ impulse)
