"""``simulate``'s concerns as objects (as diffrax's ``stepsize_controller`` and ``adjoint``): how the steps are
chosen (``AdaptiveSteps``, ``FixedSteps``: ``StepSizes``), how contact events are located and handled
(``ContactEvents``) and how a run is differentiated (``ReverseMode``, ``ForwardMode``: ``Derivatives``). Each
is an ``equinox.Module`` whose fields are the numbers it tunes, the package's values their defaults.

Each object checks its fields as it is built: a ``ValueError`` (or ``TypeError``) naming the field and its
range. A field traced by a caller's transformation (a tolerance under ``jax.vmap``) is checked where
``simulate`` reads it (``checked``: the check compiled in, raised when the run runs). The fields that select
code (bounds, counts, sizes, flags, the norm) are static, so that an object of concrete numbers is hashable (a
static argument of ``jax.jit``, and part of the key of ``simulate``'s compiled programs); the others
(tolerances, step sizes, distances) are traced there, so that runs that differ only in them share one program.
"""

import abc
from collections.abc import Callable

import diffrax as dfx
import equinox as eqx
import numpy as np
import optimistix as optx

from diffimpact._validation import check_count, check_in_range, check_range, is_concrete

_POSITIVE = dict(low=0.0, low_open=True)
_FRACTION = dict(low=0.0, high=1.0, low_open=True, high_open=True)
#: The traced fields of the objects and their ranges (``check_range``'s keywords).
_RANGES = {
    "rtol": dict(_FRACTION, hint=" (relative tolerance of each step's error; at 1 or more the steps are not "
                                 "controlled)"),
    "atol": _POSITIVE, "max_step": _POSITIVE, "dt": _POSITIVE, "event_tol": _FRACTION, "rest_speed": _POSITIVE,
    "near_distance": _POSITIVE,
}


def _check(name, value):
    """``value`` of the traced field ``name`` as a float array, checked against its range (``_RANGES``)."""
    return check_range(name, value, **_RANGES[name])


def _check_bound(name, value):
    """A static bound: a number > 0, or inf for none."""
    if isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and value == np.inf:
        return
    check_in_range(name, value, 0.0, low_open=True, shape=(), hint=", or inf for none")


def _tuple(value):
    """A list as a tuple (so that the field is hashable), anything else as it is."""
    return tuple(value) if isinstance(value, list) else value


class _Traced(eqx.Module):
    """The checks of the traced fields (``_RANGES``) of an object: at construction where concrete, and
    compiled in by ``checked``."""

    def __check_init__(self):
        for name in self._traced():
            value = getattr(self, name)
            if value is not None and is_concrete(value):
                check_in_range(name, value, **_RANGES[name])

    def _traced(self):
        return [name for name in _RANGES if hasattr(self, name)]

    def checked(self):
        """This object with its traced fields as float arrays, checked (a field traced by a caller's
        transformation, with the check compiled in); ``simulate`` passes it to its compiled run."""
        names = [name for name in self._traced() if getattr(self, name) is not None]
        return eqx.tree_at(lambda o: [getattr(o, name) for name in names], self,
                           [_check(name, getattr(self, name)) for name in names])


class StepSizes(_Traced):
    """How ``simulate`` chooses its steps: ``AdaptiveSteps`` or ``FixedSteps``."""

    @abc.abstractmethod
    def controller(self):
        """(diffrax step-size controller, initial step ``dt0``) of a solve."""


