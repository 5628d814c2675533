"""[Uchida 2015] Example 4 (§4d, Fig. 15): PLUS against the compliant model on a triple pendulum.

The scene (the paper's numbers): three pin-connected rigid cylinders of
length L = 1 m, radius r = 0.1 m and mass 1 kg hang from a pin 2 m above the
ground; a sphere of radius R = 0.25 m and mass 1 kg (μ = 0.1 on the ground) is
welded to the free end of the third. Released at rest from θ = (π/4, 3π/4,
5π/6) rad, the chain falls and the sphere strikes the ground, sliding
throughout the collision. The impact is resolved (a) by PLUS with e = 1 and
(b) by the compliant model, undamped Hertz contact with E from 0.01 to
100 GPa, integrated with its accuracy tightened until the sphere's final
height is within 1 %; Fig. 15b compares the CPU time of the two.

Choices the paper leaves open (each justified in docs/results/impulse-models.md):

* θ_i are the pin angles in Simbody's sense, each link's angle relative to
  the one before, θ_1 relative to the downward vertical: the absolute angle
  of link i from the downward vertical is φ_i = θ_1 + … + θ_i (``link_angles``).
  The chain moves in the vertical x–z plane (z up), the pins turn about y,
  the top pin is at (0, 0, 2) m, and φ turns a link from −z towards +x.
* The sphere's centre is the end of the third cylinder's axis. The sphere
  and the third cylinder are one rigid body (``welded_link``): masses added,
  the inertia about the combined centre of mass by the parallel-axis theorem.
* Each body is a ``SpatialBody`` with its axis along body z (its proximal
  pin at +z), the pins ``RevoluteSpatial`` joints about body y. The motion
  stays in the x–z plane, so the contact's out-of-plane tangent is held by
  the pins: PLUS gets the 3×3 Delassus operator of a spatial contact, of rank
  2 (the minimum-norm least squares of Table 1 handle it).
* The compliant law is Simbody's Hertz (4.1), f = (4/3)√R E δ^{3/2}, with E
  the pair's effective modulus (as for ``plus-brick`` and ``plus-cradle``),
  R = 0.25 m on the flat ground, no dissipation; friction is Coulomb's μ with
  the tanh ramp of ``plus-brick`` (99.5 % at Simbody's transition speed
  0.01 m/s).
"""

import functools
from pathlib import Path

import numpy as np

from diffimpact.io import figure, save_figure, write_csv
from diffimpact.reproduce._timing import timed

#: Example 4: the triple pendulum and its sphere (SI units).
PENDULUM = dict(pivot_height=2.0, length=1.0, cylinder_radius=0.1, cylinder_mass=1.0, sphere_radius=0.25,
                sphere_mass=1.0, friction=0.1, angles=(np.pi / 4, 3 * np.pi / 4, 5 * np.pi / 6), gravity=9.81,
                transition_speed=0.01)
#: Unit pin axis (global and body-fixed) and the ground's normal.
PIN_AXIS = np.array([0.0, 1.0, 0.0])
UP = np.array([0.0, 0.0, 1.0])


def cylinder_inertia(mass, length, radius):
    """Principal moments (I_t, I_t, I_a) of a solid cylinder about its centre of mass, axis along body z.

    I_t = m (3 r² + L²)/12 about a diameter through the centre, I_a = m r²/2 about the axis.
    """
    transverse = mass * (3 * radius ** 2 + length ** 2) / 12
    return np.array([transverse, transverse, mass * radius ** 2 / 2])


def welded_link(cylinder_mass=PENDULUM["cylinder_mass"], length=PENDULUM["length"],
                radius=PENDULUM["cylinder_radius"], sphere_mass=PENDULUM["sphere_mass"],
                sphere_radius=PENDULUM["sphere_radius"]):
    """The third cylinder with the sphere centred on its free end, as one rigid body.

    Returns (mass, distance of the combined centre of mass from the proximal pin along the axis, principal
    moments (I_t, I_t, I_a) about the combined centre of mass). With the cylinder's centre at L/2 and the
    sphere's at L from the pin, c = (m_c L/2 + m_s L)/(m_c + m_s), and by the parallel-axis theorem
    I_t = m_c (3 r² + L²)/12 + m_c (c − L/2)² + (2/5) m_s R² + m_s (L − c)², I_a = m_c r²/2 + (2/5) m_s R²
    (the sphere's moment is the same about every axis through its centre; the two solids' overlap is not
    subtracted: the paper gives the masses of the parts).
    """
    mass = cylinder_mass + sphere_mass
    centre = (cylinder_mass * length / 2 + sphere_mass * length) / mass
    sphere = 0.4 * sphere_mass * sphere_radius ** 2
    shift = cylinder_mass * (centre - length / 2) ** 2 + sphere_mass * (length - centre) ** 2
    inertia = cylinder_inertia(cylinder_mass, length, radius) + np.array([sphere + shift, sphere + shift, sphere])
    return mass, centre, inertia


