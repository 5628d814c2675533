"""The single-contact examples of Preclik, Eibl & Rüde (2017), §§4.1–4.2.

**Academic problem** (§4.1, Table 1, Fig. 7): a body of six point masses on
its axes (±d_x e_x, ±d_y e_y, ±d_z e_z, masses m_x, m_y, m_z each) hits a
plane with its mass point at +d_x e_x; the Delassus operator is

    A = Qᵀ ((2(m_x + m_y + m_z))⁻¹ E − d_x² e_x^× I⁻¹ e_x^×) Q,
    I = 2 diag(m_y d_y² + m_z d_z², m_x d_x² + m_z d_z², m_x d_x² + m_y d_y²),

with d_x = 10, d_y = d_z = 1, m_x = 0.03, m_y = 65, m_z = 50, μ = 3.7,
n = n̂/‖n̂‖, n̂ = (0.25, 0.36, −0.9), b = Qᵀ (0.06, 0.7, 0.23),
Q = [n t o], t = n × e_x, o = n × t. Read as printed, t is **not** a unit
vector (‖n × e_x‖ = √(1 − n_x²) = 0.969): Table 1's solutions (three Coulomb
solutions and x* ≈ (1.6, −1.1, −5.8), energy −0.634) are those of this
non-orthonormal frame, and we reproduce them there. In an orthonormal frame
(t normalised) the same body and velocity give x* ≈ (2.78, −1.05, −10.23),
energy −0.748: a different problem, since A and b change with the frame's
scaling while the friction cone in these coordinates does not. The
reproduction reports both.

**Paradox rod** (§4.2, Fig. 8): a slender rod (mass m, length l) leaning at
θ with its lower tip on the ground, sliding along it at v₀ without rotating
(u⁻_n = 0, grazing). The rod's Delassus operator at the tip is built here
from its mass and inertia (not copied): the paper's A(t₀) matches it in the
plane; its out-of-plane entry as transcribed, (1 + 3 cos² 2θ)/m, is not the
rod's 4/m (an impulse along z turns the rod about an in-plane axis normal
to it, (l/2)²/(ml²/12) = 3/m, plus 1/m), which does not enter the planar
problem. Coulomb friction with contact forces has no solution for
μ > μ*(θ) = (cos θ + 1/(3 cos θ))/sin θ, least 4/3 at θ = ½ acos(−3/5)
(63.4°). The maximum-dissipation impact model resolves it: for μ < μ* it
gives no impulse (the grazing case P₂ of Fig. 5), for μ ≥ μ* it gives the
impulse that sticks the tip, Λ₀ = m v₀/8 (3 sin 2θ, 5 + 3 cos 2θ, 0) in
(n, t, o) (case P₁). The reproduction finds the threshold by bisection on
``MaxDissipation``'s impulse and compares it with μ*(θ).

**Time stepping** (§3.1; ``diffimpact.rigid_spheres``): (a) a solid
sphere launched sliding without spin on a plane with friction μ decelerates
at μg while r ω grows at 5/2 μg, until it rolls at t* = 2v₀/(7μg) after
s* = 12v₀²/(49μg), at 5v₀/7 (its angular momentum about the contact point is
conserved); the simulation against these closed forms, and the errors in t*
and s* against δt. (b) Ten spheres (r = 8–12 mm, 2650 kg/m³, μ = 0.4, the
density and friction of §4.3) poured into a 6 cm box and left to settle,
with and without error reduction and for several Gauss–Seidel sweep counts:
energy, kinetic energy, the deepest penetration and the loaded contacts over
time. The paper's granular channel flow (§4.3, 2.5·10⁵ particles on 640
processes) is not attempted; for homogeneous spheres its two friction laws
give the same impulses (module docstring of ``rigid_spheres``).
"""

import time
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq

from diffimpact import rigid_spheres
from diffimpact.impulse import MaxDissipation, max_dissipation
from diffimpact.io import figure, save_figure, write_csv

