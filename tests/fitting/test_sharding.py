"""sharded_map over 4 forced host devices equals the plain vmap (subprocess: XLA_FLAGS precedes jax)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fitting.sharding import sharded_map

SCRIPT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    import diffimpact
    from diffimpact.impact.damping import damping_scale, improved_unit_damping
    from fitting.sharding import shard_batch, sharded_map

    assert len(jax.devices()) == 4, jax.devices()

    def fn(exponent, restitution, mass):
        unit = improved_unit_damping(exponent, restitution)
        return {"c": unit * damping_scale(mass, 3.0, 1e8, exponent), "grad": jax.grad(improved_unit_damping, 1)(exponent, restitution)}

    rng = np.random.default_rng(0)
    size = 4 * 7 + 3  # not a multiple of the device count: padded, then cut
    n, e, m = rng.uniform(1, 2, size), rng.uniform(0.1, 0.99, size), rng.uniform(0.1, 1, size)
    placed, count = shard_batch(n, e, m)
    assert count == size and placed[0].shape == (32,)
    assert len(placed[0].sharding.device_set) == 4
    assert {s.data.shape for s in placed[0].addressable_shards} == {(8,)}
    sharded = sharded_map(fn, n, e, m)
    plain = jax.jit(jax.vmap(fn))(n, e, m)
    for key in plain:
        assert sharded[key].shape == (size,)
        np.testing.assert_allclose(sharded[key], np.asarray(plain[key]), rtol=1e-15, atol=0)
    print("OK", len(jax.devices()))
    """
)


def test_sharded_map_over_four_cpu_devices_equals_the_unsharded_map():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK 4")


def test_sharded_map_on_the_default_devices_and_bad_input():
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(sharded_map(lambda a, b: a * b + 1.0, x, 2 * x), x * 2 * x + 1.0)
    with pytest.raises(ValueError, match="leading batch axis"):
        sharded_map(lambda a, b: a, x, x[:3])
    with pytest.raises(ValueError, match="at least one"):
        sharded_map(lambda: 0.0)
