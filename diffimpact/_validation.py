"""Input checks shared by the public API.

Concrete inputs (Python numbers, NumPy or JAX arrays outside a trace) that fall
outside their allowed range raise a ``ValueError`` that names the parameter and
the range. Traced inputs (under ``jit``, ``vmap`` or ``grad``) cannot be
inspected at trace time, so the same check is compiled in with
``equinox.error_if``: running the function then raises an
``equinox.EquinoxRuntimeError`` carrying the same message.

Values that are not real numbers (strings, booleans, complex numbers, None,
ragged lists) are refused with a ``TypeError`` naming the parameter, traced
or not (a tracer's dtype is known at trace time); ``check_shapes`` refuses
empty arrays and arguments that do not broadcast together, and
``check_count`` integer options such as a number of samples. ``require_float64`` refuses to simulate in
single precision.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def require_float64(caller):
    """Raise a ``RuntimeError`` naming ``caller`` unless JAX computes in double precision (``configure``)."""
    if not jax.config.read("jax_enable_x64"):
        raise RuntimeError(
            f"{caller} computes in double precision, and JAX is set to single precision: call "
            "diffimpact.configure() once before the first computation (or set JAX_ENABLE_X64=1)")


def _interval(low, high, low_open, high_open):
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    return f"{left}{low:g}, {high:g}{right}"


def _describe(value):
    dtype = getattr(value, "dtype", None)
    if dtype is not None and getattr(value, "ndim", 0):
        return f"an array of {dtype}"
    text = repr(value)
    return f"{type(value).__name__} {text}" if len(text) <= 40 else type(value).__name__


def check_real(name, value):
    """``value`` as an array (JAX arrays and tracers as they are) if it holds real numbers.

    Raises ``TypeError`` naming the parameter for strings, booleans, complex
    numbers and anything else NumPy cannot read as a rectangular array of
    integers or floats.
    """
    message = f"{name} must be a real number or an array of real numbers, got "
    if isinstance(value, (jax.core.Tracer, jax.Array, np.ndarray)):
        array = value  # no copy to the host
    elif isinstance(value, (str, bytes)):
        raise TypeError(message + _describe(value))
    elif isinstance(value, (list, tuple)) and any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(value)):
        try:
            array = jnp.asarray(value)  # (a sequence holding traced numbers, as (0.0, -g) with g differentiated)
        except (TypeError, ValueError):
            raise TypeError(message + _describe(value)) from None
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):  # ragged nesting, unconvertible objects
            raise TypeError(message + _describe(value)) from None
    dtype = array.dtype
    real = jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.floating)
    if dtype == np.bool_ or not real:
        raise TypeError(message + _describe(value))
    return array


def check_shapes(names_and_values):
    """The common broadcast shape of named array arguments, none of them empty.

    ``names_and_values`` is a sequence of (name, value) pairs, values already
    checked by ``check_real``/``check_range``. Raises ``ValueError`` naming
    the empty argument, or listing every shape when they do not broadcast.
    """
    shapes = [(name, tuple(np.shape(value))) for name, value in names_and_values]
    for name, shape in shapes:
        if 0 in shape:
            raise ValueError(f"{name} must not be empty; got shape {shape}")
    try:
        return np.broadcast_shapes(*(shape for _, shape in shapes))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes)
        raise ValueError(f"shapes do not broadcast together: {listed}") from None


def check_count(name, value, low=0):
    """``value`` as a Python int ≥ ``low``; NumPy integers are accepted, booleans are not."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {low}, got {_describe(value)}")
    if value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def check_range(name, value, low=-np.inf, high=np.inf, *, low_open=False, high_open=False, hint="", carrier=None,
                shape=None):
    """Return ``value`` as an array after checking ``low <= value <= high`` and not NaN.

    ``low_open``/``high_open`` make the bound strict. The message names the
    parameter and its allowed interval, followed by ``hint``. Values that are
    not real numbers raise ``TypeError`` (``check_real``). ``carrier``: an
    array returned (unchanged) instead of ``value``, for a ``value`` derived
    from it and not kept (a geometry's extents); traced, the check is compiled
    in on ``carrier``, so that it is not dropped with ``value``. ``shape``:
    the shape ``value`` must have (``()`` for one number), or a list of the
    shapes allowed; ``None`` (default) for any.
    """
    low_open, high_open, message = _range_message(name, low, high, low_open, high_open, hint)
    value = check_real(name, value)
    check_shape(name, value, shape)
    if isinstance(value, jax.core.Tracer):
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        bad = jnp.any(~(above & below) | jnp.isnan(value))
        return eqx.error_if(value if carrier is None else carrier, bad, message)
    _refuse_outside(value, low, high, low_open, high_open, message)
    return jnp.asarray(value, dtype=float) if carrier is None else carrier


