"""Impacts resolved in time: a compliant contact integrated through the impact (the central-impact ODE, with
events at maximum compression and separation), and the optimal damping of [Poursina 2020].

The models that resolve an impact in an instant, by impulses, are in ``diffimpact.impulse``.
"""

from diffimpact.impact.central import ImpactResult, central_impact
from diffimpact.impact.damping import damping_lambda, optimal_damping

__all__ = ["ImpactResult", "central_impact", "optimal_damping", "damping_lambda"]
