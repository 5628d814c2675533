"""Forward dynamics of a multibody ``Model`` with diffrax.

``simulate`` integrates the first-order system q̇ = v, v̇ = formulation's
accelerations with an adaptive Tsit5 solver (or the ``solver`` given; fixed steps when given ``dt``)
and returns the saved states with their diagnostics. It is a pure function of pytrees: it works under ``jit``,
``vmap`` and ``grad`` (gradients by diffrax's recursive checkpointing).

Contact events. When the model has ``Contact`` forces, the integration is split
into segments at the contact onsets and separations, so that no step straddles
the initial instant of a contact ([Poursina 2020] §1) and impact-dependent laws can be
set up at each onset. A ``lax.scan`` over at most ``max_events + 1`` segments
runs one ``diffeqsolve`` per segment, terminated by a ``diffrax.Event`` (a
down-crossing located on the dense output). Each contact (of each contact
family, with its status in an array along the family's contact axis, all
updates vectorised) is closed, open and receding, or open and approaching
(at the start: closed if δ > 0, or δ = 0 and approaching, as for a ball
rolling into a touching row, whose gap could not be seen to cross zero;
receding if δ = 0 at rest, the touching balls of that row):

* closed: the event is ``Contact.separation_function`` (the force of laws that
  separate at zero force, eq. (20) of [Poursina 2020], else δ);
* open: with the gap g = x_s − δ (x_s: the recovering contact zone, below),
  receding ends where the bodies turn to approach, ġ = −v_r (a turning point),
  and approaching ends at the onset g = 0 or where they turn to recede again,
  ġ = +v_r.

Splitting the open phases at the turning points of g makes g monotone within
each segment, up to the band |ġ| < v_r, so a contact cannot begin and end
inside one step unseen (the events are sign changes at step ends; Tsit5
integrates a ballistic flight exactly and would otherwise step over a whole
bounce; a grazing contact would be missed). The band, v_r = ``rest_speed``,
keeps bodies at rest relative to each other (balls of a rack, ġ = 0 up to
round-off) from ending a segment at every sign change of the round-off; a gap
that closes within the band is caught at the turning point, as an onset.
After a turning point the status follows ġ as it then stands, which chooses
functions that start positive (dropping a still-recovering surface once the
bodies have parted, below, can leave them receding from the bare one).
Turning points only end segments; ``Events`` lists the onsets and
separations. The event function of the solve is the least of all contacts'
functions, so its first crossing is the earliest of any contact's; bisection
locates it and the segment ends just past it, where every contact whose
function has crossed is handled: simultaneous impacts (a symmetric break
shot) stay simultaneous, and a later crossing in the same step is found in
the next segment at its own time.

Contacts that leave the scene. A geometry may give a ``removal`` function
(``HoledPlane``: a ball that has dropped through a pocket's hole); where it
crosses zero, located as the other functions, the contact is removed for
good: it exerts no force and ends no more segments, so that a fallen ball
carried back under the surface by its own motion does not meet the plane
from below. A family with ``removes_body`` (``Contact``) takes the removed
contact's body out of the scene: the removal leaves it on its way out, and
where its ``Geometry.exit`` crosses zero (located) every contact of every
family that involves the body is removed (the pool table's pocketed balls,
once their tops are below the cloth, meet nothing in the void under it).
Removals and exits are not listed in ``Events``.

Contacts at a distance (``near_distance``). A scene of many bodies (the
pool table's 120 ball pairs) would end a segment at every closest approach
of every pair. With a near distance d_n, the turning points of an open
contact end segments only while its gap is below d_n, and every step is
bounded instead, h ≤ max(−δ, d_n)/(2 δ̇) over the open contacts whose
bodies approach (δ̇ > 0; −δ ≤ g). Within one step (while the speeds
change by less than 2× within it: between impacts only smooth forces act,
and every impact ends a segment) a far contact closes at most half its
gap, so it is near, its turning points watched, before it touches; and a
near contact moves by at most d_n/2, so it cannot graze through contact
and leave the near zone within one step, where its turning point would be
masked at the step's end. A contact whose status went stale while far (it
turned to approach) has its turning point due on entering the near zone,
where the segment ends and the status is set right. Segments then grow
with the impacts and the near approaches, not with the pairs.

Fast spins (``SPIN_STEP``). An adaptive step turns no spatial body by more
than ``SPIN_STEP`` = 1 rad (h ≤ ``SPIN_STEP``/|ω| of the fastest body; in
runs with contacts and without). The error control alone does not bound a free
rotation's turn: at rtol = 1e-3 a ball spinning at 490 rad/s, in the air or
falling through a pocket, takes steps of about 2.4 rad, and under Baumgarte's
feedback on its Euler parameters (the table's) loses 11 % of its energy in a
second (docs/RESULTS.md, "Fast spins: a step turns a ball by at most a
radian", "A drift of |p| no longer changes a ball's inertia").

Only the closed contacts push (``max_closed``). Inside ``simulate`` a
contact exerts its force only while closed, and the closed set changes only
at events, so with ``max_closed`` each segment gathers the closed members
of every larger family (at most ``max_closed``) and its accelerations sum
only their forces: for the 16-ball table, at most 48 of the 120 pairs and
of the 96 ball–cushion contacts (docs/RESULTS.md, "Only the closed contacts
push"). Given increasing sizes, (4, 16, 48) for the table, a segment sums
the least size that holds its closed members, so that an evaluation costs
what is closed (a ``lax.switch``; docs/RESULTS.md, "Evaluations that cost
what is closed").

Contacts that are not located (``Contact(..., located=False)``). A family
whose force vanishes at δ = 0 (Hertz) may leave its onsets and separations
unlocated: the clipped law acts at every evaluation, as outside
``simulate``, the solver steps through them, and they end no segment and
are not listed in ``Events`` (its removals still are located). The pool
table's cloth, on which the balls hop for the whole run.

Zero-force separation. A law f = c δ̇ + k δⁿ (eq. (50)'s Hertz + linear
damper, Kelvin–Voigt) lets the bodies go at f = 0 while they still overlap by
δ_r (eq. (51)). The deformed zone then recovers by the law without the body,
c ẋ_s + k x_s^n = 0 (``diffimpact.contact.normal.free_surface``), and the
bodies touch again when δ reaches x_s. A return onto the recovering zone
(the bodies never parted: δ > 0 at the turning point) keeps the law of the
impact; once they have parted (δ < 0 at the turning point) the zone counts as
recovered and the next onset is a new impact at δ = 0. Energy is never
injected: at a return the force c (δ̇ − ẋ_s) is compressive.

At an event the status changes and

* at a new impact, an ``ImpactLaw`` is resolved with the effective mass of the
  contact normal in the constrained system, m = 1/(wᵀ M_c⁻¹ w), and the
  approach speed ⁻δ̇ at the located onset (``contact.normal_response``);
* at an onset of a ``RigidImpact`` family (e.g. ``NewtonRestitution``) its
  proximal contacts take part in one impact ([Uchida 2015] §3a, Fig. 6): those
  whose penetration is δ ≥ −``proximity`` of their ``RigidImpact``, always
  with every contact whose onset it is (simultaneous onsets, a flat brick
  landing on four corners, are one impact, not one after the other). The
  model is called once with their stacked problem
  (``contact.impact_velocity``) and its impulse applied; the contacts stay
  open, and every contact of the family then takes the status its gap rate
  says, receding, or approaching from a positive gap (the impulse changes the
  rates of contacts that did not take part too); the model must not leave a
  touching contact approaching (an error at run time). Onsets of different
  families at one event are impacts of their own, in the order of
  ``Model.forces``. After the event's impulses, any contact whose function
  the velocity jump took to zero or below (a turning point's ġ ± v_r, a
  separation that depends on δ̇) is due at once and handled as an event of
  the same instant; left as it was, it would start the next segment below
  zero, where no crossing is seen, and hide every later event.

With adaptive steps, each segment after the first starts at the step size
the controller proposed at the end of the one before (``_SegmentController``),
not at diffrax's initial step selection, which spends two evaluations of the
accelerations and often a rejected step at every segment (counted in a
16-ball break: 35 evaluations per segment before, 16 after; docs/RESULTS.md,
"Where the break's time goes").

Finished segments are skipped by ``lax.cond``; each segment is given the save
times still ahead of it, at most ``SAVE_WINDOW`` (64), and keeps the values of
those it reaches (a save time at an event gets the state after it); where
more follow, it ends at the last of its window if no event ends it first (a
step then ends there: with fixed steps ``dt``, the grid restarts from it). Gradients include the sensitivity
of the event times (diffrax differentiates the located root), so ``jax.grad``
through impacts is exact up to the tolerances. Where a crossing leaves the
accelerations continuous (turning points, but where the bodies land at one;
onsets and separations of laws whose force vanishes at δ = 0 for every δ̇:
``Hertz``, ``HuntCrossley``, ``HuntCrossleyImpact``), the motion past it depends on where the segment
ends only through a law set at the onset, and the segment's end is taken as
a constant instead: at a grazing crossing (ġ → 0) its derivative −(∂g/∂θ)/ġ
grows without bound, and it multiplies the difference between the solver's
interpolant and the vector field there, which blew up the derivatives of
the four-ball break once its balls hopped on the cloth (docs/RESULTS.md,
"Derivatives through grazing events"). The times and states of those
events in ``Events``, and the effective mass and approach speed from which
an ``ImpactLaw`` is set, still carry their derivatives (``_event_time_shifts``).
The contact forces themselves
are the continuous laws in every segment: the events only place the steps and
switch the laws. Models without contacts take the single-solve path.

With ``contact_history=True`` each segment also evaluates, at the save times
it covers, every contact's penetration, gap, normal and friction force with
its own laws and status (``ContactHistory``): what the integrator applied,
which a rebuild from the saved states and the final model would not give
once a law set at an onset has changed. ``Trajectory.save`` and
``Trajectory.load`` keep a run in one ``.npz`` file.

Stiff friction and derivatives (``friction_steps``). A regularised friction
law (μ F_N tanh(|v_t|/v_reg), Ambrósio's band) is stiff while the slip v_t
sits in its band: the slip relaxes at λ_F ≈ s_F (1/m + r²/J) per contact,
s_F ≈ μ F_N/v_reg, 1e6–1e8 /s in a hard collision. An explicit solver's
error control does not bound its steps by that: the slip chatters across the
band within the tolerance (rtol |v| ≫ v_reg) and the run itself mostly stays
accurate (not always: a spinning cue ball's impact with a cushion of the
16-ball table gained 18 mJ that way at rtol = 1e-3, docs/RESULTS.md,
"``friction_steps`` on the families named"; and a ball's slide into rolling
on the table's cloth can leave its slip chattering from step to step across
the band, which the error estimate does not see, each step's friction being
saturated throughout: a rolling resistance the model does not have, 1.8 %
of the rolling speed after 0.8 s on the damped cloth at rtol = 1e-3,
docs/RESULTS.md, "A ball's slide into rolling at the table's tolerance"),
but the derivatives of the run,
those of the solver's steps (forward or reverse mode), grow through each
such phase without bound (−1e23 m per unit restitution after one collision
of two balls at rtol = 1e-3, against −0.10 m: docs/RESULTS.md,
"Derivatives through stiff friction"). With
``friction_steps=True`` every step is also bounded by h λ_F ≤
``FRICTION_STEP``, λ_F the largest of the bodies' sums of
``Contact.slip_rates`` at the step's start, so that the solver is stable on
the friction and its derivatives are those of the motion. Given the indices
in ``model.forces`` of some of the families instead, only their friction
bounds the steps (both bounds, this one and the passages' below), and the
friction guard below still watches the steps for the others. ``FRICTION_STEP``
is Tsit5's; another Runge–Kutta solver's bound is scaled by its stability
interval on the negative real axis (from its Butcher tableau) over Tsit5's:
Bosh3's 1.07, Heun's 0.86, Dopri5's 1.41; an A-stable implicit solver
(``Kvaerno5``) gets none.

A derivative the steps would give wrong stops instead (``FRICTION_GUARD``).
Without ``friction_steps``, a differentiated run (forward or reverse mode)
raises an error at an accepted step whose h λ_F is beyond ``FRICTION_GUARD``
= 5 stability intervals of its explicit solver: the step has amplified the
derivatives by the solver's |R(−h λ_F)|, far above 1 there. A few steps a
little beyond one interval leave a derivative right (a rolling ball's hops
on the cloth at rtol 1e-6), hence the factor; on the scenes measured it
stops every derivative that blew up and passes every right one
(docs/RESULTS.md, "The friction guard"). Runs that are not differentiated
compute nothing for it (``_FrictionGuard``). It cannot see the passages
below, where a slip crosses the band inside one step.

A slip can also pass through the band, from one direction of sliding to the
other, inside one step: a ball's slip on the cloth reverses within tens of
nanoseconds in a hard collision. The motion hardly notices where in the step
the friction flipped (2 μ F_N over that time, against the collision's
force), so the error control does not refine there; the derivatives do,
since when the flip happens moves with every parameter that moves the
collision. So ``friction_steps`` also rejects an accepted step that moves a
loaded slip by more than ``PASSAGE_STEP`` max(d, band), d the least distance
of its path (taken straight) from zero and band the friction law's
``band``, and retries it shorter: a slip approaches the band in steps that
shrink with its distance and crosses it in at least 2/``PASSAGE_STEP``
steps. (The four-ball break's cue-ball x at 0.125 s, whose cloth slip
reverses in the first collision: its derivative with respect to the cloth's
μ was 12 % off central differences at rtol = 1e-8 and 1.3 % at 1e-10, and
is 0.14 % and 0.12 % off with it, 0.25 % at the break's rtol = 1e-3, with
``contact_steps``: docs/RESULTS.md, "The slip's passage through the band".)

The friction implicit (``IMEX_SOLVERS``). Given an IMEX solver (diffrax's
``KenCarp3``, ``KenCarp4``, ``KenCarp5``, ``Sil3``), each segment's vector
field is split in two: the explicit term is the motion with every contact
family's friction law removed, the implicit term the friction's part of the
accelerations (the difference of the two: the formulations' accelerations
are linear in the applied forces). The stages then solve for the friction
implicitly (diffrax's chord Newton: the Jacobian of the whole state once a
step), and the forward-mode derivatives are those of the stages' solutions,
stable on the stiff friction at any step: a disc sliding into rolling on a
regularised Coulomb law has its rolling speed's derivative right at
rtol = 1e-3 without ``friction_steps``. With ``friction_steps`` only the
passages' bound is kept. Each evaluation of the implicit term evaluates the
accelerations twice. On the four-ball break it does not pay (docs/RESULTS.md,
"The break's gradient with an implicit solver, tried").

Power laws at onset and separation, and derivatives (``contact_steps``).
A force k δⁿ with n > 1 (Hertz, n = 3/2) has a stiffness n k δⁿ⁻¹ that
is not smooth where δ = 0: the motion's sensitivities (the variational
equation that ``jax.jvp`` and ``jax.grad`` of the solver's steps follow)
have a coefficient ∝ √δ there. The steps the error control chooses from the
motion alone, through an onset or a separation, give the motion to rtol but
its derivatives only to about rtol^0.6: the rebound speed of an elastic
Hertz ball dropped 5 cm, whose derivative with respect to the height is
√(g/2h) in closed form, had d/dh 8.4 % off at rtol = 1e-6 and 0.78 % at
1e-8 (docs/RESULTS.md, "Derivatives through a Hertz contact"). With
``contact_steps=True`` every step is also bounded by h |δ̇| ≤
``CONTACT_STEP`` max(δ, atol) over the closed contacts, so that the steps
shrink geometrically towards each onset and separation: 7.7e-5 and
1.5e-5 there, for 50–70 more steps per bounce (none where δ does not
change: a ball resting on the cloth).

Forward-mode derivatives under the error control (``tangent_errors``).
Both bounds above place steps for derivatives by a rule made for one cause.
In forward mode (``diffrax.ForwardMode``) the run carries its derivatives
through the same stages as the state: they are the steps of the variational
equation, and the tangent of the step's local error estimate is that step's
estimate of their error. So the step-size control judges both
(``_TangentErrors``): a step is accepted where max(‖e / (atol + rtol |y|)‖,
‖ė / (atol + rtol |ẏ|)‖) < 1, e the state's error estimate, ė its tangent
and ẏ the tangents at the step's ends, and the next step follows from the
larger (internal numerical differentiation with the sensitivities in the
error test, as CVODES does it with unit parameter scales). A Hertz onset, a
slip in a friction law's band (the tangents' stiff modes, which the resting
slip of the state does not excite) or a collision then gets the steps its
derivatives need. The elastic Hertz ball above: d/dh 3.9e-7 off the closed
form at rtol = 1e-8 without ``contact_steps`` (0.78 % with the state's
steps alone, 1.5e-5 with the bound); the README's table shot: every entry of
its Jacobian by the strike, e and μ within 2.3e-4 of central differences at
rtol 1e-5 and 3.8e-6 at 1e-8 (the state's steps alone: 0.15 at 1e-5; both
bounds, the state's steps: 3.8e-4 at 1e-5, 1.8e-5 at 1e-8; docs/RESULTS.md,
"Forward-mode derivatives under the error control", "The passages through
the band under the tangents' errors"). Of the several
directions of ``jax.jacfwd`` the largest error sets the step
(``_worst_of_directions``, a ``custom_vmap``), so the directions share one run
of the state; a user's ``vmap`` over runs keeps each run's own. Reverse mode
differentiates the steps of a run already taken, and keeps the bounds. What
neither estimate sees is a slip that passes through a friction band inside
one step (the flip's time moves with the parameters, the step's error
hardly): the four-ball break's dx/dμ after 0.15 s at rtol 1e-3 was 0.044 m
with the tangents' errors alone, against 0.0075 m by central differences of
tight runs (``benchmarks/break_gradient.py``). So where they set the steps,
the passages' bound of ``friction_steps`` (above) is on for every family with
friction, and its stability bound is left to them: 0.00755 m there in 1,595
steps (with both bounds as well: 0.0071 m in 3,279).

Resting contact with a law re-resolved at every new impact can chatter
(bounces of decreasing height, as with a rigid ball and a coefficient of
restitution): each bounce costs events, and a run that needs more than
``max_events`` stops with an error.
"""

