"""Batched maps sharded over every device: one CPU, several GPUs, or a multi-host cluster.

``sharded_map(fn, *arrays)`` maps ``fn`` over the leading (batch) axis of
``arrays`` with that axis split across ``jax.devices()`` (``Mesh(devices,
("batch",))``): each device maps ``fn`` over its own slice, by ``jax.vmap``
(``batching="vmap"``, the default: one vectorised program, best for short
fixed-length work such as the damping curves) or by ``jax.lax.map``
(``batching="map"``, under ``jax.shard_map``: one element after the other,
best for event-driven simulations, whose solver loops a ``vmap`` runs in
lockstep until the slowest member ends, both sides of every branch taken;
``benchmarks/break_batch.py``). The batch is
padded (repeating its last element) to a multiple of the device count and
the padding is cut from the result. The same code runs on one device, on
several local devices, and across hosts after ``jax.distributed.initialize()``:
every process passes the same full batch, each device receives its slice
(``jax.make_array_from_callback``), and the result is gathered on every
process. XLA's CPU client is one device, which runs a simulation's small
kernels on about one core; to use every core set
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (N cores) before
importing jax.
"""

import functools

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "batch"
BATCHINGS = ("vmap", "map")


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
def _compiled(fn, mesh, batching):
    # One jitted program per (fn, devices, batching): repeated calls (the chunks of a sweep) compile once per shape.
    if batching == "vmap":
        # the inputs' sharding splits the vmap's batch axis over the devices (XLA's SPMD partitioner)
        return jax.jit(jax.vmap(fn))

    def local(*xs):
        return jax.lax.map(lambda x: fn(*x), xs)

    # a sequential map is not split by the partitioner: each device maps its own slice (jax.shard_map).
    # check_vma=False: a solver's loops carry values that do not vary over the devices beside ones that do,
    # which shard_map's type check refuses; each device's map is independent of the others'
    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=PartitionSpec(AXIS), out_specs=PartitionSpec(AXIS),
                                 check_vma=False))


def _gather(leaf):
    if leaf.is_fully_addressable:
        return np.asarray(leaf)
    return np.asarray(multihost_utils.process_allgather(leaf, tiled=True))


def sharded_map(fn, *arrays, devices=None, batching="vmap"):
    """``fn`` mapped over the leading axis of ``arrays``, jitted, with the batch axis sharded over the devices.

    Parameters
    ----------
    fn : function of one batch element of each array (a JAX function), returning a pytree of arrays.
    arrays : NumPy-like arrays with a common leading batch axis.
    devices : the devices to use (default ``jax.devices()``, all hosts').
    batching : how each device maps ``fn`` over its slice: ``"vmap"`` (vectorised) or ``"map"``
        (``jax.lax.map``, one element after the other; for event-driven simulations such as
        ``diffimpact.multibody.simulate``).

    Raises
    ------
    ValueError
        For arrays without a common non-empty leading axis, an unknown ``batching``, and, under
        ``batching="map"``, a ``fn`` that uses an optimistix root finder (a diffrax ``Event`` with a
        ``root_finder``, as ``diffimpact.central_impact``): equinox's closure conversion fails inside
        ``jax.shard_map`` (equinox 0.13.8); such a ``fn`` runs under ``batching="vmap"``.

    Returns
    -------
    The pytree of NumPy arrays that ``jax.vmap(fn)`` returns, without the padding.
    """
    if batching not in BATCHINGS:
        raise ValueError(f"batching must be one of {BATCHINGS}, got {batching!r}")
    placed, size = shard_batch(*arrays, devices=devices)
    try:
        out = _compiled(fn, placed[0].sharding.mesh, batching)(*placed)
    except ValueError as error:
        if not str(error).startswith("Closure-converted function called with different dynamic arguments"):
            raise
        raise ValueError(
            "sharded_map(..., batching='map') cannot trace this fn: equinox's closure conversion (an optimistix root "
            "finder, e.g. of a diffrax Event in central_impact) fails inside jax.shard_map; use batching='vmap'"
        ) from error
    return jax.tree.map(lambda leaf: _gather(leaf)[:size], out)
