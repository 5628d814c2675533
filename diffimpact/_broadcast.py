"""Broadcasting scalar computations over arrays of parameters."""

import jax
import jax.numpy as jnp


def broadcast_map(fn, *args):
    """Apply ``fn`` (written for scalar parameters) over broadcast array arguments.

    Every array leaf of ``args`` (pytrees such as contact laws included) is
    broadcast to one common shape, the computation is vmapped over the
    flattened batch, and each output leaf is reshaped to that shape (plus any
    trailing axes ``fn`` itself returns). Call it inside ``jit``.
    """
    leaves, treedef = jax.tree.flatten(args)
    arrays = [jnp.asarray(leaf, dtype=float) for leaf in leaves]
    shape = jnp.broadcast_shapes(*(a.shape for a in arrays))
    if shape == ():
        return fn(*jax.tree.unflatten(treedef, arrays))
    flat = [jnp.broadcast_to(a, shape).reshape(-1) for a in arrays]
    out = jax.vmap(lambda *ys: fn(*jax.tree.unflatten(treedef, ys)))(*flat)
    return jax.tree.map(lambda leaf: leaf.reshape(shape + leaf.shape[1:]), out)
