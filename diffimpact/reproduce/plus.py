"""The examples of the PLUS paper (Uchida, Sherman & Delp 2015), §4.

``plus-brick`` (Example 1, Figs. 8–10, Table A1): a childproof brick (spheres
of radius 0.1 m welded to its vertices) turned by π/4 about x and then π/6
about the new y hits the ground with its lowest sphere while translating at
v^(start) = (−5, 0, −5.74) m/s (taken as the brick's velocity, without spin:
Table A1 gives one velocity). PLUS with μ = 0.125, 0.225, 0.325 and the
matching e_min = 0.392, 0.387, 0.373 slides throughout, rolls in expansion
and rolls in compression; the θ_max sweep of Fig. 10 (μ = 0.325, the case
whose counts match the paper's) takes 116, 11 and 8 intervals. Beside it,
diffimpact's compliant model of the same brick (``compliant_brick``:
assumptions in its docstring) integrated through the impact.

``plus-brick-four-points`` (Example 2, Figs. 11–13): the same brick falls
flat on four spheres (μ = 0.2, e_min = 0.414, v^(start) = (−2, 0, −8.84) m/s;
the orientation is assumed, ``EXAMPLE_2_ROTATION``). PLUS keeps the mirror
symmetry to round-off, spreads the load by minimum-norm least squares (no
share of the redundant "twisting" pattern), and all four points slide, then
roll together in the expansion, as the paper says; a tilt of 10⁻⁹ rad keeps
all four in the impact only through the proximity tolerance (Fig. 6).

``plus-cradle`` (Example 3, Fig. 14, Table 2): five frictionless balls
(R = 0.25 m, 1 kg) in a row, ball 1 moving at 2 m/s into the four touching,
resting others. PLUS (e = 1) takes the five rounds of Table 2 and leaves ball
5 alone moving at 2 m/s; model C (every proximal pair in one Poisson
compression and expansion, ``diffimpact.impulse.poisson``) moves the four as
one ball; the compliant row (``compliant_cradle``: undamped Hertz, 10 GPa)
sends the last ball off at 98.9 % of the speed with small velocities left in
the others.

Example 4 (Fig. 15, ``plus-triple-pendulum``), the CPU time of one PLUS
impact against integrating the compliant one, is
``diffimpact.reproduce.triple_pendulum``.
"""

import functools
from pathlib import Path

import numpy as np

from diffimpact.io import figure, save_figure, write_csv

#: Example 1 (Table A1): the childproof brick and its single-point impact.
BRICK = dict(mass=2.0, inertia=(0.167, 0.133, 0.0867), half_extents=(0.2, 0.3, 0.4), sphere_radius=0.1)
EXAMPLE_1 = dict(velocity=(-5.0, 0.0, -5.74), friction=(0.125, 0.225, 0.325), min_restitution=(0.392, 0.387, 0.373),
                 capture_velocity=0.01, plastic_velocity=0.1, transition_velocity=0.1, max_direction_change=0.01,
                 stiffness=10e9, dissipation=0.26)
#: Fig. 10: θ_max (rad) and the number of intervals the paper states.
FIGURE_10 = ((0.01, 116), (0.15, 11), (0.25, 8))


def rotation_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rotation_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


#: Example 1's orientation: body-fixed rotations of π/4 about x, then π/6 about the new y.
EXAMPLE_1_ROTATION = rotation_x(np.pi / 4) @ rotation_y(np.pi / 6)


def brick_vertices(rotation, half_extents=BRICK["half_extents"]):
    """The eight vertices (sphere centres) relative to the centre of mass, in the world frame."""
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    return (signs * np.asarray(half_extents)) @ rotation.T


def contact_problem(points, rotation, twist, mass=BRICK["mass"], inertia=BRICK["inertia"]):
    """(W, u⁻) of contacts with the ground plane z = 0 at ``points`` (k, 3) of a free rigid body.

    ``points`` relative to the centre of mass (world frame), ``twist`` the
    body's (v, ω) in the world frame. Each contact's frame is normal first:
    (z, x, y). W = J M⁻¹ Jᵀ with J the map from the twist to the contact
    velocities v + ω × r.
    """
    inverse_inertia = rotation @ np.diag(1.0 / np.asarray(inertia)) @ rotation.T
    frame = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    J = np.concatenate([frame @ np.hstack([np.eye(3), -_skew(r)]) for r in np.atleast_2d(points)])
    M_inverse = np.block([[np.eye(3) / mass, np.zeros((3, 3))], [np.zeros((3, 3)), inverse_inertia]])
    W = J @ M_inverse @ J.T
    return 0.5 * (W + W.T), J @ np.asarray(twist, float)


def example_1_problem():
    """(W, u⁻, contact point) of Example 1: the lowest sphere's bottom, the brick translating at v^(start)."""
    vertices = brick_vertices(EXAMPLE_1_ROTATION)
    lowest = vertices[np.argmin(vertices[:, 2])]
    point = lowest - np.array([0.0, 0.0, BRICK["sphere_radius"]])
    W, u = contact_problem(point, EXAMPLE_1_ROTATION, np.concatenate([EXAMPLE_1["velocity"], np.zeros(3)]))
    return W, u, point