import dataclasses
import functools
import zipfile

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import optimistix as optx

from diffimpact._files import atomic_write
from diffimpact._validation import check_count, check_positive, check_range, is_concrete, refuse_where
from diffimpact.contact.normal import NormalForceLaw, free_surface
from diffimpact.multibody.contact import (
    Contact,
    _force_parts,
    _penetration_rate,
    _separation_function,
    body_mobilities,
    impact_velocity,
    resolve_at_onset,
)
from diffimpact.multibody import _progress
from diffimpact.multibody.bodies import SPATIAL_SIZE, SpatialBody
from diffimpact.multibody.formulations import Formulation, WrappedSolver, project
from diffimpact.multibody.model import Model, State

#: Largest constraint residual accepted in an initial state (m or rad, m/s or rad/s).
CONSTRAINT_TOLERANCE = 1e-8
#: h λ_F of ``friction_steps`` with Tsit5: inside its stability interval on the negative real axis (it ends at
#: −3.5, where |R(z)| = 1; |R(−1.5)| = 0.23), with room for the estimate of λ_F. Another Runge–Kutta solver's bound
#: is this times its interval over Tsit5's (``_friction_step``).
FRICTION_STEP = 1.5
#: A differentiated run whose steps are not bounded by the friction's stability stops at a step with h λ_F beyond
#: this many stability intervals of its solver (``_FrictionGuard``): its derivatives would be wrong.
FRICTION_GUARD = 5.0
#: diffrax's IMEX solvers: given one, ``simulate`` integrates the contacts' friction implicitly, the rest explicitly.
IMEX_SOLVERS = (dfx.KenCarp3, dfx.KenCarp4, dfx.KenCarp5, dfx.Sil3)
#: c of ``friction_steps``' passages: a step moves a loaded slip by at most c max(d, band), d the least distance
#: of its path over the step (taken straight) from zero, band the friction law's ``band``
PASSAGE_STEP = 0.1
#: h |δ̇| / max(δ, atol) of ``contact_steps``: each step moves a closed contact by at most this part of its depth
CONTACT_STEP = 0.5
#: h |ω|: an adaptive step turns no spatial body by more than this angle (rad). The error
#: control alone lets a ball spinning freely at 490 rad/s turn 2.4 rad a step at rtol = 1e-3, and under Baumgarte's
#: feedback lose energy (docs/RESULTS.md, "Fast spins: a step turns a ball by at most a radian")
SPIN_STEP = 1.0
#: The norm of the adaptive steps' error control over the state's scaled errors e_i / (atol + rtol |y_i|):
#: diffrax's root mean square. Over the 16-ball table's 224 coordinates and velocities it averages the errors of
#: two colliding balls with those of the resting ones, where Matlab's ``ode45`` (the paper's runs) takes the
#: largest, ``optimistix.max_norm`` (docs/RESULTS.md, "The error norm at table scale")
ERROR_NORM = optx.rms_norm

#: Most save times one segment carries: a segment that reaches the last of its window without an event ends
#: there, and the next carries the following ones. A segment's cost grows with the save times it carries
#: (its solve allocates and fills their rows), and a 4-s break with 2,001 save times has about 2,800 segments.
SAVE_WINDOW = 64


class Trajectory(eqx.Module):
    """Saved states and diagnostics, one row per save time.

    Attributes
    ----------
    t : save times (s).
    q, v : coordinates and velocities, (len(t), n).
    constraint_violation : ‖Φ(q, t)‖.
    velocity_violation : ‖Φ̇(q, v, t)‖.
    energy : kinetic plus potential energy (J), without the elastic energy of a contact after its removal
        (``Geometry.removal``).
    linear_momentum : Σ m ṙ, (len(t), 2) for planar bodies, (len(t), 3) for spatial.
    angular_momentum : about the origin, (len(t),) for planar bodies, (len(t), 3) for spatial.
    steps : accepted solver steps over the whole run.
    segments : integration segments (one ``diffeqsolve`` each, ended by an event or the end of the run; 1
        for models without contacts).
    events : ``Events`` of the contacts, ``None`` for models without contacts.
    contact_history : with ``simulate(..., contact_history=True)``, one entry
        per force of ``Model.forces``: a ``ContactHistory`` for each ``Contact``
        family, ``None`` for other forces (so ``events.contact`` indexes it);
        ``None`` otherwise.
    removals : one entry per force of ``Model.forces``: for each ``Contact``
        family the time (s) each of its contacts was removed for good
        (``Geometry.removal``, located: a ball that dropped through a
        ``HoledPlane``'s hole; the contacts with a body that a family with
        ``removes_body`` took out, at its ``Geometry.exit``), inf for those
        that were not; ``None`` for other forces, and for models without
        contacts.

    ``save(path)`` writes all of it to one ``.npz`` file (atomically);
    ``Trajectory.load(path)`` reads it back.
    """

    t: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    constraint_violation: jnp.ndarray
    velocity_violation: jnp.ndarray
    energy: jnp.ndarray
    linear_momentum: jnp.ndarray
    angular_momentum: jnp.ndarray
    steps: jnp.ndarray
    segments: jnp.ndarray
    events: "Events | None" = None
    contact_history: "tuple | None" = None
    removals: "tuple | None" = None

    def save(self, path):
        """Write the trajectory, its ``events``, ``contact_history`` and ``removals`` to the NumPy ``.npz`` file ``path``.

        The file is written beside ``path`` and renamed, so an interrupted save
        leaves no partial file. Returns ``path`` as a ``pathlib.Path``.
        """
        arrays = {"format": np.asarray(_FILE_FORMAT), **_arrays(self)}
        if self.events is not None:
            arrays.update(_arrays(self.events, "events/"))
        if self.contact_history is not None:
            arrays["contact_history"] = np.asarray(len(self.contact_history))
            for k, history in enumerate(self.contact_history):
                if history is not None:
                    arrays.update(_arrays(history, f"contact_history/{k}/"))
        if self.removals is not None:
            arrays["removals"] = np.asarray(len(self.removals))
            arrays.update({f"removals/{k}": np.asarray(times) for k, times in enumerate(self.removals)
                           if times is not None})

        def write(tmp):
            with open(tmp, "wb") as file:  # a file object: np.savez would append .npz to a name
                np.savez(file, **arrays)

        return atomic_write(path, write)

    @classmethod
    def load(cls, path):
        """The ``Trajectory`` saved by ``save`` in ``path``.

        Raises ``FileNotFoundError`` if there is no such file and ``ValueError``
        if it is not a file written by ``Trajectory.save``.
        """
        message = f"{path} is not a trajectory file written by Trajectory.save"
        try:
            file = np.load(path, allow_pickle=False)
        except (ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"{message} ({error})") from None
        if not isinstance(file, np.lib.npyio.NpzFile):  # a single array (.npy)
            raise ValueError(message)
        with file:
            arrays = {name: file[name] for name in file.files}
        if "format" not in arrays or str(arrays["format"]) != _FILE_FORMAT:
            raise ValueError(message)
        histories = None
        if "contact_history" in arrays:
            histories = tuple(
                _module(ContactHistory, arrays, f"contact_history/{k}/") if f"contact_history/{k}/gap" in arrays
                else None
                for k in range(int(arrays["contact_history"]))
            )
        removals = None
        if "removals" in arrays:
            removals = tuple(jnp.asarray(arrays[f"removals/{k}"]) if f"removals/{k}" in arrays else None
                             for k in range(int(arrays["removals"])))
        events = _module(Events, arrays, "events/") if "events/count" in arrays else None
        return _module(cls, arrays, events=events, contact_history=histories, removals=removals)


#: The ``format`` entry of the files of ``Trajectory.save``.
_FILE_FORMAT = "diffimpact.multibody.Trajectory 1"


def _arrays(module, prefix=""):
    """``{prefix + name: array}`` for the array fields of ``module``."""
    return {prefix + field.name: np.asarray(value) for field in dataclasses.fields(module)
            if isinstance(value := getattr(module, field.name), (jax.Array, np.ndarray))}


def _module(cls, arrays, prefix="", **others):
    """``cls`` built from the arrays ``prefix + name`` of its fields, and ``others``."""
    names = [field.name for field in dataclasses.fields(cls) if field.name not in others]
    return cls(**{name: jnp.asarray(arrays[prefix + name]) for name in names}, **others)


class ContactHistory(eqx.Module):
    """The contacts of one ``Contact`` family at the save times, as the integrator applied them.

    Each is evaluated inside the segment that contains the save time, with the
    laws, engaged flags and recovering surfaces of that segment (a save time
    at an event gets the values after it). Shapes: (len(t), count) and
    (len(t), count, d), d = 2 for planar and 3 for spatial bodies.

    Attributes
    ----------
    penetration : δ (m), > 0 in overlap.
    gap : g (m), the gap the contact events watch: for an open contact
        x_s − δ, the distance to the contact zone recovering after a
        zero-force separation (x_s, ``free_surface``; zero when the zone has
        recovered, and always for laws that do not separate at zero force);
        −δ for a closed contact.
    normal : unit normal n, along which the contact pushes body j, (len(t), count, d).
    normal_force : f_N (N): the law's force from onset to separation, zero while open and for a
        ``RigidImpact`` (whose impulses act at the events).
    friction_force : F_t (N) on body j, tangential, (len(t), count, d); zero without a friction law.
        The force on body j is f_N n + F_t, on body i its opposite.
    """

    penetration: jnp.ndarray
    gap: jnp.ndarray
    normal: jnp.ndarray
    normal_force: jnp.ndarray
    friction_force: jnp.ndarray


class Events(eqx.Module):
    """Contact onsets and separations in the order they happened; rows past ``count`` are unused (t = inf).

    The turning points of open gaps, which also end segments, are not listed.

    Attributes
    ----------
    count : number of events.
    t : event times (s), (max_events,).
    contact : index in ``Model.forces`` of the contact family.
    member : index of the contact within its family.
    onset : True at contact onset, False at separation.
    q, v : state just after the event (after the impulse of a ``RigidImpact``).
    """

    count: jnp.ndarray
    t: jnp.ndarray
    contact: jnp.ndarray
    member: jnp.ndarray
    onset: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray


