"""Broadcasting scalar computations over arrays of parameters."""

import jax
import jax.numpy as jnp


#: Block size of batched solves; 1000 was fastest of 64–4000 for optimal damping on 2 cores.
BATCH_SIZE = 1000


def broadcast_map(fn, *args):
    """Apply ``fn`` (written for scalar parameters) over broadcast array arguments.

    Every array leaf of ``args`` (pytrees such as contact laws included) is
    broadcast to one common shape, the computation is vmapped over the
    flattened batch, and each output leaf is reshaped to that shape (plus any
    trailing axes ``fn`` itself returns). Call it inside ``jit``.

    Large batches run as a sequence of vmapped blocks of ``BATCH_SIZE``
    (``jax.lax.map``): a batched while loop runs until its slowest member is
    done and touches every member's state at each step, so one huge vmap is
    several times slower than blocks that stay in cache.
    """
    leaves, treedef = jax.tree.flatten(args)
    arrays = [jnp.asarray(leaf, dtype=float) for leaf in leaves]
    shape = jnp.broadcast_shapes(*(a.shape for a in arrays))
    if shape == ():
        return fn(*jax.tree.unflatten(treedef, arrays))
    flat = [jnp.broadcast_to(a, shape).reshape(-1) for a in arrays]
    size = flat[0].shape[0]
    out = jax.lax.map(
        lambda ys: fn(*jax.tree.unflatten(treedef, ys)), flat, batch_size=min(size, BATCH_SIZE)
    )
    return jax.tree.map(lambda leaf: leaf.reshape(shape + leaf.shape[1:]), out)