def _euler_parameters_of(rotation):
    """Unit Euler parameters (e0, e1, e2, e3) of a rotation matrix (body to world)."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(rotation).as_quat()
    return np.array([w, x, y, z])


def brick_model(vertex_indices, rotation, twist, friction, stiffness, dissipation, gap=1e-7):
    """(model, initial state, sphere centres (k, 3) body frame) of ``compliant_brick``'s brick (its docstring)."""
    import jax.numpy as jnp

    from diffimpact.contact.friction import Coulomb
    from diffimpact.contact.normal import HuntCrossley
    from diffimpact.multibody import Contact, Model, SpatialBody, SpherePlane, State, euler_rates

    radius = BRICK["sphere_radius"]
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    local = signs[list(vertex_indices)] * np.asarray(BRICK["half_extents"])
    k = 4.0 / 3.0 * np.sqrt(radius) * stiffness
    law = HuntCrossley(k, 1.5, 1.5 * dissipation * k)
    spheres = Contact.family([Contact(SpherePlane(None, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0, centre, radius),
                                      law, Coulomb(friction, 0.01 / 3)) for centre in local])
    model = Model([SpatialBody(BRICK["mass"], np.asarray(BRICK["inertia"]))], [], [spheres])
    p = _euler_parameters_of(rotation)
    world = local @ rotation.T
    height = radius + gap - world[:, 2].min()
    q0 = jnp.concatenate([jnp.array([0.0, 0.0, height]), p])
    v0 = jnp.concatenate([jnp.asarray(twist[:3], float), euler_rates(p, jnp.asarray(twist[3:], float))])
    return model, State(q0, v0), local


def compliant_brick(vertex_indices, rotation, twist, friction, stiffness, dissipation, times, gap=1e-7):
    """The brick of Examples 1–2 with Simbody's compliant contact at the spheres ``vertex_indices``.

    Hertz f = (4/3) √R E δ^(3/2) with Hunt & Crossley's (1 + (3/2) c δ̇) (eqs. (4.1)–(4.2)), i.e.
    ``HuntCrossley(k, 3/2, (3/2) c k)`` with k = (4/3) √R E, R the sphere radius on the flat ground; E taken as the
    effective modulus of the pair (the paper's "effective plane strain modulus"; Table A1's 10 GPa), c the
    effective dissipation. Friction: Coulomb μ with a tanh ramp reaching 99.5 % at Simbody's transition speed
    0.01 m/s (regularisation 0.01/3 m/s), equal static and dynamic coefficients, no viscous friction. No
    gravity (the impact lasts under a millisecond). The lowest sphere starts ``gap`` above the ground. The
    spheres' contacts are one ``Contact.family`` (``brick_model``).
    Returns (times, contact-point velocities (len, k, 3) world frame, impulse m Δv (len, 3), penetrations δ
    (len, k) and contact forces f_N n + F_t (len, k, 3) on the brick, world frame, at the save times, as the integrator
    applied them: ``Trajectory.contact_history``).
    """
    import jax
    import jax.numpy as jnp

    from diffimpact.multibody import (
        AdaptiveSteps,
        ContactEvents,
        LagrangeMultipliers,
        angular_velocity,
        orientation,
        simulate,
    )

    radius = BRICK["sphere_radius"]
    model, state, local = brick_model(vertex_indices, rotation, twist, friction, stiffness, dissipation, gap)
    trajectory = simulate(model, state, np.asarray(times), LagrangeMultipliers(),
                          events=ContactEvents(max_events=4 * len(local)), steps=AdaptiveSteps(rtol=1e-9, atol=1e-12),
                          contact_history=True)
    spheres = trajectory.contact_history[0]

    def point_velocities(q, v):
        A = orientation(q)
        omega = angular_velocity(q, v)
        arms = (jnp.asarray(local) @ A.T) - jnp.array([0.0, 0.0, radius])
        return v[:3] + jnp.cross(omega, arms)

    velocities = jax.vmap(point_velocities)(trajectory.q, trajectory.v)
    force = spheres.normal_force[..., None] * spheres.normal + spheres.friction_force
    impulse = BRICK["mass"] * (np.asarray(trajectory.v[:, :3]) - np.asarray(twist[:3]))
    return (np.asarray(trajectory.t), np.asarray(velocities), impulse, np.asarray(spheres.penetration),
            np.asarray(force))


@functools.cache
def _plus_compiled():
    """PLUS with Table A1's parameters, compiled once (friction, e_min and θ_max traced)."""
    import jax

    from diffimpact.impulse import Plus

    p = EXAMPLE_1
    return jax.jit(lambda W, u, e, mu, theta: Plus(
        e, mu, capture_velocity=p["capture_velocity"], plastic_velocity=p["plastic_velocity"],
        transition_velocity=p["transition_velocity"], max_direction_change=theta, max_intervals=512)(W, u))


def _plus_run(W, u, friction, restitution, theta):
    result = _plus_compiled()(W, u, restitution, friction, theta)
    n = int(result.intervals)
    # rows: the start, then the end of every interval; contact frame (n, x, y) back to world (x, y, z)
    velocity = np.vstack([u, np.asarray(result.velocities[:n])])[:, [1, 2, 0]]
    impulse = np.vstack([np.zeros(3), np.asarray(result.accumulated[:n])])[:, [1, 2, 0]]
    rounds = np.concatenate([[1], np.asarray(result.interval_round[:n])])
    states = np.concatenate([[-1], np.asarray(result.friction_state[:n, 0])])
    return n, velocity, impulse, rounds, states