def check_initial_state(model, state, tolerance=CONSTRAINT_TOLERANCE):
    """Raise if ``state`` violates Φ = 0 or Φ̇ = 0 by more than ``tolerance``, or D is rank deficient.

    Concrete input: a ``ValueError`` naming the first violated constraint and
    its residual, or the rank of D for redundant constraints. Traced input:
    the violation check is compiled in with ``equinox.error_if`` (the rank
    check is skipped; a singular system then gives non-finite results).
    Returns ``state`` (threaded through ``error_if`` when traced).
    """
    if not model.constraints:
        return state
    if not is_concrete(model, state):
        residual = model.constraint(state.q, state.t)
        rate = model.constraint_velocity(state.q, state.v, state.t)
        bad = (jnp.max(jnp.abs(residual)) > tolerance) | (jnp.max(jnp.abs(rate)) > tolerance)
        message = f"initial state violates the constraints by more than {tolerance:g}"
        return eqx.error_if(state, bad, message)
    residual, rate, jacobian = _constraint_residuals(model, state.q, state.v, state.t)
    offsets = np.cumsum([0] + [c.size for c in model.constraints])
    for name, a, b in zip(model.constraint_names, offsets[:-1], offsets[1:]):
        for what, values in (("position", residual), ("velocity", rate)):
            values = values[a:b]
            if np.max(np.abs(values)) > tolerance:
                raise ValueError(
                    f"initial state violates {name}: {what} residual {values.tolist()} "
                    f"exceeds {tolerance:g}; use project_initial_state to correct it"
                )
    rank = np.linalg.matrix_rank(jacobian)
    if rank < jacobian.shape[0]:
        raise ValueError(
            f"constraint Jacobian is singular: rank {rank} < {jacobian.shape[0]} equations "
            "(redundant constraints, or a singular configuration)"
        )
    return state


def _concrete(fn):
    """``fn`` of concrete values, compiled as one call, its results as NumPy arrays: also where the values are
    constants closed over by a caller's ``jit``, whose trace would otherwise make its results tracers."""
    compiled = eqx.filter_jit(fn)

    def call(*args):
        with jax.ensure_compile_time_eval():
            return jax.tree.map(np.asarray, compiled(*args))

    return call


@_concrete
def _constraint_residuals(model, q, v, t):
    """Φ, Φ̇ and D of a concrete state in one compiled call (op by op, each operation compiles on its own: about
    a hundred small programs for the pool table)."""
    return model.constraint(q, t), model.constraint_velocity(q, v, t), model.jacobian(q, t)


def project_initial_state(model, state, iterations=10):
    """Correct ``state`` onto Φ = 0, Φ̇ = 0 by the direct-correction projection (eqs. (2.24)–(2.29))."""
    q, v = project(model, state.q, state.v, state.t, iterations)
    return State(q, v, state.t)


def simulate(
    model,
    state0,
    save_times,
    formulation,
    *,
    solver=None,
    rtol=1e-10,
    atol=1e-10,
    dt=None,
    max_step=None,
    max_steps=100_000,
    constraint_tolerance=CONSTRAINT_TOLERANCE,
    progress=False,
    adjoint=None,
    max_events=16,
    event_tol=1e-15,
    rest_speed=1e-8,
    near_distance=None,
    contact_history=False,
    friction_steps=False,
    contact_steps=False,
    max_closed=None,
    tangent_errors=True,
):
    """Integrate the equations of motion from ``state0`` and save at ``save_times``.

    Parameters
    ----------
    model : ``Model``.
    state0 : ``State`` consistent with the constraints (see
        ``project_initial_state``).
    save_times : increasing times (s); the integration runs from ``state0.t``
        to the last one. They may be passed to a ``jax.jit`` of yours or
        closed over by it: the same program runs either way (an
        optimisation barrier hides constant ones from XLA, which otherwise
        made the 4-s break 1.4× slower: docs/RESULTS.md, "Save times closed
        over by a caller's ``jit``").
    formulation : a ``Formulation`` instance, e.g. ``Baumgarte()``.
    solver : a diffrax ODE solver, ``None`` (default) for ``diffrax.Tsit5()``.
        An implicit one (``diffrax.Kvaerno5()``) takes fewer steps through
        stiff phases, but forms and factors the Jacobian of the
        accelerations at every step: for the 16-ball table that costs far
        more than it saves (docs/RESULTS.md, "Where the break's time goes").
        An IMEX one (``IMEX_SOLVERS``: ``diffrax.KenCarp3()``, ``KenCarp4()``,
        ``KenCarp5()``, ``Sil3()``) integrates the contacts' friction
        implicitly and the rest explicitly (see the module docstring); only
        for models with ``Contact``s with friction.
    rtol, atol : tolerances of the PID step-size controller.
    dt : ``None`` (default) for adaptive steps; a step size (s, > 0) for
        fixed steps of that size (``diffrax.ConstantStepSize``; rtol and atol
        are then unused). Fixed steps take (t_end − t0)/dt steps: raise
        ``max_steps`` to match. Contact events still end a step exactly at
        the located event.
    max_step : largest adaptive step (s, > 0), ``None`` (default) for no
        limit: the "default time step" of [Gismeros Moreno 2022] §4.1, kept while the
        error allows it and reduced where it does not (e.g. at a contact
        onset). Not with ``dt``.
    max_steps : cap on solver steps.
    constraint_tolerance : largest accepted initial constraint residual.
    progress : show a tqdm progress bar of the simulated time, one for the whole run, never going back
        (``_progress``); derivatives and ``jax.vmap`` pass through it.
    adjoint : how diffrax differentiates the solves: ``None`` (default) for
        ``diffrax.RecursiveCheckpointAdjoint()``, reverse mode (``jax.grad``,
        ``jax.jacrev``); ``diffrax.ForwardMode()`` for forward mode
        (``jax.jvp``, ``jax.jacfwd``), cheaper for a few parameters, whose
        derivatives' errors the steps also bound (``tangent_errors``). In
        reverse mode a derivative through stiff friction needs
        ``friction_steps`` (through steps unstable on the friction it raises
        an error: ``FRICTION_GUARD``, see the module docstring), and one
        through the onsets of power laws ``contact_steps``.
    max_events : most events in the run: contact onsets and separations, and
        the turning points of open contacts' gaps (where the bodies stop
        receding or approaching); more raise an error at run time. Only for
        models with ``Contact``s.
    event_tol : rtol and atol of the bisection on the event times (s): the events are located
        to within atol + rtol |t|.
    rest_speed : v_r (m/s, > 0): the turning points of an open gap are where
        its rate ġ passes −v_r (starting to approach) and +v_r (starting to
        recede), so that bodies at rest relative to each other do not end
        segments on round-off.
    near_distance : d_n (m, > 0), or ``None`` (default) to watch the turning
        points of every open contact's gap. With d_n, only contacts whose gap
        is below d_n end segments at their turning points, and each step is
        bounded so that no farther contact can close its gap within it (see
        the module docstring): for scenes of many bodies. Adaptive steps only.
    friction_steps : also bound every step by the stability of the
        friction laws at the closed contacts (see the module docstring): for
        derivatives (``jax.jvp``, ``jax.grad``) through phases where a slip
        sits in a friction law's regularisation band, which are wrong without
        it (and raise an error where a step was far beyond that stability:
        ``FRICTION_GUARD``), and by the passage of a loaded slip through that
        band. It costs
        steps where the friction is stiff and where a slip reverses. The
        stability bound is scaled to the solver's stability interval; with
        an A-stable implicit solver or an IMEX one (friction implicit) only
        the passages' bound. A lower-order explicit solver (``Bosh3``) can
        cost less than Tsit5 here, where the bounds, not the error control,
        set the steps (docs/RESULTS.md, "Friction steps for any solver").
        True: every ``Contact`` family with friction; or a sequence of the
        indices in ``model.forces`` of the families with friction to bound
        (the others' steps are then still watched by ``FRICTION_GUARD``).
        In forward mode with ``tangent_errors`` (the default) it is not
        needed: the passages' bound is then on for every family with friction
        by itself, and the tangents' errors do the stability bound's work.
        Adaptive steps only; only for models with ``Contact``s.
    contact_steps : also bound every step by the depth and rate of the
        closed contacts (see the module docstring): for derivatives through
        the onsets and separations of power laws k δⁿ, n > 1 (Hertz), which
        otherwise converge only as about rtol^0.6. It costs 50–70 steps
        per contact. True: every ``Contact`` family; or a sequence of the
        indices in ``model.forces`` of the families to bound (e.g. a table's
        soft cushions, whose contacts the error control alone resolves
        loosely: docs/RESULTS.md, "An energy check that could barely
        fail"). Adaptive steps only; only for models with ``Contact``s.
    max_closed : most contacts of one family closed at the same time, or
        ``None`` (default) for no limit. With it, each segment's
        accelerations evaluate, of every larger family, only its closed
        members (the others exert no force until an event closes them), at
        most ``max_closed``: for scenes of many bodies, where few of the
        pairs touch at once (16 balls on a table: at most 6 neighbours in
        the plane each, 48 pairs of 120). More raise an error at run time.
        Increasing sizes (a tuple, the last the most closed at once) make
        an evaluation cost what is closed: the accelerations sum the least
        of them that holds every such family's closed members of the
        segment (a ``lax.switch`` over the sizes, each compiled; under
        ``vmap`` a select that evaluates every size). Only for models with
        ``Contact``s.
    tangent_errors : in forward mode (``adjoint=diffrax.ForwardMode()``), True (default): the step-size control
        also bounds the local errors of the derivatives that the run carries, with the same rtol, atol (in the
        state's units per unit of the parameter: differentiate by parameters of order one, or scale the
        directions so) and norm; of several directions (``jax.jacfwd``) the worst sets the steps, which all
        share (see the module docstring). It takes the derivatives through Hertz onsets and a friction law's
        stiff band to the tolerance without ``contact_steps`` or ``friction_steps``, at the steps they need
        (the friction guard is then off); a slip's passage through a band inside one step, which no error
        estimate sees, is bounded as ``friction_steps`` bounds it, on every family with friction. False: the
        steps are the state's alone, as in reverse mode. A run that is not differentiated takes the same steps
        either way. Adaptive steps only.
    contact_history : also save each contact family's penetration, gap and
        forces at the save times (``Trajectory.contact_history``, evaluated
        inside each segment with the laws that acted there). Off by default:
        it adds about a quarter to the compile time of a contact model and
        costs run time at every save time (``benchmarks/contact_history.py``).
        Only for models with ``Contact``s.

    Returns
    -------
    ``Trajectory``.
    """
    if not isinstance(formulation, Formulation):
        raise TypeError(
            "formulation must be an instance of a diffimpact.multibody Formulation "
            "(LagrangeMultipliers(), Baumgarte(), AugmentedLagrangian(), DirectCorrection()); "
            f"got {formulation!r}"
        )
    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model; got {type(model).__name__}")
    if not isinstance(state0, State):
        raise TypeError(f"state0 must be a State; got {type(state0).__name__}")
    if state0.q.shape != (model.size,) or state0.v.shape != (model.size,):
        raise ValueError(
            f"state0.q and state0.v must have shape ({model.size},); "
            f"got {state0.q.shape} and {state0.v.shape}"
        )
    state0 = check_initial_state(model, state0, constraint_tolerance)
    if solver is None:
        solver = dfx.Tsit5()
    elif not isinstance(solver, dfx.AbstractSolver):
        raise TypeError(f"solver must be a diffrax solver, e.g. diffrax.Tsit5(); got {solver!r}")
    if adjoint is None:
        adjoint = dfx.RecursiveCheckpointAdjoint()
    elif not isinstance(adjoint, dfx.AbstractAdjoint):
        raise TypeError(f"adjoint must be a diffrax adjoint, e.g. diffrax.ForwardMode(); got {adjoint!r}")
    save_times = _check_save_times(save_times)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"max_steps must be an int >= 1; got {max_steps!r}")
    max_closed = _check_sizes(max_closed)
    if dt is None:
        rtol, atol = check_positive("rtol", rtol), check_positive("atol", atol)
        dtmax = None if max_step is None else jnp.asarray(check_positive("max_step", max_step), dtype=float)
        controller, dt0 = dfx.PIDController(rtol=rtol, atol=atol, dtmax=dtmax, norm=ERROR_NORM), None
        controller = _tangent_errors(controller, adjoint, tangent_errors)
    elif max_step is not None:
        raise ValueError("max_step limits adaptive steps; it cannot be combined with a fixed step dt")
    else:
        controller, dt0 = dfx.ConstantStepSize(), check_positive("dt", dt)
    if isinstance(solver, IMEX_SOLVERS):
        if not _with_friction(_contact_indices(model), model):
            raise ValueError(f"an IMEX solver ({type(solver).__name__}) integrates the contacts' friction "
                             "implicitly; this model has no Contact with friction: use an explicit or implicit solver")
    if not any(isinstance(force, Contact) for force in model.forces):
        if dt is None and _spin_bounded(model):
            controller = _SpinController(controller)
        return _simulate(model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress,
                         adjoint)
    if not isinstance(max_events, int) or max_events < 0:
        raise ValueError(f"max_events must be a non-negative int; got {max_events!r}")
    _check_impact_laws_open(model, state0)
    if near_distance is not None:
        if dt is not None:
            raise ValueError("near_distance bounds adaptive steps; it cannot be combined with a fixed step dt")
        near_distance = jnp.asarray(check_positive("near_distance", near_distance), dtype=float)
    friction_steps = _bounded_families(model, "friction_steps", friction_steps, frictional=True)
    contact_steps = _bounded_families(model, "contact_steps", contact_steps)
    for name, flag in (("friction_steps", friction_steps), ("contact_steps", contact_steps)):
        if flag and dt is not None:
            raise ValueError(f"{name} bounds adaptive steps; it cannot be combined with a fixed step dt")
    # what the laws set at onset do not take from the impact, once for the run, and outside the compiled run
    # where the model is concrete (its compilation is then shared by every run)
    families = _contact_indices(model)
    model = eqx.tree_at(lambda m: [m.forces[k] for k in families], model,
                        [model.forces[k].prepared() for k in families])
    return _simulate_events(
        model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint, max_events,
        jnp.asarray(event_tol, dtype=float), jnp.asarray(check_positive("rest_speed", rest_speed), dtype=float),
        near_distance, bool(contact_history), friction_steps, contact_steps, max_closed,
    )


