"""Parameter identification on top of diffimpact and optax.

* ``fitting.parameters``: transforms (``Free``, ``Positive``, ``Bounded``,
  ``UnitInterval``; ``fixed=True`` freezes one) and ``parametrise``, the map
  between an equinox pytree of physical parameters and a free vector θ.
* ``fitting.losses``: weighted residuals and the squared, Huber and Cauchy losses.
* ``fitting.fit``: ``fit``, the optax fit loop with multi-start, convergence
  tests and Gauss–Newton uncertainties (``FitResult``).
* ``fitting.sensitivity``: Jacobians, normalised sensitivities ∂ln y/∂ln p and
  a check against central finite differences.
* ``fitting.impact_stiffness``: the ``impact-stiffness`` study.

The α(n), β(n) damping fits live in ``diffimpact.reproduce.damping``.
"""

from fitting.fit import FitResult, fit
from fitting.parameters import Bounded, Free, Positive, UnitInterval, parametrise

__all__ = ["fit", "FitResult", "parametrise", "Free", "Positive", "Bounded", "UnitInterval"]
