"""Parameter transforms and the physical pytree ↔ free vector map."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact  # noqa: F401  (float64)
from diffimpact.contact.normal import HertzLinearDamper, KelvinVoigt
from fitting.parameters import Bounded, Free, LogBounded, Positive, UnitInterval, parametrise

TRANSFORMS_AND_VALUES = [
    (Free(scale=3.0), np.array([-7.0, 0.0, 2.5])),
    (Positive(), np.array([1e-6, 0.6, 1e9])),
    (Positive(reference=1e8), np.array([1e5, 1e9, 3e11])),
    (Positive(transform="softplus"), np.array([1e-6, 0.6, 50.0])),
    (Bounded(-2.0, 3.0), np.array([-1.999, 0.0, 2.999])),
    (UnitInterval(), np.array([1e-6, 0.6, 1 - 1e-6])),
    (LogBounded(1e6, 1e8), np.array([1.0001e6, 3e6, 0.9999e8])),
]


@pytest.mark.parametrize("transform, values", TRANSFORMS_AND_VALUES)
def test_round_trip(transform, values):
    theta = transform.to_unconstrained(jnp.asarray(values))
    np.testing.assert_allclose(transform.to_physical(theta), values, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "transform, low, high",
    [(Positive(), 0.0, np.inf), (Positive(transform="softplus"), 0.0, np.inf), (Bounded(-2.0, 3.0), -2.0, 3.0),
     (LogBounded(1e6, 1e8), 1e6, 1e8)],
)
def test_any_unconstrained_value_maps_inside_the_bounds(transform, low, high):
    physical = np.asarray(transform.to_physical(jnp.linspace(-30.0, 30.0, 101)))
    assert np.all(physical > low) and np.all(physical < high)


def test_unit_interval_is_bounded_zero_one():
    assert UnitInterval() == Bounded(0.0, 1.0)


def test_parametrise_a_contact_law_rebuilds_it_with_tree_at():
    law = HertzLinearDamper(1e9, 1.5, 500.0)
    spec = {"stiffness": Positive(reference=1e9), "damping": Positive(), "exponent": Free(fixed=True)}
    theta, space = parametrise(law, spec)
    assert space.labels == ("stiffness", "damping")
    np.testing.assert_allclose(theta, [0.0, np.log(500.0)])
    moved = space(theta + jnp.array([np.log(2.0), 0.0]))
    assert isinstance(moved, HertzLinearDamper)
    np.testing.assert_allclose([moved.stiffness, moved.damping, moved.exponent], [2e9, 500.0, 1.5])
    # d k / d θ_k = k for the log transform.
    np.testing.assert_allclose(jax.grad(lambda t: space(t).stiffness)(theta), [1e9, 0.0])


class _Bodies(eqx.Module):
    masses: jnp.ndarray
    joints: tuple


def test_nested_paths_and_array_leaves():
    tree = _Bodies(jnp.array([1.0, 2.0]), ({"length": 0.5}, {"length": 0.7}))
    theta, space = parametrise(tree, {"masses": Positive(), "joints.1.length": UnitInterval()})
    assert space.labels == ("masses[0]", "masses[1]", "joints.1.length")
    rebuilt = space(theta)
    np.testing.assert_allclose(rebuilt.masses, [1.0, 2.0])
    assert rebuilt.joints[1]["length"] == pytest.approx(0.7)
    assert rebuilt.joints[0]["length"] == 0.5


@pytest.mark.parametrize(
    "params, spec, match",
    [
        (HertzLinearDamper(1e9, 1.5, 0.0), {"damping": Positive()}, "'damping' must be in \\(0, inf\\)"),
        (HertzLinearDamper(1e9, 1.5, 1.0), {"stifness": Positive()}, "'stifness'"),
        (KelvinVoigt(1e5, 1.0), {"exponent": Positive()}, "'exponent' is not a leaf"),
        (HertzLinearDamper(1e9, 1.5, 1.0), {"stiffness": Positive(fixed=True)}, "at least one parameter free"),
        (HertzLinearDamper(1e9, 1.5, 1.0), {"stiffness": "log"}, "spec\\['stiffness'\\]"),
        (HertzLinearDamper(1e9, 1.5, 1.0), {}, "non-empty"),
    ],
)
def test_bad_specs_raise_naming_the_parameter(params, spec, match):
    with pytest.raises(ValueError, match=match):
        parametrise(params, spec)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Bounded(1.0, 0.0), "low < high"),
        (lambda: LogBounded(0.0, 1.0), "0 < low < high"),
        (lambda: Positive(transform="exp"), "transform"),
        (lambda: Positive(reference=-1.0), "reference"),
        (lambda: Free(scale=0.0), "scale"),
    ],
)
def test_bad_transforms_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()
