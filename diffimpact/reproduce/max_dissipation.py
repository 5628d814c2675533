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
``single_contact`` and compares it with μ*(θ).
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import brentq

from diffimpact.impulse import max_dissipation
from diffimpact.reproduce._io import plt, save_figure, write_csv

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
    """Write ``maxdiss-academic.csv`` and ``.png`` (Table 1, Fig. 7); return a summary."""
    out = Path(out)
    rows, lines = [], ["Preclik, Eibl & Rüde (2017) §4.1, Table 1: the academic single-contact problem"]
    panels = []
    for orthonormal in (False, True):
        A, b, mu = academic_problem(orthonormal)
        star = np.asarray(max_dissipation.single_contact(A, -b, mu))
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


_single_contact = jax.jit(max_dissipation.single_contact)


def paradox_threshold(thetas, high=20.0, tolerance=1e-10):
    """The least μ for which ``single_contact`` gives the rod a non-zero impulse, by bisection, per angle."""
    problems = [rod_problem(theta) for theta in np.atleast_1d(thetas)]
    A = np.stack([p[0] for p in problems])
    u = np.stack([p[1] for p in problems])
    low, high = np.zeros(len(problems)), np.full(len(problems), high)
    while np.max(high - low) > tolerance:
        middle = 0.5 * (low + high)
        acts = np.any(np.asarray(_single_contact(A, u, middle)) != 0, axis=-1)
        low, high = np.where(acts, low, middle), np.where(acts, middle, high)
    return high


def run_paradox(out, quick=False):
    """Write ``maxdiss-paradox.csv`` and ``.png`` (μ*(θ) of §4.2 from the impact model); return a summary."""
    out = Path(out)
    thetas = np.radians(np.linspace(5.0, 85.0, 17 if quick else 81))
    thresholds = paradox_threshold(thetas)
    exact = paradox_friction(thetas)
    impulses = np.array([np.asarray(_single_contact(*rod_problem(theta, friction=mu)))
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
              label="least μ with an impulse (single_contact, bisection)")
    left.plot(np.degrees(theta_min), 4 / 3, "*", color="tab:red", ms=14, label="minimum 4/3 at ½ acos(−3/5)")
    left.set_ylim(0, 6)
    left.set_xlabel("rod angle θ (deg)")
    left.set_ylabel("friction coefficient μ (-)")
    left.set_title("Painlevé rod: where the impact model acts", fontsize=10)
    left.legend(fontsize=8)
    for i, (label, color) in enumerate((("normal", "tab:blue"), ("tangential", "tab:green"))):
        right.plot(np.degrees(thetas), sticking[:, i], color=color, lw=2.5, label=f"Λ₀ {label} (§4.2)")
        right.plot(np.degrees(thetas), impulses[:, i], "o", color="black", ms=3,
                   label="single_contact at μ = μ* + 0.1" if i == 0 else None)
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
