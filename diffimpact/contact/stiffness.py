"""Hertz contact stiffness K of f = K δ^{3/2} from geometry and materials ([Gismeros Moreno 2022], eqs. (3.4)–(3.6)).

Units: radii in m, Young's moduli in Pa, K in N/m^{3/2}.
"""

import jax.numpy as jnp

from diffimpact._validation import check_positive, check_range


def _compliance(youngs_modulus, poisson_ratio, suffix):
    youngs_modulus = check_positive(f"youngs_modulus{suffix}", youngs_modulus)
    poisson_ratio = check_range(f"poisson_ratio{suffix}", poisson_ratio, -1.0, 0.5, low_open=True)
    return (1.0 - poisson_ratio) * (1.0 + poisson_ratio) / youngs_modulus


def material_compliance(youngs_modulus, poisson_ratio):
    """σ = (1 − ν²)/E in 1/Pa ([Gismeros Moreno 2022], eq. (3.5)), for E > 0 and ν in (−1, 0.5]."""
    return _compliance(youngs_modulus, poisson_ratio, "")


def _hertz_stiffness(radius, compliance_i, compliance_j):
    return 4.0 / (3.0 * (compliance_i + compliance_j)) * jnp.sqrt(radius)


def sphere_sphere_stiffness(
    radius_i, radius_j, youngs_modulus_i, poisson_ratio_i, youngs_modulus_j, poisson_ratio_j
):
    """K = 4 √R_eff / (3(σ_i + σ_j)), R_eff = R_i R_j/(R_i + R_j) ([Gismeros Moreno 2022], eq. (3.4))."""
    radius_i = check_positive("radius_i", radius_i)
    radius_j = check_positive("radius_j", radius_j)
    effective_radius = radius_i * radius_j / (radius_i + radius_j)
    return _hertz_stiffness(
        effective_radius,
        _compliance(youngs_modulus_i, poisson_ratio_i, "_i"),
        _compliance(youngs_modulus_j, poisson_ratio_j, "_j"),
    )


def sphere_plane_stiffness(
    radius, youngs_modulus_sphere, poisson_ratio_sphere, youngs_modulus_plane, poisson_ratio_plane
):
    """K = 4 √R / (3(σ_i + σ_j)) for a sphere of radius R on a plane ([Gismeros Moreno 2022], eq. (3.6))."""
    return _hertz_stiffness(
        check_positive("radius", radius),
        _compliance(youngs_modulus_sphere, poisson_ratio_sphere, "_sphere"),
        _compliance(youngs_modulus_plane, poisson_ratio_plane, "_plane"),
    )