class AdaptiveSteps(StepSizes):
    """Adaptive steps: diffrax's PID controller of the local error, with ``simulate``'s bounds on the steps
    (``step_control``; the reasons and measurements behind each bound are in docs/design/step-control.md).

    Attributes
    ----------
    rtol, atol : tolerances of the PID step-size controller, rtol in (0, 1), atol > 0 (a step is accepted
        where its error estimate is within atol + rtol |y|).
    max_step : largest step (s, > 0), ``None`` (default) for no limit: the "default time step" of
        [Gismeros Moreno 2022] §4.1, kept while the error allows it and reduced where it does not (e.g. at
        a contact onset).
    norm : the norm of the error control over the state's scaled errors e_i / (atol + rtol |y_i|): diffrax's
        root mean square (default). Over the 16-ball table's 224 coordinates and velocities it averages the
        errors of two colliding balls with those of the resting ones, where Matlab's ``ode45`` (the paper's
        runs) takes the largest, ``optimistix.max_norm`` (docs/design/table-settings.md, "A ball's inertia
        under a drift of |p|").
    friction_steps : also bound every step by the stability of the friction laws at the closed contacts
        (``step_control``): for derivatives (``jax.jvp``, ``jax.grad``) through phases where a slip sits in
        a friction law's regularisation band, which are wrong without it (reverse mode refuses them; forward
        mode on the state's steps raises an error where a step was far beyond that stability:
        ``ForwardMode``'s ``friction_guard``), and by the passage of a loaded slip through that band. It
        costs steps where the friction is stiff and where a slip reverses. The stability bound is scaled to
        the solver's stability interval; with an A-stable implicit solver or an IMEX one (friction implicit)
        only the passages' bound. A lower-order explicit solver (``Bosh3``) can cost less than Tsit5 here,
        where the bounds, not the error control, set the steps (docs/design/step-control.md, "Friction steps
        for any solver"). True: every ``Contact`` family with friction; or a sequence of the indices in
        ``model.forces`` of the families with friction to bound (in forward mode the others' steps are then
        still watched by the friction guard; reverse mode refuses a derivative through them). In forward mode
        with ``tangent_errors`` (the default) it is not needed: the passages' bound is then on for every
        family with friction by itself, and the tangents' errors do the stability bound's work. Only for
        models with ``Contact``s.
    contact_steps : also bound every step by the depth and rate of the closed contacts (``step_control``):
        for derivatives through the onsets and separations of power laws k δⁿ, n > 1 (Hertz), which otherwise
        converge only as about rtol^0.6. It costs 50–70 steps per contact. True: every ``Contact`` family;
        or a sequence of the indices in ``model.forces`` of the families to bound (e.g. a table's soft
        cushions, whose contacts the error control alone resolves loosely: docs/design/table-settings.md,
        "The energy check"). Only for models with ``Contact``s.
    spin_step : largest angle a step turns a spatial body (rad; inf: no bound). The error control alone
        lets a ball spinning freely at 490 rad/s turn 2.4 rad a step at rtol = 1e-3, and under Baumgarte's
        feedback lose energy (docs/design/step-control.md, "Fast spins: a step turns a ball by at most a
        radian").
    friction_step : h λ_F of ``friction_steps`` with Tsit5: inside its stability interval on the negative
        real axis (it ends at −3.5, where |R(z)| = 1; |R(−1.5)| = 0.23), with room for the estimate of λ_F.
        Another Runge–Kutta solver's bound is this times its interval over Tsit5's.
    passage_step : c of ``friction_steps``' passages: a step moves a loaded slip by at most c max(d, band),
        d the least distance of its path over the step (taken straight) from zero, band the friction law's
        ``band`` (inf: no bound).
    contact_step : h |δ̇| / max(δ, atol) of ``contact_steps``: each step moves a closed contact by at most
        this part of its depth.
    """

    rtol: float = 1e-10
    atol: float = 1e-10
    max_step: float | None = None
    norm: Callable = eqx.field(static=True, default=optx.rms_norm)
    friction_steps: bool | tuple = eqx.field(static=True, default=False, converter=_tuple)
    contact_steps: bool | tuple = eqx.field(static=True, default=False, converter=_tuple)
    spin_step: float = eqx.field(static=True, default=1.0)
    friction_step: float = eqx.field(static=True, default=1.5)
    passage_step: float = eqx.field(static=True, default=0.1)
    contact_step: float = eqx.field(static=True, default=0.5)

    def __check_init__(self):
        if not callable(self.norm):
            raise TypeError(f"norm must be a norm of a pytree, e.g. optimistix.rms_norm; got {self.norm!r}")
        for name, kind in (("friction_steps", "Contact family with friction"), ("contact_steps", "Contact family")):
            value = getattr(self, name)
            if not isinstance(value, bool) and not (isinstance(value, tuple) and all(
                    isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in value)):
                raise TypeError(f"{name} must be True, False or a sequence of indices in model.forces, each of "
                                f"a {kind}; got {value!r}")
        for name in ("spin_step", "friction_step", "passage_step", "contact_step"):
            _check_bound(name, getattr(self, name))

    def controller(self):
        return dfx.PIDController(rtol=self.rtol, atol=self.atol, dtmax=self.max_step, norm=self.norm), None


