"""The full pool table of [Gismeros Moreno 2022]: the 16-ball break (`diffimpact reproduce break`) and any shot
(`diffimpact shot`, ``shot``: the same settings and files, for the cue ball struck at the balls a user places).

The break of ``billiard.table_model`` (a WPA 9-ft table, six cushions, six
pockets, the cue ball and the 15-ball rack with α = 2.1325735e-4 m; the
materials and laws of the ``formulations`` study) from ``break_state``
(10.729 m/s along +x), integrated with contact events (``FORMULATION``:
Baumgarte's stabilisation at α = β = 20 1/s; rtol = 1e-3, atol = 1e-6:
Matlab's defaults, as in that study, under diffrax's root-mean-square error
norm, about ode45's rtol = 1e-2 here: docs/design/table-settings.md, "A
ball's inertia under a drift of |p|; the error norm at table scale"; the
steps also bounded by the closed ball–cushion contacts, ``CONTACT_STEPS``). Writes

* ``break.csv``: the balls' centres (x, y, z; columns ``x_yellow_stripe_m`` …) and the energy at the save times;
* ``break-events.csv``: every contact onset and separation (time, force,
  member, onset and the contact's name, ``billiard.table_contact_names()[force][member]``);
* ``break.png``: a top view of the table with every ball's path and where it
  ends, and the energy over time.

The rack is mirror-symmetric about the aim line y = 0 and the shot is along
it, so the motion must stay mirror-symmetric: the summary reports the largest
mirror error, max over balls and times of |x_k − x_k'| + |y_k + y_k'| with k'
the mirror ball of k, the largest drift of the balls' Euler parameters off
unit length, max | |p| − 1 |, and the energy's largest rise above an earlier
value (``energy_rise``; the integration's error alone: 1.3e-3 J of the shot's
10.5 J at these tolerances, 1.6e-4 J at rtol = 1e-4, docs/design/step-control.md, "The
cushions' contacts resolved in steps"). ``quick``: 0.3 s instead of 4 s.

Why Baumgarte at α = β = 20. The Euler parameters of a spinning ball drift at
these tolerances: the solver's error in ṗ along p (an allowed 1e-3 of |ṗ| ≈
ω/2, some 100 1/s for a rolling ball) is never corrected by the Lagrange
multipliers, so |p| leaves 1 and keeps leaving: 21 by 4 s of the break
(docs/design/table-settings.md, "A ball's inertia under a drift of
|p|").
The motion does not see it: the rotation, the spins and the inertia are
those of p/|p| (``diffimpact.multibody.bodies``). But a run should not carry
coordinates that grow without bound, and Baumgarte's feedback at α = β = 20
(the top of the range the paper cites, §2.3) holds |p| within 3 % of 1 over
the 4 s (the same benchmark without ``--formulation``). (With the paper's
unnormalised M = 4 Gᵀ J' G the inertia grew as |p|⁴ and the 4-s run under the
Lagrange multipliers went unstable: docs/design/table-settings.md, "A ball's inertia under a drift of |p|".)
"""

import dataclasses
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.patches import Circle, Polygon, Rectangle  # noqa: E402

from diffimpact._validation import check_positive, check_range  # noqa: E402
from diffimpact.io import event_names, figure, save_figure, write_csv, write_events  # noqa: E402
from diffimpact.multibody import AdaptiveSteps, Baumgarte, ContactEvents, ForwardMode, simulate  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