def link_angles(angles=PENDULUM["angles"]):
    """Absolute angles φ_i = θ_1 + … + θ_i of the links from the downward vertical (θ: Simbody's pin angles)."""
    return np.cumsum(angles)


def _links():
    """(mass, distance of the centre of mass from the proximal pin, principal moments) of the three bodies."""
    p = PENDULUM
    cylinder = (p["cylinder_mass"], p["length"] / 2, cylinder_inertia(p["cylinder_mass"], p["length"],
                                                                    p["cylinder_radius"]))
    return [cylinder, cylinder, welded_link()]


def sphere_centre_local():
    """The sphere's centre in the third body's frame (m): the free end of its axis."""
    _, centre, _ = welded_link()
    return np.array([0.0, 0.0, centre - PENDULUM["length"]])


def compliant_contact(stiffness):
    """Undamped Hertz sphere–ground contact with Coulomb friction (module docstring), ``stiffness`` E in Pa.

    k = (4/3) √R E (eq. (4.1) with E* = E, the pair's effective modulus); friction μ tanh(|v|/v_reg) with
    v_reg = 0.01/3 m/s.
    """
    from diffimpact.contact.friction import Coulomb
    from diffimpact.contact.normal import Hertz
    from diffimpact.multibody import Contact, SpherePlane

    p = PENDULUM
    radius = p["sphere_radius"]
    geometry = SpherePlane(None, np.zeros(3), UP, 2, sphere_centre_local(), radius)
    return Contact(geometry, Hertz(4.0 / 3.0 * np.sqrt(radius) * stiffness, 1.5),
                   Coulomb(p["friction"], p["transition_speed"] / 3))


def plus_contact():
    """The sphere–ground contact as a PLUS impact: e = 1 at every speed (v_capture = v_plastic = 0), μ = 0.1."""
    from diffimpact.impulse import Plus
    from diffimpact.multibody import Contact, RigidImpact, SpherePlane

    p = PENDULUM
    geometry = SpherePlane(None, np.zeros(3), UP, 2, sphere_centre_local(), p["sphere_radius"])
    return Contact(geometry, RigidImpact(Plus(1.0, p["friction"], capture_velocity=0.0, plastic_velocity=0.0)))


def pendulum_model(contact=None):
    """The triple pendulum under gravity with the sphere–ground ``contact`` (a ``Contact``, or ``None``: none)."""
    from diffimpact.multibody import Gravity, Model, RevoluteSpatial, SpatialBody

    p = PENDULUM
    links = _links()
    bodies = [SpatialBody(mass, inertia, name=f"link {k + 1}") for k, (mass, _, inertia) in enumerate(links)]
    joints = [RevoluteSpatial(0, (0.0, 0.0, links[0][1]), PIN_AXIS, None, p["pivot_height"] * UP, PIN_AXIS)]
    for k in (1, 2):
        joints.append(RevoluteSpatial(k, (0.0, 0.0, links[k][1]), PIN_AXIS, k - 1,
                                      (0.0, 0.0, links[k - 1][1] - p["length"]), PIN_AXIS))
    return Model(bodies, joints, [Gravity(-p["gravity"] * UP)] + ([] if contact is None else [contact]))


def initial_state(angles=PENDULUM["angles"]):
    """The chain at rest at the pin angles θ (``link_angles``); exact positions, so the pins hold to round-off."""
    from diffimpact.multibody import State, euler_parameters

    p = PENDULUM
    pin = p["pivot_height"] * UP
    q = []
    for phi, (_, centre, _) in zip(link_angles(angles), _links()):
        direction = np.array([np.sin(phi), 0.0, -np.cos(phi)])
        q.append(np.concatenate([pin + centre * direction, np.asarray(euler_parameters(-PIN_AXIS, phi))]))
        pin = pin + p["length"] * direction
    q = np.concatenate(q)
    return State(q, np.zeros_like(q))


