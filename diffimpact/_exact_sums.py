"""Sums that do not depend on the order of their terms, so that mirror images stay mirror images to the last bit.

A floating-point sum depends on its order. The force on a ball is the sum
over its contacts, listed in the order of the contact family, and the
effective mass and approach speed of a contact are sums over every
coordinate of the model, which XLA reduces in vector lanes by position: a
mirror-image ball, or contact, sums the same terms (up to sign) in another
order and comes out a few ulp off its partner. A break is chaotic and
amplifies that to metres (docs/results/break.md, "The 16-ball break").

Here each group of terms is summed exactly: scaled by the power of two
2^(b − e) (2^e just above the group's largest |term|, b = 62 − ⌈log₂(m + 1)⌉
for m terms, so that no sum overflows), rounded to integers (a round-off of
2^(e − b), 1e-17 of the largest term, half a unit below double precision's),
added as int64 (exact, so in any order) and scaled back. Scaling, rounding
and conversion commute with a sign change, so terms that are the mirror
images of another group's give exactly the mirror-image sum. A group with a
non-finite term sums to NaN. The derivatives are those of the plain sum.
(The terms themselves are mirror images to the last bit only without fused
multiply-adds: ``diffimpact``'s module docstring.)
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np


def _scale(largest, count):
    """The powers of two 2^(b − e) that take terms of ``count``-term groups with these largest |terms| to integers.

    Built from its bits (float64: exponent field p + 1023), where ``jnp.ldexp`` computes 2^p by the C library's
    exp2, element by element (docs/design/performance.md, "What a step computes": the 16-ball break 13 % faster).
    """
    _, exponent = jnp.frexp(largest)  # largest < 2^e
    power = 62 - int(np.ceil(np.log2(count + 1))) - exponent.astype(jnp.int64)
    # p ≥ −961 (largest < 2^1024); above 1023 (largest < 2^−961) 2^p overflows, as ldexp's does
    field = jax.lax.shift_left(jnp.minimum(power, 1023) + 1023, jnp.int64(52))
    return jnp.where(power > 1023, jnp.inf, jax.lax.bitcast_convert_type(field, jnp.float64))


def _units(terms, scale):
    return jnp.round(terms * scale).astype(jnp.int64)


def _back(total, scale, largest, dtype):
    return jnp.where(jnp.isfinite(largest), total.astype(dtype) / scale, jnp.nan)


@jax.custom_jvp
def exact_sum(terms):
    """Σ over the last axis of ``terms``, the same in any order of the terms (module docstring)."""
    largest = jnp.max(jnp.abs(terms), axis=-1)
    scale = _scale(largest, terms.shape[-1])
    return _back(jnp.sum(_units(terms, scale[..., None]), axis=-1), scale, largest, terms.dtype)


@exact_sum.defjvp
def _exact_sum_jvp(primals, tangents):
    return exact_sum(*primals), jnp.sum(tangents[0], axis=-1)


def _scatter_totals(parts, owners, bodies):
    """Σ of the rows of ``parts`` (m, s) of each body in ``owners`` (m,) (−1: the ground, dropped), (bodies, s)."""
    return jnp.zeros((bodies + 1, parts.shape[-1]), parts.dtype).at[owners].add(parts)[:-1]


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def body_totals(parts, owners, bodies):
    """Each body's sum of the rows of ``parts`` (m, s) that ``owners`` (m,) gives it, column by column, (bodies, s).

    ``owners``: body indices, −1 for the ground (whose rows are dropped). The
    same in any order of the rows (module docstring).
    """
    largest = jnp.zeros((bodies + 1, parts.shape[-1]), parts.dtype).at[owners].max(jnp.abs(parts))
    scale = _scale(largest, parts.shape[0])
    total = jnp.zeros(largest.shape, jnp.int64).at[owners].add(_units(parts, scale[owners]))
    return _back(total, scale, largest, parts.dtype)[:-1]


@body_totals.defjvp
def _body_totals_jvp(bodies, primals, tangents):
    parts, owners = primals
    return body_totals(parts, owners, bodies), _scatter_totals(tangents[0], owners, bodies)