DURATION, QUICK_DURATION = 4.0, 0.3
TOLERANCES = dict(rtol=1e-3, atol=1e-6)
#: Located contact events (onsets, separations and turning points of near gaps) allowed in the run: the 4-s break
#: has about 150 (its cloth's hops are not events). Each allowed event is a slot of ``simulate``'s scan of segments,
#: and a slot left unused costs about 30 µs (docs/design/event-engine.md, "Unused event slots").
MAX_EVENTS, QUICK_MAX_EVENTS = 2000, 400
#: ``ContactEvents``' near distance d_n (m): only gaps below it end segments at their turning points.
NEAR_DISTANCE = 5e-3
#: The table's formulation (module docstring: Baumgarte's feedback keeps the balls' Euler parameters near unit length).
FORMULATION = Baumgarte(alpha=20.0, beta=20.0)
#: Solver steps allowed in the run.
MAX_STEPS = 10_000_000
#: Sizes at which ``simulate`` sums the closed members of the ball–ball and ball–cushion families, below the most
#: (``settings``): after the rack's impact a few pairs and cushions are closed at a time, and an evaluation of the
#: 16-ball table's accelerations costs about a third at 4 of each than at 48 (docs/design/event-engine.md,
#: "Evaluations that
#: cost what is closed").
CLOSED_SIZES = (4, 16)
#: The families (``billiard.TABLE_FORCES``) whose closed contacts bound every step by their depths and rates
#: (``AdaptiveSteps``' ``contact_steps``, in ``settings``): the ball–cushion family. At rtol = 1e-3 the error control
#: alone let the energy rise by 6e-3 J of the break's 10.5 J and 1.4e-2 J of a cue shot's 2 J, inside ball–cushion
#: contacts; bounding the steps there costs about a tenth more steps and leaves 1.3e-3 and 1.8e-3 J
#: (docs/design/step-control.md, "The cushions' contacts resolved in steps").
CONTACT_STEPS = ("ball–cushion",)
#: Interval between save times (s).
SAVE_INTERVAL = 2e-3

#: Face colours of the balls of ``billiard.RACK_BALLS`` (a stripe is white with a band of its colour).
COLOURS = {"cue": "white", "yellow": "gold", "blue": "royalblue", "red": "red", "purple": "purple",
           "orange": "darkorange", "green": "forestgreen", "brown": "saddlebrown", "black": "black"}


def draw_ball(ax, centre, radius, name):
    colour = COLOURS[name.removesuffix("-stripe")]
    ax.add_patch(Circle(centre, radius, facecolor="white" if name.endswith("-stripe") else colour,
                        edgecolor="black", linewidth=0.4, zorder=4))
    if name.endswith("-stripe"):
        disc = Circle(centre, radius, transform=ax.transData, facecolor="none", edgecolor="none")
        ax.add_patch(disc)
        band = Rectangle((centre[0] - radius, centre[1] - 0.55 * radius), 2 * radius, 1.1 * radius,
                         facecolor=colour, edgecolor="none", zorder=4)
        ax.add_patch(band)
        band.set_clip_path(disc)


def draw_table(ax, p, centres=None, names=billiard.RACK_BALLS):
    """The table of ``p`` on ``ax`` (m), with balls at ``centres`` (default ``billiard.rack(p)``)."""
    half_length, half_width, width = p.table_length / 2, p.table_width / 2, p.cushion_width
    rail = 0.12
    ax.add_patch(Rectangle((-half_length - width - rail, -half_width - width - rail),
                           p.table_length + 2 * (width + rail), p.table_width + 2 * (width + rail),
                           facecolor="#5b3a1e", edgecolor="none", zorder=0))
    ax.add_patch(Rectangle((-half_length - width, -half_width - width), p.table_length + 2 * width,
                           p.table_width + 2 * width, facecolor="#1d6b3a", edgecolor="none", zorder=1))
    holes = billiard.pockets(p)
    for centre, radius in zip(np.asarray(holes.centres), np.asarray(holes.radii)):
        ax.add_patch(Circle(centre, radius, facecolor="black", edgecolor="none", zorder=1.5))
    for vertices in np.asarray(billiard.table_cushions(p)):
        # both jaws end on the rail line, so jaw – face – jaw closes into the rubber's plan
        ax.add_patch(Polygon(vertices, closed=True, facecolor="#2e8b57", edgecolor="none", zorder=2))
        ax.plot(*vertices.T, color="white", linewidth=0.8, zorder=3)
    for lips, drop in zip(np.asarray(holes.lips), np.asarray(holes.drops)):
        ax.plot(*lips.T, color="yellow", linewidth=0.6, linestyle="--", zorder=3)
        ax.plot(*drop, marker="x", color="yellow", markersize=4, zorder=3)
    ax.plot([p.cue_x, p.cue_x], [-half_width, half_width], color="white", linewidth=0.4, linestyle=":", zorder=2)
    ax.plot([p.cue_x, p.rack_x], [0.0, 0.0], marker=".", color="white", linewidth=0, zorder=2)
    centres = billiard.rack(p) if centres is None else centres
    for centre, name in zip(np.asarray(centres), names):
        draw_ball(ax, centre, p.radius, name)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