ACADEMIC = dict(dx=10.0, dy=1.0, dz=1.0, mx=0.03, my=65.0, mz=50.0, friction=3.7,
                normal=(0.25, 0.36, -0.9), velocity=(0.06, 0.7, 0.23))
#: Table 1 as printed: Coulomb solutions and the maximally dissipative one, x and ½xᵀAx − xᵀb.
TABLE_1 = {"coulomb": [((0.12, -0.44, -0.065), -0.252), ((0.29, -0.89, -0.62), -0.393),
                       ((1.56, -0.99, -5.7), -0.631)],
           "max_dissipation": ((1.6, -1.1, -5.8), -0.634)}


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def academic_problem(orthonormal=False):
    """(A, b, μ) of §4.1; ``orthonormal=False`` is the frame as printed (t = n × e_x not normalised)."""
    p = ACADEMIC
    inertia = 2 * np.diag([p["my"] * p["dy"] ** 2 + p["mz"] * p["dz"] ** 2,
                           p["mx"] * p["dx"] ** 2 + p["mz"] * p["dz"] ** 2,
                           p["mx"] * p["dx"] ** 2 + p["my"] * p["dy"] ** 2])
    ex = np.array([1.0, 0.0, 0.0])
    n = np.asarray(p["normal"]) / np.linalg.norm(p["normal"])
    t = np.cross(n, ex)
    if orthonormal:
        t /= np.linalg.norm(t)
    Q = np.column_stack([n, t, np.cross(n, t)])
    world = np.eye(3) / (2 * (p["mx"] + p["my"] + p["mz"])) - p["dx"] ** 2 * _skew(ex) @ np.linalg.inv(inertia) @ _skew(ex)
    return Q.T @ world @ Q, Q.T @ np.asarray(p["velocity"]), p["friction"]


def coulomb_solutions(A, b, friction, samples=3600):
    """Every sliding solution of the impulsive Coulomb model (Fig. 1): u⁺_n = 0, λ_to = −μ λ_n u⁺_to/‖u⁺_to‖.

    The friction impulse points along (cos β, sin β); u⁺_n = 0 fixes λ_n; β is
    a solution where u⁺_to points along −(cos β, sin β). Roots of the cross
    product on a grid of β, refined by Brent's method.
    """
    def impulse(beta):
        direction = np.array([1.0, friction * np.cos(beta), friction * np.sin(beta)])
        return direction * b[0] / (A[0] @ direction)

    def cross(beta):
        u = A @ impulse(beta) - b
        return u[1] * np.sin(beta) - u[2] * np.cos(beta)

    grid = np.linspace(-np.pi, np.pi, samples + 1)
    values = np.array([cross(beta) for beta in grid])
    solutions = []
    for lo, hi, flo, fhi in zip(grid[:-1], grid[1:], values[:-1], values[1:]):
        if flo * fhi < 0:
            x = impulse(brentq(cross, lo, hi, xtol=1e-14))
            u = A @ x - b
            if x[0] > 0 and u[1:] @ x[1:] < 0:  # repulsive, friction against the slip
                solutions.append(x)
    return solutions


def energy(A, b, x):
    return 0.5 * x @ A @ x - x @ b


