"""The engine of ``simulate``: how a run is integrated, and the objects that say how.

The modules, in the order a run goes through them:

* ``options``: ``simulate``'s concerns as objects, each with its numbers as fields: ``AdaptiveSteps`` or
  ``FixedSteps`` (``StepSizes``), ``ContactEvents``, ``ReverseMode`` or ``ForwardMode`` (``Derivatives``).
* ``solve``: a run without contacts, one diffrax solve; the accelerations traced once; the ``Trajectory`` of
  the saved states.
* ``segments``: a run with contacts, a scan of diffrax solves between contact events (``SegmentStart``,
  ``Carry``, ``SegmentRecord``, ``Segments``).
* ``events``: each contact's status, the functions whose crossings end a segment (``SegmentArgs``: what they
  read) and what happens at an event.
* ``accelerations``: a segment's accelerations, of its closed contacts only, and an IMEX solver's terms.
* ``step_control``: the bounds and the error control of the adaptive steps, and the friction guard.
* ``progress``: one progress bar over a whole run.
"""

from diffimpact.multibody.integrate.options import (
    AdaptiveSteps,
    ContactEvents,
    Derivatives,
    FixedSteps,
    ForwardMode,
    ReverseMode,
    StepSizes,
)
from diffimpact.multibody.integrate.step_control import IMEX_SOLVERS

__all__ = ["AdaptiveSteps", "ContactEvents", "Derivatives", "FixedSteps", "ForwardMode", "IMEX_SOLVERS", "ReverseMode",
           "StepSizes"]