def _tangent_errors(controller, adjoint, tangent_errors):
    """The PID ``controller`` as ``_TangentErrors`` where forward-mode derivatives (``ForwardMode``) get their
    errors bounded (``simulate``'s ``tangent_errors``)."""
    if not isinstance(tangent_errors, bool):
        raise TypeError(f"tangent_errors must be True or False; got {tangent_errors!r}")
    return _TangentErrors(controller) if tangent_errors and isinstance(adjoint, dfx.ForwardMode) else controller


def _check_sizes(max_closed):
    """``max_closed`` as a tuple of increasing ints ≥ 1 (``None`` as it is)."""
    if max_closed is None:
        return None
    sizes = tuple(max_closed) if isinstance(max_closed, (tuple, list)) else (max_closed,)
    sizes = tuple(check_count("max_closed", size, 1) for size in sizes)
    if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"max_closed must be an int >= 1 or increasing ints >= 1; got {max_closed!r}")
    return sizes


@eqx.filter_jit
def _acceleration(formulation, model, q, v, t):
    """``formulation.acceleration(model, q, v, t)``, traced once per model structure and shapes.

    diffrax traces a solve's vector field several times (five for Tsit5 with
    an event), and each trace of the 16-ball table's accelerations takes
    about 0.4 s; this jit's cache serves the later traces, and XLA inlines
    the call (docs/RESULTS.md, "Tracing the accelerations once").
    """
    return formulation.acceleration(model, q, v, t)


@eqx.filter_jit
def _simulate(model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint):
    def vector_field(t, y, args):
        q, v = y
        return v, _acceleration(formulation, model, q, v, t)

    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        formulation.wrap_solver(model, solver),
        t0=state0.t,
        t1=save_times[-1],
        dt0=dt0,
        y0=(state0.q, state0.v),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=adjoint,
        progress_meter=_meter(progress, state0.t, save_times[-1], state0.t, save_times[-1]),
    )
    if progress:
        _progress.finish(solution.ys)
    return _trajectory(model, save_times, *solution.ys, solution.stats["num_accepted_steps"], jnp.asarray(1))


def _meter(progress, start, end, t0, t1):
    """The progress meter of a solve over [t0, t1] in a run over [start, end] (``_progress``), or none."""
    return _progress.RunProgress(start, end, t0, t1) if progress else dfx.NoProgressMeter()


def _check_save_times(save_times):
    """``save_times`` as a float array after checking: 1-D, at least one time, finite, non-decreasing."""
    save_times = jnp.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size == 0:
        raise ValueError(f"save_times must be a 1-D array of at least one time (s); got shape {save_times.shape}")
    save_times = check_range("save_times", save_times)
    return refuse_where(save_times, jnp.diff(save_times) < 0, "save_times must be non-decreasing",
                        lambda: np.asarray(save_times))


def _trajectory(model, save_times, q, v, steps, segments, events=None, contact_history=None, removed=None):
    """The ``Trajectory`` of the saved states, with their diagnostics.

    ``removed``: (family index, removal times) pairs, the time each contact of
    that family was removed (``Geometry.removal``; inf if it was not): from
    then on its elastic energy is not counted (a fallen ball under the
    surface is not stored in the plane); ``None`` for a model without contacts.
    """
    def diagnostics(q, v, t):
        gone = sum(jnp.sum(jnp.where(t >= times, model.forces[k].elastic_energies(model.split(q)), 0.0))
                   for k, times in removed or ())
        return (
            jnp.linalg.norm(model.constraint(q, t)),
            jnp.linalg.norm(model.constraint_velocity(q, v, t)),
            model.energy(q, v) - gone,
            model.linear_momentum(q, v),
            model.angular_momentum(q, v),
        )

    removals = None if removed is None else tuple(dict(removed).get(k) for k in range(len(model.forces)))
    return Trajectory(save_times, q, v, *jax.vmap(diagnostics)(q, v, save_times), steps, segments, events,
                      contact_history, removals)


def _contact_indices(model):
    return [k for k, force in enumerate(model.forces) if isinstance(force, Contact)]


def _bounded_families(model, name, value, frictional=False):
    """``simulate``'s ``contact_steps`` or ``friction_steps`` (``name``: ``value``) as the tuple of the indices in
    ``model.forces`` of the families it bounds: every ``Contact`` (with friction, where ``frictional``) for True, none
    for False, or those of a sequence of indices (checked)."""
    kind = "Contact family with friction" if frictional else "Contact family"
    eligible = _with_friction(_contact_indices(model), model) if frictional else _contact_indices(model)
    if isinstance(value, bool):
        return tuple(eligible) if value else ()
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in value):
        raise TypeError(f"{name} must be True, False or a sequence of indices in model.forces, each of a {kind}; "
                        f"got {value!r}")
    for k in value:
        if k not in eligible:
            raise ValueError(f"{name} names model.forces[{k}], which is not a {kind}")
    return tuple(sorted({int(k) for k in value}))


def _check_impact_laws_open(model, state):
    """Contacts whose law is set at onset (impact-dependent or impulsive) must start apart (δ < 0, or δ = 0 receding)."""
    for k in _contact_indices(model):
        contact = model.forces[k]
        if isinstance(contact.law, NormalForceLaw) or not is_concrete(model, state):
            continue
        closed = np.flatnonzero(_closed_at_start(model, k, state.q, state.v))
        if closed.size:
            raise ValueError(
                f"state0 is in contact (or touching and approaching) at forces[{k}] "
                f"(contact {int(closed[0])} of the family; "
                f"{type(contact.law).__name__}), whose law is set at contact onset; start the simulation "
                "before the contact"
            )


@_concrete
def _closed_at_start(model, k, q, v):
    """``_starts_closed`` of the members of the contact family ``model.forces[k]`` at ``q``, ``v``, compiled (see
    ``_constraint_residuals``)."""
    return _starts_closed(*model.forces[k].penetration_rate(model.split(q), model.split(v)))


def _starts_closed(penetration, rate):
    """Whether contacts start closed: overlapping (δ > 0), or touching and approaching (δ = 0, δ̇ > 0).

    A touching, approaching pair (a row of balls at rest, one rolling in) is an
    onset at the start: its gap starts at zero, where no down-crossing could
    be seen.
    """
    return (penetration > 0) | ((penetration == 0) & (rate > 0))


def _depending_on(tree, anchor):
    """``tree``'s values, made to depend on every inexact leaf of ``anchor`` (selected against, never used).

    Differentiating or batching a ``lax.scan``, JAX finds which parts of its carry have nonzero tangents (or
    a batch axis) by a fixpoint: it linearises, JVPs or batches the whole body once per round and adds what
    came out nonzero (batched), until nothing is added. ``_simulate_events``' carry starts with zero tangents
    in its state, gains them one segment later and in the laws set at onsets one more, so the whole segment
    (solver, events, impacts) was linearised three times. Tied to the inputs from the start, once: the
    four-ball break's ``jacfwd`` traces in 31–32 s instead of 51–56 s, a ball's reverse-mode rebound in 22–24 s
    instead of 29–31 s (``benchmarks/derivative_trace.py``, docs/RESULTS.md). Where nothing of ``anchor`` is
    differentiated or batched, nothing changes; no value changes anywhere.
    """
    link = sum(jnp.sum(x) for x in jax.tree.leaves(anchor) if eqx.is_inexact_array(x))

    def tied(x):
        if not eqx.is_inexact_array(x):
            return x
        return jax.lax.select(jnp.zeros(x.shape, bool), jnp.broadcast_to(link, x.shape).astype(x.dtype), x)

    return jax.tree.map(tied, tree)


def _select(flag, new, old):
    """``new`` where ``flag`` else ``old``, leaf by leaf, for pytrees of the same structure.

    ``flag`` is a scalar, or one flag per row of every leaf (a contact family's flags).
    """
    arrays, static = eqx.partition(new, eqx.is_array)

    def choose(a, b):
        return jnp.where(jnp.reshape(flag, jnp.shape(flag) + (1,) * (jnp.ndim(a) - jnp.ndim(flag))), a, b)

    return eqx.combine(jax.tree.map(choose, arrays, eqx.filter(old, eqx.is_array)), static)


# Status of each contact in ``_simulate_events``: open (receding or approaching), closed, removed for good
# (``Geometry.removal``), or removed with its body not yet clear of the scene (``Contact``'s ``removes_body``:
# ``Geometry.exit``). Statuses from ``REMOVED`` on are out of play.
RECEDING, APPROACHING, CLOSED, REMOVED, LEAVING = 0, 1, 2, 3, 4


def _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t):
    """Gap g = x_s − δ of one open contact and its rate ġ = ẋ_s − δ̇ (x_s: ``free_surface``)."""
    penetration, rate = _penetration_rate(contact, pose_i, pose_j, rate_i, rate_j)
    law = contact.active_law
    if law is None:
        return -penetration, -rate
    surface, surface_rate = free_surface(law, residual, t - released)
    return surface - penetration, surface_rate - rate


def _open_gaps(contact, q, v, t, residual, released):
    """``_open_gap`` of every contact of a family."""
    return contact.each(lambda *arguments: _open_gap(*arguments, t), q, v, residual, released)


class _EventBisection(optx.Bisection):
    """``optimistix.Bisection`` stopped on the bracket alone, returning the bracket's far end.

    Bisection needs no derivative: it is safe on the kinks of the event
    function (a minimum over contacts) and where its slope vanishes, where
    Newton's method fails. It stops when the bracket is shorter than
    atol + rtol |t| (the event functions have units of their own, so
    ``optimistix.Bisection``'s other test, |value| < atol, may be out of
    reach) and returns the end of the bracket past the crossing, where the function is negative (construct with ``flip=True``:
    the event functions decrease through their roots).
    """

    def terminate(self, fn, y, args, options, state, tags):
        del fn, args, options, tags
        return jnp.abs(state.upper - state.lower) < self.atol + self.rtol * jnp.abs(y), optx.RESULTS.successful

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        del fn, y, args, options, tags, result
        return state.upper, aux, {}


def _event_values(families, t, y, args):
    """The three down-crossing event functions of every contact, (contacts, 3), family by family, chosen by status,
    and which receding contacts would land at their turning point, (contacts,).

    The first: the separation function when closed; ġ + v_r when receding
    (the bodies start to approach); g when approaching (onset). The second:
    v_r − ġ when approaching (the bodies start to recede), else inactive (1).
    With a near distance d_n the turning points (ġ + v_r, v_r − ġ) of contacts
    whose gap is d_n or more are inactive (1).
    The third: the geometry's ``removal`` function, inactive (1) for
    geometries without one, and once removed with its body still leaving
    (``LEAVING``) the geometry's ``exit``; all three are inactive once the
    contact is removed for good. A family that is not ``located`` has only
    the third.
    The band 2 v_r between the turning points makes every function positive
    at the start of the segment that follows its status change (ġ ≥ 0 at a
    separation), so none has a root there: a bounce shorter than the first
    step is still seen. A receding contact whose gap has closed (g ≤ 0: it
    left, or came back, slower than v_r) lands at its turning point, an
    onset there (``_apply_events``).
    """
    model, status, residual, released, rest_speed, near_distance, *_ = args
    q, v = (model.split(x) for x in y)

    def member(contact, pose_i, pose_j, rate_i, rate_j, status, residual, released):
        gap, rate = _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t)
        near = True if near_distance is None else gap < near_distance
        open_value = jnp.where(status == RECEDING, jnp.where(near, rate + rest_speed, 1.0), gap)
        closed_value = _separation_function(contact, pose_i, pose_j, rate_i, rate_j)
        first = jnp.where(status == CLOSED, closed_value, open_value) if contact.located else 1.0
        second = jnp.where((status == APPROACHING) & near, rest_speed - rate, 1.0) if contact.located else 1.0
        removal = contact.geometry.removal(pose_i, pose_j)
        third = 1.0 if removal is None else removal
        if contact.removes_body:
            third = jnp.where(status == LEAVING, contact.geometry.exit(pose_i, pose_j), third)
        out = status >= REMOVED
        values = jnp.stack([jnp.where(out, 1.0, first), jnp.where(out, 1.0, second),
                            jnp.where(status == REMOVED, 1.0, third)])
        return values, (status == RECEDING) & (gap <= 0)

    values, landing = zip(
        *[model.forces[k].each(member, q, v, *rows) for k, *rows in zip(families, status, residual, released)]
    )
    return jnp.concatenate(values), jnp.concatenate(landing)


def _continuous_events(contact):
    """Whether the accelerations are continuous across (onset, separation) of ``contact``'s family (static).

    A law whose force vanishes at δ = 0 for every δ̇ (f ∝ δⁿ: ``Hertz``,
    ``HuntCrossley``, and ``HuntCrossleyImpact``, whose law is set from m and
    ⁻δ̇ at the onset, ``resolve_at_onset`` with the onset's time derivative;
    ``separates_at_zero_force`` False) switches on and off continuously, and
    so does its friction (∝ f_N). Not so a linear damper (c δ̇ jumps at the
    onset; its zero-force separation leaves a residual set there) or an impulse.
    """
    if contact.impulsive:
        return False, False
    vanishes = not contact.active_law.separates_at_zero_force
    return vanishes, vanishes


def _continuous_rows(families, model, status, landing):
    """(contacts, 3) flags, as ``_event_values``: the functions whose crossing leaves the accelerations continuous.

    The turning points of open gaps (only the statuses change) but where the
    contact lands there (``landing``, (contacts,): its force jumps from 0 to
    its value at the gap's depth), the onsets and separations of
    ``_continuous_events``; never a removal.
    """
    counts = [model.forces[k].count for k in families]
    onset, separation = (np.repeat(flags, counts) for flags in
                         zip(*(_continuous_events(model.forces[k]) for k in families)))
    status = jnp.concatenate(status)
    first = jnp.where(status == CLOSED, separation, jnp.where(status == RECEDING, ~landing, onset))
    return jnp.stack([first, jnp.ones_like(first), jnp.zeros_like(first)], axis=1)


