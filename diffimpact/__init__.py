"""diffimpact: differentiable simulation of contact and impact on JAX.

Importing the package enables ``jax_enable_x64``: impact results (restitution
to 1e-8, stiffnesses up to 1e10 N/m^n) need double precision.
"""

import jax

jax.config.update("jax_enable_x64", True)

from diffimpact import contact, impact, multibody  # noqa: E402
from diffimpact.impact import (  # noqa: E402
    central_impact,
    damping_lambda,
    optimal_damping,
)

__all__ = ["contact", "impact", "multibody", "central_impact", "optimal_damping", "damping_lambda"]
__version__ = "0.1.0"
