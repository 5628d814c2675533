"""Input checks shared by the public API.

Concrete inputs (Python numbers, NumPy or JAX arrays outside a trace) that fall
outside their allowed range raise a ``ValueError`` that names the parameter and
the range. Traced inputs (under ``jit``, ``vmap`` or ``grad``) cannot be
inspected at trace time, so the same check is compiled in with
``equinox.error_if``: running the function then raises an
``equinox.EquinoxRuntimeError`` carrying the same message.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def _interval(low, high, low_open, high_open):
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    return f"{left}{low:g}, {high:g}{right}"


def check_range(name, value, low=-np.inf, high=np.inf, *, low_open=False, high_open=False):
    """Return ``value`` as an array after checking ``low <= value <= high`` and not NaN.

    ``low_open``/``high_open`` make the bound strict. The message names the
    parameter and its allowed interval.
    """
    low_open = low_open or low == -np.inf
    high_open = high_open or high == np.inf
    interval = _interval(low, high, low_open, high_open)
    message = f"{name} must be finite and in {interval}"
    if isinstance(value, jax.core.Tracer):
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        bad = jnp.any(~(above & below) | jnp.isnan(value))
        return eqx.error_if(value, bad, message)
    array = np.asarray(value, dtype=float)
    above = array > low if low_open else array >= low
    below = array < high if high_open else array <= high
    ok = above & below & ~np.isnan(array)
    if not np.all(ok):
        offending = array[~ok] if array.ndim else array
        raise ValueError(f"{message}; got {offending.ravel()[:5].tolist()}")
    return jnp.asarray(value, dtype=float)


def check_positive(name, value):
    """``value > 0`` and finite."""
    return check_range(name, value, 0.0, np.inf, low_open=True, high_open=True)


def unit_vector(name, vector):
    """``vector`` divided by its norm, which must be positive and finite ("norm of NAME")."""
    vector = jnp.asarray(vector, dtype=float)
    return vector / check_positive(f"norm of {name}", jnp.linalg.norm(vector))