def _event_function(families, t, y, args):
    """The least of ``_event_values``, the function whose first down-crossing ends a segment.

    Its value is that least value; its derivatives are those of the located
    time. Where the crossing leaves the accelerations continuous
    (``_continuous_rows``), the motion past it does not depend on where the
    segment ends (but through a law set at the onset, which
    ``_event_time_shifts`` carries), and the located time is taken as a constant: its
    derivative, −(∂g/∂θ)/ġ by the implicit function theorem, grows without
    bound at a grazing crossing (ġ → 0), where it would multiply the
    difference between the solver's interpolant and the vector field
    (docs/RESULTS.md, "Derivatives through grazing events"). (The value
    stays g; its derivative in t is 1, in everything else 0.)
    """
    values, landing = _event_values(families, t, y, args)
    frozen = jax.lax.stop_gradient(values) + (t - jax.lax.stop_gradient(t))
    return jnp.min(jnp.where(_continuous_rows(families, args[0], args[1], landing), frozen, values))


def _event_time_shifts(families, model, status, values, landing, due, t, q, v, args):
    """Zero-valued shifts (contacts,) that carry the derivatives of the due continuous onsets and separations.

    ``_event_function`` takes the time of a continuous crossing as a
    constant; the time of each due onset or separation among them (a
    position-level function g(t, q): the gap, or δ) is t + s with s = 0 and
    ds = −dg/ġ (dg: the derivative of g at the located state, which includes
    any derivative t itself carries; ġ = ∂g/∂t + ∂g/∂q · v), the implicit
    function theorem.
    """
    recorded = jnp.concatenate(status) != RECEDING  # (the first function of a receding contact is its turning point)
    continuous = _continuous_rows(families, model, status, landing)[:, 0] & due[:, 0] & recorded
    _, rate = jax.jvp(lambda t, q: _event_values(families, t, (q, v), args)[0][:, 0], (t, q), (jnp.ones_like(t), v))
    moved = continuous & (rate < 0)
    slope = jax.lax.stop_gradient(jnp.where(moved, rate, -1.0))
    first = values[:, 0]
    return jnp.where(moved, -(first - jax.lax.stop_gradient(first)) / slope, 0.0)


def _without_derivatives(tree):
    """``tree`` with its arrays' derivatives stopped."""
    arrays, others = eqx.partition(tree, eqx.is_array)
    return eqx.combine(jax.lax.stop_gradient(arrays), others)


@eqx.filter_custom_jvp
def _lazy_velocity_shift(shift, *, formulation, model, q, v, t):
    """s v̇ (shifts s, (contacts,), of value zero: ``_event_time_shifts``): zeros (contacts, n), derivative ds v̇.

    The accelerations v̇(q, v, t) are evaluated only where this is
    differentiated, so a run without derivatives neither traces nor computes them.
    """
    return jnp.zeros(jnp.shape(shift) + jnp.shape(v))


@_lazy_velocity_shift.def_jvp
def _lazy_velocity_shift_jvp(primals, tangents, *, formulation, model, q, v, t):
    (shift,), (d_shift,) = primals, tangents
    zeros = _lazy_velocity_shift(shift, formulation=formulation, model=model, q=q, v=v, t=t)
    if d_shift is None:
        return zeros, jnp.zeros_like(zeros)
    return zeros, d_shift[:, None] * _acceleration(formulation, model, q, v, t)


def _velocity_shift(shift, forward_mode, *, formulation, model, q, v, t):
    """s v̇ of ``_lazy_velocity_shift``, but under ``diffrax.ForwardMode`` the plain product s v̇ (zero, derivative ds v̇).

    The lazy custom JVP's tangent keeps a ``vmap``'s batch axis under ``jacfwd`` of a ``vmap`` (the compliant
    cushion fit's Jacobian failed with a slice error), and the plain product makes every iteration of the scan
    of segments slower, skipped ones too (docs/RESULTS.md, "Suite time, landings at turning points, the
    break's μ derivative"): forward mode, which differentiates anyway, takes the product; runs with the
    default adjoint keep the lazy one.
    """
    if forward_mode:
        return shift[:, None] * _acceleration(formulation, model, q, v, t)
    return _lazy_velocity_shift(shift, formulation=formulation, model=model, q=q, v=v, t=t)


def _stability_interval(solver):
    """How far the stability interval of ``solver`` reaches along the negative real axis: the largest x with
    |R| ≤ 1 on [−x, 0], R(z) = 1 + z bᵀ (I − z A)⁻¹ 1 the stability function of its Butcher tableau (A, b); ``inf``
    where |R| ≤ 1 on the whole axis (A-stable methods); ``None`` for a solver without a Butcher tableau.

    Found on a grid (steps of 2e-4 up to 20, then geometric up to 1e6): the last point before the first where
    |R| > 1. Euler's (R = 1 + z, no tableau in diffrax) is 2. A class's tableau is the class's: computed once a
    class.
    """
    return _class_stability_interval(type(solver))


@functools.cache
def _class_stability_interval(kind):
    if issubclass(kind, dfx.Euler):
        return 2.0
    tableau = getattr(kind, "tableau", None)
    if not isinstance(tableau, dfx.ButcherTableau):
        return None
    stages = len(tableau.b_sol)
    diagonal = np.zeros(stages) if tableau.a_diagonal is None else np.asarray(tableau.a_diagonal)
    x = np.concatenate([np.arange(1, 100_001) * 2e-4, np.geomspace(20.0, 1e6, 2000)[1:]])
    # (I − zA) g = 1 at z = −x, A lower triangular (explicit or diagonally implicit): forward substitution
    g = []
    for row in range(stages):
        below = sum(coefficient * g[j] for j, coefficient in enumerate(tableau.a_lower[row - 1])) if row else 0.0
        g.append((1.0 - x * below) / (1.0 + x * diagonal[row]))
    unstable = np.abs(1.0 - x * sum(b * g_i for b, g_i in zip(np.asarray(tableau.b_sol), g))) > 1.0 + 1e-12
    if not unstable.any():
        return np.inf
    first = np.argmax(unstable)
    return float(x[first - 1]) if first else 0.0


def _friction_step(solver):
    """h λ_F of ``friction_steps`` for ``solver``: ``FRICTION_STEP`` scaled by its stability interval over Tsit5's
    (``FRICTION_STEP`` itself for a solver without a Butcher tableau); ``None`` (no stability bound) where the
    interval is the whole axis (an A-stable implicit solver) or the friction is implicit (``IMEX_SOLVERS``)."""
    if isinstance(solver, IMEX_SOLVERS):
        return None
    interval = _stability_interval(solver)
    if interval is None:
        return FRICTION_STEP
    return None if np.isinf(interval) else FRICTION_STEP * (interval / _stability_interval(dfx.Tsit5()))


def _friction_guard(solver, friction_steps, frictional):
    """h λ_F at which ``_FrictionGuard`` stops a derivative: ``FRICTION_GUARD`` stability intervals of ``solver``;
    ``None`` (no guard) where the solver is stable on the friction (A-stable, or the friction implicit: an IMEX
    solver), where its interval is unknown (no Butcher tableau), or where ``friction_steps`` (the indices of the
    families it bounds) already bounds every step within it on each of the ``frictional`` families."""
    interval = None if isinstance(solver, IMEX_SOLVERS) else _stability_interval(solver)
    if interval is None or np.isinf(interval) or np.isinf(FRICTION_GUARD):
        return None
    limit = FRICTION_GUARD * interval
    bound = _friction_step(solver) if set(frictional) <= set(friction_steps) else None
    return None if bound is not None and bound <= limit else limit


class _FrictionGuard(WrappedSolver):
    """Wrap a diffrax solver so that a differentiated run with a step unstable on the friction raises an error.

    Without ``friction_steps`` an explicit solver's steps may be longer than
    the friction's stability allows while the error control is content: the
    run stays right, but its derivatives (forward or reverse mode) are
    amplified by the solver's |R(−h λ_F)| at every such step and come out
    silently wrong (the four-ball break's 3-s derivative 10⁸⁷ m at rtol
    1e-3). Each step's end state passes through an identity whose derivative
    rule checks h λ_F at the step's start, λ_F as ``friction_steps`` computes
    it (``_friction_rate``), against ``limit``; a run that is not
    differentiated computes nothing more. Only accepted steps count (a
    rejected trial step may be as long as it likes):

    * forward mode (``reverse`` false): a
      ``jax.custom_jvp`` whose rule flags the step in the solver's state
      (the first unstable step's family), which diffrax keeps only for
      accepted steps; the segment raises at its end where a step was flagged;
    * reverse mode (``reverse``: ``diffrax.RecursiveCheckpointAdjoint``,
      whose forward pass runs the plain steps): a ``eqx.filter_custom_vjp``
      whose backward rule raises where the step was unstable and its
      cotangent is not zero (diffrax gives a rejected step's end state none).

    The error names the family with the largest share of h λ_F at the body
    where it was beyond ``limit`` (``_friction_guard_messages``), so that a
    user can name it in ``friction_steps``.

    A few steps a little beyond the interval amplify a derivative by a
    bounded factor and leave it right (the ball rolling and hopping on the
    cloth at rtol 1e-6 has steps beyond one interval and its derivative
    2.3e-6 off), so ``limit`` is ``FRICTION_GUARD`` intervals: on the scenes
    measured it stops every derivative that blew up and passes every right
    one (docs/RESULTS.md, "The friction guard"). It cannot see a slip that
    passes through a law's band inside one step (``friction_steps``' other
    bound).
    """

    families: tuple = eqx.field(static=True)
    limit: float = eqx.field(static=True)
    reverse: bool = eqx.field(static=True)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args), jnp.full((), -1)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        state, flagged = solver_state
        y1, y_error, dense_info, state, result = self.solver.step(terms, t0, t1, y0, args, state, made_jump)
        families, limit = self.families, self.limit

        def unstable(model, y0, h):
            # which of ``families`` has the largest share of h λ_F at the body where it is beyond ``limit``, or -1
            q, v = (model.split(x) for x in y0)
            rates = _slip_rates(model, families, q, v)
            total = sum(rates)
            worst = jnp.argmax(total)
            return jnp.where(h * total[worst] > limit, jnp.argmax(jnp.stack(rates)[:, worst]), -1)

        arrays, static = eqx.partition((args[0], y0, t1 - t0), eqx.is_array)
        extra = eqx.combine(jax.lax.stop_gradient(arrays), static)  # (the check is no function of the parameters)
        if self.reverse:
            y1 = _cotangent_checked(y1, (unstable, _friction_guard_messages(args[0], families)), *extra)
        else:
            y1, flag = _tangent_flagged(y1, unstable, *extra)
            flagged = jnp.where(flagged >= 0, flagged, flag)  # (the first unstable step's family)
        return y1, y_error, dense_info, (state, flagged), result


def _stages_loop(solver, adjoint):
    """``solver`` with the stages' loop that ``adjoint`` differentiates set, as diffrax sets it for a Runge–Kutta
    solver in forward mode (``ForwardMode``: "lax"; ``DirectAdjoint``: "bounded"; the default, checkpointed for
    reverse mode, has no forward-mode derivative). diffrax sets it through a wrapper of the solver, but its
    solvers' metaclass looks one wrapper in, and with the friction guard a formulation's wrapper
    (``DirectCorrection``'s projection) is the second."""
    kind = {dfx.ForwardMode: "lax", dfx.DirectAdjoint: "bounded"}.get(type(adjoint))
    if kind is None or not isinstance(solver, dfx.AbstractRungeKutta) or solver.scan_kind is not None:
        return solver
    return eqx.tree_at(lambda s: s.scan_kind, solver, kind, is_leaf=lambda x: x is None)


def _tangent_flagged(y1, unstable, model, y0, h):
    """(``y1``, -1); differentiated, (``y1``, ``unstable(model, y0, h)``) with ``y1``'s tangent unchanged."""
    arrays, static = eqx.partition(model, eqx.is_array)

    @jax.custom_jvp
    def flagged(y1, arrays, y0, h):
        return y1, jnp.full((), -1)

    @flagged.defjvp
    def flagged_jvp(primals, tangents):
        y1, arrays, y0, h = primals
        flag = unstable(eqx.combine(arrays, static), y0, h)
        return (y1, flag), (tangents[0], np.zeros((), dtype=jax.dtypes.float0))

    return flagged(y1, arrays, y0, h)


@eqx.filter_custom_vjp
def _cotangent_checked(y1, check, model, y0, h):
    """``y1``; its cotangent raises where not zero and ``unstable(model, y0, h)`` names a family (≥ 0), with the
    message of that family of ``messages`` (``check``: (unstable, messages))."""
    return y1


@_cotangent_checked.def_fwd
def _cotangent_checked_fwd(perturbed, y1, check, model, y0, h):
    return y1, None


@_cotangent_checked.def_bwd
def _cotangent_checked_bwd(residuals, cotangent, perturbed, y1, check, model, y0, h):
    used = [jnp.any(c != 0) for c in jax.tree.leaves(cotangent)]
    if not used:
        return cotangent
    unstable, messages = check
    family = unstable(model, y0, h)
    return eqx.branched_error_if(cotangent, functools.reduce(jnp.logical_or, used) & (family >= 0),
                                 jnp.maximum(family, 0), messages)


def _friction_guard_messages(model, families):
    """The friction guard's error for each of ``families`` (indices in ``model.forces``), naming it."""
    return tuple(
        f"a differentiated step was unstable on the friction of model.forces[{k}] "
        f"({type(model.forces[k].friction).__name__} friction; h lambda_F beyond FRICTION_GUARD stability intervals "
        "of the solver): the derivatives of this run through stiff friction would be wrong; pass "
        f"friction_steps=True, or friction_steps naming model.forces[{k}] among others (or integrate the friction "
        "implicitly: an IMEX solver)" for k in families)