def mirror_partners(p):
    """Index of each ball's mirror image about y = 0 in ``billiard.rack(p)`` (the cue ball is its own)."""
    centres = np.asarray(billiard.rack(p))
    mirrored = centres * np.array([1.0, -1.0])
    return np.array([int(np.argmin(np.linalg.norm(centres - m, axis=1))) for m in mirrored])


def save_times(duration):
    """The run's save times: 0 to ``duration`` (s) every ``SAVE_INTERVAL``."""
    return jnp.linspace(0.0, duration, int(round(duration / SAVE_INTERVAL)) + 1)


def energy_rise(energy):
    """Largest rise of ``energy`` (J, over time) above any earlier value, max over t of E(t) − min over s ≤ t of
    E(s); 0 if it never rises. The table's energy counts the contacts' elastic energy, every force but gravity
    dissipates or is conservative, so it must not rise at all but by the integration's error."""
    energy = np.asarray(energy)
    return float((energy - np.minimum.accumulate(energy)).max())


def euler_drift(q):
    """Largest drift of the balls' Euler parameters off unit length, max | |p| − 1 |, of saved coordinates q."""
    poses = np.asarray(q).reshape(-1, 7)
    return float(np.abs(np.linalg.norm(poses[:, 3:], axis=1) - 1.0).max())


def settings(model, rtol=None, max_events=MAX_EVENTS, max_step=None):
    """``simulate``'s keyword arguments for the table ``model``: ``steps``, ``AdaptiveSteps`` with ``TOLERANCES``
    (or ``rtol`` and atol = 1e-3 rtol), ``contact_steps`` on ``CONTACT_STEPS`` and ``max_step`` (s, ``None`` for
    none); ``events``, ``ContactEvents`` with ``max_events``, ``NEAR_DISTANCE`` and ``max_closed``: the
    ``CLOSED_SIZES`` below the most for its balls (``billiard.max_closed``), then that; and ``MAX_STEPS``."""
    balls = len(model.bodies)
    most, forces = billiard.max_closed(balls), billiard.table_forces(balls)
    tolerances = TOLERANCES if rtol is None else dict(rtol=rtol, atol=1e-3 * rtol)
    steps = AdaptiveSteps(**tolerances, max_step=max_step,
                          contact_steps=tuple(forces.index(name) for name in CONTACT_STEPS))
    events = ContactEvents(max_events=max_events, near_distance=NEAR_DISTANCE,
                           max_closed=tuple(size for size in CLOSED_SIZES if size < most) + (most,))
    return dict(steps=steps, events=events, max_steps=MAX_STEPS)


def integrate(model, state, times, max_events, formulation=None, max_step=None, rtol=None):
    """``simulate`` with the table's ``settings`` (``rtol`` as there).

    ``formulation``: default ``FORMULATION``; ``max_step``: the largest
    adaptive step (s), default none (the ``formulations`` study sets the
    paper's default time steps). ``max_step`` is traced, so runs that differ
    only in it, in ``state`` or in the values of ``times`` share one compilation.
    """
    formulation = FORMULATION if formulation is None else formulation
    return simulate(model, state, times, formulation, **settings(model, rtol, max_events, max_step))


