"""Sensitivity of a simulation output to chosen parameters of a physical pytree.

``output_fn(params)`` is any JAX function of the pytree (a contact law, a
Module of physical parameters) returning an array y. Parameters are named by
paths as in ``fitting.parameters``; array parameters contribute one column
per entry.
"""

import jax.numpy as jnp
import numpy as np

from fitting.fit import JACOBIAN_MODES
from fitting.parameters import Free, parametrise


def as_function_of_values(output_fn, params, names):
    """(fn, values): ``output_fn`` as a function of the named parameters' values (a float array), and those values.

    ``fn(values)`` is the output at ``params``; the Jacobians and the differences below differentiate or
    difference ``fn``, so an output computed by it shares their compiled program.
    """
    values, space = parametrise(params, {name: Free() for name in names})
    return (lambda p: jnp.asarray(output_fn(space(p)), dtype=float)), values


def jacobian(output_fn, params, names, mode="rev"):
    """∂y/∂p in physical units, shaped y.shape + (P,).

    ``mode`` is "rev" (``jax.jacrev``) or "fwd" (``jax.jacfwd``; diffrax solves
    need ``adjoint=diffrax.ForwardMode()``, ``simulate`` ``derivatives=ForwardMode()``).
    """
    if mode not in JACOBIAN_MODES:
        raise ValueError(f"mode must be one of {tuple(JACOBIAN_MODES)}, got {mode!r}")
    fn, values = as_function_of_values(output_fn, params, names)
    return JACOBIAN_MODES[mode](fn)(values)


def normalised_sensitivity(output_fn, params, names, mode="rev"):
    """∂ln y/∂ln p = (p / y) ∂y/∂p, shaped y.shape + (P,) (dimensionless)."""
    fn, values = as_function_of_values(output_fn, params, names)
    output = fn(values)
    return jacobian(output_fn, params, names, mode) * values / output[..., None]


def finite_difference_jacobian(output_fn, params, names, relative_step=1e-6):
    """∂y/∂p by central differences with step h = relative_step · max(|p|, 1e-300)."""
    if not 0 < relative_step < 1:
        raise ValueError(f"relative_step must be in (0, 1), got {relative_step!r}")
    fn, values = as_function_of_values(output_fn, params, names)
    values = np.asarray(values)
    columns = []
    for index in range(values.size):
        step = relative_step * max(abs(values[index]), 1e-300)
        offset = np.zeros_like(values)
        offset[index] = step
        columns.append((np.asarray(fn(values + offset)) - np.asarray(fn(values - offset))) / (2 * step))
    return np.stack(columns, axis=-1)


def check_against_finite_differences(output_fn, params, names, mode="rev", relative_step=1e-6):
    """Largest relative discrepancy between the autodiff and central-difference Jacobians.

    For each parameter column j: max |J_ad − J_fd| / max |J_fd| over the
    outputs; the largest over the columns is returned (a float). With the
    default step, smooth functions give about 1e-8; an error in the
    derivative gives order one.
    """
    automatic = np.asarray(jacobian(output_fn, params, names, mode))
    automatic = automatic.reshape(-1, automatic.shape[-1])
    finite = finite_difference_jacobian(output_fn, params, names, relative_step).reshape(automatic.shape)
    scale = np.max(np.abs(finite), axis=0)
    return float(np.max(np.max(np.abs(automatic - finite), axis=0) / np.where(scale > 0, scale, 1.0)))
