"""The examples of the PLUS paper (seed 001, Uchida, Sherman & Delp 2015), §4.

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

``plus-cradle`` (Example 3, Fig. 14, Table 2): five frictionless balls
(R = 0.25 m, 1 kg) in a row, ball 1 moving at 2 m/s into the four touching,
resting others. PLUS (e = 1) takes the five rounds of Table 2 and leaves ball
5 alone moving at 2 m/s; model C (every proximal pair in one Poisson
compression and expansion, ``diffimpact.impulse.poisson``) moves the four as
one ball; the compliant row (``compliant_cradle``: undamped Hertz, 10 GPa)
sends the last ball off at 98.9 % of the speed with small velocities left in
the others.
"""

import functools
from pathlib import Path

import numpy as np

from diffimpact.reproduce._io import figure, save_figure, write_csv

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


def compliant_brick(vertex_indices, rotation, twist, friction, stiffness, dissipation, times, gap=1e-7):
    """The brick of Examples 1–2 with Simbody's compliant contact at the spheres ``vertex_indices``.

    Hertz f = (4/3) √R E δ^(3/2) with Hunt & Crossley's (1 + (3/2) c δ̇) (eqs. (4.1)–(4.2)), i.e.
    ``HuntCrossley(k, 3/2, (3/2) c k)`` with k = (4/3) √R E, R the sphere radius on the flat ground; E taken as the
    effective modulus of the pair (the paper's "effective plane strain modulus"; Table A1's 10 GPa), c the
    effective dissipation. Friction: Coulomb μ with a tanh ramp reaching 99.5 % at Simbody's transition speed
    0.01 m/s (regularisation 0.01/3 m/s), equal static and dynamic coefficients, no viscous friction. No
    gravity (the impact lasts under a millisecond). The lowest sphere starts ``gap`` above the ground.
    Returns (times, contact-point velocities (len, k, 3) world frame, impulse m Δv (len, 3)).
    """
    import jax
    import jax.numpy as jnp

    from diffimpact.contact.friction import Coulomb
    from diffimpact.contact.normal import HuntCrossley
    from diffimpact.multibody import (Contact, LagrangeMultipliers, Model, SpatialBody, SpherePlane, State,
                                      angular_velocity, euler_rates, orientation, simulate)

    radius = BRICK["sphere_radius"]
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    local = signs[list(vertex_indices)] * np.asarray(BRICK["half_extents"])
    k = 4.0 / 3.0 * np.sqrt(radius) * stiffness
    law = HuntCrossley(k, 1.5, 1.5 * dissipation * k)
    contacts = [Contact(SpherePlane(None, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0, centre, radius), law,
                        Coulomb(friction, 0.01 / 3)) for centre in local]
    model = Model([SpatialBody(BRICK["mass"], np.asarray(BRICK["inertia"]))], [], contacts)
    p = _euler_parameters_of(rotation)
    world = local @ rotation.T
    height = radius + gap - world[:, 2].min()
    q0 = jnp.concatenate([jnp.array([0.0, 0.0, height]), p])
    v0 = jnp.concatenate([jnp.asarray(twist[:3], float), euler_rates(p, jnp.asarray(twist[3:], float))])
    trajectory = simulate(model, State(q0, v0), np.asarray(times), LagrangeMultipliers(), max_events=4 * len(local),
                          rtol=1e-9, atol=1e-12)

    def point_velocities(q, v):
        A = orientation(q)
        omega = angular_velocity(q, v)
        arms = (jnp.asarray(local) @ A.T) - jnp.array([0.0, 0.0, radius])
        return v[:3] + jnp.cross(omega, arms)

    velocities = np.asarray(jax.vmap(point_velocities)(trajectory.q, trajectory.v))
    impulse = BRICK["mass"] * (np.asarray(trajectory.v[:, :3]) - np.asarray(twist[:3]))
    return np.asarray(trajectory.t), velocities, impulse


@functools.cache
def _plus_compiled():
    """PLUS with Table A1's parameters, compiled once (friction, e_min and θ_max traced)."""
    import jax

    from diffimpact.impulse import plus

    p = EXAMPLE_1
    return jax.jit(lambda W, u, e, mu, theta: plus.impact(
        W, u, e, mu, capture_velocity=p["capture_velocity"], plastic_velocity=p["plastic_velocity"],
        transition_velocity=p["transition_velocity"], max_direction_change=theta, max_intervals=512))


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
    """Write ``plus-brick.csv`` and ``.png`` (Example 1, Figs. 8–10); return a summary."""
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
            t, point_velocity, compliant_impulse = compliant_brick([vertex], EXAMPLE_1_ROTATION, twist, mu,
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
    from diffimpact.multibody import CircleCircle, Contact, LagrangeMultipliers, Model, PlanarBody, State, simulate

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
                    max_events=4 * balls, rtol=1e-9, atol=1e-12)


def run_cradle(out, quick=False):
    """Write ``plus-cradle.csv`` and ``.png`` (Example 3, Fig. 14, Table 2); return a summary."""
    import jax

    from diffimpact.impulse import plus, poisson

    out = Path(out)
    p = EXAMPLE_3
    balls = p["balls"]
    W, u, J, inverse_mass, twist = cradle_problem()
    ball_velocity = lambda impulse: (twist + inverse_mass @ J.T @ np.asarray(impulse))[0::6]  # noqa: E731

    # B: PLUS with the constant restitution 1 (v_capture = v_plastic = 0), frictionless
    result = jax.jit(lambda W, u: plus.impact(W, u, p["restitution"], 0.0, capture_velocity=0.0,
                                              plastic_velocity=0.0))(W, u)
    n = int(result.intervals)
    plus_v = np.vstack([twist[0::6]] + [ball_velocity(result.accumulated[i]) for i in range(n)])
    plus_rounds = np.asarray(result.interval_round[:n])
    plus_states = np.asarray(result.normal_state[:n])
    table = [[plus.NORMAL_STATES[plus_states[np.flatnonzero(plus_rounds == r)[0], k]]
              for r in range(1, int(result.rounds) + 1)] for k in range(balls - 1)]
    # C: every proximal pair in one compression and one expansion (Poisson, e = 1)
    model_c = ball_velocity(jax.jit(lambda W, u: poisson.impact(W, u, p["restitution"], dimension=3))(W, u).impulse)
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