def run(out, quick=False):
    """Write ``break.csv``, ``break-events.csv`` and ``break.png``; returns a summary.

    About 1.5 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    out = Path(out)
    p = billiard.Parameters()
    duration = QUICK_DURATION if quick else DURATION
    times = save_times(duration)
    model, state = billiard.table_model(p), billiard.break_state(p)
    if not quick:
        print(f"integrating {duration:g} s of the break (about half a minute on 2 cores) ...", flush=True)
    trajectory = integrate(model, state, times, QUICK_MAX_EVENTS if quick else MAX_EVENTS)
    centres, lines, _ = _write(out, "break", p, trajectory, times, f"the break, {duration:g} s")
    partner = mirror_partners(p)
    mirror = np.abs(centres[:, :, 0] - centres[:, partner, 0]) + np.abs(centres[:, :, 1] + centres[:, partner, 1])
    lines.insert(-2, f"  largest mirror error about y = 0: {mirror.max():.2e} m")
    return "\n".join([
        f"Gismeros Moreno et al. 2022: the 16-ball break on the full table, {duration:g} s at 10.729 m/s "
        f"(Baumgarte α = β = {float(FORMULATION.alpha):g}, rtol = {TOLERANCES['rtol']:g}, atol = {TOLERANCES['atol']:g})",
        *lines])


#: ``shot``'s defaults: the object ball (yellow) and the pocket it is aimed at, the cue ball's speed (m/s).
SHOT_BALLS, SHOT_POCKET, SHOT_SPEED = ((0.9, 0.3),), "foot-left", 2.0
#: ``shot``'s relative tolerance (atol = 1e-3 rtol), tighter than the break's ``TOLERANCES`` (the paper's Matlab
#: defaults): at rtol = 1e-3 the cloth's friction chatters in steps across its band when a ball's slide turns into
#: rolling, which acts as a rolling resistance that the model does not have (a ball launched at 2 m/s on the
#: critically damped cloth rolls 1.8 % slow after 0.8 s, against 4e-6 at 1e-5: ``validation/slide_to_roll.py``),
#: and ``shot``'s default shot ends with the cue ball 10 mm from where runs at 1e-5 and 1e-6 agree within 0.9 mm
#: (docs/results/shot.md, "`diffimpact shot`").
SHOT_RTOL = 1e-5
#: The relative tolerance of ``shot``'s ``sensitivity`` at most (the derivative's run, atol = 1e-3 rtol; its steps
#: judged by the derivatives' errors too): through the cloth's hops, whose landings are not events, the derivatives
#: converge slowly with rtol. The README's shot (0.4 s): every entry within 2.3e-4 m per unit of the strike at rtol
#: 1e-5 and 3.8e-6 at 1e-8, in 0.37 and 0.98 s; the default shot (4 s, the cue ball hopping after the foot
#: cushion): the cue ball's dx/d(speed) −0.927 at 1e-5 and −0.6422 at 1e-8 (9.6 and 21.7 s), against −0.6418 and
#: −0.6363 from central differences at steps 1e-5 and 1e-6 (``validation/shot_gradient.py``;
#: docs/design/step-control.md, "The passages through the band under the tangents' errors").
SENSITIVITY_RTOL = 1e-8
#: Contact events listed in ``shot``'s summary (all of them are in ``shot-events.csv``).
SHOT_LISTED = 12


def shot(out, cue=None, balls=SHOT_BALLS, speed=SHOT_SPEED, aim=None, pocket=SHOT_POCKET, topspin_ratio=0.0,
         sidespin_ratio=0.0, duration=DURATION, nose=False, p=None, rtol=SHOT_RTOL, sensitivity=False):
    """Any shot of the cue ball on the full table (``diffimpact shot``): write ``shot.csv``, ``shot-events.csv`` and
    ``shot.png`` as ``run`` does for the break; returns a summary with the first ``SHOT_LISTED`` contact onsets (and
    a note where a ball hopped higher than its radius on the paper's cushions or cloth).

    ``cue``: the cue ball's centre (x, y) (m), default the head spot; ``balls``: the object balls' centres, at rest,
    named as the next balls of ``billiard.RACK_BALLS`` (yellow, blue, red, ...). The cue ball leaves the cue at
    ``speed`` (m/s) with the spins of ``billiard.cue_strike`` (default none: it slides, then rolls) along ``aim``
    (degrees from +x towards +y), or, where ``aim`` is ``None``, along ``billiard.ghost_ball_aim`` of the first
    object ball for ``pocket`` (``None``: at the first object ball's centre, a full-ball hit; with no object
    ball, along +x). ``duration`` (s). ``nose``: cushions touching the balls at Mathavan et al.'s nose height 7R/5
    (``billiard.table_model``'s ``nose_height``) instead of the paper's faces at the centre height, which throw
    a ball that meets them spinning or in the air up off the cloth. ``p``: the table's ``billiard.Parameters``
    (default the paper's; its ``cloth_damping_ratio`` ≥ 0, e.g. 1 for a cloth that does not give a ball landing
    on it or pressed into it by a nose-height cushion the energy back as a jump). ``rtol``: the integration's
    relative tolerance (atol = 1e-3 rtol; ``SHOT_RTOL`` by default, ``TOLERANCES``' 1e-3 for the break's).
    ``sensitivity``: also the derivatives of every ball's final centre (x, y) with respect to the strike (True:
    speed, aim, topspin and sidespin ratios, ``STRIKE``) or to the names given of ``STRIKE`` and of
    ``TABLE_PARAMETERS`` (the balls' and the table's materials and laws, e.g. ``ball_restitution``,
    ``cloth_friction``), in forward mode with the steps judged by the derivatives' errors too (``ForwardMode``'s
    ``tangent_errors``; by the state's alone a shot's derivatives are wrong: ``validation/shot_gradient.py``), each
    by its ratio to its value's size, and at an rtol of at most ``SENSITIVITY_RTOL``, written to
    ``shot-sensitivity.csv`` (per degree of aim, per SI unit of the rest) and summarised. Bad input (balls that
    overlap, sit in a cushion or over a pocket, a speed ≤ 0, a cloth damping ratio < 0, an impossible cut, a name
    that cannot be differentiated by) raises ``ValueError`` naming it.
    """
    out = Path(out)
    p = billiard.Parameters() if p is None else p
    differentiated = _sensitivity_names(sensitivity)
    duration = float(check_positive("duration", duration))
    rtol = float(check_range("rtol", rtol, 0.0, 1.0, low_open=True, high_open=True))
    damping = float(check_range("cloth_damping_ratio", p.cloth_damping_ratio, 0.0))
    cue = (p.cue_x, 0.0) if cue is None else tuple(cue)
    centres = np.array([cue, *balls], dtype=float).reshape(-1, 2)
    nose_height = p.nose_height() if nose else None
    billiard.table_state(p, centres, np.zeros_like(centres), nose_height=nose_height)  # placed, before aimed
    aimed = ""
    if aim is not None:
        aim = np.radians(float(check_range("aim", aim)))
    elif len(centres) == 1:
        aim = 0.0
    elif pocket is None:
        towards = centres[1] - centres[0]
        aim, aimed = float(np.arctan2(towards[1], towards[0])), " at the yellow ball's centre"
    else:
        aim, aimed = billiard.ghost_ball_aim(p, centres[0], centres[1], pocket), f" into the {pocket} pocket"

    def start(strike, p):
        # the table's state from the strike (speed, aim (rad), topspin and sidespin ratios), differentiable in it
        velocity, spin = billiard.cue_strike(p, *strike)
        velocities = jnp.zeros((len(centres), 2)).at[0].set(velocity)
        spins = jnp.zeros((len(centres), 3)).at[0].set(spin)
        return billiard.table_state(p, centres, velocities, spins, nose_height)

    strike = jnp.array([speed, aim, topspin_ratio, sidespin_ratio], dtype=float)
    state = start(strike, p)
    model = billiard.table_model(p, len(centres), nose_height)
    times = save_times(duration)
    print(f"integrating {duration:g} s of the shot (compiling takes 10–30 s) ...", flush=True)
    trajectory = integrate(model, state, times, MAX_EVENTS, rtol=rtol)
    saved, lines, removed = _write(out, "shot", p, trajectory, times, f"the shot, {duration:g} s")
    causes = [] if nose else ["the paper's centre-height cushions throw a spinning ball up"]
    if damping == 0:
        given_back = "the nose's push into it" if nose else "a landing"
        causes.append(f"its undamped cloth gives {given_back} back as a jump")
    if highest_hop(p, times, saved)[1] > p.radius and causes:
        lines.append(f"  (a ball hopped higher than its radius: {'; '.join(causes)}; with --nose "
                     "--cloth-damping-ratio 1 the balls stay within millimetres of the cloth: docs/table-shots.md, "
                     "\"Your own shot\")")
    events = trajectory.events
    onsets = [(float(t), name) for t, name, onset in zip(
        events.t, event_names(events, billiard.table_contact_names(len(centres))), events.onset) if onset]
    listed = [f"    {t:.4f} s  {contact}" for t, contact in onsets[:SHOT_LISTED]]
    if len(onsets) > SHOT_LISTED:
        listed.append(f"    ... and {len(onsets) - SHOT_LISTED} more (shot-events.csv)")
    cloth = "undamped (the paper's Hertz)" if damping == 0 else f"damped at ζ = {damping:g} (Hunt–Crossley)"
    if differentiated:
        lines += _sensitivity(out, p, len(centres), nose_height, start, strike, times, rtol, differentiated, removed)
    return "\n".join([
        f"the cue ball from ({cue[0]:g}, {cue[1]:g}) m at {float(speed):g} m/s, aim {np.degrees(aim):.3f}°{aimed} "
        f"(topspin {float(topspin_ratio):g}, sidespin {float(sidespin_ratio):g} × V/R), "
        f"{len(centres) - 1} object ball{'s' if len(centres) != 2 else ''}, {duration:g} s "
        f"(cushions at {'the nose height' if nose else 'the centre height'}; the cloth {cloth}; Baumgarte α = β = "
        f"{float(FORMULATION.alpha):g}, rtol = {rtol:g}, atol = {1e-3 * rtol:g})",
        *lines[:1], "  contact onsets:", *(listed or ["    none"]), *lines[1:]])


#: The strike's parameters that ``shot``'s ``sensitivity`` differentiates by (True: all four), and their units in
#: its output.
STRIKE = (("speed", "m/s"), ("aim", "degree"), ("topspin", "V/R"), ("sidespin", "V/R"))
#: The ``billiard.Parameters`` that ``shot``'s ``sensitivity`` can also differentiate by, and their units: the balls'
#: mass and inertia, gravity, and the materials and laws of the balls, the cloth and the cushions (the geometry
#: builds the table's cushions and pockets, and is not among them).
TABLE_PARAMETERS = (("mass", "kg"), ("inertia", "kg m^2"), ("gravity", "m/s^2"), ("ball_modulus", "Pa"),
                    ("ball_poisson", "1"), ("cloth_modulus", "Pa"), ("cloth_poisson", "1"), ("cushion_modulus", "Pa"),
                    ("cushion_poisson", "1"), ("ball_restitution", "1"), ("cloth_friction", "1"),
                    ("cloth_damping_ratio", "1"), ("cushion_restitution", "1"), ("cushion_friction", "1"))


def _sensitivity_names(sensitivity):
    """``shot``'s ``sensitivity`` as the names to differentiate by, in the order given (once each): () for False or
    None, ``STRIKE``'s for True; a name of neither ``STRIKE`` nor ``TABLE_PARAMETERS`` raises ``ValueError``."""
    if sensitivity is None or sensitivity is False:
        return ()
    if sensitivity is True:
        return tuple(name for name, _ in STRIKE)
    names = (sensitivity,) if isinstance(sensitivity, str) else tuple(sensitivity)
    known = dict(STRIKE + TABLE_PARAMETERS)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"sensitivity cannot differentiate by {', '.join(map(str, unknown))}: name the strike's "
                         f"{', '.join(name for name, _ in STRIKE)} or the table's "
                         f"{', '.join(name for name, _ in TABLE_PARAMETERS)}")
    if not names:
        raise ValueError("sensitivity names no parameter: True for the strike's, or names of STRIKE and "
                         "TABLE_PARAMETERS")
    return tuple(dict.fromkeys(names))