class FixedSteps(StepSizes):
    """Fixed steps of size ``dt`` (s, > 0; ``diffrax.ConstantStepSize``).

    They take (t_end − t0)/dt steps: raise ``simulate``'s ``max_steps`` to match. Contact events still end a
    step exactly at the located event.
    """

    dt: float

    def controller(self):
        return dfx.ConstantStepSize(), self.dt


class ContactEvents(_Traced):
    """How ``simulate`` splits a run with ``Contact``s into segments at contact events (``events``; the
    design and its measurements: docs/design/event-engine.md).

    Attributes
    ----------
    max_events : most events in the run: contact onsets and separations, and the turning points of open
        contacts' gaps (where the bodies stop receding or approaching); more raise an error at run time.
    event_tol : rtol and atol of the bisection on the event times (s), in (0, 1): the events are located to
        within atol + rtol |t|.
    rest_speed : v_r (m/s, > 0): the turning points of an open gap are where its rate ġ passes −v_r
        (starting to approach) and +v_r (starting to recede), so that bodies at rest relative to each other
        do not end segments on round-off.
    near_distance : d_n (m, > 0), or ``None`` (default) to watch the turning points of every open contact's
        gap. With d_n, only contacts whose gap is below d_n end segments at their turning points, and each
        step is bounded so that no farther contact can close its gap within it (``events``): for scenes of
        many bodies. Adaptive steps only.
    max_closed : most contacts of one family closed at the same time, or ``None`` (default) for no limit.
        With it, each segment's accelerations evaluate, of every larger family, only its closed members (the
        others exert no force until an event closes them), at most ``max_closed``: for scenes of many
        bodies, where few of the pairs touch at once (16 balls on a table: at most 6 neighbours in the plane
        each, 48 pairs of 120). More raise an error at run time. Increasing sizes (a tuple, the last the
        most closed at once) make an evaluation cost what is closed: the accelerations sum the least of them
        that holds every such family's closed members of the segment (a ``lax.switch`` over the sizes, each
        compiled; under ``vmap`` a select that evaluates every size).
    save_window : most save times one segment carries (≥ 2): a segment that reaches the last of its window
        without an event ends there, and the next carries the following ones. A segment's cost grows with
        the save times it carries (its solve allocates and fills their rows), and a 4-s break with 2,001
        save times has about 2,800 segments.
    """

    max_events: int = eqx.field(static=True, default=16)
    event_tol: float = 1e-15
    rest_speed: float = 1e-8
    near_distance: float | None = None
    max_closed: int | tuple | None = eqx.field(static=True, default=None, converter=_tuple)
    save_window: int = eqx.field(static=True, default=64)

    def __check_init__(self):
        check_count("max_events", self.max_events)
        check_count("save_window", self.save_window, 2)
        if self.max_closed is not None:
            sizes = self.max_closed if isinstance(self.max_closed, tuple) else (self.max_closed,)
            sizes = [check_count("max_closed", size, 1) for size in sizes]
            if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:])):
                raise ValueError(f"max_closed must be an int >= 1 or increasing ints >= 1; got {self.max_closed!r}")

    @property
    def sizes(self):
        """``max_closed`` as a tuple of increasing sizes, ``None`` for no limit."""
        if self.max_closed is None:
            return None
        return tuple(int(size) for size in (self.max_closed if isinstance(self.max_closed, tuple)
                                            else (self.max_closed,)))


