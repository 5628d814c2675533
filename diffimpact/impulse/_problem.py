"""The checks and pieces the impact models of ``diffimpact.impulse`` share (their interface: ``base``)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._math import safe_norm
from diffimpact._validation import refuse_where


def check_problem(delassus, velocity, sizes=None):
    """Validated (W, u⁻) as arrays; every refusal names the argument.

    W (..., k, k) finite, symmetric and positive definite; u⁻ (..., k) finite,
    ``k in sizes`` (None: any multiple of 3, for several 3-D contacts).
    Concrete inputs raise ``ValueError``; traced ones are checked with
    ``equinox.error_if`` (``EquinoxRuntimeError`` when run). The models check
    their parameters when they are constructed.
    """
    delassus = jnp.asarray(delassus, dtype=float)
    velocity = jnp.asarray(velocity, dtype=float)
    k = velocity.shape[-1] if velocity.ndim else 0
    allowed = k in sizes if sizes is not None else (k > 0 and k % 3 == 0)
    if not allowed or delassus.shape[-2:] != (k, k):
        wanted = " or ".join(f"(..., {n}, {n}) and (..., {n})" for n in sizes) if sizes else \
            "(..., 3m, 3m) and (..., 3m) for m contacts"
        raise ValueError(f"delassus and velocity must have shapes {wanted}; got {delassus.shape} and {velocity.shape}")
    message = ("delassus must be finite, symmetric and positive definite (contacts that are redundant, e.g. a "
               "brick's four corners on a plane, make it singular: diffimpact.impulse.Plus resolves those)")
    if isinstance(delassus, jax.core.Tracer):
        delassus = eqx.error_if(delassus, jnp.any(~jnp.isfinite(jnp.linalg.cholesky(delassus))), message)
    else:
        matrix = np.asarray(delassus)
        symmetric = np.allclose(matrix, np.swapaxes(matrix, -1, -2), rtol=1e-10, atol=0.0)
        if not (np.all(np.isfinite(matrix)) and symmetric and np.all(np.linalg.eigvalsh(matrix) > 0)):
            raise ValueError(message)
    return delassus, refuse_where(velocity, jnp.any(~jnp.isfinite(velocity)), "velocity must be finite")


def per_contact(name, value, contacts):
    """``value`` (a model's field) if it is a scalar or has one entry per contact, (``contacts``,)."""
    if jnp.shape(value) not in ((), (contacts,)):
        raise ValueError(f"{name} must be a scalar or one value per contact, shape ({contacts},); got shape "
                         f"{jnp.shape(value)}")
    return value


def sliding_directions(velocity, contacts, dimension):
    """Unit pre-impact slip directions (contacts, dimension − 1) of the contacts, zero where there is no slip."""
    tangential = velocity.reshape(contacts, dimension)[:, 1:]
    slip = safe_norm(tangential)[:, None]
    return jnp.where(slip > 0, tangential / jnp.where(slip > 0, slip, 1.0), 0.0)


def solve_lcp(matrix, offset):
    """The p ≥ 0 with w = matrix p + offset ≥ 0 and pᵀw = 0, by enumerating the 2^m active sets.

    Exact and unique when ``matrix`` is a P-matrix (e.g. positive definite);
    meant for the few contacts of one impact (m ≤ 12). Returns (p, found).
    """
    m = offset.shape[0]
    sets = (jnp.arange(2**m)[:, None] >> jnp.arange(m)[None, :]) & 1 == 1
    scale = jnp.max(jnp.abs(offset)) + 1e-300
    tolerance = 1e-12 * scale

    def candidate(active):
        both = active[:, None] & active[None, :]
        reduced = jnp.where(both, matrix, jnp.eye(m))
        p = jnp.linalg.solve(reduced, jnp.where(active, -offset, 0.0))
        w = matrix @ p + offset
        valid = jnp.all(p >= -tolerance) & jnp.all(active | (w >= -tolerance))
        return jnp.maximum(p, 0.0), valid

    impulses, valid = jax.vmap(candidate)(sets)
    return impulses[jnp.argmax(valid)], jnp.any(valid)
