"""A single contact resolved in time: the central-impact ODE and optimal damping."""

from diffimpact.impact.central import ImpactResult, central_impact
from diffimpact.impact.damping import damping_lambda, optimal_damping

__all__ = ["ImpactResult", "central_impact", "optimal_damping", "damping_lambda"]