def run_brick(out, quick=False):
    """Write ``plus-brick.csv`` and ``.png`` (Example 1, Figs. 8–10); return a summary.

    About 20 s on a 2-core machine, compiling included (``quick``: about 10 s).
    """
    from diffimpact.impulse import plus

    out = Path(out)
    W, u, _ = example_1_problem()
    p = EXAMPLE_1
    twist = np.concatenate([p["velocity"], np.zeros(3)])
    times = np.linspace(0.0, 8e-4, 161 if quick else 801)
    vertex = int(np.argmin(brick_vertices(EXAMPLE_1_ROTATION)[:, 2]))
    columns = {name: [] for name in ("model", "friction", "max_direction_change_rad", "index", "time_s",
                                     "round", "friction_state", "v_x_m_s", "v_y_m_s", "v_z_m_s",
                                     "impulse_x_N_s", "impulse_y_N_s", "impulse_z_N_s")}

    def add(model, mu, theta, time, rounds, states, velocity, impulse):
        k = len(velocity)
        for name, values in (("model", [model] * k), ("friction", [mu] * k), ("max_direction_change_rad", [theta] * k),
                             ("index", np.arange(k)), ("time_s", time), ("round", rounds),
                             ("friction_state", states)):
            columns[name].extend(values)
        for axis, name in enumerate("xyz"):
            columns[f"v_{name}_m_s"].extend(velocity[:, axis])
            columns[f"impulse_{name}_N_s"].extend(impulse[:, axis])

    lines = ["Uchida, Sherman & Delp (2015) Example 1: the brick's single-point impact (PLUS vs compliant)"]
    runs = {}
    for mu, e in zip(p["friction"], p["min_restitution"]):
        n, velocity, impulse, rounds, states = _plus_run(W, u, mu, e, p["max_direction_change"])
        if quick and mu != p["friction"][-1]:  # quick: the compliant brick only beside Fig. 10's case
            t, point_velocity, compliant_impulse = times[:0], np.full((0, 1, 3), np.nan), np.full((0, 3), np.nan)
        else:
            t, point_velocity, compliant_impulse, _, _ = compliant_brick([vertex], EXAMPLE_1_ROTATION, twist, mu,
                                                                         p["stiffness"], p["dissipation"], times)
        runs[mu] = (velocity, impulse, rounds, states, point_velocity[:, 0], compliant_impulse)
        add(0, mu, p["max_direction_change"], np.full(n + 1, np.nan), rounds, states, velocity, impulse)
        add(1, mu, np.nan, t, np.full(len(t), np.nan), np.full(len(t), np.nan), point_velocity[:, 0],
            compliant_impulse)
        rolls = states == plus.ROLLING
        kind = "slides throughout" if not rolls.any() else \
            f"rolls from round {rounds[rolls][0]} ({'compression' if rounds[rolls][0] == 1 else 'expansion'})"
        line = f"μ = {mu}, e_min = {e}: PLUS {n} intervals, {kind}; impulse {np.round(impulse[-1], 4).tolist()} N s"
        if len(t):
            difference = np.abs(impulse[-1] - compliant_impulse[-1]).max() / np.abs(compliant_impulse[-1]).max()
            line += (f", compliant {np.round(compliant_impulse[-1], 4).tolist()} N s (largest difference "
                     f"{100 * difference:.2f} % of the largest component); final slip PLUS "
                     f"{np.round(velocity[-1, :2], 4).tolist()}, compliant "
                     f"{np.round(point_velocity[-1, 0, :2], 4).tolist()} m/s")
        lines.append(line)
    sweep = {}
    mu, e = p["friction"][2], p["min_restitution"][2]
    for theta, published in FIGURE_10:
        n, velocity, impulse, rounds, states = _plus_run(W, u, mu, e, theta)
        sweep[theta] = (n, velocity)
        add(0, mu, theta, np.full(n + 1, np.nan), rounds, states, velocity, impulse)
        lines.append(f"Fig. 10, μ = {mu}: θ_max = {theta} rad takes {n} intervals (paper: {published})")
    write_csv(out / "plus-brick.csv", {k: np.asarray(v, float) for k, v in columns.items()})
    _plot_brick(runs, sweep, out / "plus-brick.png")
    lines.append("CSV columns: model 0 = PLUS (rows: start, then the end of each interval), 1 = compliant "
                 "(rows: save times); friction_state 1 rolling, 2 sliding, 3 impending slip; world frame, z up")
    return "\n".join(lines)


def _plot_brick(runs, sweep, path):
    fig, axes = figure(3, 3, 4.3, 4.0)
    circle = np.linspace(0, 2 * np.pi, 200)
    radius = EXAMPLE_1["transition_velocity"]
    for column, (mu, (velocity, impulse, rounds, states, compliant_v, compliant_p)) in enumerate(runs.items()):
        ax = axes[0, column]
        ax.plot(compliant_v[:, 0], compliant_v[:, 1], "k-", lw=1.5, label="compliant")
        ax.plot(velocity[:, 0], velocity[:, 1], "r--", lw=1.5, label="PLUS")
        ax.plot(radius * np.cos(circle), radius * np.sin(circle), "k-", lw=0.8)
        ax.set(title=f"Fig. 8: μ = {mu}", xlabel="v_x (m/s)", ylabel="v_y (m/s)")
        ax.set_aspect("equal", adjustable="datalim")
        ax.legend(fontsize=8)
        ax = axes[1, column]
        for axis, colour in ((0, "C0"), (1, "C1")):
            ax.plot(compliant_p[:, 2], compliant_p[:, axis], "-", color=colour, lw=1.5,
                    label=f"π_{'xy'[axis]} compliant")
            ax.plot(impulse[:, 2], impulse[:, axis], "--", color="k" if axis == 0 else "0.4", lw=1.2,
                    label=f"π_{'xy'[axis]} PLUS")
            end = np.flatnonzero(rounds == 1)[-1]
            ax.plot(impulse[end, 2], impulse[end, axis], "*", color="m", ms=11)
            rolls = np.flatnonzero(states == 1)
            if rolls.size:
                ax.plot(impulse[rolls[0] - 1, 2], impulse[rolls[0] - 1, axis], "^", color="g", ms=9)
        ax.set(title=f"Fig. 9: μ = {mu} (★ compressed, ▲ rolls)", xlabel="normal impulse π_z (N s)",
               ylabel="tangential impulse (N s)")
        ax.legend(fontsize=7)
    ax = axes[2, 0]
    compliant_v = runs[EXAMPLE_1["friction"][2]][4]
    ax.plot(compliant_v[:, 0], compliant_v[:, 1], "k-", lw=1.5, label="compliant")
    for (theta, (n, velocity)), style in zip(sweep.items(), ("r--", "b-.", "g:")):
        ax.plot(velocity[:, 0], velocity[:, 1], style, lw=1.5, marker=".", ms=3, label=f"θ_max = {theta} ({n} int.)")
    ax.set(title=f"Fig. 10: μ = {EXAMPLE_1['friction'][2]}", xlabel="v_x (m/s)", ylabel="v_y (m/s)")
    ax.legend(fontsize=8)
    for ax in axes[2, 1:]:
        ax.axis("off")
    save_figure(fig, path)


