"""Batched maps sharded over every device: one CPU, several GPUs, or a multi-host cluster.

``sharded_map(fn, *arrays)`` evaluates ``jax.vmap(fn)`` over the leading
(batch) axis of ``arrays`` with that axis split across ``jax.devices()`` by
``NamedSharding(Mesh(devices, ("batch",)), PartitionSpec("batch"))``. The
batch is padded (repeating its last element) to a multiple of the device
count and the padding is cut from the result. The same code runs on one
device (the sharding is trivial), on several local devices, and across hosts
after ``jax.distributed.initialize()``: every process passes the same full
batch, each device receives its slice (``jax.make_array_from_callback``), and
the result is gathered on every process. To try several devices on a CPU set
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` before importing jax.
"""

import functools

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "batch"


def batch_sharding(devices=None):
    """``NamedSharding`` that splits the leading axis over ``devices`` (default: all of ``jax.devices()``)."""
    devices = jax.devices() if devices is None else list(devices)
    return NamedSharding(Mesh(np.array(devices), (AXIS,)), PartitionSpec(AXIS))


def shard_batch(*arrays, devices=None):
    """Pad the equal-length ``arrays`` to a multiple of the device count and place them sharded.

    Returns (list of global ``jax.Array``, original batch size).
    """
    sharding = batch_sharding(devices)
    count = sharding.mesh.size
    arrays = [np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("sharded_map needs at least one batched array")
    size = arrays[0].shape[0] if arrays[0].ndim else 0
    if size == 0 or any(a.ndim == 0 or a.shape[0] != size for a in arrays):
        raise ValueError(f"arrays must share a non-empty leading batch axis, got shapes {[a.shape for a in arrays]}")
    padded_size = -(-size // count) * count
    placed = []
    for a in arrays:
        padded = np.concatenate([a, np.repeat(a[-1:], padded_size - size, axis=0)]) if padded_size > size else a
        placed.append(jax.make_array_from_callback(padded.shape, sharding, lambda index, p=padded: p[index]))
    return placed, size


@functools.lru_cache(maxsize=32)
def _compiled(fn):
    # One jitted vmap per fn: repeated calls (the chunks of a sweep) compile once per shape.
    return jax.jit(jax.vmap(fn))


def _gather(leaf):
    if leaf.is_fully_addressable:
        return np.asarray(leaf)
    return np.asarray(multihost_utils.process_allgather(leaf, tiled=True))


def sharded_map(fn, *arrays, devices=None):
    """``jax.vmap(fn)(*arrays)``, jitted, with the batch axis sharded over the devices.

    Parameters
    ----------
    fn : function of one batch element of each array (a JAX function), returning a pytree of arrays.
    arrays : NumPy-like arrays with a common leading batch axis.
    devices : the devices to use (default ``jax.devices()``, all hosts').

    Returns
    -------
    The pytree of NumPy arrays that ``jax.vmap(fn)`` returns, without the padding.
    """
    placed, size = shard_batch(*arrays, devices=devices)
    out = _compiled(fn)(*placed)
    return jax.tree.map(lambda leaf: _gather(leaf)[:size], out)