def direction_scales(values):
    """The sizes by which ``shot``'s sensitivity differentiates its parameters at ``values``: |value|, 1 for a value
    of 0 (e.g. no spin: per unit), so that the tangents' errors judge each direction on the scale of its own value."""
    values = np.asarray(values, dtype=float)
    return np.where(values == 0.0, 1.0, np.abs(values))


def _sensitivity(out, p, balls, nose_height, start, strike, times, rtol, names, removed):
    """d(every ball's final (x, y))/d(``names``) in forward mode, the steps judged by the derivatives' errors too
    (``ForwardMode``'s ``tangent_errors``): ``shot-sensitivity.csv`` and the summary's lines. ``removed``: where each
    ball that left the cloth went (``_write``): its final centre is then under the table, falling on, and its rows
    say so (the file's ``status`` column)."""
    rtol = min(rtol, SENSITIVITY_RTOL)
    print(f"differentiating the shot by {', '.join(names)} (forward mode, the steps judged by the derivatives' "
          f"errors too, rtol = {rtol:g}; compiling takes about a minute) ...", flush=True)
    strikes = [name for name, _ in STRIKE]

    def final(ratios):
        # the strike and the table with ``names`` set to ``ratios`` times ``scales``, the table's model built from
        # them: the tangents are per ``scales`` of each, so that the tangents' errors judge each direction on the
        # scale of its own value (a modulus's per Pa would not be judged at all)
        given = dict(zip(names, ratios * scales))
        shot = jnp.stack([given.get(name, strike[k]) for k, name in enumerate(strikes)])
        table = dataclasses.replace(p, **{name: x for name, x in given.items() if name not in strikes})
        model = billiard.table_model(table, balls, nose_height)
        run = simulate(model, start(shot, table), times, FORMULATION, derivatives=ForwardMode(),
                       **settings(model, rtol))
        return run.q[-1].reshape(-1, 7)[:, :2]

    values = np.array([strike[strikes.index(name)] if name in strikes else getattr(p, name) for name in names],
                      dtype=float)
    scales = direction_scales(values)
    jacobian = np.array(eqx.filter_jit(jax.jacfwd(final))(values / scales)) / scales  # (balls, 2, parameters)
    if "aim" in names:
        jacobian[..., names.index("aim")] *= np.pi / 180.0  # per degree of aim
    ball_names = billiard.RACK_BALLS[:balls]
    status = [removed.get(name, "on the table") for name in ball_names]
    columns = {"ball": np.array(ball_names), "status": np.array(status)}
    for axis, label in enumerate("xy"):
        for k, name in enumerate(names):
            columns[f"d{label}_d_{name}"] = jacobian[:, axis, k]
    write_csv(out / "shot-sensitivity.csv", columns)
    units = {name: "unit" if unit == "1" else unit for name, unit in STRIKE + TABLE_PARAMETERS}
    rows = [f"    {name:<14} d{label}: " + "  ".join(f"{value:+.4e}" for value in jacobian[b, axis])
            + (f"  ({status[b]}: the centre under the table)" if name in removed else "")
            for b, name in enumerate(ball_names) for axis, label in enumerate("xy")]
    return [f"  sensitivity of each ball's final centre (m per {', per '.join(f'{units[n]} of {n}' for n in names)}; "
            f"rtol = {rtol:g}; shot-sensitivity.csv):", *rows]