# --- Example 3: the Newton's cradle (Fig. 14, Table 2) -------------------------------------------------------

#: Example 3: five frictionless balls in a row, ball 1 moving into the four touching, stationary others.
#: ``gap``: the compliant row's balls are 1 nm apart (see ``compliant_cradle``).
EXAMPLE_3 = dict(balls=5, radius=0.25, mass=1.0, velocity=-2.0, restitution=1.0, stiffness=10e9, gap=1e-9)
#: Table 2: the state of each neighbour pair (rows: balls 1–2 … 4–5) in each of the five PLUS rounds.
TABLE_2 = (("compressing", "expanding", "observing", "observing", "observing"),
           ("observing", "compressing", "expanding", "observing", "observing"),
           ("observing", "observing", "compressing", "expanding", "observing"),
           ("observing", "observing", "observing", "compressing", "expanding"))
#: Row labels of Fig. 14.
CRADLE_ROWS = ("A: compliant", "B: PLUS", "C: no propagation")


def cradle_problem(balls=EXAMPLE_3["balls"], radius=EXAMPLE_3["radius"], mass=EXAMPLE_3["mass"],
                   velocity=EXAMPLE_3["velocity"]):
    """(W, u⁻, J, M⁻¹, twist⁻) of the row: ball 1 at x = 0 moving at ``velocity`` along x, ball b at x = −2R(b − 1).

    Contact k joins balls k and k + 1 (0-based) at P = c_k − R e_x with the
    normal n = −e_x (the push on ball k + 1) first, then e_y, e_z. Each ball
    is free in space (twist (v, ω), inertia (2/5) m R²), so J (3(b−1), 6b)
    maps the twists to the contact velocities u = n-frame components of
    (v_{k+1} + ω_{k+1} × r_{k+1}) − (v_k + ω_k × r_k), and W = J M⁻¹ Jᵀ.
    """
    frame = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # rows n, t, o
    J = np.zeros((3 * (balls - 1), 6 * balls))
    for k in range(balls - 1):
        arm_k, arm_next = np.array([-radius, 0.0, 0.0]), np.array([radius, 0.0, 0.0])  # P − c_k, P − c_{k+1}
        J[3 * k:3 * k + 3, 6 * k:6 * k + 6] = -frame @ np.hstack([np.eye(3), -_skew(arm_k)])
        J[3 * k:3 * k + 3, 6 * k + 6:6 * k + 12] = frame @ np.hstack([np.eye(3), -_skew(arm_next)])
    inverse_mass = np.diag(np.tile(np.r_[np.full(3, 1.0 / mass), np.full(3, 1.0 / (0.4 * mass * radius ** 2))], balls))
    twist = np.zeros(6 * balls)
    twist[0] = velocity
    W = J @ inverse_mass @ J.T
    return 0.5 * (W + W.T), J @ twist, J, inverse_mass, twist


def compliant_cradle(times, stiffness=EXAMPLE_3["stiffness"], gap=EXAMPLE_3["gap"]):
    """Row A of Fig. 14: the five balls with undamped Hertz contact between neighbours, integrated through.

    f = (4/3) √R E δ^(3/2) (eq. (4.1)) with R = R/2, the relative curvature of
    two equal spheres, and E = 10 GPa taken as the pair's effective modulus
    (as for the brick); no dissipation, no friction, no gravity. One
    ``Contact.family`` of the four neighbour pairs. The balls are discs in the
    plane of the row (``PlanarBody``, ``CircleCircle``): the impacts are
    central, so nothing leaves the line (the spatial model, ``SpatialBody`` and
    ``SphereSphere``, gives the same velocities to 6 digits and takes twice as
    long). The balls stand ``gap`` apart rather than touching: ``simulate``
    finds contact onsets as the gap crossing zero, which a pair at rest at
    δ = 0 never does (it would pass through without force). 1 nm is 10⁻⁵ of
    the largest compression (about 0.2 mm).
    Returns the ``Trajectory``.
    """
    import jax.numpy as jnp

    from diffimpact.contact.normal import Hertz
    from diffimpact.multibody import (
        AdaptiveSteps,
        CircleCircle,
        Contact,
        ContactEvents,
        LagrangeMultipliers,
        Model,
        PlanarBody,
        State,
        simulate,
    )

    p = EXAMPLE_3
    balls, radius, mass = p["balls"], p["radius"], p["mass"]
    law = Hertz(4.0 / 3.0 * np.sqrt(radius / 2) * stiffness, 1.5)
    pairs = Contact.family([Contact(CircleCircle(k, np.zeros(2), radius, k + 1, np.zeros(2), radius), law)
                            for k in range(balls - 1)])
    model = Model([PlanarBody(mass, 0.4 * mass * radius ** 2) for _ in range(balls)], [], [pairs])
    q0 = np.concatenate([[-k * (2 * radius + gap), 0.0, 0.0] for k in range(balls)])
    v0 = np.zeros(3 * balls)
    v0[0] = p["velocity"]
    return simulate(model, State(jnp.asarray(q0), jnp.asarray(v0)), np.asarray(times), LagrangeMultipliers(),
                    events=ContactEvents(max_events=4 * balls), steps=AdaptiveSteps(rtol=1e-9, atol=1e-12))