def rod_problem(theta, friction=1.0, mass=1.0, length=1.0, speed=1.0):
    """(A, u⁻, μ) of the paradox rod in the contact frame (n = e_y, t = e_x, o = e_z), from its mass and inertia."""
    c, s = np.cos(theta), np.sin(theta)
    axis = np.array([c, s, 0.0])
    # inverse inertia: no rotation about the rod's own axis, ml²/12 about the two normal to it
    inverse_inertia = 12.0 / (mass * length**2) * (np.eye(3) - np.outer(axis, axis))
    r = -0.5 * length * axis  # centre of mass to the lower tip
    world = np.eye(3) / mass - _skew(r) @ inverse_inertia @ _skew(r)
    Q = np.column_stack([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return Q.T @ world @ Q, Q.T @ np.array([-speed, 0.0, 0.0]), friction


def paradox_friction(theta):
    """μ*(θ) = (cos θ + 1/(3 cos θ))/sin θ of §4.2: above it the rod needs an impulse."""
    return (np.cos(theta) + 1.0 / (3.0 * np.cos(theta))) / np.sin(theta)


def stick_impulse(theta, mass=1.0, speed=1.0):
    """Λ₀ of §4.2 in (n, t, o): the impulse that stops the tip, m v₀/8 (3 sin 2θ, 5 + 3 cos 2θ, 0)."""
    return mass * speed / 8 * np.array([3 * np.sin(2 * theta), 5 + 3 * np.cos(2 * theta), 0.0])


def run_academic(out, quick=False):
    """Write ``maxdiss-academic.csv`` and ``.png`` (Table 1, Fig. 7); return a summary.

    About 6 s on a 2-core machine, compiling included (``quick``: about 6 s).
    """
    out = Path(out)
    rows, lines = [], ["Preclik, Eibl & Rüde (2017) §4.1, Table 1: the academic single-contact problem"]
    panels = []
    for orthonormal in (False, True):
        A, b, mu = academic_problem(orthonormal)
        star = np.asarray(MaxDissipation(mu)(A, -b).impulse)
        coulomb = coulomb_solutions(A, b, mu)
        frame = "orthonormal frame" if orthonormal else "frame as printed (t = n × e_x)"
        lines.append(f"{frame}: x* = {np.round(star, 3).tolist()}, energy {energy(A, b, star):.4f}, "
                     f"u⁺ = {np.round(A @ star - b, 4).tolist()}; {len(coulomb)} Coulomb solutions:")
        for kind, xs in (("coulomb", coulomb), ("max_dissipation", [star])):
            for x in xs:
                u = A @ x - b
                rows.append([orthonormal, kind == "max_dissipation", *x, *u, energy(A, b, x)])
                if kind == "coulomb":
                    lines.append(f"  x = {np.round(x, 3).tolist()}, u⁺ = {np.round(u, 4).tolist()}, "
                                 f"energy {energy(A, b, x):.4f}")
        panels.append((frame, A, b, mu, star, coulomb))
    printed = TABLE_1["max_dissipation"]
    lines.append(f"Table 1 as printed: x* ≈ {list(printed[0])}, energy {printed[1]}; Coulomb energies "
                 f"{[e for _, e in TABLE_1['coulomb']]}")
    table = np.array(rows, dtype=float)
    names = ["orthonormal_frame", "max_dissipation", "x_n", "x_t", "x_o", "u_n", "u_t", "u_o", "energy"]
    write_csv(out / "maxdiss-academic.csv", dict(zip(names, table.T)))
    _plot_academic(panels, out / "maxdiss-academic.png", 121 if quick else 301)
    return "\n".join(lines)


def _plot_academic(panels, path, resolution):
    figure, axes = plt.subplots(1, 2, figsize=(11, 6))
    for axis, (frame, A, b, mu, star, coulomb) in zip(axes, panels):
        _, Ahat, bhat = (np.asarray(v) for v in max_dissipation._schur(jnp.asarray(A), jnp.asarray(b)))
        f_r, gamma, _ = jax.vmap(lambda angle: max_dissipation._boundary(A, b, mu, angle))(
            jnp.linspace(-np.pi, np.pi, 4001))
        boundary = np.where(np.asarray(f_r)[:, None] > 0, np.asarray(gamma), np.nan)
        low, high = np.nanmin(boundary, 0), np.nanmax(boundary, 0)
        low, high = low - 0.15 * (high - low), high + 0.15 * (high - low)
        xt, xo = np.meshgrid(np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution))
        points = np.stack([xt, xo], -1)
        objective = 0.5 * np.einsum("...i,ij,...j->...", points, Ahat, points) - points @ bhat
        contours = axis.contour(xt, xo, objective, levels=np.quantile(objective, np.linspace(0.002, 0.6, 12)),
                                cmap="Greys_r", linewidths=0.8)
        axis.clabel(contours, fontsize=6, fmt="%.2f")
        axis.plot(*boundary.T, color="tab:blue", lw=1.5,
                  label="boundary of the feasible set (plane of maximum compression ∩ cone)")
        for i, x in enumerate(coulomb):
            axis.plot(*x[1:], "o", mfc="none", mec="tab:red", ms=9,
                      label="Coulomb solutions (Fig. 1)" if i == 0 else None)
        axis.plot(*star[1:], "x", color="tab:red", ms=11, mew=2.5, label="maximum dissipation x*")
        axis.set_xlim(low[0], high[0])
        axis.set_ylim(low[1], high[1])
        axis.set_xlabel("tangential impulse x_t (N s)")
        axis.set_ylabel("tangential impulse x_o (N s)")
        axis.set_title(f"{frame}\ncontours: ½ x_toᵀÂx_to − x_toᵀb̂ (J), x* energy {energy(A, b, star):.3f} J",
                       fontsize=9)
        axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    figure.suptitle("Academic single-contact problem (Preclik et al. 2017, §4.1): energy contours on the "
                    "plane of maximum compression", fontsize=10)
    figure.tight_layout()
    save_figure(figure, path)


@jax.jit
def _impulse(delassus, velocity, friction):
    """``MaxDissipation(friction)``'s impulse on (W, u⁻), compiled once (μ traced)."""
    return MaxDissipation(friction)(delassus, velocity).impulse


def paradox_threshold(thetas, high=20.0, tolerance=1e-10):
    """The least μ for which ``MaxDissipation`` gives the rod a non-zero impulse, by bisection, per angle."""
    problems = [rod_problem(theta) for theta in np.atleast_1d(thetas)]
    A = np.stack([p[0] for p in problems])
    u = np.stack([p[1] for p in problems])
    low, high = np.zeros(len(problems)), np.full(len(problems), high)
    while np.max(high - low) > tolerance:
        middle = 0.5 * (low + high)
        acts = np.any(np.asarray(_impulse(A, u, middle)) != 0, axis=-1)
        low, high = np.where(acts, low, middle), np.where(acts, middle, high)
    return high


def run_paradox(out, quick=False):
    """Write ``maxdiss-paradox.csv`` and ``.png`` (μ*(θ) of §4.2 from the impact model); return a summary.

    About 5 s on a 2-core machine, compiling included (``quick``: about 5 s).
    """
    out = Path(out)
    thetas = np.radians(np.linspace(5.0, 85.0, 17 if quick else 81))
    thresholds = paradox_threshold(thetas)
    exact = paradox_friction(thetas)
    impulses = np.array([np.asarray(_impulse(*rod_problem(theta, friction=mu)))
                         for theta, mu in zip(thetas, exact + 0.1)])
    sticking = np.array([stick_impulse(theta) for theta in thetas])
    write_csv(out / "maxdiss-paradox.csv", {
        "theta_deg": np.degrees(thetas), "mu_star": exact, "mu_threshold_impact_model": thresholds,
        "impulse_n_at_mu_star_plus_0p1": impulses[:, 0], "impulse_t_at_mu_star_plus_0p1": impulses[:, 1],
        "stick_impulse_n": sticking[:, 0], "stick_impulse_t": sticking[:, 1],
    })
    theta_min = 0.5 * np.arccos(-3.0 / 5.0)
    minimum = paradox_threshold(theta_min)[0]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    fine = np.radians(np.linspace(3.0, 87.0, 400))
    left.plot(np.degrees(fine), paradox_friction(fine), color="black", lw=2.5, label="μ*(θ), §4.2 (closed form)")
    left.plot(np.degrees(thetas), thresholds, "o", color="tab:orange", ms=4,
              label="least μ with an impulse (MaxDissipation, bisection)")
    left.plot(np.degrees(theta_min), 4 / 3, "*", color="tab:red", ms=14, label="minimum 4/3 at ½ acos(−3/5)")
    left.set_ylim(0, 6)
    left.set_xlabel("rod angle θ (deg)")
    left.set_ylabel("friction coefficient μ (-)")
    left.set_title("Painlevé rod: where the impact model acts", fontsize=10)
    left.legend(fontsize=8)
    for i, (label, color) in enumerate((("normal", "tab:blue"), ("tangential", "tab:green"))):
        right.plot(np.degrees(thetas), sticking[:, i], color=color, lw=2.5, label=f"Λ₀ {label} (§4.2)")
        right.plot(np.degrees(thetas), impulses[:, i], "o", color="black", ms=3,
                   label="MaxDissipation at μ = μ* + 0.1" if i == 0 else None)
    right.set_xlabel("rod angle θ (deg)")
    right.set_ylabel("impulse / (m v₀) (-)")
    right.set_title("Above μ*: the impulse sticks the tip", fontsize=10)
    right.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, out / "maxdiss-paradox.png")
    worst = np.max(np.abs(thresholds - exact))
    return "\n".join([
        "Preclik, Eibl & Rüde (2017) §4.2: the Painlevé rod under the maximum-dissipation impact model",
        f"{len(thetas)} angles from {np.degrees(thetas[0]):.0f}° to {np.degrees(thetas[-1]):.0f}°: the impulse "
        f"appears at μ*(θ) within {worst:.1e}",
        f"least threshold {minimum:.10f} at θ = {np.degrees(theta_min):.4f}° (paper: 4/3 = {4 / 3:.10f})",
        f"impulse at μ* + 0.1 against the stick impulse Λ₀: largest difference "
        f"{np.max(np.abs(impulses - sticking)):.1e} (m v₀ = 1)",
    ])