class Derivatives(eqx.Module):
    """How ``simulate``'s run is differentiated: ``ReverseMode`` or ``ForwardMode``."""

    @abc.abstractmethod
    def adjoint(self, segments):
        """The diffrax adjoint of a solve; ``segments``: the run is split into segments at contact events."""


class ReverseMode(Derivatives):
    """Reverse-mode derivatives (``jax.grad``, ``jax.jacrev``) by ``diffrax.RecursiveCheckpointAdjoint``.

    A derivative through contacts with friction needs ``AdaptiveSteps``' ``friction_steps`` on every family
    with friction, or it raises an error (the steps the state's error sets give it wrong through a friction
    law's band, by factors up to thousands, in ways no check of the steps sees: ``step_control``), and one
    through the onsets of power laws ``contact_steps``.

    Attributes
    ----------
    segment_checkpoints : checkpoints of each segment's solve in a run with ``Contact``s (a run without is
        one solve, with diffrax's own number). Every slot of the scan of segments keeps its own, used or not,
        and diffrax's default for a solve of ``max_steps`` steps, √(2 max_steps) of them, held 16 GB and took
        8.6 s for the derivative of one ball's 0.9-s shot on the table (``max_steps`` 10⁷, 2,001 slots),
        against 2.4 GB and 0.47 s with 16 (``python validation/reverse_mode.py``; docs/design/derivatives.md,
        "Reverse-mode derivatives through friction").
    """

    segment_checkpoints: int = eqx.field(static=True, default=16)

    def __check_init__(self):
        check_count("segment_checkpoints", self.segment_checkpoints, 1)

    def adjoint(self, segments):
        return dfx.RecursiveCheckpointAdjoint(checkpoints=self.segment_checkpoints if segments else None)


class ForwardMode(Derivatives):
    """Forward-mode derivatives (``jax.jvp``, ``jax.jacfwd``) by ``diffrax.ForwardMode``: cheaper for a few
    parameters, and their errors bounded by the steps too (``tangent_errors``).

    Attributes
    ----------
    tangent_errors : True (default): with ``AdaptiveSteps`` the step-size control also bounds the local
        errors of the derivatives that the run carries, with the same rtol, atol (in the state's units per
        unit of the parameter: differentiate by parameters of order one, or scale the directions so) and
        norm; of several directions (``jax.jacfwd``) the worst sets the steps, which all share
        (``step_control``). It takes the derivatives through Hertz onsets and a friction law's stiff band to
        the tolerance without ``contact_steps`` or ``friction_steps``, at the steps they need (the friction
        guard is then off); a slip's passage through a band inside one step, which no error estimate sees,
        is bounded as ``friction_steps`` bounds it, on every family with friction. False: the steps are the
        state's alone, as in reverse mode. A run that is not differentiated takes the same steps either way.
    friction_guard : a differentiated run whose steps are not bounded by the friction's stability stops at a
        step with h λ_F beyond this many stability intervals of its solver (``step_control``'s
        ``FrictionGuard``): its derivatives would be wrong (inf: never stopped).
    tangent_guard : a derivative whose steps the state's error alone sets (``tangent_errors=False``) also
        stops at an accepted step whose estimate of its tangents' error is beyond this part of the tangents:
        on the runs measured, 3.6e-3 to 7.7e-2 where the derivative came out wrong, at most 1e-4 where it
        was right (docs/design/derivatives.md, "What a resting ball does to another ball's derivative"; inf:
        never stopped).
    """

    tangent_errors: bool = eqx.field(static=True, default=True)
    friction_guard: float = eqx.field(static=True, default=5.0)
    tangent_guard: float = eqx.field(static=True, default=1e-3)

    def __check_init__(self):
        if not isinstance(self.tangent_errors, bool):
            raise TypeError(f"tangent_errors must be True or False; got {self.tangent_errors!r}")
        _check_bound("friction_guard", self.friction_guard)
        _check_bound("tangent_guard", self.tangent_guard)

    def adjoint(self, segments):
        del segments
        return dfx.ForwardMode()
