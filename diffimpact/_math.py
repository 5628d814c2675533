"""Numerical helpers for contact laws: powers and norms with finite gradients at zero."""

import jax.numpy as jnp


def positive_power(x, exponent):
    """``max(x, 0) ** exponent`` with a finite gradient at ``x = 0``.

    The double-``where`` keeps ``0 ** (exponent - 1)`` out of the backward pass.
    """
    positive = x > 0
    safe = jnp.where(positive, x, 1.0)
    return jnp.where(positive, safe**exponent, 0.0)


def signed_power(x, exponent):
    """``sign(x) * |x| ** exponent``: the odd, smooth continuation of ``x ** exponent``.

    Used where an integrator may step slightly past ``x = 0`` (event location),
    so the force stays continuous and monotone there.
    """
    return jnp.sign(x) * positive_power(jnp.abs(x), exponent)


def dot(a, b):
    """a · b along the last axis, as a product and a sum.

    XLA fuses these with the arithmetic around them, where ``a @ b`` of vectors vmapped over a contact family is
    a matrix product, an operation of its own. (Writing the sum out term by term was tried: the 120 ball pairs'
    forces took about twice as long, timed in a compiled loop.)
    """
    return jnp.sum(a * b, axis=-1)


def safe_norm(v, axis=-1):
    """Euclidean norm with gradient 0 (not NaN) at ``v = 0``."""
    squared = jnp.sum(v * v, axis=axis)
    nonzero = squared > 0
    return jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, squared, 1.0)), 0.0)


def normal_frame(normal):
    """Q (d × d): a unit contact normal (d = 2 or 3) and its tangents as columns, right-handed.

    In 3-D the first tangent is n × e, e the coordinate axis least aligned with n.
    """
    if normal.shape[0] == 2:
        return jnp.stack([normal, jnp.stack([-normal[1], normal[0]])], axis=1)
    helper = jnp.eye(3)[jnp.argmin(jnp.abs(normal))]  # the axis least aligned with n
    tangent = jnp.cross(normal, helper)
    tangent = tangent / jnp.linalg.norm(tangent)
    return jnp.stack([normal, tangent, jnp.cross(normal, tangent)], axis=1)