def sphere_centre(q):
    """The sphere's centre (m), (k, 3), from coordinates q (k, 21) or (21,)."""
    import jax

    from diffimpact.multibody import point_position

    local = sphere_centre_local()
    return np.asarray(jax.vmap(lambda block: point_position(block, local))(np.atleast_2d(q)[:, 14:21]))


def contact_point_velocity(q, v):
    """Velocity (m/s), (k, 3), of the third body's material point at the sphere's bottom, world frame.

    v_G + ω × (A s' − R ẑ), with G the body's centre of mass and s' the sphere's centre in the body frame.
    """
    import jax
    import jax.numpy as jnp

    from diffimpact.multibody import angular_velocity, orientation

    local = sphere_centre_local()

    def velocity(block, rate):
        arm = orientation(block) @ local - PENDULUM["sphere_radius"] * UP
        return rate[:3] + jnp.cross(angular_velocity(block, rate), arm)

    return np.asarray(jax.vmap(velocity)(np.atleast_2d(q)[:, 14:21], np.atleast_2d(v)[:, 14:21]))


def link_rates(q, v):
    """Angular velocities φ̇_i (rad/s), (k, 3), of the three links: ω_i = −φ̇_i ŷ (φ turns −z towards +x)."""
    import jax
    import jax.numpy as jnp

    from diffimpact.multibody import angular_velocity

    def rates(q, v):
        return jnp.stack([-angular_velocity(q[7 * k:7 * k + 7], v[7 * k:7 * k + 7])[1] for k in range(3)])

    return np.asarray(jax.vmap(rates)(np.atleast_2d(q), np.atleast_2d(v)))


# --- the experiment of Fig. 15b ---------------------------------------------------------------------------------

#: Fig. 15b: the sphere's modulus E (Pa), 0.01–100 GPa; ``quick``: three of them.
STIFFNESSES = (1e7, 1e8, 1e9, 1e10, 1e11)
QUICK_STIFFNESSES = (1e7, 1e9, 1e11)
#: Accuracies tried for the compliant impact, rtol = atol of the Tsit5 step-size controller, loosest first.
ACCURACIES = tuple(10.0 ** -k for k in range(1, 10))
#: Accuracy of the references: the fall to the onset, the rebound after the impact, each stiffness's impact.
REFERENCE_ACCURACY = 1e-11
#: The paper's bound on the error of the sphere's final height.
HEIGHT_ERROR = 0.01
#: The timed compliant runs span this many reference contact durations from the onset: past every separation.
WINDOW = 1.05
#: The fall is integrated to this time (s); the sphere touches the ground at 0.501 s and leaves within 6 ms.
FALL = 0.6
#: The rebound is followed for this long after the impact (s), in ``REBOUND_SAMPLES`` save times: the sphere
#: peaks about 0.5 s after the impact and strikes the ground again about 0.96 s after it.
REBOUND = 0.75
REBOUND_SAMPLES = 1501
#: Save times of the reference contact histories (figure and checks).
HISTORY_SAMPLES = 401
#: Contact events and turning points of one run (the fall, the onset, the separation).
MAX_EVENTS = 8


@functools.cache
def _runner(history=False):
    """``simulate`` of a pendulum model, jitted: compiled once per model kind and number of save times.

    The model's arrays (the stiffness), the state, the save times and the accuracy are traced. With
    ``history``, the contact history is saved too (a function of its own: it adds work to every save time).
    """
    import equinox as eqx
    import jax.numpy as jnp

    from diffimpact.multibody import AdaptiveSteps, ContactEvents, LagrangeMultipliers, simulate

    @eqx.filter_jit
    def run(model, state, times, accuracy):
        options = (dict(events=ContactEvents(max_events=MAX_EVENTS), contact_history=history) if model.forces[1:]
                   else {})
        return simulate(model, state, times, LagrangeMultipliers(), steps=AdaptiveSteps(rtol=accuracy, atol=accuracy),
                        **options)

    return lambda model, state, times, accuracy: run(model, state, times, jnp.asarray(accuracy, float))


def separation_state(trajectory):
    """The ``State`` just after the contact's separation in ``trajectory``; ``None`` if it did not separate."""
    from diffimpact.multibody import State

    events = trajectory.events
    count = int(events.count)
    parting = np.flatnonzero(~np.asarray(events.onset[:count]))
    if not parting.size:
        return None
    k = parting[0]
    return State(events.q[k], events.v[k], events.t[k])