def run_cradle(out, quick=False):
    """Write ``plus-cradle.csv`` and ``.png`` (Example 3, Fig. 14, Table 2); return a summary.

    About 15 s on a 2-core machine, compiling included (``quick``: about 10 s).
    """
    import jax

    from diffimpact.impulse import Plus, Poisson, plus

    out = Path(out)
    p = EXAMPLE_3
    balls = p["balls"]
    W, u, J, inverse_mass, twist = cradle_problem()
    ball_velocity = lambda impulse: (twist + inverse_mass @ J.T @ np.asarray(impulse))[0::6]  # noqa: E731

    # B: PLUS with the constant restitution 1 (v_capture = v_plastic = 0), frictionless
    result = jax.jit(lambda W, u: Plus(p["restitution"], 0.0, capture_velocity=0.0, plastic_velocity=0.0)(W, u))(W, u)
    n = int(result.intervals)
    plus_v = np.vstack([twist[0::6]] + [ball_velocity(result.accumulated[i]) for i in range(n)])
    plus_rounds = np.asarray(result.interval_round[:n])
    plus_states = np.asarray(result.normal_state[:n])
    table = [[plus.NORMAL_STATES[plus_states[np.flatnonzero(plus_rounds == r)[0], k]]
              for r in range(1, int(result.rounds) + 1)] for k in range(balls - 1)]
    # C: every proximal pair in one compression and one expansion (Poisson, e = 1)
    model_c = ball_velocity(jax.jit(lambda W, u: Poisson(p["restitution"])(W, u, dimension=3))(W, u).impulse)
    # A: the compliant row
    times = np.linspace(0.0, 1e-3, 201 if quick else 1001)
    trajectory = compliant_cradle(times)
    compliant_v = np.asarray(trajectory.v[:, 0::3])
    positions = np.asarray(trajectory.q[:, 0::3])
    penetration = 2 * p["radius"] - (positions[:, :-1] - positions[:, 1:])
    events = trajectory.events
    count = int(events.count)
    event_t, event_pair, event_onset = (np.asarray(events.t[:count]), np.asarray(events.member[:count]),
                                        np.asarray(events.onset[:count]))

    columns = {"row": [], "index": [], "time_s": [], "round": []}
    columns.update({f"v{b + 1}_m_s": [] for b in range(balls)})
    columns.update({f"state_{k + 1}{k + 2}": [] for k in range(balls - 1)})
    columns.update({f"penetration_{k + 1}{k + 2}_m": [] for k in range(balls - 1)})

    def add(row, time, rounds, velocity, states, depth):
        k = len(velocity)
        for name, values in (("row", [row] * k), ("index", np.arange(k)), ("time_s", time), ("round", rounds)):
            columns[name].extend(values)
        for b in range(balls):
            columns[f"v{b + 1}_m_s"].extend(velocity[:, b])
        for pair in range(balls - 1):
            columns[f"state_{pair + 1}{pair + 2}"].extend(states[:, pair])
            columns[f"penetration_{pair + 1}{pair + 2}_m"].extend(depth[:, pair])

    none = lambda k: np.full((k, balls - 1), np.nan)  # noqa: E731
    add(0, times, np.full(len(times), np.nan), compliant_v, none(len(times)), penetration)
    add(1, np.full(n + 1, np.nan), np.r_[np.nan, plus_rounds], plus_v, np.vstack([np.full(balls - 1, np.nan),
                                                                                   plus_states]), none(n + 1))
    add(2, np.full(2, np.nan), np.full(2, np.nan), np.vstack([twist[0::6], model_c]), none(2), none(2))
    write_csv(out / "plus-cradle.csv", {k: np.asarray(v, float) for k, v in columns.items()})
    _plot_cradle(times, compliant_v, penetration, (event_t, event_pair, event_onset), table,
                 (compliant_v[-1], plus_v[-1], model_c), out / "plus-cradle.png")

    lines = ["Uchida, Sherman & Delp (2015) Example 3: five frictionless balls, ball 1 at −2 m/s into four at rest",
             f"PLUS: {int(result.rounds)} rounds, {n} intervals, converged {bool(result.converged)}; "
             f"Table 2 {'reproduced' if tuple(map(tuple, table)) == TABLE_2 else 'NOT reproduced'}:"]
    for k, states in enumerate(table):
        lines.append(f"  balls {k + 1} and {k + 2}: " + ", ".join(s.split(",")[0] for s in states))
    for label, velocity in zip(CRADLE_ROWS, (compliant_v[-1], plus_v[-1], model_c)):
        lines.append(f"{label}: final velocities {np.round(velocity, 4).tolist()} m/s")
    spans = []
    for pair in range(balls - 1):
        on = event_t[(event_pair == pair) & event_onset]
        off = event_t[(event_pair == pair) & ~event_onset]
        spans.append(f"{pair + 1}–{pair + 2}: {1e6 * on[0]:.1f}–{1e6 * off[-1]:.1f} µs")
    lines.append("compliant contacts (onset–separation): " + ", ".join(spans))
    lines.append(f"compliant energy {float(trajectory.energy[0]):.6f} → {float(trajectory.energy[-1]):.6f} J")
    lines.append("CSV columns: row 0 = A compliant (save times), 1 = B PLUS (start, then the end of each interval), "
                 "2 = C (before, after); state_jk: PLUS normal state of the pair (0 observing, 1 compressing, "
                 "3 expanding); velocities along x (ball 1 starts at −2 m/s)")
    return "\n".join(lines)


