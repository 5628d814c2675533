"""sharded_map over 4 forced host devices equals the plain vmap and closed forms (subprocess: XLA_FLAGS precedes jax)."""

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
    import diffimpact as di
    from diffimpact.contact import KelvinVoigt
    from diffimpact.impact.damping import damping_scale, improved_unit_damping
    from diffimpact.impact.kelvin_voigt import kelvin_voigt_restitution
    from fitting.sharding import shard_batch, sharded_map

    di.configure()

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
    mapped = sharded_map(fn, n, e, m, batching="map")  # one element after the other on each device
    for key in plain:
        np.testing.assert_allclose(mapped[key], np.asarray(plain[key]), rtol=1e-15, atol=0)

    # event-driven runs, one after the other on each device: two discs head-on (the multibody engine's events),
    # momentum conserved; speeds not a multiple of 4
    from diffimpact.contact.friction import Coulomb
    from diffimpact.contact.normal import HertzLinearDamper
    from diffimpact.multibody import (CircleCircle, Contact, ContactEvents, LagrangeMultipliers, Model, PlanarBody,
                                      State, simulate)
    discs = [PlanarBody(0.2, 0.5 * 0.2 * 0.03**2, name=f"disc {k}") for k in range(2)]
    model = Model(discs, forces=[Contact(CircleCircle(0, (0.0, 0.0), 0.03, 1, (0.0, 0.0), 0.03),
                                         HertzLinearDamper(1e8, 1.5, 2e3), Coulomb(0.3, 1e-3))])
    def head_on(speed):
        start = State(jnp.array([-0.031, 0.0, 0.0, 0.031, 0.0, 0.0]), jnp.stack([speed, 0, 0, -0.5 * speed, 0, 0]))
        return simulate(model, start, jnp.array([0.0, 0.004]), LagrangeMultipliers(),
                        events=ContactEvents(max_events=8)).v[-1]
    speeds = np.linspace(0.5, 3.0, 6)
    after = sharded_map(head_on, speeds, batching="map")
    assert after.shape == (6, 6)
    np.testing.assert_allclose(after[:, 0] + after[:, 3], 0.5 * speeds, rtol=1e-12)  # equal masses
    assert np.all(after[:, 3] > after[:, 0])  # they have separated

    # a diffrax Event with an optimistix root finder (central_impact): equinox's closure conversion fails inside
    # shard_map (equinox 0.13.8), which sharded_map names; should it work, the Kelvin-Voigt closed form must hold
    ratios = np.linspace(0.1, 1.3, 6)
    def restitution(ratio):
        return di.central_impact(KelvinVoigt(3e4, ratio * 2 * np.sqrt(3e4 * 2.0)), 2.0, 1.5).restitution
    try:
        mapped = sharded_map(restitution, ratios, batching="map")
    except ValueError as error:
        assert "use batching='vmap'" in str(error), error
    else:
        np.testing.assert_allclose(mapped, [float(kelvin_voigt_restitution(r)) for r in ratios], rtol=0, atol=1e-9)
    print("OK", len(jax.devices()))
    """
)


def test_sharded_map_over_four_cpu_devices_equals_the_unsharded_map():
    flags = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"  # beside the suite's
    env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")
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
    with pytest.raises(ValueError, match="batching must be one of"):
        sharded_map(lambda a: a, x, batching="scan")
