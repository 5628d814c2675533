"""Hertz stiffness from materials: limits, symmetry, a published Hertz example, gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact  # noqa: F401  (enables float64)
from diffimpact.contact import (
    material_compliance,
    sphere_plane_stiffness,
    sphere_sphere_stiffness,
)

# A pool-ball radius ([Gismeros Moreno 2022]) with illustrative polymer properties, and steel.
BALL_RADIUS = 0.028575  # m
BALL = (5.4e9, 0.35)  # Young's modulus (Pa), Poisson's ratio
STEEL = (200e9, 0.3)


def test_sphere_plane_is_the_large_radius_limit_of_sphere_sphere():
    plane = sphere_plane_stiffness(BALL_RADIUS, *BALL, *STEEL)
    huge_sphere = sphere_sphere_stiffness(BALL_RADIUS, 1e9, *BALL, *STEEL)
    # R_eff = R (1 − R/R_j + ...), so K differs by R/(2 R_j) ≈ 1.4e-11 relative.
    np.testing.assert_allclose(huge_sphere, plane, rtol=1e-10)


def test_sphere_sphere_is_symmetric():
    forward = sphere_sphere_stiffness(BALL_RADIUS, 0.04, *BALL, *STEEL)
    backward = sphere_sphere_stiffness(0.04, BALL_RADIUS, *STEEL, *BALL)
    np.testing.assert_allclose(forward, backward, rtol=1e-15)


def test_identical_spheres_follow_hertz():
    # Two identical spheres: R_eff = R/2 and E* = E/(2(1 − ν²)), so Hertz gives
    # F = (4/3) E* √R_eff δ^{3/2} = (2/3) E/(1 − ν²) √(R/2) δ^{3/2}.
    youngs_modulus, poisson_ratio = BALL
    expected = 2 / 3 * youngs_modulus / (1 - poisson_ratio**2) * np.sqrt(BALL_RADIUS / 2)
    np.testing.assert_allclose(
        sphere_sphere_stiffness(BALL_RADIUS, BALL_RADIUS, *BALL, *BALL), expected, rtol=1e-14
    )


def test_published_contact_radius_of_a_sphere_on_a_rigid_plane():
    # A sphere of radius 8 mm (E = 1000 N/mm², ν = 0.3) pressed on a rigid flat by
    # F = 30·2π N has the analytical Hertz contact radius a = 1.010 mm
    # (tutorsglobe.com question 51707067, an FE-textbook benchmark). Hertz: δ = a²/R.
    radius, force = 8e-3, 30 * 2 * np.pi
    stiffness = sphere_plane_stiffness(radius, 1e9, 0.3, 1e300, 0.3)  # rigid plane
    penetration = (force / stiffness) ** (2 / 3)
    contact_radius = np.sqrt(radius * penetration)
    assert abs(contact_radius - 1.010e-3) < 0.0005e-3  # agrees to the published digits


def test_gradient_matches_finite_differences_under_jit_and_vmap():
    radii = jnp.array([0.01, 0.028575, 0.05])

    def stiffness(radius_i, youngs_modulus_j):
        return sphere_sphere_stiffness(radius_i, 0.04, *BALL, youngs_modulus_j, 0.3)

    gradient = jax.jit(jax.vmap(jax.grad(stiffness, argnums=(0, 1)), in_axes=(0, None)))(
        radii, 200e9
    )
    for index, radius in enumerate(np.asarray(radii)):
        step = 1e-6 * radius
        by_radius = (stiffness(radius + step, 200e9) - stiffness(radius - step, 200e9)) / (2 * step)
        by_modulus = (stiffness(radius, 200e9 * (1 + 1e-6)) - stiffness(radius, 200e9 * (1 - 1e-6))) / (
            2 * 200e9 * 1e-6
        )
        np.testing.assert_allclose(gradient[0][index], by_radius, rtol=1e-7)
        np.testing.assert_allclose(gradient[1][index], by_modulus, rtol=1e-7)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: material_compliance(0.0, 0.3), "youngs_modulus"),
        (lambda: material_compliance(1e9, 0.6), "poisson_ratio"),
        (lambda: material_compliance(1e9, -1.0), "poisson_ratio"),
        (lambda: sphere_sphere_stiffness(0.01, -0.01, *BALL, *STEEL), "radius_j"),
        (lambda: sphere_sphere_stiffness(0.01, 0.01, *BALL, 200e9, np.nan), "poisson_ratio_j"),
        (lambda: sphere_plane_stiffness(0.0, *BALL, *STEEL), "radius"),
        (lambda: sphere_plane_stiffness(0.01, *BALL, -1.0, 0.3), "youngs_modulus_plane"),
    ],
)
def test_bad_input_raises(call, name):
    with pytest.raises(ValueError, match=name):
        call()
