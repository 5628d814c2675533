"""Least-squares and robust losses of whitened residuals z = (model − data) / σ.

Each loss ρ(z) is applied per point and summed; all are normalised so that
ρ(z) ≈ z²/2 near z = 0, so ``squared`` gives χ²/2 and the robust losses agree
with it for small residuals. ``scale`` (in units of σ) is where a robust loss
stops growing quadratically: Huber grows linearly beyond it, Cauchy
logarithmically, so an outlier's pull ψ(z) = ρ'(z) is bounded (Huber) or
decays to zero (Cauchy).
"""

import functools

import jax
import jax.numpy as jnp


def weighted_residuals(residuals, sigma):
    """z = residuals / σ, with σ the per-point standard uncertainty (broadcasts)."""
    return residuals / sigma


def squared(z):
    """ρ(z) = z²/2 (weighted least squares)."""
    return 0.5 * z**2


def huber(z, scale=1.0):
    """ρ(z) = z²/2 for |z| ≤ s, s(|z| − s/2) beyond."""
    magnitude = jnp.abs(z)
    return jnp.where(magnitude <= scale, 0.5 * z**2, scale * (magnitude - 0.5 * scale))


def cauchy(z, scale=1.0):
    """ρ(z) = (s²/2) ln(1 + (z/s)²)."""
    return 0.5 * scale**2 * jnp.log1p((z / scale) ** 2)


LOSSES = {"squared": squared, "huber": huber, "cauchy": cauchy}


def loss_function(name, scale=1.0):
    """The per-point loss ρ(z) called ``name`` ("squared", "huber" or "cauchy") with its scale."""
    if name not in LOSSES:
        raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {name!r}")
    if not scale > 0:
        raise ValueError(f"loss_scale must be > 0, got {scale!r}")
    return LOSSES[name] if name == "squared" else functools.partial(LOSSES[name], scale=scale)


def irls_weights(rho, z):
    """w(z) = ρ'(z)/z, the iteratively-reweighted-least-squares weight of each point (1 at z = 0).

    For ``squared`` w ≡ 1; robust losses give outliers w < 1.
    """
    at_zero = z == 0
    safe = jnp.where(at_zero, 1.0, z)
    return jnp.where(at_zero, 1.0, jax.vmap(jax.grad(rho))(safe.ravel()).reshape(z.shape) / safe)
