"""The shared input checks of diffimpact._validation, on generated inputs (hypothesis)."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from diffimpact._validation import check_count, check_positive, check_range, check_shapes

REAL = "mass must be a real number or an array of real numbers, got "


@given(st.one_of(st.text(max_size=50), st.floats().map(str)))
def test_strings_are_refused_even_when_they_read_as_numbers(text):
    shown = f"str {text!r}" if len(repr(text)) <= 40 else "str"  # short values are quoted
    with pytest.raises(TypeError, match=re.escape(REAL + shown) + "$"):
        check_positive("mass", text)


@given(st.complex_numbers(allow_nan=False, allow_infinity=False))
def test_complex_numbers_are_refused_even_with_zero_imaginary_part(z):
    with pytest.raises(TypeError, match=re.escape(REAL + "complex")):
        check_positive("mass", z)


@given(st.one_of(st.booleans(), st.builds(np.bool_, st.booleans()), hnp.arrays(np.bool_, hnp.array_shapes())))
def test_booleans_are_refused(flag):
    with pytest.raises(TypeError, match=re.escape(REAL)):
        check_positive("mass", flag)


@given(st.one_of(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=1, max_value=2**53)))
def test_positive_reals_pass_unchanged(value):
    assert float(check_positive("mass", value)) == float(value)


@given(st.floats(max_value=0.0) | st.just(float("nan")) | st.just(float("inf")))
def test_non_positive_or_non_finite_is_refused_with_the_range(value):
    with pytest.raises(ValueError, match=re.escape("mass must be finite and in (0, inf); got")):
        check_positive("mass", value)


def test_range_message_carries_the_hint():
    with pytest.raises(ValueError, match=re.escape("e must be finite and in [0.0001, 1] for X; got [1e-05]")):
        check_range("e", 1e-5, 1e-4, 1.0, hint=" for X")


@given(st.one_of(st.integers(0, 2**31), st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
                 .flatmap(lambda t: st.integers(0, 100).map(t))))
def test_counts_accept_python_and_numpy_integers(value):
    count = check_count("history", value)
    assert type(count) is int and count == int(value)


@given(st.one_of(st.booleans(), st.floats(), st.text(max_size=5), st.none()))
def test_counts_refuse_bools_floats_strings(value):
    with pytest.raises(TypeError, match=re.escape("history must be an int >= 0, got ")):
        check_count("history", value)


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_side=1))
def test_broadcastable_shapes_give_numpys_shape(shapes):
    a, b = shapes.input_shapes
    assert check_shapes([("a", np.zeros(a)), ("b", np.zeros(b))]) == shapes.result_shape


@given(hnp.array_shapes(min_dims=1, min_side=2), hnp.array_shapes(min_dims=1, min_side=2))
def test_shapes_that_do_not_broadcast_are_listed(a, b):
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ValueError, match=re.escape(f"shapes do not broadcast together: a {a}, b {b}")):
            check_shapes([("a", np.zeros(a)), ("b", np.zeros(b))])
    else:
        assert check_shapes([("a", np.zeros(a)), ("b", np.zeros(b))]) == np.broadcast_shapes(a, b)


@given(hnp.array_shapes(min_dims=1, min_side=0).filter(lambda s: 0 in s))
def test_empty_arrays_are_refused(shape):
    with pytest.raises(ValueError, match=re.escape(f"b must not be empty; got shape {shape}")):
        check_shapes([("a", 1.0), ("b", np.zeros(shape))])


def test_traced_checks_raise_with_the_message_under_both_jits():
    # README, "Bad input": equinox.filter_jit raises EquinoxRuntimeError; jax.jit wraps the message in
    # JaxRuntimeError.
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    import diffimpact as di

    with pytest.raises(eqx.EquinoxRuntimeError, match=r"mass must be finite and in \(0, inf\)"):
        eqx.filter_jit(di.optimal_damping)(jnp.asarray(-1.0), 3.0, 1e8, 1.5, 0.3)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"mass must be finite and in \(0, inf\)"):
        jax.jit(di.optimal_damping)(jnp.asarray(-1.0), 3.0, 1e8, 1.5, 0.3)


def test_refuse_where_concrete_and_traced():
    # one check for conditions on several inputs: ValueError now, with "; got …" when asked; compiled in when traced
    import equinox as eqx
    import jax.numpy as jnp

    from diffimpact._validation import refuse_where

    value = jnp.arange(3.0)
    assert refuse_where(value, value < 0, "value must be >= 0") is value
    with pytest.raises(ValueError, match=r"^times must be non-decreasing$"):
        refuse_where(value, jnp.diff(value[::-1]) < 0, "times must be non-decreasing")
    with pytest.raises(ValueError, match=re.escape("times must be non-decreasing; got [2. 1. 0.]")):
        refuse_where(value, jnp.diff(value[::-1]) < 0, "times must be non-decreasing", lambda: np.asarray(value[::-1]))

    def first(x):
        return refuse_where(x, jnp.diff(x) < 0, "times must be non-decreasing", lambda: "never called")[0]

    assert float(eqx.filter_jit(first)(value)) == 0.0
    with pytest.raises(eqx.EquinoxRuntimeError, match="times must be non-decreasing"):
        eqx.filter_jit(first)(value[::-1])