def _plot_cradle(times, velocity, penetration, events, table, finals, path):
    from matplotlib.colors import ListedColormap

    fig, axes = figure(2, 2, 5.0, 3.6)
    balls = velocity.shape[1]
    ax = axes[0, 0]
    for b in range(balls):
        ax.plot(1e6 * times, velocity[:, b], lw=1.5, label=f"ball {b + 1}")
    ax.set(title="A: compliant row, ball velocities", xlabel="time (µs)", ylabel="v_x (m/s)")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    for k in range(balls - 1):
        ax.plot(1e6 * times, 1e6 * np.maximum(penetration[:, k], 0.0), lw=1.5, label=f"balls {k + 1}–{k + 2}")
    ax.set(title="A: compliant row, overlaps (in contact together)", xlabel="time (µs)",
           ylabel="δ (µm)")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    codes = {"observing": 0, "compressing": 1, "expanding": 2}
    grid = np.array([[codes[s.split(",")[0]] for s in row] for row in table])
    ax.imshow(grid, cmap=ListedColormap(["0.92", "tab:red", "tab:blue"]), vmin=0, vmax=2, aspect="auto")
    for (k, r), code in np.ndenumerate(grid):
        ax.text(r, k, list(codes)[code], ha="center", va="center", fontsize=8, color="k" if code == 0 else "w")
    ax.set(title="B: PLUS impact rounds (Table 2)", xticks=range(grid.shape[1]),
           xticklabels=[f"round {r + 1}" for r in range(grid.shape[1])], yticks=range(grid.shape[0]),
           yticklabels=[f"balls {k + 1}, {k + 2}" for k in range(grid.shape[0])])
    ax = axes[1, 1]
    width = 0.27
    for i, (label, final) in enumerate(zip(CRADLE_ROWS, finals)):
        ax.bar(np.arange(1, balls + 1) + (i - 1) * width, final, width, label=label)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set(title="Fig. 14: velocities after the impact", xlabel="ball", ylabel="v_x (m/s)",
           xticks=range(1, balls + 1))
    ax.legend(fontsize=8)
    save_figure(fig, path)


# --- Example 2: four simultaneous points (Figs. 11–13) --------------------------------------------------------

#: Example 2: the brick of Table A1 falls flat on four spheres while sliding; e_min matched to the compliant model.
EXAMPLE_2 = dict(velocity=(-2.0, 0.0, -8.84), friction=0.2, min_restitution=0.414, stiffness=10e9, dissipation=0.15,
                 capture_velocity=0.01, plastic_velocity=0.1, transition_velocity=0.1, max_direction_change=0.01,
                 tilt=1e-9, proximity=1e-6)
#: Example 2's orientation (assumed; Fig. 11 is not in the text): lying on its 0.6 m × 0.8 m face, the long edge
#: along the slide (x), i.e. π/2 about y from Example 1's reference: body z → world x, body x → world −z.
EXAMPLE_2_ROTATION = rotation_y(np.pi / 2)


def example_2_problem(tilt=0.0, proximity=None):
    """(W, u⁻, points, vertex indices) of Example 2: the four lowest spheres, the brick translating at v^(start).

    ``tilt`` (rad) turns the brick about x first, lifting the +y pair by about 0.6 ``tilt`` m (a perturbation
    at round-off level); ``proximity``: the points within this distance of the lowest take part (Fig. 6,
    ``plus.proximal``); ``None`` keeps the four bottom points.
    """
    from diffimpact.impulse import plus

    rotation = rotation_x(tilt) @ EXAMPLE_2_ROTATION
    vertices = brick_vertices(rotation)
    bottom = np.argsort(vertices[:, 2], kind="stable")[:4]
    if proximity is not None:
        bottom = bottom[plus.proximal(vertices[bottom, 2] - vertices[bottom, 2].min(), proximity)]
    bottom = np.sort(bottom)
    points = vertices[bottom] - np.array([0.0, 0.0, BRICK["sphere_radius"]])
    W, u = contact_problem(points, rotation, np.concatenate([EXAMPLE_2["velocity"], np.zeros(3)]))
    return W, u, points, bottom


@functools.cache
def _four_point_compiled():
    """PLUS with Example 2's parameters, compiled once per number of points (θ_max traced)."""
    import jax

    from diffimpact.impulse import Plus

    p = EXAMPLE_2
    return jax.jit(lambda W, u, theta: Plus(
        p["min_restitution"], p["friction"], capture_velocity=p["capture_velocity"],
        plastic_velocity=p["plastic_velocity"], transition_velocity=p["transition_velocity"],
        max_direction_change=theta)(W, u))


def _four_point_plus(W, u, theta=EXAMPLE_2["max_direction_change"]):
    """PLUS with Example 2's parameters: per-point (n, x, y) impulses, velocities, rounds, states and the result."""
    result = _four_point_compiled()(W, u, theta)
    n, m = int(result.intervals), u.shape[0] // 3
    impulse = np.vstack([np.zeros(3 * m), np.asarray(result.accumulated[:n])]).reshape(n + 1, m, 3)
    velocity = np.vstack([u, np.asarray(result.velocities[:n])]).reshape(n + 1, m, 3)
    rounds = np.r_[1, np.asarray(result.interval_round[:n])]
    states = np.vstack([np.full(m, -1), np.asarray(result.friction_state[:n])])
    return impulse, velocity, rounds, states, result


def _body_velocity(points, impulses, rotation):
    """The brick's twist change (Δv, Δω) (m/s, rad/s) from impulses (k, 3) world frame at ``points`` (k, 3)."""
    inverse_inertia = rotation @ np.diag(1.0 / np.asarray(BRICK["inertia"])) @ rotation.T
    return impulses.sum(0) / BRICK["mass"], inverse_inertia @ np.cross(points, impulses).sum(0)