def _write(out, stem, p, trajectory, times, title):
    """Write ``STEM.csv`` (the balls' centres and the energy), ``STEM-events.csv`` (with the contacts' names) and
    ``STEM.png`` of a table run; returns the centres (saves, balls, 3), the summary's lines and, for each ball that
    left the cloth, where it went ("pocketed in the foot-left pocket at 1.5670 s", "left the table at ...")."""
    q = np.asarray(trajectory.q).reshape(len(times), -1, 7)
    balls = q.shape[1]
    centres = q[:, :, :3]
    names = billiard.RACK_BALLS[:balls]
    columns = {"t_s": np.asarray(times), "energy_J": np.asarray(trajectory.energy)}
    for k, name in enumerate(names):
        for axis, label in enumerate("xyz"):
            columns[f"{label}_{name.replace('-', '_')}_m"] = centres[:, k, axis]
    write_csv(out / f"{stem}.csv", columns)
    events = trajectory.events
    count = int(events.count)
    write_events(out / f"{stem}-events.csv", events, billiard.table_contact_names(balls))
    energy = columns["energy_J"]
    dropped, flown = billiard.pocketed(p, trajectory, balls), billiard.left_table(p, trajectory, balls)
    _plot(p, columns["t_s"], centres, energy, names, dropped, title, out / f"{stem}.png")
    forces = billiard.table_forces(balls)

    def onsets(force):
        index = forces.index(force) if force in forces else -1
        return sum(1 for f, o in zip(events.contact[:count], events.onset[:count]) if int(f) == index and bool(o))

    # where each removed ball went, in time order: for the summary's lines and for ``removed``
    into = {ball: f"in the {pocket} pocket at {t:.4f} s" for t, ball, pocket in dropped}
    off = {ball: f"at {t:.4f} s" for t, ball in flown}
    removed = {**{ball: f"pocketed {where}" for ball, where in into.items()},
               **{ball: f"left the table {when}" for ball, when in off.items()}}
    hopper, hop, hop_time = highest_hop(p, times, centres)
    return centres, [
        f"  {int(trajectory.steps)} solver steps in {int(trajectory.segments)} segments, {count} contact events "
        f"({onsets('ball–ball')} ball–ball and {onsets('ball–cushion')} ball–cushion onsets)",
        f"  energy {energy[0]:.4f} J at the shot, {energy[-1]:.4f} J at the end; largest rise above an earlier "
        f"value {energy_rise(energy):.2e} J",
        f"  largest drift of the Euler parameters, max | |p| − 1 |: {euler_drift(q):.2e}",
        f"  highest a ball got above its resting height on the cloth (at the saves): {1e3 * hop:.2f} mm, "
        f"{names[hopper]} at {hop_time:.3f} s",
        "  pocketed: " + (", ".join(f"{ball} {where}" for ball, where in into.items()) or "none"),
        "  left the table: " + (", ".join(f"{ball} {when}" for ball, when in off.items()) or "none"),
    ], removed