#: (a) the sliding sphere; (b) the poured spheres: count, radii, density, friction, box half-width, δt, duration
SLIDING = dict(speed=2.0, friction=0.3, radius=0.1, mass=2.0, dt=1e-3, steps=400)
POURED = dict(count=10, radius=(0.008, 0.012), density=2650.0, friction=0.4, half_width=0.03, dt=1e-3, steps=800,
              seed=2017)
FLOOR = ((0.0, 0.0, 1.0), (0.0, 0.0, 0.0))


def slip_phase(trajectory, radius, direction):
    """Index of the first state that rolls (contact-point speed < 1e-12 m/s), and the speed along ``direction``."""
    state = trajectory.state
    slip = state.velocity[:, 0] + jnp.cross(state.angular_velocity[:, 0], jnp.array([0.0, 0.0, -radius]))
    end = int(np.argmax(np.asarray(jnp.linalg.norm(slip, axis=-1)) < 1e-12))
    return end, np.asarray(state.velocity[:, 0] @ direction)


def sliding_closed_form(speed, friction, t):
    """v(t) and r ω(t) of a solid sphere launched sliding without spin: μg deceleration until t*, then 5/7 v₀."""
    g = 9.81
    t_star = 2 * speed / (7 * friction * g)
    return (np.where(t < t_star, speed - friction * g * t, 5 / 7 * speed),
            np.where(t < t_star, 2.5 * friction * g * t, 5 / 7 * speed), t_star, 12 * speed**2 / (49 * friction * g))