def run_four_points(out, quick=False):
    """Write ``plus-brick-four-points.csv`` and ``.png`` (Example 2, Figs. 11–13); return a summary.

    About 30 s on a 2-core machine, compiling included (``quick``: about 5 s).
    """
    from diffimpact.impulse import plus

    out = Path(out)
    p = EXAMPLE_2
    W, u, points, bottom = example_2_problem()
    impulse, velocity, rounds, states, result = _four_point_plus(W, u)
    immaterial, _, _, _, coarse = _four_point_plus(W, u, 0.25)
    # the compliant brick on the same four spheres (not in quick mode: it takes half a minute to compile)
    twist = np.concatenate([p["velocity"], np.zeros(3)])
    if quick:
        t, point_velocity, penetration = np.zeros(1), np.full((1, 4, 3), np.nan), np.full((1, 4), np.nan)
        momentum, force = np.full((1, 3), np.nan), np.zeros((1, 4, 3))
    else:
        t, point_velocity, momentum, penetration, force = compliant_brick(
            bottom, EXAMPLE_2_ROTATION, twist, p["friction"], p["stiffness"], p["dissipation"],
            np.linspace(0.0, 5e-4, 2001))
    compliant = np.concatenate([np.zeros((1,) + force.shape[1:]),
                                np.cumsum(0.5 * (force[1:] + force[:-1]) * np.diff(t)[:, None, None], 0)])
    # a tilt at round-off level with and without the proximity tolerance (Fig. 6)
    tilted = {}
    for label, proximity in (("with", p["proximity"]), ("without", 0.0)):
        W_t, u_t, points_t, bottom_t = example_2_problem(p["tilt"], proximity)
        tilted[label] = (_four_point_plus(W_t, u_t), points_t, bottom_t)

    m = len(bottom)
    columns = {"model": [], "index": [], "time_s": [], "round": []}
    for k in range(m):
        columns.update({f"p{k + 1}_{name}": [] for name in ("friction_state", "slip_x_m_s", "slip_y_m_s", "v_z_m_s",
                                                             "impulse_x_N_s", "impulse_y_N_s", "impulse_z_N_s",
                                                             "penetration_m")})

    def add(model, time, rounds, states, velocity, impulse, depth, which=range(m)):
        """``velocity``, ``impulse`` (len, k, 3) world (x, y, z); points ``which`` of the four, NaN elsewhere."""
        length = len(time)
        for name, values in (("model", [model] * length), ("index", np.arange(length)), ("time_s", time),
                             ("round", rounds)):
            columns[name].extend(values)
        for k in range(m):
            j = list(which).index(k) if k in which else None
            pick = (lambda a, c=None: np.full(length, np.nan) if j is None else (a[:, j] if c is None else a[:, j, c]))
            columns[f"p{k + 1}_friction_state"].extend(pick(states))
            columns[f"p{k + 1}_penetration_m"].extend(pick(depth))
            for c, axis in enumerate("xy"):
                columns[f"p{k + 1}_slip_{axis}_m_s"].extend(pick(velocity, c))
                columns[f"p{k + 1}_impulse_{axis}_N_s"].extend(pick(impulse, c))
            columns[f"p{k + 1}_v_z_m_s"].extend(pick(velocity, 2))
            columns[f"p{k + 1}_impulse_z_N_s"].extend(pick(impulse, 2))

    world = [1, 2, 0]  # contact frame (n, x, y) to world (x, y, z)
    nan = lambda length: np.full((length, m), np.nan)  # noqa: E731
    add(0, np.full(len(rounds), np.nan), rounds, states, velocity[..., world], impulse[..., world], nan(len(rounds)))
    if not quick:
        add(1, t, np.full(len(t), np.nan), nan(len(t)), point_velocity, compliant, penetration)
    for model, label in ((2, "with"), (3, "without")):
        (imp_t, vel_t, rounds_t, states_t, _), _, bottom_t = tilted[label]
        add(model, np.full(len(rounds_t), np.nan), rounds_t, states_t, vel_t[..., world], imp_t[..., world],
            np.full((len(rounds_t), len(bottom_t)), np.nan), [list(bottom).index(b) for b in bottom_t])
    write_csv(out / "plus-brick-four-points.csv", {k: np.asarray(v, float) for k, v in columns.items()})

    # the summary
    final = impulse[-1][:, world]
    compression_end = np.flatnonzero(rounds == 1)[-1]
    rolls = np.flatnonzero((states == plus.ROLLING).all(1))
    lines = ["Uchida, Sherman & Delp (2015) Example 2: the brick falls flat on four spheres, v = (−2, 0, −8.84) m/s, "
             "μ = 0.2, e_min = 0.414",
             "points (x, y) m: " + ", ".join(f"p{k + 1} ({points[k, 0]:+.1f}, {points[k, 1]:+.1f})" for k in range(m))
             + "; the brick slides towards −x (p1, p3 lead)",
             f"PLUS: {int(result.intervals)} intervals, {int(result.rounds)} rounds; friction states per interval "
             + str([[plus.FRICTION_STATES[s] for s in row] for row in states[1:]]),
             f"  all four slide from the start; all four roll from interval {rolls[0] if rolls.size else None} "
             f"(round {rounds[rolls[0]] if rolls.size else None}: "
             f"{'expansion' if rolls.size and rounds[rolls[0]] == 2 else 'compression'}), together",
             "  impulses (x, y, z) N s: " + "; ".join(f"p{k + 1} {np.round(final[k], 4).tolist()}" for k in range(m)),
             f"  mirror pairs (y → −y) differ by {np.abs(final[[0, 1]] - final[[2, 3]]).max():.1e} N s; the "
             f"twisting pattern (+, −, −, +) of the normal impulses {final[:, 2] @ [1, -1, -1, 1]:.1e} N s "
             f"(minimum norm: none of the redundant null space)",
             f"  θ_max = 0.25 instead of 0.01 changes the total by {np.abs(immaterial[-1] - impulse[-1]).max():.1e} "
             f"N s ({int(coarse.intervals)} intervals): immaterial, as the paper says"]
    if not quick:
        lines += [
            "compliant: impulses (x, y, z) N s: "
            + "; ".join(f"p{k + 1} {np.round(compliant[-1, k], 4).tolist()}" for k in range(m)),
            f"  their sum {np.round(compliant[-1].sum(0), 4).tolist()} (trapezoid over the save times) against "
            f"m Δv {np.round(momentum[-1], 4).tolist()}; largest penetration leading "
            f"{1e6 * penetration[:, 0].max():.1f} µm, trailing {1e6 * penetration[:, 1].max():.1f} µm",
            f"  total impulse PLUS {np.round(final.sum(0), 4).tolist()} against compliant "
            f"{np.round(momentum[-1], 4).tolist()} N s; final slip PLUS {np.round(velocity[-1, :, 1], 4).tolist()}, "
            f"compliant {np.round(point_velocity[-1, :, 0], 4).tolist()} m/s"]
    for label, (pts, imp, rotation) in {
            "level": (points, final, EXAMPLE_2_ROTATION),
            **{f"tilted by {p['tilt']:g} rad about x, proximity tolerance {tolerance:g} m":
               (v[1], v[0][0][-1][:, world], rotation_x(p["tilt"]) @ EXAMPLE_2_ROTATION)
               for tolerance, v in zip((p["proximity"], 0.0), tilted.values())}
    }.items():
        dv, dw = _body_velocity(pts, imp, rotation)
        lines.append(f"{label}: {len(pts)} of 4 points take part; the brick leaves with "
                     f"v = {np.round(np.asarray(p['velocity']) + dv, 4).tolist()} m/s, ω = {np.round(dw, 4).tolist()} rad/s"
                     + (" (the other points still approach: impacts in an order set by round-off would follow)"
                        if len(pts) < 4 else ""))
    lines.append("CSV columns: model 0 = PLUS (rows: start, then the end of each interval), 1 = compliant (save "
                 "times), 2, 3 = PLUS tilted with, without the proximity tolerance; per point p1..p4 its friction "
                 "state (1 rolling, 2 sliding, 3 impending slip), slip and normal velocity, accumulated impulse on "
                 "the brick and (compliant) penetration; world frame, z up")
    _plot_four_points((impulse[..., world], rounds, states, compression_end), (t, compliant, penetration),
                      final, {k: v[0][0][-1][:, world] for k, v in tilted.items()},
                      {k: v[2] for k, v in tilted.items()}, bottom, out / "plus-brick-four-points.png")
    return "\n".join(lines)