def _step_bound(families, t, y, args, near, friction, contact, floor, spin):
    """Largest step (s): the least of the bounds of the near distance (``near``), the friction (``friction``:
    (h λ_F, the indices of the families it bounds) or ``None``), the closed contacts' depths (``contact``) and the
    spatial bodies' spins (``spin``).

    With a near distance d_n: min over the approaching open contacts of
    max(−δ, d_n)/(2 δ̇), with the bodies' own approach δ̇ > 0 and distance −δ
    (at most the gap), not the gap's rate: a zone recovering after a
    zero-force separation moves the gap fast while the bodies do not move.
    With ``friction``, the solver's h λ_F (``_friction_step``): that over the
    largest of the bodies' ``Contact.slip_rates`` summed over the families named. With ``contact_steps``
    (``contact``: the indices of the families it bounds): min over their closed contacts of ``CONTACT_STEP``
    max(δ, ``floor``)/|δ̇|. With ``spin``: ``_spin_bound``.
    """
    model, status, _, _, _, near_distance, *_ = args
    q, v = (model.split(x) for x in y)

    def least(where, length, speed):
        # min of length/speed over the members ``where`` holds (inf if none)
        return jnp.min(jnp.where(where, length / jnp.where(where, speed, 1.0), jnp.inf))

    bounds = []
    for k, status_k in zip(families, status if near or contact else ()):
        penetration, rate = model.forces[k].penetration_rate(q, v)
        # (a family that is not located has no open and closed statuses: its penetration says)
        closed = status_k == CLOSED if model.forces[k].located else (status_k < REMOVED) & (penetration > 0)
        if near:
            approaching = (status_k < REMOVED) & ~closed & (rate > 0)
            bounds.append(least(approaching, jnp.maximum(-penetration, near_distance), 2.0 * rate))
        if k in contact:
            moving = closed & (rate != 0)
            bounds.append(least(moving, CONTACT_STEP * jnp.maximum(penetration, floor), jnp.abs(rate)))
    if friction is not None:
        step, bounded = friction
        bounds.append(step / _friction_rate(model, bounded, q, v))
    if spin:
        bounds.append(_spin_bound(q, v))
    return jnp.min(jnp.stack(bounds))


def _spin_bounded(model):
    """Whether ``SPIN_STEP`` bounds the adaptive steps of ``model``: its bodies are spatial and the bound finite."""
    return isinstance(model.bodies[0], SpatialBody) and bool(np.isfinite(SPIN_STEP))


def _spin_bound(q, v):
    """``SPIN_STEP`` over the largest angular speed of the spatial bodies' rows ``q``, ``v`` (bodies, 7), taken as
    2 |ṗ|/|p| (≥ |ω| = 2 |ṗ − p (pᵀṗ)/pᵀp|/|p|)."""
    speeds = 2.0 * jnp.linalg.norm(v[:, 3:], axis=1) / jnp.linalg.norm(q[:, 3:], axis=1)
    return SPIN_STEP / jnp.max(speeds)


def _friction_rate(model, families, q, v):
    """λ_F: the largest of the bodies' sums of ``Contact.slip_rates`` over the contact ``families`` (indices in
    ``model.forces``), at the split coordinates and velocities ``q``, ``v``."""
    return jnp.max(sum(_slip_rates(model, families, q, v)))


def _slip_rates(model, families, q, v):
    """Each of the contact ``families``' ``Contact.slip_rates``, per body, at ``q``, ``v``: a list of (bodies,)."""
    mobilities = body_mobilities(model.bodies)
    return [model.forces[k].slip_rates(mobilities, q, v) for k in families]


def _with_friction(families, model):
    """The families that exert friction (``Contact.frictional``)."""
    return [k for k in families if model.forces[k].frictional]


def _loaded_slips(families, y, args):
    """(f_N, v_t) of each of the ``families`` with friction (``Contact.slips``; indices in ``model.forces``, those
    ``friction_steps`` bounds) at the state ``y``, for ``_slip_passage``."""
    model = args[0]
    q, v = (model.split(x) for x in y)
    return tuple(model.forces[k].slips(q, v) for k in families)


def _slip_passage(families, slips0, slips1, args):
    """Largest ratio, over the loaded contacts of the ``families`` with friction, of a step's slip change
    |v_t1 − v_t0| to ``PASSAGE_STEP`` max(d, band): d the least distance of the straight path v_t0 → v_t1 from
    zero, band the friction law's ``band``. Above 1 the step passed through (or towards) the law's band too fast.
    ``slips0`` and ``slips1``: ``_loaded_slips`` at the step's start and end."""
    model = args[0]
    ratios = [jnp.zeros(())]
    for k, (f0, s0), (f1, s1) in zip(families, slips0, slips1, strict=True):
        change = s1 - s0
        along = jnp.clip(-jnp.sum(s0 * change, axis=-1) / jnp.maximum(jnp.sum(change**2, axis=-1), 1e-300), 0, 1)
        distance = jnp.linalg.norm(s0 + along[:, None] * change, axis=-1)
        band = model.forces[k].friction.band
        ratio = jnp.linalg.norm(change, axis=-1) / (PASSAGE_STEP * jnp.maximum(distance, band))
        ratios.append(jnp.max(jnp.where((f0 > 0) | (f1 > 0), ratio, 0.0)))
    return jnp.max(jnp.stack(ratios))


def _frictionless(model):
    """``model`` with the friction laws of its contact families removed."""
    frictional = _with_friction(_contact_indices(model), model)
    return eqx.tree_at(lambda m: [m.forces[k].friction for k in frictional], model, [None] * len(frictional))


def _imex_terms(vector_field):
    """The terms of an IMEX solver from a segment's ``vector_field``: explicit, the motion without friction (the
    segment's model, ``args[-2]``, without its friction laws); implicit, the friction's part of the accelerations,
    their difference (the formulations' accelerations are linear in the applied forces)."""

    def explicit(t, y, args):
        return vector_field(t, y, args[:-2] + (_frictionless(args[-2]), args[-1]))

    def implicit(t, y, args):
        (q, full), (_, without) = vector_field(t, y, args), explicit(t, y, args)
        return jnp.zeros_like(q), full - without

    return dfx.MultiTerm(dfx.ODETerm(explicit), dfx.ODETerm(implicit))


class _WrappedController(dfx.AbstractAdaptiveStepSizeController):
    """A PID ``controller`` whose steps a subclass bounds; its tolerances and norm are the PID's."""

    controller: dfx.PIDController

    @property
    def rtol(self):
        return self.controller.rtol

    @property
    def atol(self):
        return self.controller.atol

    @property
    def norm(self):
        return self.controller.norm


class _TangentErrors(_WrappedController):
    """A PID ``controller`` whose error control, in a forward-mode derivative, also bounds the tangents' errors.

    Differentiated in forward mode, an explicit Runge–Kutta step carries the
    tangents (the state's derivatives with respect to the parameters, one set
    a direction of ``jax.jvp`` or column of ``jax.jacfwd``) through the same
    stages as the state: its tangents are the step of the variational
    equations, and the tangent of its local error estimate is that step's
    error estimate. The PID controller alone judges the state's error, so a
    step that is accurate for the state but not for its derivatives is
    accepted: at a Hertz onset (the force's slope ∝ δ^½), in a friction
    law's band (the tangents' stiff modes) or through its corners. Here the
    controller judges max(‖e / (atol + rtol |y|)‖, ‖ė / (atol + rtol |ẏ|)‖),
    e the state's error estimate and ė its tangent, ẏ the tangents at the
    step's two ends, with the same rtol, atol and norm (``_with_tangent_error``;
    atol in the state's units per unit of the parameter, as CVODES's
    sensitivities with unit parameter scales): parameters of order one, or
    directions scaled to them, give it the meaning it has for the state.
    A run that is not differentiated computes nothing more and takes the
    same steps. Of several directions (``jax.jacfwd``), the step is judged
    by the worst, so that all share one run of the state.
    """

    def wrap(self, direction):
        return _TangentErrors(self.controller.wrap(direction))

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        return self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        y_error = _with_tangent_error(y_error, y0, y1_candidate, self.rtol, self.atol, self.norm)
        return self.controller.adapt_step_size(t0, t1, y0, y1_candidate, args, y_error, error_order,
                                               controller_state)


def _with_tangent_error(y_error, y0, y1, rtol, atol, norm):
    """``y_error``; differentiated (forward mode), scaled up where the tangents' error estimate is the larger:
    the PID's scaled error of the result is the larger of the state's and the tangents' (``_TangentErrors``)."""

    @jax.custom_jvp
    def scaled(y_error, y0, y1, rtol, atol):
        return y_error

    @scaled.defjvp
    def scaled_jvp(primals, tangents):
        y_error, y0, y1, rtol, atol = primals  # (the tolerances as arguments: they may be traced)
        tangent_error, tangent0, tangent1, _, _ = tangents

        def ratio(error, start, end):
            # the PID's scaled error of ``error`` at a step from ``start`` to ``end`` (a NaN end as the start)
            end = jax.tree.map(lambda a, b: jnp.where(jnp.isnan(b).any(), a, b), start, end)
            scale = jax.tree.map(lambda a, b: atol + rtol * jnp.maximum(jnp.abs(a), jnp.abs(b)), start, end)
            return norm(jax.tree.map(lambda x, s: x / s, error, scale)), scale

        state, scale = ratio(y_error, y0, y1)
        tangent, _ = ratio(tangent_error, tangent0, tangent1)
        # a NaN or infinite tangent error rejects the step (as diffrax's NaN state error does), where the tangents
        # at its start are finite: at a start already non-finite it would only shrink the steps to nothing
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tangent0)]))
        tangent = jnp.where(finite, jnp.where(jnp.isnan(tangent), jnp.inf, tangent), 0.0)
        worst = _worst_of_directions(jax.lax.stop_gradient(state), jax.lax.stop_gradient(tangent))
        # where the tangents' error is the larger, the error ``scale`` · worst, whose scaled norm is worst (the rms
        # and the max norm of a constant are that constant); infinite, it is infinite, and the step shrinks
        return jax.tree.map(lambda e, s: jnp.where(worst > state, s * worst, e), y_error, scale), tangent_error

    return scaled(y_error, y0, y1, *(jax.lax.stop_gradient(jnp.asarray(x, dtype=float)) for x in (rtol, atol)))


@jax.custom_jvp
def _differentiated(x):
    """0.0, or 1.0 in a forward-mode derivative with respect to anything ``x`` depends on (the JVP rule's primal
    output), with no derivative of its own: for what only a derivative's steps do (``_SegmentController``'s
    ``passages``)."""
    return jnp.zeros(())


@_differentiated.defjvp
def _differentiated_jvp(primals, tangents):
    return jnp.ones(()), jnp.zeros(())


@jax.custom_batching.custom_vmap
def _worst_of_directions(state, tangent):
    """max(``state``, ``tangent``); under ``vmap`` over the tangents only (``jax.jacfwd``: one state, one tangent
    error a direction), the largest of the directions', so that the state stays one run (unbatched)."""
    return jnp.maximum(state, tangent)


@_worst_of_directions.def_vmap
def _worst_of_directions_vmap(axis_size, in_batched, state, tangent):
    # A batch of the tangents only is one of directions: its largest. A batch of the states too (a user's vmap) is
    # one of runs: each its own, through this function again, so that a vmap over directions applied after it
    # (``jax.jacfwd`` of a ``jax.vmap``: the vmap batches first) still finds its directions.
    state_batched, tangent_batched = in_batched
    if tangent_batched and not state_batched:
        return _worst_of_directions(state, jnp.max(tangent, axis=0)), False
    state, tangent = (x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))
                      for x, batched in ((state, state_batched), (tangent, tangent_batched)))
    return _worst_of_directions(state, tangent), True


class _SpinController(_WrappedController):
    """The PID controller of a run without contacts whose bodies are spatial: no step turns one by more than
    ``SPIN_STEP`` (``_spin_bound`` at the end of each accepted step limits the next; in runs with contacts
    ``_SegmentController`` bounds the steps)."""

    def wrap(self, direction):
        return _SpinController(self.controller.wrap(direction))

    @staticmethod
    def _bound(y):
        q, v = (x.reshape(-1, SPATIAL_SIZE) for x in y)
        return jax.lax.stop_gradient(_spin_bound(q, v))  # the solver's choice, not the parameters' (as diffrax's)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        t_next, state = self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return jnp.minimum(t_next, t0 + self._bound(y0)), state

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        keep, next_t0, next_t1, jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state)
        next_t1 = jnp.where(keep, jnp.minimum(next_t1, next_t0 + self._bound(y1_candidate)), next_t1)
        return keep, next_t0, next_t1, jump, state, result