def onset(stiffness=STIFFNESSES[0]):
    """(State at the sphere's first touch, compile time (s) of the compliant ``simulate``) of the fall from rest.

    The onset is an event of the compliant run (located to 10⁻¹⁵ s, so δ = 0 to ~10⁻¹⁵ m); the motion before it
    is free of contact, so the state does not depend on ``stiffness``.
    """
    import jax.numpy as jnp

    from diffimpact.multibody import State

    model = pendulum_model(compliant_contact(stiffness))
    times = jnp.array([FALL / 2, FALL])
    call = lambda: _runner()(model, initial_state(), times, REFERENCE_ACCURACY)  # noqa: E731
    first, run = timed(call, repeats=1, statistic=np.median)
    events = call().events
    if not bool(events.onset[0]):
        raise RuntimeError("the sphere did not reach the ground in the fall")
    return State(events.q[0], events.v[0], events.t[0]), first - run


@functools.cache
def _projection():
    import equinox as eqx

    from diffimpact.multibody import project_initial_state

    return eqx.filter_jit(project_initial_state)


def free_motion(state, duration):
    """The pendulum without contact from ``state`` for ``duration`` s at ``REBOUND_SAMPLES`` times: (t, q, v).

    ``state`` is first projected onto the pins' constraints (eqs. (2.24)–(2.29) of [Gismeros Moreno 2022],
    ``project_initial_state``), as Simbody projects after every step: a loose accuracy leaves the pins apart.
    """
    import jax.numpy as jnp

    model = pendulum_model()
    start = float(state.t)
    times = jnp.linspace(start, start + duration, REBOUND_SAMPLES)
    trajectory = _runner()(model, _projection()(model, state), times, REFERENCE_ACCURACY)
    return np.asarray(times), np.asarray(trajectory.q), np.asarray(trajectory.v)


def final_height(state):
    """The sphere's final height: the highest point of its centre on the rebound after the impact (m).

    ``state`` is the state just after the impact (PLUS: at the onset; compliant: at the separation); the motion
    over the next ``REBOUND`` s is integrated without contact at ``REFERENCE_ACCURACY`` and sampled every
    0.5 ms (the sampling misses the apex by < 1 µm).
    """
    _, q, _ = free_motion(state, REBOUND)
    return float(sphere_centre(q)[:, 2].max())


def plus_problem(model, start):
    """(W, u⁻) of the sphere's contact at the onset state ``start`` (``impact_problem``; frame (n, t, o))."""
    from diffimpact.multibody import impact_problem

    W, u, _ = impact_problem(model, model.forces[1], start.q, start.v, start.t)
    return np.asarray(W), np.asarray(u)


def plus_record(model, W, u):
    """PLUS's ``PlusImpact`` (intervals, states, accumulated impulses) on (W, u⁻) with the contact's parameters."""
    return model.forces[1].law.family_model(1, 3)(W, u)


def compliant_impact(stiffness, start, repeats):
    """The compliant impact at ``stiffness`` (Pa) from the onset state ``start`` at every accuracy of ``ACCURACIES``.

    The reference runs at ``REFERENCE_ACCURACY`` to ``FALL`` and gives the contact duration, the state after
    the separation and the final height. Each accuracy then integrates ``WINDOW`` contact durations from the
    onset, timed ``repeats`` times (median; compiled once for all stiffnesses and accuracies: ``onset``); the
    state just after its separation gives its final height, whose relative error against the reference's must
    stay below ``HEIGHT_ERROR``. The accuracy chosen is the loosest from which every tighter one passes too.
    Returns a dict: ``model``, ``duration`` (s), ``separation`` (State), ``final_height`` (m), ``rows`` (per
    accuracy: accuracy, steps, separated, final_height, error, run_s) and ``chosen`` (an index of ``rows``,
    ``None`` if even the tightest fails).
    """
    import jax.numpy as jnp

    from diffimpact.multibody import State

    model = pendulum_model(compliant_contact(stiffness))
    t0 = float(start.t)
    separation = separation_state(_runner()(model, start, jnp.array([t0, FALL]), REFERENCE_ACCURACY))
    duration = float(separation.t) - t0
    height = final_height(separation)
    window = jnp.array([t0, t0 + WINDOW * duration])
    rows = []
    for accuracy in ACCURACIES:
        call = lambda: _runner()(model, start, window, accuracy)  # noqa: E731
        _, run = timed(call, repeats=repeats, statistic=np.median)
        trajectory = call()
        after = separation_state(trajectory)
        separated = after is not None
        if not separated:
            after = State(trajectory.q[-1], trajectory.v[-1], window[-1])
        value = final_height(after) if np.all(np.isfinite(np.asarray(after.v))) else np.nan
        rows.append(dict(accuracy=accuracy, steps=int(trajectory.steps), separated=separated, final_height=value,
                         error=abs(value - height) / height if np.isfinite(value) else np.inf, run_s=run))
    passing = [row["separated"] and row["error"] < HEIGHT_ERROR for row in rows]
    chosen = next((k for k in range(len(rows)) if all(passing[k:])), None)
    return dict(model=model, duration=duration, separation=separation, final_height=height, rows=rows,
                chosen=chosen)