def _plot_four_points(plus_run, compliant_run, final, tilted, tilted_points, bottom, path):
    impulse, rounds, states, compression_end = plus_run
    t, compliant, penetration = compliant_run
    fig, axes = figure(2, 2, 5.0, 3.8)
    for column, (k, side) in enumerate(((0, "leading (p1, p3)"), (1, "trailing (p2, p4)"))):
        ax = axes[0, column]
        ax.plot(compliant[:, k, 2], compliant[:, k, 0], "-", color="C0", lw=1.5, label="π_x compliant")
        ax.plot(impulse[:, k, 2], impulse[:, k, 0], "--", color="k", lw=1.5, marker=".", label="π_x PLUS")
        ax.plot(impulse[compression_end, k, 2], impulse[compression_end, k, 0], "*", color="m", ms=12,
                label="compression ends")
        rolls = np.flatnonzero((states == 1).all(1))
        if rolls.size:
            ax.plot(impulse[rolls[0] - 1, k, 2], impulse[rolls[0] - 1, k, 0], "^", color="g", ms=9, label="rolls")
        ax.plot(compliant[-1, k, 2], compliant[-1, k, 0], "o", color="C0", ms=7)
        ax.plot(impulse[-1, k, 2], impulse[-1, k, 0], "s", color="k", ms=6)
        ax.set(title=f"Fig. 12: {side} points", xlabel="normal impulse π_z (N s)",
               ylabel="tangential impulse π_x (N s)")
        ax.legend(fontsize=8)
    ax = axes[1, 0]
    ax.plot(1e6 * t, 1e6 * penetration[:, 0], "-", lw=1.5, label="leading (p1, p3)")
    ax.plot(1e6 * t, 1e6 * penetration[:, 1], "--", lw=1.5, label="trailing (p2, p4)")
    ax.set(title="Fig. 13: compliant penetration", xlabel="time (µs)", ylabel="δ (µm)", ylim=(0, None))
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    width = 0.27
    x = np.arange(1, len(bottom) + 1)
    ax.bar(x - width, final[:, 2], width, label="level")
    for i, label in enumerate(("with", "without"), 1):
        values = np.zeros(len(bottom))
        values[[list(bottom).index(b) for b in tilted_points[label]]] = tilted[label][:, 2]
        ax.bar(x - width + i * width, values, width, label=f"tilted 1e-9 rad, {label} proximity")
    ax.set(title="normal impulse per point (min-norm spreading)", xlabel="point", ylabel="π_z (N s)",
           xticks=x, xticklabels=[f"p{k}" for k in x], ylim=(0, 1.4 * final[:, 2].max()))
    ax.legend(fontsize=8)
    save_figure(fig, path)