class _SegmentController(_WrappedController):
    """The PID controller of the segments: it starts each segment at the step the last one proposed.

    A segment starts where an event ended the last one. Its first step is
    the step size the controller proposed at the end of the last segment
    (``args[6]``, 0 at the first segment, which takes diffrax's initial step
    selection); the proposal is kept in the controller's state and read back
    at the segment's end (``SaveAt(controller_state=True)``). With spatial
    bodies (``spin``: ``SPIN_STEP``), a ``near_distance`` (``near``), ``friction_steps`` (``friction``: the
    indices of the families it bounds) or ``contact_steps`` (``contact``), every step is also bounded by
    ``_step_bound``: the bound at the end of each
    accepted step limits the next one; a rejected step is retried shorter
    than it was, so within the bound of the last accepted state. On the
    families of ``friction``, and in a forward-mode derivative (``_differentiated``) on those of ``passages``
    too (under ``_TangentErrors``: the other families with friction), a step the error control accepts is also
    rejected where a loaded slip moved too far in it (``_slip_passage``), and retried
    in proportion; the ratio of an accepted step bounds the next one. The
    slips of the accepted state are kept in the controller's state, where
    the next step starts. ``friction_step``: the solver's h λ_F
    (``_friction_step``); ``None`` without ``friction_steps`` and where the
    solver is stable on the friction (A-stable, or the friction implicit: an
    IMEX solver), where ``friction_steps`` keeps only the passages' bound.
    """

    families: tuple = eqx.field(static=True)
    near: bool = eqx.field(static=True)
    friction: tuple = eqx.field(static=True)
    passages: tuple = eqx.field(static=True)
    contact: tuple = eqx.field(static=True)
    friction_step: float = eqx.field(static=True)
    spin: bool = eqx.field(static=True)

    @property
    def stability(self):
        """Whether ``friction_steps`` bounds the steps by the friction's stability (not where it is implicit)."""
        return self.friction_step is not None

    @property
    def bounded(self):
        return self.near or self.stability or self.contact or self.spin

    @property
    def tracked(self):
        """The families whose loaded slips the controller keeps: those of ``friction`` and ``passages``."""
        return tuple(sorted(self.friction + self.passages))

    def _bound(self, t, y, args):
        # a step size is the solver's choice, not a function of the parameters: no derivative (as diffrax's
        # controllers), else the tangents would carry the grid's shifts, which cancel only at the end
        return jax.lax.stop_gradient(
            _step_bound(self.families, t, y, args, self.near,
                        (self.friction_step, self.friction) if self.stability else None,
                        self.contact, self.controller.atol, self.spin))

    def wrap(self, direction):
        return _SegmentController(self.controller.wrap(direction), self.families, self.near, self.friction,
                                  self.passages, self.contact, self.friction_step, self.spin)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        hint = jax.lax.stop_gradient(args[6])
        t_next, state = jax.lax.cond(
            hint > 0,
            lambda: self.controller.init(terms, t0, t1, y0, hint, args, func, error_order),
            lambda: self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order),
        )
        if self.bounded:
            t_next = jnp.minimum(t_next, t0 + self._bound(t0, y0, args))
        slips = jax.lax.stop_gradient(_loaded_slips(self.tracked, y0, args)) if self.tracked else ()
        return t_next, (state, t_next - t0, slips)

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        state, proposal, slips = controller_state
        keep, next_t0, next_t1, jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, state
        )
        if self.bounded:
            # only an accepted state bounds the next step: a rejected candidate can be far off (10²² m)
            bound = self._bound(t1, y1_candidate, args)
            next_t1 = jnp.where(keep, jnp.minimum(next_t1, next_t0 + bound), next_t1)
        if self.tracked:
            candidate = jax.lax.stop_gradient(_loaded_slips(self.tracked, y1_candidate, args))

            def passage(families):
                chosen = [k in families for k in self.tracked]
                return jax.lax.stop_gradient(_slip_passage(
                    families, *([s for s, c in zip(x, chosen) if c] for x in (slips, candidate)), args))

            ratio = passage(self.friction)
            if self.passages:
                ratio = jnp.maximum(ratio, jnp.where(_differentiated(y_error) > 0, passage(self.passages), 0.0))
            # (a candidate the error control rejected can be far off: only an accepted one is judged)
            fast = keep & (ratio > 1.0)
            step = 0.9 * (t1 - t0) / jnp.maximum(ratio, 1e-300)
            next_t0 = jnp.where(fast, t0, next_t0)
            next_t1 = jnp.where(fast, t0 + step, jnp.where(keep, jnp.minimum(next_t1, next_t0 + step), next_t1))
            keep = keep & ~fast
        proposal = jnp.where(keep, next_t1 - next_t0, proposal)
        if self.tracked:
            # the accepted end is the next step's start (diffrax keeps y1_candidate as it is)
            slips = jax.tree.map(lambda new, old: jnp.where(keep, new, old), candidate, slips)
        return keep, next_t0, next_t1, jump, (state, proposal, slips), result


def _contact_histories(families, t, y, args):
    """``ContactHistory`` rows at (t, y) of every contact family, with the segment's ``args``."""
    model, status, residual, released, *_ = args
    q, v = (model.split(x) for x in y)

    def member(contact, pose_i, pose_j, rate_i, rate_j, status, residual, released):
        gap, _ = _open_gap(contact, pose_i, pose_j, rate_i, rate_j, residual, released, t)
        penetration = contact.geometry.penetration(pose_i, pose_j)
        normal, normal_force, friction = _force_parts(contact, pose_i, pose_j, rate_i, rate_j)
        return ContactHistory(penetration, jnp.where(status == CLOSED, -penetration, gap), normal, normal_force,
                              friction)

    return tuple(model.forces[k].each(member, q, v, *rows) for k, *rows in zip(families, status, residual, released))


def _gathered(model, families, sizes):
    """The families whose closed members ``_closed_members`` gathers (static): the non-impulsive, located ones
    with more members than the largest of ``sizes`` (``simulate``'s ``max_closed``, ``None`` for none)."""
    if sizes is None:
        return ()
    return tuple(k for k in families if not model.forces[k].impulsive and model.forces[k].located
                 and model.forces[k].count > sizes[-1])


def _closed_members(model, families, sizes):
    """The model whose contact families hold only their closed members, which of ``sizes`` holds them, and
    whether a family had more than allowed.

    Inside ``simulate`` only a closed contact exerts a force (``engaged``), and
    the closed set changes only at events, so a segment's accelerations need
    no other members. Each family of ``_gathered`` keeps ``sizes[-1]`` of
    them (``simulate``'s ``max_closed``): its closed ones, in the family's
    order, then copies of member 0 with ``engaged`` 0 (no force). The second
    result is the index of the least of ``sizes`` that holds every such
    family's closed members (``_accelerations`` sums only that many); the
    third is True where a family had more closed members than ``sizes[-1]``.
    ``sizes`` ``None``: the model as it is.
    """
    most, too_many = jnp.asarray(0), jnp.asarray(False)
    for k in _gathered(model, families, sizes):
        contact = model.forces[k]
        closed = contact.engaged > 0.5
        count = jnp.sum(closed)
        index = jnp.nonzero(closed, size=sizes[-1], fill_value=0)[0]
        kept = jax.tree.map(lambda x: x[index], contact)
        kept = eqx.tree_at(lambda c: c.engaged, kept, jnp.where(jnp.arange(sizes[-1]) < count, kept.engaged, 0.0))
        model = eqx.tree_at(lambda m: m.forces[k], model, kept)
        most, too_many = jnp.maximum(most, count), too_many | (count > sizes[-1])
    return model, jnp.sum(most > jnp.asarray((sizes or (0,))[:-1], dtype=int)), too_many


def _accelerations(formulation, model, size, gathered, sizes, q, v, t):
    """The formulation's accelerations of ``_closed_members``' model, its ``gathered`` families cut to ``sizes[size]``.

    A ``lax.switch`` over the sizes, so that an evaluation costs what its
    segment's closed members cost (docs/RESULTS.md, "Evaluations that cost
    what is closed").
    """
    if not gathered or len(sizes) < 2:
        return _acceleration(formulation, model, q, v, t)

    def cut(count):
        def accelerations(q, v):
            first = eqx.tree_at(lambda m: [m.forces[k] for k in gathered], model,
                                [jax.tree.map(lambda x: x[:count], model.forces[k]) for k in gathered])
            return _acceleration(formulation, first, q, v, t)
        return accelerations

    return jax.lax.switch(size, [cut(count) for count in sizes], q, v)


def _removals(model, families, due, status):
    """(leaving, removed) flags per member, family by family, from the due removal functions ``due``.

    A due ``Geometry.removal`` removes its contact for good (``REMOVED``);
    in a family with ``removes_body`` (``Contact``) it leaves the contact's
    body j on its way out (``LEAVING``: no force, its ``Geometry.exit`` then
    watched), and the exit takes the body out of the scene: every member of
    every family with that body, on either side, is removed for good with it
    (but those already ``REMOVED``).
    """
    if not any(model.forces[k].removes_body for k in families):
        return [jnp.zeros_like(flags) for flags in due], list(due)
    leaving, removed, gone = [], [], jnp.zeros(len(model.bodies), dtype=int)
    for k, flags, status_k in zip(families, due, status):
        contact = model.forces[k]
        if contact.removes_body:
            leaving.append(flags & (status_k < REMOVED))
            exits = flags & (status_k == LEAVING)
            body = contact.geometry.body_j
            gone = gone.at[jnp.maximum(body, 0)].add((exits & (body >= 0)).astype(int))
            removed.append(exits)
        else:
            leaving.append(jnp.zeros_like(flags))
            removed.append(flags)
    out = []
    for k, flags, status_k in zip(families, removed, status):
        geometry = model.forces[k].geometry
        involved = ((geometry.body_i >= 0) & (gone[jnp.maximum(geometry.body_i, 0)] > 0)) | (
            (geometry.body_j >= 0) & (gone[jnp.maximum(geometry.body_j, 0)] > 0))
        out.append(flags | (involved & (status_k != REMOVED)))
    return leaving, out


def _apply_events(model, k, status, residual, released, hit, second, leaving, removed, q, v, t, rest_speed, shift,
                  velocity_shift):
    """The due events of family k (``hit``; by its ``second`` function where set, else the first), vectorised.

    Returns ``(model, status, residual, released, v, contact_event, onset)``,
    the last two one flag per contact; ``contact_event`` is False at the
    turning points of an open gap. The onsets of an impulsive family, with
    its other proximal members, are one impact (``impact_velocity``).
    Members ``removed`` (``_removals``) are removed for good, those
    ``leaving`` until their body's exit (with any event of theirs at the same
    instant); a removal's time is kept from the first of the two. ``shift`` and
    ``velocity_shift`` (``_event_time_shifts``, ``_velocity_shift``) carry the
    derivatives of the onset times into the laws set at them.
    """
    contact = model.forces[k]
    qs, vs = model.split(q), model.split(v)
    penetration = contact.penetration(qs)
    separation = hit & ~second & (status == CLOSED)
    crossed = hit & ~second & (status == APPROACHING)
    turning = hit & (second | (status == RECEDING))
    law = contact.active_law
    left = jnp.maximum(penetration, 0.0) if law is not None and law.separates_at_zero_force else 0.0
    # a residual surface deformation is kept until the bodies part (δ < 0 at a turning point)
    new_residual = jnp.where(separation, left, jnp.where(turning & (penetration < 0), 0.0, residual))
    # After a turning point the gap (with the surface as it now stands) says which way the bodies go: the
    # status is chosen so that its functions start positive (receding: ġ > −v_r; approaching: ġ < v_r,
    # g > 0). Dropping the recovering surface when the bodies have parted changes ġ by −ẋ_s, so the
    # bodies may still be receding from the bare surface. A gap that closed within the rest band is an
    # onset at the turn.
    gap, rate = _open_gaps(contact, qs, vs, t, new_residual, released)
    approaching = turning & (rate < -0.5 * rest_speed)
    landed = approaching & (gap <= 0)
    onset = crossed | landed
    # (and the time of a removal, which ``_trajectory`` reads back from the final statuses)
    new_released = jnp.where(separation | onset | leaving | (removed & (status != LEAVING)), t, released)
    out = removed | leaving
    open_status = jnp.where(approaching, APPROACHING, RECEDING)
    if contact.impulsive:
        # One impact of the proximal members ([Uchida 2015] §3a, Fig. 6): those within the proximity
        # tolerance, always with the members whose onset it is.
        impact = jnp.any(onset)
        in_play = (status != REMOVED) & ~removed  # (an impulsive family does not remove bodies: ``Contact``)
        taking_part = (onset | (penetration >= -contact.law.proximity)) & in_play
        v = jax.lax.cond(impact, lambda v: impact_velocity(model, contact, q, v, t, taking_part), lambda v: v, v)
        # After an impulse every member's status follows its gap rate as it then stands, as after a turning
        # point (receding; approaching only from a positive gap): the impulse changes the rates of members
        # that did not take part too. A member the model left touching and approaching has none.
        gap_after, rate_after = _open_gaps(contact, qs, model.split(v), t, new_residual, new_released)
        approaching_after = rate_after < -0.5 * rest_speed
        v = eqx.error_if(
            v, impact & jnp.any(approaching_after & (gap_after <= 0) & in_play),
            "a RigidImpact's model left a contact touching and approaching (Poisson's law can, where the others' "
            "restitution impulses press a contact that did not compress; an unconverged PLUS impact can): use "
            "a model that resolves it (newton.impact, plus.impact) or a larger rest_speed",
        )
        after = jnp.where(approaching_after, APPROACHING, RECEDING)
        new_status = jnp.where(impact, after, jnp.where(hit, open_status, status))
        new_status = jnp.where(removed | (status == REMOVED), REMOVED, new_status)
        updated = model
    else:
        new_status = jnp.where(removed, REMOVED, jnp.where(
            leaving, LEAVING, jnp.where(hit, jnp.where(onset, CLOSED, open_status), status)))
        # a fresh impact sets the law; a return onto the recovering surface keeps it
        fresh = onset & (new_residual <= 0)
        resolved = jax.lax.cond(
            jnp.any(fresh), lambda c: resolve_at_onset(model, c, q, v, t, shift, velocity_shift), lambda c: c, contact
        )
        contact = _select(fresh, resolved, contact)
        engaged = jnp.where(hit | out, (new_status == CLOSED).astype(float), contact.engaged)
        updated = eqx.tree_at(lambda m: m.forces[k], model, eqx.tree_at(lambda c: c.engaged, contact, engaged))
    return (
        updated,
        new_status,
        new_residual,
        new_released,
        v,
        separation | onset,
        onset,
    )


