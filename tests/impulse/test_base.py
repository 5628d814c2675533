"""The one interface of the impact models: objects whose fields are their parameters, per contact and differentiable."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact import impulse
from diffimpact.impulse import ImpulseModel, MaxDissipationGaussSeidel, Newton, Plus, Poisson

MODELS = [impulse.Newton(0.5), impulse.Poisson(0.5), impulse.Routh(0.3, 0.5), impulse.MaxDissipation(0.3),
          impulse.MaxDissipationGaussSeidel(0.3), impulse.Plus(0.5)]


def two_contacts(dimension, draw=3):
    """W (SPD, weakly coupled) and u⁻ of two contacts of ``dimension``, both approaching (random draw ``draw``)."""
    rng = np.random.default_rng(draw)
    A = rng.normal(size=(2 * dimension, 2 * dimension))
    u = rng.normal(size=2 * dimension)
    u[::dimension] = -np.abs(u[::dimension]) - 0.5
    return 0.1 * A @ A.T + np.eye(2 * dimension), u


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_every_model_states_what_it_resolves_and_returns_an_impact(model):
    assert isinstance(model, ImpulseModel) and type(model).__name__ in impulse.__all__
    assert set(model.dimensions) <= {2, 3} and isinstance(model.several, bool)
    dimension = model.dimensions[-1]
    W, u = two_contacts(dimension)
    count = 2 if model.several else 1
    W, u = W[: count * dimension, : count * dimension], u[: count * dimension]
    result = model(W, u, dimension)
    assert isinstance(result, impulse.Impact)
    # u⁺ = u⁻ + W λ, and an approaching contact is pushed apart
    np.testing.assert_allclose(result.velocity, u + W @ result.impulse, rtol=1e-13, atol=1e-13)
    assert np.all(np.asarray(result.impulse)[::dimension] > 0)


def test_a_parameter_per_contact_is_a_differentiable_leaf():
    # two planar contacts of a frictionless Newton impact, one restitution each: both compress and leave, so
    # u⁺_n = −e ⊙ u⁻_n and ∂u⁺_n,i/∂e_j = −u⁻_n,i δ_ij, through filter_grad as through tree_at and central
    # differences
    W, u = two_contacts(2)
    model = Newton(jnp.array([0.3, 0.8]))
    after = model(W, u, 2).velocity
    np.testing.assert_allclose(after[::2], -np.array([0.3, 0.8]) * u[::2], rtol=1e-12)
    for i in range(2):
        gradient = eqx.filter_grad(lambda m: m(W, u, 2).velocity[2 * i])(model).restitution 
        np.testing.assert_allclose(gradient, -u[2 * i] * np.eye(2)[i], atol=1e-12)

    def edited(e):
        return eqx.tree_at(lambda m: m.restitution, model, e)(W, u, 2).velocity[::2]

    jacobian = jax.jacfwd(edited)(model.restitution)
    h = 1e-6
    central = np.stack([(edited(model.restitution + h * d) - edited(model.restitution - h * d)) / (2 * h)
                        for d in np.eye(2)], axis=1)
    np.testing.assert_allclose(jacobian, central, atol=1e-8)
    np.testing.assert_allclose(jacobian, -np.diag(u[::2]), atol=1e-12)


def test_the_same_value_for_every_contact_is_the_scalar():
    W, u = two_contacts(3)
    pairs = [(Newton(0.5, 0.2), Newton(jnp.array([0.5, 0.5]), jnp.array([0.2, 0.2]))),
             (Poisson(0.5, 0.2), Poisson(jnp.array([0.5, 0.5]), jnp.array([0.2, 0.2]))),
             (MaxDissipationGaussSeidel(0.2), MaxDissipationGaussSeidel(jnp.array([0.2, 0.2]))),
             (Plus(0.5, 0.2), Plus(jnp.array([0.5, 0.5]), 0.2, capture_velocity=jnp.array([0.01, 0.01]),
                                   transition_velocity=jnp.array([0.1, 0.1]),
                                   max_direction_change=jnp.array([0.01, 0.01])))]
    for scalar, per_contact in pairs:
        np.testing.assert_array_equal(scalar(W, u, 3).impulse, per_contact(W, u, 3).impulse)


def test_a_model_of_one_kind_refuses_the_other():
    with pytest.raises(ValueError, match=r"MaxDissipationGaussSeidel resolves spatial contacts \(dimension 3\)"):
        MaxDissipationGaussSeidel(0.2)(np.eye(4), -np.ones(4), 2)
