"""Parameter identification on top of diffimpact and optax.

* ``fitting.parameters``: transforms (``Free``, ``Positive``, ``Bounded``,
  ``UnitInterval``; ``fixed=True`` freezes one) and ``parametrise``, the map
  between an equinox pytree of physical parameters and a free vector θ.
* ``fitting.losses``: weighted residuals and the squared, Huber and Cauchy losses.
* ``fitting.fit``: ``fit``, the optax fit loop with multi-start, convergence
  tests and Gauss–Newton uncertainties (``FitResult``).
* ``fitting.sensitivity``: Jacobians, normalised sensitivities ∂ln y/∂ln p and
  a check against central finite differences.
* ``fitting.data``: ``load_csv`` of a user's measurements against a ``Schema``
  (named columns with units and ranges; bad rows reported as FILE:ROW: reason).
* ``fitting.sharding``: ``sharded_map``, a jitted vmap with the batch split
  over all ``jax.devices()``.
* ``fitting.checkpoint``: atomic, resumable checkpoints and ``resumable_map``.
* ``fitting.impact_stiffness``: the ``impact-stiffness`` study.
* ``fitting.damping``: the ``damping`` fit, α(n), β(n) of seed 004 with
  standard errors (``diffimpact.reproduce.damping`` keeps the reproduction).
* ``fitting.sensitivity_study``: the ``sensitivity`` study of the central impact.
"""

from fitting.fit import FitResult, fit
from fitting.parameters import Bounded, Free, Positive, UnitInterval, parametrise

__all__ = ["fit", "FitResult", "parametrise", "Free", "Positive", "Bounded", "UnitInterval"]