def check_in_range(name, value, low=-np.inf, high=np.inf, *, low_open=False, high_open=False, hint="", shape=None):
    """``check_range`` of a concrete ``value`` that makes no JAX array of it, so that it starts no JAX computation
    (an option object built as a default argument, when its module is imported before ``diffimpact.configure()``)."""
    low_open, high_open, message = _range_message(name, low, high, low_open, high_open, hint)
    value = check_real(name, value)
    check_shape(name, value, shape)
    _refuse_outside(value, low, high, low_open, high_open, message)


def _range_message(name, low, high, low_open, high_open, hint):
    """Whether each bound is open (an infinite one always is) and the message of a value outside them."""
    low_open = low_open or low == -np.inf
    high_open = high_open or high == np.inf
    interval = _interval(low, high, low_open, high_open)
    return low_open, high_open, (f"{name} must be finite" + ("" if low == -np.inf and high == np.inf else
                                                            f" and in {interval}") + hint)


def _refuse_outside(value, low, high, low_open, high_open, message):
    """A ``ValueError`` with ``message`` and the offending values if a concrete ``value`` is outside or NaN."""
    array = np.asarray(value, dtype=float)
    above = array > low if low_open else array >= low
    below = array < high if high_open else array <= high
    ok = above & below & ~np.isnan(array)
    if not np.all(ok):
        offending = array[~ok] if array.ndim else array
        raise ValueError(f"{message}; got {offending.ravel()[:5].tolist()}")


def check_shape(name, value, shape):
    """``value`` if its shape is ``shape`` (one, or a list; see ``check_range``), else a ``ValueError`` naming the
    parameter."""
    if shape is None:
        return value
    allowed = shape if isinstance(shape, list) else [shape]
    if tuple(np.shape(value)) not in [tuple(s) for s in allowed]:
        wanted = " or ".join("be a number (a scalar)" if not s else f"have shape {tuple(s)}" for s in allowed)
        raise ValueError(f"{name} must {wanted}; got shape {tuple(np.shape(value))}")
    return value


def refuse_where(value, bad, message, got=None):
    """``value`` if ``bad`` holds nowhere: a check whose condition may be traced.

    ``bad``: booleans of any shape, computed from the inputs. Concrete: a
    ``ValueError(message)``, with "; got …" appended when ``got`` is given (a
    callable that describes the offending input, called only when refusing).
    Traced: the check is compiled in on ``value`` with ``equinox.error_if``,
    which raises ``message`` when the function runs.
    """
    if isinstance(bad, jax.core.Tracer):
        return eqx.error_if(value, jnp.any(bad), message)
    if np.any(np.asarray(bad)):
        raise ValueError(message if got is None else f"{message}; got {got()}")
    return value


def is_concrete(*trees):
    """Whether no leaf of ``trees`` is traced (so values can be inspected and ``ValueError`` raised)."""
    return not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(trees))


def check_positive(name, value, carrier=None, shape=None):
    """``value > 0`` and finite (``carrier`` and ``shape`` as in ``check_range``)."""
    return check_range(name, value, 0.0, np.inf, low_open=True, high_open=True, carrier=carrier, shape=shape)


def unit_vector(name, vector):
    """``vector`` divided by its norm, which must be positive and finite ("norm of NAME")."""
    vector = check_range(name, vector)
    return vector / check_positive(f"norm of {name}", jnp.linalg.norm(vector))