def impact_history(model, start, duration):
    """The reference compliant impact over ``WINDOW`` × ``duration`` from ``start`` at ``HISTORY_SAMPLES`` times.

    Returns (times (s), trajectory); ``trajectory.contact_history[1]`` holds δ, f_N and F_t as the integrator
    applied them.
    """
    import jax.numpy as jnp

    t0 = float(start.t)
    times = jnp.linspace(t0, t0 + WINDOW * duration, HISTORY_SAMPLES)
    return np.asarray(times), _runner(history=True)(model, start, times, REFERENCE_ACCURACY)


def chain_points(q):
    """The pivot, the two inner pins and the sphere's centre (m), (4, 3), of the coordinates q (21,)."""
    from diffimpact.multibody import point_position

    p = PENDULUM
    points = [p["pivot_height"] * UP]
    for k, (_, centre, _) in enumerate(_links()[:2]):
        points.append(np.asarray(point_position(q[7 * k:7 * k + 7], np.array([0.0, 0.0, centre - p["length"]]))))
    return np.vstack(points + [sphere_centre(q)[0]])


def run(out, quick=False, stiffnesses=None):
    """Write ``plus-triple-pendulum.csv``, ``-accuracy.csv`` and ``.png`` (Example 4, Fig. 15); return a summary.

    ``stiffnesses``: the moduli E (Pa) to run, ``STIFFNESSES`` (``QUICK_STIFFNESSES`` if ``quick``) by default.
    Run times are medians of 15 calls (5 if ``quick``).

    About 80 s on a 2-core machine, compiling included (``quick``: about 30 s).
    """
    import equinox as eqx

    from diffimpact.impulse import plus
    from diffimpact.multibody import State, impact_velocity

    out = Path(out)
    if stiffnesses is None:
        stiffnesses = QUICK_STIFFNESSES if quick else STIFFNESSES
    repeats = 5 if quick else 15
    start, compliant_compile = onset()
    # PLUS: the handler that simulate applies at the onset of a RigidImpact contact, on the onset state
    plus_model = pendulum_model(plus_contact())
    handler = eqx.filter_jit(impact_velocity)
    call = lambda: handler(plus_model, plus_model.forces[1], start.q, start.v, start.t)  # noqa: E731
    first, plus_run = timed(call, repeats=repeats, statistic=np.median)
    plus_compile = first - plus_run
    v_plus = np.asarray(call())
    after_plus = State(start.q, v_plus, start.t)
    W, u = plus_problem(plus_model, start)
    record = plus_record(plus_model, W, u)
    plus_height = final_height(after_plus)
    plus_loss = float(plus_model.energy(start.q, start.v) - plus_model.energy(start.q, v_plus))
    plus_rates = link_rates(start.q, v_plus)[0]
    intervals = int(record.intervals)
    # the slip v_x = −u_o (the contact frame is (n, t, o) = (z, y, −x)) against π_n, at the interval ends
    plus_slip = (np.concatenate([[0.0], np.asarray(record.accumulated[:intervals, 0])]),
                 -np.concatenate([[u[2]], np.asarray(record.velocities[:intervals, 2])]))

    rows, ladder, histories = [], [], []
    for stiffness in stiffnesses:
        impact = compliant_impact(stiffness, start, repeats)
        times, history = impact_history(impact["model"], start, impact["duration"])
        contact = history.contact_history[1]
        force = np.asarray(contact.normal_force[:, 0])
        friction = np.asarray(contact.friction_force[:, 0])
        slip = contact_point_velocity(history.q, history.v)[:, 0]
        impulse = np.concatenate([[0.0], np.cumsum(0.5 * (force[1:] + force[:-1]) * np.diff(times))])
        touching = force > 0
        # sliding: the slip keeps its sign and the friction stays at μ f_N (tanh(|v|/v_reg) → 1)
        friction_ratio = np.linalg.norm(friction[touching], axis=1) / (PENDULUM["friction"] * force[touching])
        separation = impact["separation"]
        chosen = impact["rows"][impact["chosen"]] if impact["chosen"] is not None else None
        rows.append(dict(
            stiffness=stiffness, duration=impact["duration"], penetration=float(np.max(contact.penetration)),
            peak_force=float(force.max()), chosen=chosen, final_height=impact["final_height"],
            energy_loss=float(history.energy[0] - history.energy[-1]),
            rate_difference=float(np.linalg.norm(link_rates(separation.q, separation.v)[0] - plus_rates)
                                  / np.linalg.norm(plus_rates)),
            min_slip=float(np.abs(slip[touching]).min()), friction_ratio=float(friction_ratio.min()),
            slides=bool(np.all(np.sign(slip[touching]) == np.sign(slip[0])) and friction_ratio.min() > 0.99)))
        ladder.append(impact["rows"])
        histories.append((times - float(start.t), force, impulse, slip, impact["duration"]))

    def value(row, name):
        return row["chosen"][name] if row["chosen"] is not None else np.nan

    write_csv(out / "plus-triple-pendulum.csv", {
        "stiffness_Pa": [r["stiffness"] for r in rows],
        "hertz_constant_N_per_m1_5": [4.0 / 3.0 * np.sqrt(PENDULUM["sphere_radius"]) * r["stiffness"] for r in rows],
        "contact_duration_s": [r["duration"] for r in rows],
        "max_penetration_m": [r["penetration"] for r in rows],
        "peak_force_N": [r["peak_force"] for r in rows],
        "accuracy": [value(r, "accuracy") for r in rows],
        "steps": [value(r, "steps") for r in rows],
        "compliant_run_s": [value(r, "run_s") for r in rows],
        "compliant_compile_s": [compliant_compile] * len(rows),
        "final_height_m": [r["final_height"] for r in rows],
        "final_height_error": [value(r, "error") for r in rows],
        "plus_run_s": [plus_run] * len(rows),
        "plus_compile_s": [plus_compile] * len(rows),
        "plus_final_height_m": [plus_height] * len(rows),
        "run_ratio": [value(r, "run_s") / plus_run for r in rows],
        "energy_loss_compliant_J": [r["energy_loss"] for r in rows],
        "energy_loss_plus_J": [plus_loss] * len(rows),
        "link_rate_difference": [r["rate_difference"] for r in rows],
        "min_slip_speed_m_s": [r["min_slip"] for r in rows],
        "min_friction_over_mu_normal": [r["friction_ratio"] for r in rows],
    })
    write_csv(out / "plus-triple-pendulum-accuracy.csv", {
        "stiffness_Pa": [r["stiffness"] for r, entries in zip(rows, ladder) for _ in entries],
        **{column: [entry[key] for entries in ladder for entry in entries]
           for column, key in (("accuracy", "accuracy"), ("steps", "steps"), ("separated", "separated"),
                               ("final_height_m", "final_height"), ("final_height_error", "error"),
                               ("run_s", "run_s"))},
        "chosen": [float(r["chosen"] is not None and entry["accuracy"] == r["chosen"]["accuracy"])
                   for r, entries in zip(rows, ladder) for entry in entries],
    })
    _plot(start, after_plus, rows, ladder, histories, (plus_slip, plus_run, plus_loss, plus_height),
          out / "plus-triple-pendulum.png")

    states = [plus.FRICTION_STATES[s] for s in np.asarray(record.friction_state[:intervals, 0])]
    point = contact_point_velocity(start.q, start.v)[0]
    after = np.asarray(record.velocity)
    # sliding one way throughout with e = 1: u_n is linear in π_n, so it reverses and the normal work is zero;
    # the friction μ π_n works against a slip moving linearly from u_o⁻ to u_o⁺
    coulomb = PENDULUM["friction"] * float(record.impulse[0]) * (abs(u[2]) + abs(after[2])) / 2
    lines = [
        "Uchida, Sherman & Delp (2015) Example 4, Fig. 15: the triple pendulum's sphere strikes the ground "
        "(μ = 0.1; PLUS e = 1; compliant undamped Hertz)",
        f"onset at t = {float(start.t):.6f} s; the sphere's lowest point moves at ({point[0]:+.4f}, "
        f"{point[2]:+.4f}) m/s (x, z)",
        f"PLUS: {intervals} intervals, {int(record.rounds)} rounds ({', '.join(states)}): never rolling; normal "
        f"impulse {float(record.impulse[0]):.4f} N s, friction {abs(float(record.impulse[2])):.4f} N s (μ π_n); "
        f"u_n {u[0]:+.4f} → {after[0]:+.4f} m/s, slip {-u[2]:+.4f} → {-after[2]:+.4f} m/s; energy lost "
        f"{plus_loss:.4f} J (μ π_n (|u_o⁻| + |u_o⁺|)/2 = {coulomb:.4f} J); final height {plus_height:.4f} m",
        f"  CPU: {plus_run * 1e3:.3f} ms per impact (impact_velocity: W by one saddle-point solve, then PLUS; "
        f"median of {repeats}), compile {plus_compile:.1f} s",
        f"compliant: simulate compiled once for every stiffness and accuracy in {compliant_compile:.1f} s; run "
        f"times are medians of {repeats} (CPU shared with other work: tens of per cent between runs)",
    ]
    for r in rows:
        c = r["chosen"]
        head = (f"  E = {r['stiffness'] / 1e9:g} GPa: contact {r['duration'] * 1e3:.3f} ms, δ_max "
                f"{r['penetration'] * 1e3:.3g} mm")
        if c is None:
            lines.append(head + f": no accuracy down to {ACCURACIES[-1]:g} gets within {HEIGHT_ERROR:.0%}")
            continue
        lines.append(
            head + f"; accuracy {c['accuracy']:g} ({c['steps']} steps): {c['run_s'] * 1e3:.2f} ms = "
            f"{c['run_s'] / plus_run:.1f}× PLUS, final height {r['final_height']:.4f} m (error {c['error']:.2%}); "
            f"energy lost {r['energy_loss']:.4f} J; link rates after it differ from PLUS's by "
            f"{r['rate_difference']:.2e}; slides throughout: {r['slides']} (slip ≥ {r['min_slip']:.3f} m/s)")
    lines.append("CSV: plus-triple-pendulum.csv one row per stiffness (the accuracy chosen); "
                 "plus-triple-pendulum-accuracy.csv every accuracy tried")
    return "\n".join(lines)