def highest_hop(p, times, centres):
    """The highest a ball's centre got above its resting height on the cloth (``Parameters.resting_height``) at the
    saves ``times`` of ``centres`` (saves, balls, 3): (the ball's index, the height (m), the time (s)). On the
    paper's undamped cloth a ball that gets a vertical push (a spinning ball meeting a cushion at the centre
    height, a ball landing on another) keeps hopping (docs/design/event-engine.md, "The cloth's hops are not
    events")."""
    heights = np.asarray(centres)[:, :, 2] - float(p.resting_height())
    save, ball = np.unravel_index(np.argmax(heights), heights.shape)
    return int(ball), float(heights[save, ball]), float(np.asarray(times)[save])


def _plot(p, t, centres, energy, names, dropped, title, path):
    fig, axes = figure(1, 2, width=6.5, height=4.2)
    top, bottom = axes[0, 0], axes[0, 1]
    # a pocketed ball fell through its hole and drifts on under the table: not drawn there
    on_table = centres[:, :, 2] > -p.radius
    left = on_table[-1]
    draw_table(top, p, centres[-1, left, :2], [name for name, on in zip(names, left) if on])
    for k in range(centres.shape[1]):
        top.plot(centres[on_table[:, k], k, 0], centres[on_table[:, k], k, 1], linewidth=0.7, zorder=3.5)
    margin = p.cushion_width + 0.12
    top.set_xlim(-p.table_length / 2 - margin, p.table_length / 2 + margin)
    top.set_ylim(-p.table_width / 2 - margin, p.table_width / 2 + margin)
    top.set_title(f"{title}: paths and final positions; pocketed: "
                  + (", ".join(ball for _, ball, _ in dropped) or "none"), fontsize=9)
    bottom.plot(t, energy)
    bottom.set_xlabel("t (s)")
    bottom.set_ylabel("kinetic + potential energy (J)")
    bottom.set_title("energy: sliding and the collisions dissipate", fontsize=9)
    save_figure(fig, path)