def _sliding(dt, steps):
    p = SLIDING
    scene = rigid_spheres.Scene([p["radius"]], p["mass"], planes=[FLOOR], friction=p["friction"])
    start = rigid_spheres.State([[0.0, 0.0, p["radius"]]], velocity=[[p["speed"], 0.0, 0.0]])
    return rigid_spheres.simulate(scene, start, dt, steps, sweeps=1)


def poured_scene():
    """(scene, initial state) of the ten spheres dropped into the box from a loose 2 × 2 column."""
    p = POURED
    rng = np.random.default_rng(p["seed"])
    w = p["half_width"]
    box = [FLOOR] + [(normal, -w * np.asarray(normal)) for normal in
                     ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))]
    radius = rng.uniform(*p["radius"], p["count"])
    column = np.array([[x, y] for x in (-0.013, 0.013) for y in (-0.013, 0.013)])
    k = np.arange(p["count"])
    position = np.column_stack([column[k % 4] + rng.uniform(-0.003, 0.003, (p["count"], 2)),
                                0.02 + 0.026 * (k // 4) + 0.006 * (k % 4)])
    scene = rigid_spheres.Scene(radius, p["density"] * 4 / 3 * np.pi * radius**3, planes=box, friction=p["friction"])
    return scene, rigid_spheres.State(position, velocity=rng.uniform(-0.1, 0.1, (p["count"], 3)))


def run_stepping(out, quick=False):
    """Write ``maxdiss-stepping*.csv`` and ``maxdiss-stepping.png`` (§3.1 time stepping); return a summary.

    About 75 s on a 2-core machine, compiling included (``quick``: about 25 s).
    """
    out = Path(out)
    p, q = SLIDING, POURED
    direction = np.array([1.0, 0.0, 0.0])
    # (a) sliding → rolling, and the slip phase against δt (1000 steps each: one compilation)
    trajectory = _sliding(p["dt"], p["steps"])
    end, speed = slip_phase(trajectory, p["radius"], direction)
    t = np.asarray(trajectory.time)
    spin = np.asarray(jnp.linalg.norm(trajectory.state.angular_velocity[:, 0], axis=-1)) * p["radius"]
    exact_v, exact_spin, t_star, s_star = sliding_closed_form(p["speed"], p["friction"], t)
    write_csv(out / "maxdiss-stepping-sliding.csv", {"t_s": t, "v_m_s": speed, "r_omega_m_s": spin,
                                                      "v_closed_form": exact_v, "r_omega_closed_form": exact_spin})
    steps = np.array([4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4]) if not quick else np.array([2e-3, 1e-3, 5e-4])
    slip_time, slip_distance = [], []
    for dt in steps:
        run = _sliding(dt, 1000)
        k, _ = slip_phase(run, p["radius"], direction)
        slip_time.append(k * dt)
        slip_distance.append(float(run.state.position[k, 0] @ direction))
    slip_time, slip_distance = np.array(slip_time), np.array(slip_distance)
    write_csv(out / "maxdiss-stepping-convergence.csv", {
        "dt_s": steps, "slip_time_s": slip_time, "slip_distance_m": slip_distance,
        "slip_time_error_s": slip_time - t_star, "slip_distance_error_m": slip_distance - s_star})
    order = np.polyfit(np.log(steps), np.log(np.abs(slip_distance - s_star)), 1)[0]

    # (b) the poured spheres: ε = 0 and 0.2 at 20 sweeps, and ε = 0 at other sweep counts
    scene, start = poured_scene()
    count = q["steps"] // 2 if quick else q["steps"]
    cases = [(0.0, 20), (0.2, 20)] + ([] if quick else [(0.0, 5), (0.0, 80)])
    runs = {}
    for epsilon, sweeps in cases:
        began = time.perf_counter()
        runs[epsilon, sweeps] = rigid_spheres.simulate(scene, start, q["dt"], count, error_reduction=epsilon,
                                                       sweeps=sweeps)
        jax.block_until_ready(runs[epsilon, sweeps])
        if epsilon > 0:  # compiled by the ε = 0 run (ε is traced, the sweep count is not)
            per_step = (time.perf_counter() - began) / count
    columns, lines = {"t_s": np.asarray(runs[0.0, 20].time)}, []
    r_min = float(scene.radius.min())
    for (epsilon, sweeps), run in runs.items():
        tag = f"eps{epsilon:g}_sweeps{sweeps}".replace(".", "p")
        kinetic = np.asarray(rigid_spheres.kinetic_energy(scene, run.state))
        energy = kinetic + np.asarray(rigid_spheres.potential_energy(scene, run.state))
        penetration = np.concatenate([[0.0], np.maximum(0.0, -np.asarray(run.gap)).max(axis=1)])
        loaded = np.concatenate([[0], (np.asarray(run.impulse[..., 0]) > 0).sum(axis=1)])
        columns.update({f"energy_J_{tag}": energy, f"kinetic_J_{tag}": kinetic,
                        f"penetration_m_{tag}": penetration, f"loaded_contacts_{tag}": loaded})
        lines.append(f"  ε = {epsilon:g}, {sweeps} sweeps: energy {energy[0]:.4e} → {energy[-1]:.4e} J "
                     f"(largest rise in a step {np.diff(energy).max():+.1e} J), final kinetic {kinetic[-1]:.1e} J, deepest "
                     f"penetration {penetration.max() / r_min:.1e} r_min (final {penetration[-1] / r_min:.1e}), "
                     f"{loaded[-1]} loaded contacts at the end")
    write_csv(out / "maxdiss-stepping.csv", columns)
    _plot_stepping(out / "maxdiss-stepping.png", trajectory, (t, speed, spin, exact_v, exact_spin, t_star, end),
                   (steps, slip_time - t_star, slip_distance - s_star), scene, start, runs)
    m = len(scene.pairs()[0])
    return "\n".join([
        "Preclik, Eibl & Rüde (2017) §3.1: impulse-velocity time stepping with maximally dissipative contacts",
        f"(a) sphere launched at {p['speed']} m/s without spin, μ = {p['friction']}, δt = {p['dt']} s: rolls after "
        f"{end * p['dt']:.3f} s (closed form t* = {t_star:.4f} s), {float(trajectory.state.position[end, 0, 0]):.4f} m "
        f"(s* = {s_star:.4f} m); final speed / v₀ = {speed[-1] / p['speed']:.15f} (5/7 = {5 / 7:.15f})",
        "    δt (s)   | slip time − t* (s) | slip distance − s* (m)",
        *[f"    {dt:.2e} | {a:+.2e}          | {b:+.2e}" for dt, a, b in zip(steps, slip_time - t_star,
                                                                          slip_distance - s_star)],
        f"    distance error ∝ δt^{order:.2f}",
        f"(b) {q['count']} spheres poured into a {2 * q['half_width'] * 100:g} cm box (μ = {q['friction']}, "
        f"δt = {q['dt']} s, {count} steps, {m} candidate contacts; {per_step * 1e3:.1f} ms/step at 20 sweeps, "
        "compilation apart):",
        *lines,
    ])


def _plot_stepping(path, trajectory, sliding, convergence, scene, start, runs):
    t, speed, spin, exact_v, exact_spin, t_star, end = sliding
    fig, axes = figure(2, 3, width=4.6, height=3.7)
    a = axes[0, 0]
    a.plot(t, exact_v, color="black", lw=3, alpha=0.35, label="closed form")
    a.plot(t, exact_spin, color="black", lw=3, alpha=0.35)
    a.plot(t, speed, color="tab:blue", lw=1.3, label="centre speed v (time stepping)")
    a.plot(t, spin, color="tab:orange", lw=1.3, label="r ω (time stepping)")
    a.axvline(t_star, color="grey", ls=":", lw=1)
    a.annotate(f"t* = 2v₀/(7μg) = {t_star:.3f} s", (t_star, 0.3), xytext=(4, 0), textcoords="offset points",
               fontsize=8)
    a.set_xlabel("time t (s)")
    a.set_ylabel("speed (m/s)")
    a.set_title("(a) sphere launched sliding, μ = 0.3, δt = 1 ms:\nslips at μg, then rolls at 5/7 v₀", fontsize=9)
    a.legend(fontsize=7, loc="center right")

    steps, time_error, distance_error = convergence
    b = axes[0, 1]
    b.loglog(steps, np.abs(time_error), "o-", color="tab:blue", label="|slip time − t*| (s)")
    b.loglog(steps, np.abs(distance_error), "s-", color="tab:green", label="|slip distance − s*| (m)")
    b.loglog(steps, steps, ":", color="grey", label="δt (slope 1)")
    b.set_xticks(steps, [f"{dt * 1e3:g}" for dt in steps], minor=False)
    b.xaxis.set_minor_formatter(plt.NullFormatter())
    b.set_xlabel("time step δt (ms)")
    b.set_ylabel("error (s or m)")
    b.set_title("(a) slip phase against the closed form:\nfirst order in δt", fontsize=9)
    b.legend(fontsize=7)

    c = axes[0, 2]
    final = runs[0.2, 20].state
    w = float(-scene.plane_offset[1])
    c.plot([-w, -w, w, w], [0.09, 0.0, 0.0, 0.09], color="black", lw=2)
    for i, r in enumerate(np.asarray(scene.radius)):
        c.add_patch(plt.Circle(np.asarray(start.position[i, [0, 2]]), r, fill=False, ec="grey", ls="--", lw=0.8))
        c.add_patch(plt.Circle(np.asarray(final.position[-1, i, [0, 2]]), r, color=plt.cm.viridis(i / 10), alpha=0.8))
    c.set_aspect("equal")
    c.set_xlim(-w - 0.005, w + 0.005)
    c.set_ylim(-0.003, 0.105)
    c.set_xlabel("x (m)")
    c.set_ylabel("z (m)")
    c.set_title(f"(b) {scene.spheres} spheres poured into a box (x–z projection):\ndashed at t = 0, filled at "
                f"t = {float(runs[0.2, 20].time[-1]):g} s (ε = 0.2)", fontsize=9)

    styles = {(0.0, 20): ("tab:blue", "-"), (0.2, 20): ("tab:red", "--"), (0.0, 5): ("tab:purple", ":"),
              (0.0, 80): ("tab:green", "-.")}
    r_min = float(scene.radius.min())
    for (epsilon, sweeps), run in runs.items():
        color, style = styles[epsilon, sweeps]
        label = f"ε = {epsilon:g}, {sweeps} sweeps"
        time_axis = np.asarray(run.time)
        kinetic = np.asarray(rigid_spheres.kinetic_energy(scene, run.state))
        energy = kinetic + np.asarray(rigid_spheres.potential_energy(scene, run.state))
        axes[1, 0].semilogy(time_axis, kinetic, color=color, ls=style, label=label)
        axes[1, 1].plot(time_axis, (energy - energy[-1]) * 1e3, color=color, ls=style, label=label)
        penetration = np.maximum(0.0, -np.asarray(run.gap)).max(axis=1) / r_min
        axes[1, 2].semilogy(time_axis[1:], np.maximum(penetration, 1e-12), color=color, ls=style, label=label)
    axes[1, 0].set_ylim(1e-14, None)
    axes[1, 0].set_ylabel("kinetic energy T (J)")
    axes[1, 0].set_title("(b) kinetic energy: the pile comes to rest", fontsize=9)
    axes[1, 1].set_ylabel("E − E(end) (mJ)")
    axes[1, 1].set_title("(b) total energy T + U: never rises with ε = 0\n(every contact step dissipates)", fontsize=9)
    axes[1, 2].set_ylim(1e-10, None)
    axes[1, 2].set_ylabel("deepest penetration / r_min (-)")
    axes[1, 2].set_title("(b) penetration: unconverged sweeps creep,\nε > 0 undoes it", fontsize=9)
    for axis in axes[1]:
        axis.set_xlabel("time t (s)")
        axis.legend(fontsize=7)
    fig.suptitle("Preclik, Eibl & Rüde 2017 §3.1: impulse-velocity time stepping, maximally dissipative contacts "
                 "(block Gauss–Seidel)", fontsize=10)
    save_figure(fig, path)