def _plot(start, after_plus, rows, ladder, histories, plus, path):
    from matplotlib.patches import Circle

    plus_slip, plus_run, plus_loss, plus_height = plus
    fig, axes = figure(2, 3, 4.6, 3.7)
    colours = [f"C{k}" for k in range(len(rows))]
    labels = [f"E = {r['stiffness'] / 1e9:g} GPa" for r in rows]

    # (a) the configuration: the chain at release, at the impact and at the top of the rebound
    ax = axes[0, 0]
    _, fall, _ = free_motion(initial_state(), float(start.t))
    _, rise, _ = free_motion(after_plus, REBOUND)
    top = int(np.argmax(sphere_centre(rise)[:, 2]))
    path_fall, path_rise = sphere_centre(fall), sphere_centre(rise[:top + 1])
    ax.plot(path_fall[:, 0], path_fall[:, 2], ":", color="0.4", lw=1, label="sphere's path (fall)")
    ax.plot(path_rise[:, 0], path_rise[:, 2], "--", color="0.4", lw=1, label="sphere's path (rebound, PLUS)")
    for q, colour, label in ((fall[0], "C0", "release, t = 0"), (np.asarray(start.q), "C3",
                                                                  f"impact, t = {float(start.t):.3f} s"),
                             (rise[top], "C2", "top of the rebound (PLUS)")):
        points = chain_points(q)
        ax.plot(points[:, 0], points[:, 2], "-o", color=colour, lw=2, ms=3, label=label)
        ax.add_patch(Circle(points[-1, [0, 2]], PENDULUM["sphere_radius"], fill=False, color=colour, lw=1.5))
    ax.axhline(0.0, color="k", lw=1)
    ax.set(title="Fig. 15a: the triple pendulum (x–z plane)", xlabel="x (m)", ylabel="z (m)", aspect="equal",
           xlim=(-0.8, 2.6), ylim=(-0.1, 2.6))
    ax.legend(fontsize=7, loc="center right")

    # (b) Fig. 15b: CPU time against stiffness
    ax = axes[0, 1]
    stiffness = np.array([r["stiffness"] for r in rows])
    chosen = [r["chosen"] for r in rows]
    ok = np.array([c is not None for c in chosen])
    run = np.array([c["run_s"] if c is not None else np.nan for c in chosen])
    ax.loglog(stiffness[ok], 1e3 * run[ok], "o-", color="C0", lw=2, label="compliant, the accuracy for < 1 % error")
    for accuracy, style in ((1e-6, "C1--"), (1e-9, "C4:")):
        k = ACCURACIES.index(accuracy)
        ax.loglog(stiffness, [1e3 * entries[k]["run_s"] for entries in ladder], style, lw=1.2,
                  label=f"compliant, accuracy {accuracy:g}")
    for s, c in zip(stiffness[ok], np.array(chosen)[ok]):
        ax.annotate(f"{c['accuracy']:g}, {c['steps']} steps", (s, 1e3 * c["run_s"]), textcoords="offset points",
                    xytext=(0, 6), ha="center", fontsize=7)
    ax.axhline(1e3 * plus_run, color="k", lw=2, label="PLUS (one impact: time does not advance)")
    slowest = max(entries[-1]["run_s"] for entries in ladder)
    ax.set(title="Fig. 15b: CPU time through the impact (median)", xlabel="stiffness E (Pa)",
           ylabel="run time (ms)", ylim=(0.3e3 * plus_run, 20e3 * slowest))
    ax.legend(fontsize=7, loc="upper center")

    # (c) how the accuracy was chosen
    ax = axes[0, 2]
    for entries, colour, label in zip(ladder, colours, labels):
        errors = np.array([entry["error"] for entry in entries])
        ax.loglog(ACCURACIES, np.clip(errors, 1e-12, 1e3), "o-", color=colour, ms=3, lw=1.2, label=label)
    ax.axhline(HEIGHT_ERROR, color="k", ls="--", lw=1, label="1 %")
    ax.set(title="compliant: error of the final height", xlabel="accuracy (rtol = atol)",
           ylabel="|h − h_ref| / h_ref")
    ax.invert_xaxis()
    ax.legend(fontsize=7)

    # (d) the normal force through the contact
    ax = axes[1, 0]
    for (t, force, _, _, duration), colour, label in zip(histories, colours, labels):
        ax.semilogy(t / duration, np.where(force > 0, force, np.nan), color=colour, lw=1.5,
                    label=f"{label}: t_c = {duration * 1e3:.3g} ms")
    ax.set(title="compliant: normal force through the contact", xlabel="t / t_c (t from the onset)",
           ylabel="f_N (N)", ylim=(1.0, None))
    ax.legend(fontsize=7)

    # (e) the slip against the normal impulse
    ax = axes[1, 1]
    for k, ((_, _, impulse, slip, _), colour, label) in enumerate(zip(histories, colours, labels)):
        ax.plot(impulse, slip, color=colour, lw=1.5 + 1.5 * (len(rows) - 1 - k), label=f"compliant, {label}")
    ax.plot(plus_slip[0], plus_slip[1], "k--o", ms=4, lw=1.2, label="PLUS (interval ends)")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set(title="slip of the contact point (curves overlap): never zero", xlabel="normal impulse π_n (N s)",
           ylabel="slip velocity v_x (m/s)")
    ax.legend(fontsize=7)

    # (f) PLUS against the compliant model as the stiffness grows
    ax = axes[1, 2]
    ax.loglog(stiffness, [r["rate_difference"] for r in rows], "o-", label="link rates φ̇ after the impact")
    ax.loglog(stiffness, [abs(r["energy_loss"] / plus_loss - 1) for r in rows], "s--", label="energy lost")
    ax.loglog(stiffness, [abs(r["final_height"] / plus_height - 1) for r in rows], "^:", label="final height")
    ax.set(title="compliant against PLUS", xlabel="stiffness E (Pa)", ylabel="relative difference")
    ax.legend(fontsize=7)
    save_figure(fig, path)