@eqx.filter_jit
def _simulate_events(
    model, state0, save_times, formulation, solver, controller, dt0, max_steps, progress, adjoint, max_events,
    event_tol, rest_speed, near_distance, contact_history, friction_steps, contact_steps, max_closed,
):
    families = _contact_indices(model)
    counts = [model.forces[k].count for k in families]
    slots = np.cumsum([0] + counts)
    q0, v0 = model.split(state0.q), model.split(state0.v)
    status0 = []
    for k in families:
        contact = model.forces[k]
        penetration, rate = contact.penetration_rate(q0, v0)
        # (laws set at onset must start apart: ``_check_impact_laws_open``)
        closed = _starts_closed(penetration, rate) & (not contact.impulsive)
        # touching at rest (δ = 0, δ̇ = 0) starts receding: approaching, its onset function g = 0 would start at
        # zero, where no down-crossing can be seen, and hide every other contact's event
        status = jnp.where(closed, CLOSED, jnp.where((rate >= 0) & (penetration < 0), APPROACHING, RECEDING))
        if not contact.located:  # (its statuses are only removed or not)
            status = jnp.full(contact.count, RECEDING)
        removal = contact.each(lambda c, pose_i, pose_j, _, __: c.geometry.removal(pose_i, pose_j), q0)
        if removal is not None:  # already gone (e.g. a ball that starts under a hole)
            status = jnp.where(removal <= 0, LEAVING if contact.removes_body else REMOVED, status)
        status0.append(status)
    # a body that starts out of the scene too (``removes_body``: its exit function ≤ 0) is taken out of it
    exits = []
    for k, status in zip(families, status0):
        contact = model.forces[k]
        outside = (contact.each(lambda c, pose_i, pose_j, _, __: c.geometry.exit(pose_i, pose_j), q0) <= 0
                   if contact.removes_body else False)
        exits.append((status == LEAVING) & outside)
    _, removed = _removals(model, families, exits, status0)
    status0 = tuple(jnp.where(flags, REMOVED, status) for status, flags in zip(status0, removed))
    for k, status in zip(families, status0):
        contact = model.forces[k]
        engaged = (status == CLOSED).astype(float) if contact.located else jnp.where(status >= REMOVED, 0.0, -1.0)
        model = eqx.tree_at(lambda m: m.forces[k].engaged, model, engaged)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    # constant save times (closed over by a caller's ``jit``) made XLA compile a 1.4× slower program
    save_times = jax.lax.optimization_barrier(save_times)
    t_end = save_times[-1]
    # Each segment saves the next SAVE_WINDOW times ahead of it, in order, padded with t_end (not reached by a
    # segment that an event ends), and runs to the window's last time where more follow: those segments (at
    # most ``window_ends``, each window but the first starting at the last one's end) are added to the scan.
    n_saves = len(save_times)
    window = min(n_saves, SAVE_WINDOW)
    window_ends = 0 if window == n_saves else -(-(n_saves - 1) // (window - 1))
    padded_times = jnp.concatenate([save_times, jnp.full(window, t_end)])
    imex = isinstance(solver, IMEX_SOLVERS)
    tangents = isinstance(controller, _TangentErrors)
    frictional = tuple(_with_friction(families, model))
    # a slip's passage through a band inside one step, which no error estimate sees, bounds the steps of every
    # family with friction where the derivatives' errors set them (``passages``: those friction_steps does not
    # name); the stability bound is friction_steps' only
    # (only in a derivative: a run that is not differentiated takes the steps it takes without them)
    passages = tuple(k for k in frictional if k not in friction_steps) if tangents else ()
    if isinstance(controller, (dfx.PIDController, _TangentErrors)):
        controller = _SegmentController(controller, tuple(families), near_distance is not None, friction_steps,
                                        passages, contact_steps,
                                        _friction_step(solver) if friction_steps else None, _spin_bounded(model))
    adaptive = isinstance(controller, _SegmentController)
    guard = _friction_guard(solver, friction_steps, frictional) if frictional and not tangents else None
    reverse = isinstance(adjoint, dfx.RecursiveCheckpointAdjoint)
    flags = guard is not None and not reverse  # (forward mode: the guard's flags, read at each segment's end)
    if guard is not None:
        solver = _stages_loop(solver, adjoint)

    def wrapped_solver(model):
        wrapped = formulation.wrap_solver(model, solver)
        return wrapped if guard is None else _FrictionGuard(wrapped, frictional, guard, reverse)

    # one event function, the least of all: its first down-crossing is the earliest of any
    # contact's, which bisection then locates
    event = dfx.Event(
        lambda t, y, args, **kwargs: _event_function(families, t, y, args),
        root_finder=_EventBisection(rtol=event_tol, atol=event_tol, flip=True),
        direction=False,
    )

    # A segment's args: (model, status, residual, released, rest_speed, near_distance, the controller's step
    # hint, the model with its closed contacts only and the size that holds them: ``_closed_members``), the
    # last two for the accelerations.
    gathered = _gathered(model, families, max_closed)

    def vector_field(t, y, args):
        q, v = y
        return v, _accelerations(formulation, *args[-2:], gathered, max_closed, q, v, t)

    terms = _imex_terms(vector_field) if imex else dfx.ODETerm(vector_field)

    if contact_history:
        def to_save(t, y, args):
            return y, _contact_histories(families, t, y, args)
    else:
        def to_save(t, y, args):
            return y

    def segment(carry, _):
        params, status, residual, released, t0, q, v, ys, hint, done = carry
        model = eqx.combine(params, static)
        # the save buffer stays out of the ``lax.cond``: its window is read and written back here, so that XLA
        # updates it in place (passed through a branch, inside a caller's ``jit`` it was copied at every slot)
        passed = jnp.sum(save_times < t0)
        old_rows = jax.tree.map(lambda x: jax.lax.dynamic_slice_in_dim(x, passed, window), ys)

        def run(_):
            ahead = jax.lax.dynamic_slice_in_dim(padded_times, passed, window)
            closed_only, size, too_many = _closed_members(model, families, max_closed)
            segment_args = (model, status, residual, released, rest_speed, near_distance, hint, closed_only, size)
            horizon = jnp.where(passed + window < n_saves, ahead[-1], t_end)
            solution = dfx.diffeqsolve(
                terms,
                wrapped_solver(model),
                t0=t0,
                t1=horizon,
                dt0=dt0,
                y0=(eqx.error_if(q, too_many, f"more than max_closed = {max_closed and max_closed[-1]} contacts "
                                 "of one family closed at once; increase max_closed"), v),
                args=segment_args,
                saveat=dfx.SaveAt(
                    subs=(dfx.SubSaveAt(ts=ahead, fn=to_save), dfx.SubSaveAt(t1=True)),
                    controller_state=adaptive,
                    solver_state=flags,
                ),
                stepsize_controller=controller,
                event=event,
                max_steps=max_steps,
                adjoint=adjoint,
                progress_meter=_meter(progress, state0.t, t_end, t0, horizon),
            )
            t1 = solution.ts[1][0]
            if flags:  # a forward-mode derivative's accepted steps flagged by ``_FrictionGuard`` (the family, or -1)
                family = solution.solver_state[1]
                t1 = eqx.branched_error_if(t1, family >= 0, jnp.maximum(family, 0),
                                           _friction_guard_messages(model, frictional))
            q1, v1 = (y[0] for y in solution.ys[1])
            happened = solution.event_mask
            saved = (ahead < t1) | ~happened
            new_rows = _select(saved, solution.ys[0], old_rows)
            # every function below zero just past the crossing is due: the earliest one, and any
            # other that crossed at the same instant (simultaneous impacts of a symmetric system)
            values, landing = _event_values(families, t1, (q1, v1), segment_args)
            due = happened & (values <= 0)
            shift = _event_time_shifts(families, model, status, values, landing, due, t1, q1, v1, segment_args)
            # the state at the event (recorded in ``Events``) and each onset's m and ⁻δ̇ move with its time
            velocity_shift = _velocity_shift(shift, isinstance(adjoint, dfx.ForwardMode), **_without_derivatives(
                {"formulation": formulation, "model": model, "q": q1, "v": v1, "t": t1}))
            first_due = jnp.argmin(jnp.where(due, values, jnp.inf).min(axis=1))  # whose crossing ended the segment
            def handle(model, status, residual, released, v, due, leaving, removed, shift, velocity_shift):
                # the events ``due`` (the rows' first two functions) at t1, family by family (``_apply_events``);
                # returns the new model, statuses, residuals, release times, velocities, event times and onsets
                statuses, residuals, releases, times, onsets = [], [], [], [], []
                for f, k in enumerate(families):
                    part = slice(slots[f], slots[f + 1])
                    rows = due[part]
                    hit = rows[:, 0] | rows[:, 1]
                    shift_f, velocity_shift_f = (None, None) if shift is None else (shift[part], velocity_shift[part])
                    model, status_f, residual_f, released_f, v, event_f, onset_f = _apply_events(
                        model, k, status[f], residual[f], released[f], hit, rows[:, 1] & ~rows[:, 0], leaving[f],
                        removed[f], q1, v, t1, rest_speed, shift_f, velocity_shift_f,
                    )
                    statuses.append(status_f)
                    residuals.append(residual_f)
                    releases.append(released_f)
                    times.append(jnp.where(hit & event_f, t1 if shift is None else t1 + shift_f, jnp.inf))
                    onsets.append(hit & onset_f)
                return model, statuses, residuals, releases, v, times, onsets

            leaving, removed = _removals(model, families, [due[slots[f] : slots[f + 1], 2]
                                                           for f in range(len(families))], status)
            new_model, new_status, new_residual, new_released, v1, times, onsets = handle(
                model, status, residual, released, v1, due, leaving, removed, shift, velocity_shift)
            if any(model.forces[k].impulsive for k in families):
                # An impulse changes the velocities, and with them the rates in the other contacts' functions
                # (a turning point's ġ ± v_r, a separation that depends on δ̇): any that the jump took to zero or
                # below is due now, and handled as the segment's own events (else it would start the next
                # segment below zero, where no crossing is seen, and hide every later event).
                after = (new_model, tuple(new_status), tuple(new_residual), tuple(new_released), rest_speed,
                         near_distance)
                jumped = _event_values(families, t1, (q1, v1), after)[0][:, :2] <= 0
                none = [jnp.zeros(count, bool) for count in counts]
                new_model, new_status, new_residual, new_released, v1, more_times, more_onsets = handle(
                    new_model, new_status, new_residual, new_released, v1, jumped, none, none, None, None)
                times = [jnp.minimum(a, b) for a, b in zip(times, more_times)]
                onsets = [a | b for a, b in zip(onsets, more_onsets)]
            new_params = eqx.filter(new_model, eqx.is_inexact_array)
            record = (jnp.concatenate(times), jnp.concatenate(onsets), q1 + shift[first_due] * v1,
                      v1 + velocity_shift[first_due])
            steps = jnp.asarray(solution.stats["num_accepted_steps"], dtype=int)
            carry = (
                new_params, tuple(new_status), tuple(new_residual), tuple(new_released), t1, q1, v1,
                solution.controller_state[1] if adaptive else hint, ~happened & (t1 >= t_end),
            )
            return carry, new_rows, (record, steps, jnp.asarray(True))

        def skip(_):
            record = (jnp.full(slots[-1], jnp.inf), jnp.zeros(slots[-1], bool), q, v)
            nothing = (record, jnp.asarray(0, dtype=int), jnp.asarray(False))
            return (params, status, residual, released, t0, q, v, hint, done), old_rows, nothing

        (params, status, residual, released, t0, q, v, hint, done), new_rows, out = jax.lax.cond(done, skip, run, None)
        ys = jax.tree.map(lambda x, rows: jax.lax.dynamic_update_slice_in_dim(x, rows, passed, 0), ys, new_rows)
        return (params, status, residual, released, t0, q, v, ys, hint, done), out

    zeros = tuple(jnp.zeros(count) for count in counts)
    shapes = jax.eval_shape(
        to_save, state0.t, (state0.q, state0.v),
        (model, status0, zeros, zeros, rest_speed, near_distance, 0.0, model, 0),
    )
    # rows past the last save time take the padding's rows
    nan = jax.tree.map(lambda x: jnp.full((n_saves + window,) + x.shape, jnp.nan), shapes)
    # what the segments change starts tied to the inputs (``_depending_on``): the contact families (their laws
    # set at onsets, ``engaged``), the residual surfaces, the time, the state, the saved rows and the step hint
    changing = _depending_on(
        ([params.forces[k] for k in families], zeros, zeros, state0.t, state0.q, state0.v, nan, jnp.zeros(())),
        (params, state0, save_times),
    )
    contacts, residual0, released0, t_start, q_start, v_start, nan, hint0 = changing
    params = eqx.tree_at(lambda p: [p.forces[k] for k in families], params, contacts)
    carry = (params, status0, residual0, released0, t_start, q_start, v_start, nan, hint0, jnp.array(False))
    carry, (records, steps, ran) = jax.lax.scan(segment, carry, None, length=max_events + 1 + window_ends)
    count = jnp.sum(jnp.isfinite(records[0]))
    # the check rides on everything returned, so that it is kept when only the events are used
    saved, (times, onsets, q_events, v_events), steps = eqx.error_if(
        (carry[7], records, steps), ~carry[-1] | (count > max_events),
        f"more than max_events = {max_events} events (contact onsets and separations, and turning "
        "points of open contacts' gaps); increase max_events",
    )
    # contact events in time order (simultaneous ones in the order of the contacts): the segments' events in
    # the segments' order (each segment's events are at its end, in the order of the contacts; a sort of all
    # the slots took 1.4 s for a 4-s break); the turning points only ended segments
    order = jnp.nonzero(jnp.isfinite(times.reshape(-1)), size=max_events, fill_value=0)[0]
    used = jnp.arange(max_events) < count
    segment_of, slot_of = order // slots[-1], order % slots[-1]
    family_of = np.repeat(families, counts)
    member_of = np.concatenate([np.arange(count) for count in counts])
    events = Events(
        count,
        jnp.where(used, times.reshape(-1)[order], jnp.inf),
        jnp.asarray(family_of)[slot_of],
        jnp.asarray(member_of)[slot_of],
        used & onsets.reshape(-1)[order],
        q_events[segment_of],
        v_events[segment_of],
    )
    saved = jax.tree.map(lambda x: x[:n_saves], saved)
    if progress:
        _progress.finish(saved)
    histories = None
    if contact_history:
        saved, by_family = saved
        by_force = dict(zip(families, by_family))
        histories = tuple(by_force.get(k) for k in range(len(model.forces)))
    removed = [(k, jnp.where(status >= REMOVED, released, jnp.inf)) for k, status, released in
               zip(families, carry[1], carry[3])]
    return _trajectory(eqx.combine(carry[0], static), save_times, *saved, jnp.sum(steps), jnp.sum(ran), events,
                       histories, removed)
