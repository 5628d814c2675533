"""Sums whose bits do not depend on the order of their terms (``diffimpact._exact_sums``)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact._exact_sums import _scale, body_totals, exact_sum

RNG = np.random.default_rng(7)
# forces of a ball's contacts: a few large, some small, many zero, over 12 orders of magnitude
TERMS = RNG.normal(size=(240, 7)) * 10.0 ** RNG.uniform(-9, 3, size=(240, 1)) * (RNG.random((240, 1)) < 0.3)
OWNERS = RNG.integers(-1, 16, size=240)  # −1: the ground


def bound(terms):
    """The round-off of an exact sum of ``terms``: each rounded to 2^(e − b) (module docstring), and the result once."""
    exponent = np.frexp(np.abs(terms).max())[1]
    bits = 62 - int(np.ceil(np.log2(len(TERMS) + 1)))
    return len(terms) * 2.0 ** (exponent - bits - 1) + np.finfo(float).eps * abs(math.fsum(terms))


@pytest.fixture(scope="module")
def totals():
    return jax.jit(lambda parts, owners: body_totals(parts, owners, 16))


def test_body_totals_are_the_same_bits_in_any_order_and_odd(totals):
    reference = np.asarray(totals(TERMS, OWNERS))
    for _ in range(5):
        order = RNG.permutation(len(TERMS))
        np.testing.assert_array_equal(np.asarray(totals(TERMS[order], OWNERS[order])), reference)
    np.testing.assert_array_equal(np.asarray(totals(-TERMS, OWNERS)), -reference)  # a mirror image negates


def test_body_totals_are_the_sums_to_double_precision_and_carry_their_derivatives(totals):
    result = np.asarray(totals(TERMS, OWNERS))
    for body in range(16):
        for column in range(7):
            terms = TERMS[OWNERS == body, column]
            assert abs(result[body, column] - math.fsum(terms)) <= bound(terms)
    tangent = RNG.normal(size=TERMS.shape)
    _, derivative = jax.jvp(lambda x: totals(x, OWNERS), (jnp.asarray(TERMS),), (jnp.asarray(tangent),))
    plain = np.zeros((17, 7))
    np.add.at(plain, OWNERS, tangent)
    np.testing.assert_allclose(np.asarray(derivative), plain[:16], rtol=1e-15, atol=1e-15)
    assert np.isnan(np.asarray(totals(np.where(np.arange(240)[:, None] == 3, np.inf, TERMS), OWNERS)))[OWNERS[3]].all()


def test_exact_sum_is_order_free_and_odd():
    rows = TERMS.T  # (7, 240)
    reference = np.asarray(exact_sum(rows))
    np.testing.assert_array_equal(np.asarray(exact_sum(rows[:, RNG.permutation(240)])), reference)
    np.testing.assert_array_equal(np.asarray(exact_sum(-rows)), -reference)
    for total, terms in zip(reference, rows):
        assert abs(total - math.fsum(terms)) <= bound(terms)


def test_scale_is_the_exact_power_of_two():
    # _scale builds 2^(b − e) from its bits; NumPy's ldexp (C's, exact for powers of two on any CPU) gives the
    # same numbers over zero, subnormal, tiny (where 2^p overflows), ordinary, huge and non-finite largest terms
    largest = jnp.array([0.0, 5e-324, 1e-300, 1e-290, 1e-5, 0.75, 1.0, 3.0, 1e10, 1e300, 1.7e308, np.inf, np.nan])
    for count in (1, 7, 464, 10**6):
        bits = 62 - int(np.ceil(np.log2(count + 1)))
        with np.errstate(over="ignore"):
            expected = np.ldexp(1.0, bits - np.asarray(jnp.frexp(largest)[1]))
        np.testing.assert_array_equal(np.asarray(_scale(largest, count)), expected)
