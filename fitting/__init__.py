"""Parameter identification on top of diffimpact and optax.

* ``fitting.parameters``: transforms (``Free``, ``Positive``, ``Bounded``,
  ``UnitInterval``; ``fixed=True`` freezes one) and ``parametrise``, the map
  between an equinox pytree of physical parameters and a free vector θ.
* ``fitting.losses``: weighted residuals and the squared, Huber and Cauchy losses.
* ``fitting.fit``: ``fit``, the optax fit loop with multi-start, convergence
  tests and Gauss–Newton uncertainties (``FitResult``); its compiled step is
  reused by fits of the same structure; ``levenberg_marquardt``, an optax
  transformation for few-parameter least squares with costly models.
* ``fitting.sensitivity``: Jacobians, normalised sensitivities ∂ln y/∂ln p and
  a check against central finite differences.
* ``fitting.data``: ``load_csv`` of a user's measurements against a ``Schema``
  (named columns with units and ranges; bad rows reported as FILE:ROW: reason).
* ``fitting.sharding``: ``sharded_map``, a jitted map (``vmap``, or ``lax.map``
  for event-driven runs) with the batch split over all ``jax.devices()``.
* ``fitting.checkpoint``: atomic, resumable checkpoints and ``resumable_map``.
* ``fitting.impact_stiffness``: the ``impact-stiffness`` study.
* ``fitting.damping``: the ``damping`` fit, α(n), β(n) of [Poursina 2020] with
  standard errors (``diffimpact.reproduce.damping`` keeps the reproduction).
* ``fitting.sensitivity_study``: the ``sensitivity`` study of the central impact
  and of the first impact of the two pendulums of [Poursina 2020] §6.
* ``fitting.two_pendulum``: the ``two-pendulum`` fit, e and k of the eq. (50)
  contact from the pendulums' angular velocities.
"""

from fitting.fit import FitResult, fit, levenberg_marquardt, linearise
from fitting.parameters import Bounded, Free, LogBounded, Positive, UnitInterval, parametrise

__all__ = ["fit", "FitResult", "levenberg_marquardt", "linearise", "parametrise", "Free", "Positive", "Bounded", "LogBounded", "UnitInterval"]
