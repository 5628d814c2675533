"""Tutorial: build your own system, two discs colliding head-on (docs/tutorial.md explains it step by step).

    python examples/tutorial_two_discs.py [--out DIR]

Two planar discs on the x axis close at 3 m/s and collide through a compliant
``CircleCircle`` contact: first an elastic Hertz law, then the eq. (50) law of
[Poursina 2020] (Hertz with the linear damper that restitutes a chosen e). Every
answer is checked against the closed form of a central impact: momentum, the
post-impact velocities v₁', v₂' for restitution e, the Hertz contact duration
and peak force, the derivatives ∂v'/∂e, and a fit of e to synthetic
"measured" velocities against the closed-form least-squares estimate.
Writes tutorial-two-discs.png (positions, velocities, contact force, fit) and
the damped run, contact history included, to tutorial-two-discs.npz
(``Trajectory.save``; ``Trajectory.load`` reads it back).
"""

# --8<-- [start:system]
import math
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import matplotlib
import numpy as np

import diffimpact
from diffimpact.contact import Hertz
from diffimpact.multibody import (
    CircleCircle,
    Contact,
    ContactEvents,
    ForwardMode,
    LagrangeMultipliers,
    Model,
    OptimalDamping,
    PlanarBody,
    ReverseMode,
    State,
)
from diffimpact.multibody import Trajectory, simulate
from fitting import UnitInterval, fit, levenberg_marquardt

diffimpact.configure()  # float64 and the CPU cap, before the first computation

M1, R1 = 0.2, 0.03  # disc 1: mass (kg), radius (m)
M2, R2 = 0.5, 0.05  # disc 2
STIFFNESS, EXPONENT = 1e7, 1.5  # Hertz k (N/m^1.5) and n: soft, rubber-like discs (a contact of about 2 ms)
V1, V2 = 2.0, -1.0  # velocities along x before the impact (m/s)
LEAD = 1e-3  # the discs touch at t = LEAD (s)
DURATION = 8e-3  # simulated time (s)


def discs(law):
    """Two planar discs and one contact between their rims, with the normal force ``law``."""
    bodies = [PlanarBody(M1, 0.5 * M1 * R1**2, name="disc 1"), PlanarBody(M2, 0.5 * M2 * R2**2, name="disc 2")]
    rims = CircleCircle(0, (0.0, 0.0), R1, 1, (0.0, 0.0), R2)  # circles centred at the centres of mass
    return Model(bodies, forces=[Contact(rims, law)])


def initial_state(v1, v2):
    """Disc 1 at the origin, disc 2 on the +x axis, closing at v1 − v2 > 0 (m/s) so that they touch at t = LEAD."""
    gap = (v1 - v2) * LEAD
    q = jnp.stack([0.0, 0.0, 0.0, R1 + R2 + gap, 0.0, 0.0])  # (x₁, y₁, φ₁, x₂, y₂, φ₂)
    v = jnp.stack([v1, 0.0, 0.0, v2, 0.0, 0.0])
    return State(q, v)


def damped(restitution, stiffness=STIFFNESS):
    """Hertz with the linear damper of eq. (50), f = c δ̇ + k δⁿ, c set at each onset so that the impact
    restitutes ``restitution``; c from the "improved" closed form of ``diffimpact.optimal_damping``
    (restitution within 1.5e-5 of e, and much cheaper to compile than the exact root solve)."""
    return OptimalDamping(stiffness, EXPONENT, restitution, method="improved")


def run(law, v1=V1, v2=V2, times=jnp.linspace(0.0, DURATION, 801), derivatives=ReverseMode(),
        contact_history=True):
    """The ``Trajectory`` of the two discs, saved at ``times`` (s), by default with the contact's penetration
    and forces at those times (``trajectory.contact_history[0]``: the model's first force, the contact)."""
    return simulate(discs(law), initial_state(v1, v2), times, LagrangeMultipliers(),
                    events=ContactEvents(max_events=4), derivatives=derivatives, contact_history=contact_history)
# --8<-- [end:system]


# --8<-- [start:closed-form]
def closed_form(v1, v2, restitution):
    """Velocities after a central impact with Newton's restitution e (momentum and v₂' − v₁' = e (v₁ − v₂))."""
    total = M1 + M2
    return ((M1 - restitution * M2) * v1 + (1 + restitution) * M2 * v2) / total, \
        ((M2 - restitution * M1) * v2 + (1 + restitution) * M1 * v1) / total


def hertz_contact(approach_speed):
    """Duration (s) and peak force (N) of an elastic impact f = k δⁿ of the effective mass m₁m₂/(m₁ + m₂).

    Energy gives the largest penetration δ_m = ((n + 1) m v² / (2k))^(1/(n+1)); the time spent
    in contact is 2 ∫ dδ/δ̇ = (2 δ_m / v) ∫₀¹ (1 − x^(n+1))^(−1/2) dx = (2 δ_m / v) B(1/(n+1), ½)/(n + 1).
    """
    mass, a = M1 * M2 / (M1 + M2), EXPONENT + 1
    deepest = (a * mass * approach_speed**2 / (2 * STIFFNESS)) ** (1 / a)
    beta = math.gamma(1 / a) * math.gamma(0.5) / math.gamma(1 / a + 0.5)
    return 2 * deepest / approach_speed * beta / a, STIFFNESS * deepest**EXPONENT
# --8<-- [end:closed-form]


# --8<-- [start:gradient]
def post_impact(law, v1, v2):
    """(v₁', v₂') (m/s) at the end of the run, differentiable in forward mode (``jax.jacfwd``)."""
    final = run(law, v1, v2, jnp.array([DURATION]), derivatives=ForwardMode(), contact_history=False).v[-1]
    return jnp.stack([final[0], final[3]])


def velocity_derivatives(restitution=0.6):
    """∂(v₁', v₂')/∂e and k ∂(v₁', v₂')/∂k of the eq. (50) contact, by forward-mode autodiff."""
    velocities = lambda e, k: post_impact(damped(e, k), V1, V2)  # noqa: E731
    by_e, by_k = jax.jacfwd(velocities, argnums=(0, 1))(restitution, STIFFNESS)
    return np.asarray(by_e), STIFFNESS * np.asarray(by_k)
# --8<-- [end:gradient]


# --8<-- [start:fit]
EXPERIMENTS = (np.array([1.0, 2.0, 3.0, 1.5, 0.5]), np.array([0.0, -1.0, 0.5, -2.0, -1.5]))  # (v₁, v₂), m/s
SIGMA = 0.01  # standard uncertainty of a measured velocity (m/s)


def measurements(restitution=0.6, seed=0):
    """Synthetic "measured" (v₁', v₂') of every experiment: the closed form plus Gaussian noise SIGMA, (5, 2)."""
    exact = np.stack(closed_form(*EXPERIMENTS, restitution), axis=1)
    return exact + SIGMA * np.random.default_rng(seed).normal(size=exact.shape)


def residuals(data, law):
    """Simulated minus measured (v₁', v₂') of every experiment, one simulation each (``vmap``)."""
    v1, v2, measured = data
    return jax.vmap(post_impact, in_axes=(None, 0, 0))(law, v1, v2) - measured


def fit_restitution(measured, start=0.3):
    """Fit e of the eq. (50) contact to ``measured``, k and n fixed; returns the ``FitResult``."""
    data = (jnp.asarray(EXPERIMENTS[0]), jnp.asarray(EXPERIMENTS[1]), jnp.asarray(measured))
    return fit(eqx.Partial(residuals, data), damped(start),
               {"restitution": UnitInterval()}, sigma=SIGMA, optimizer=levenberg_marquardt(), max_steps=30,
               jacobian="fwd", progress=False)


def least_squares_restitution(measured):
    """The closed-form estimate of e: v' = u + e b is linear in e, so ê = Σ b (v' − u) / Σ b², and its
    standard error s/√(Σ b²/σ²) with s² the reduced χ² (as ``fit`` scales it)."""
    v1, v2 = EXPERIMENTS
    centre = (M1 * v1 + M2 * v2) / (M1 + M2)  # u: the velocity of the centre of mass
    slope = np.stack([-M2 * (v1 - v2), M1 * (v1 - v2)], axis=1) / (M1 + M2)  # b = ∂v'/∂e
    deviation = measured - centre[:, None]
    estimate = np.sum(slope * deviation) / np.sum(slope**2)
    chi2 = np.sum(((deviation - estimate * slope) / SIGMA) ** 2) / (measured.size - 1)
    return estimate, math.sqrt(chi2 / np.sum((slope / SIGMA) ** 2))
# --8<-- [end:fit]


def main(out, restitution=0.6):
    """Run every step, print each result beside its closed form and save the figure in ``out``.

    Returns the derivatives of step 4 and the fitted e with its standard error (``tests/test_tutorial.py``
    checks them, and the runs themselves, against the closed forms).
    """
    # --8<-- [start:runs]
    elastic = Hertz(STIFFNESS, EXPONENT)
    runs = {"elastic Hertz (e = 1)": run(elastic), f"eq. (50), e = {restitution:g}": run(damped(restitution))}
    # --8<-- [end:runs]
    approach = V1 - V2
    print(f"two discs, m = ({M1}, {M2}) kg, closing at {approach:g} m/s; k = {STIFFNESS:g} N/m^{EXPONENT:g}")
    for (label, trajectory), e in zip(runs.items(), (1.0, restitution)):
        after = np.array([trajectory.v[-1, 0], trajectory.v[-1, 3]])
        expected = np.array(closed_form(V1, V2, e))
        momentum = np.asarray(trajectory.linear_momentum[:, 0])
        events = trajectory.events
        duration = float(events.t[1] - events.t[0])
        print(f"{label}: (v1', v2') = ({after[0]:+.9f}, {after[1]:+.9f}) m/s, closed form "
              f"({expected[0]:+.9f}, {expected[1]:+.9f}), largest difference {np.max(np.abs(after - expected)):.1e}")
        print(f"  momentum {momentum[0]:.6f} kg m/s, largest change {np.max(np.abs(momentum - momentum[0])):.1e}; "
              f"energy {float(trajectory.energy[0]):.9f} -> {float(trajectory.energy[-1]):.9f} J, "
              f"contact {duration * 1e3:.4f} ms")
    hertz_duration, hertz_peak = hertz_contact(approach)
    peak = float(np.max(runs["elastic Hertz (e = 1)"].contact_history[0].normal_force))
    loss = 0.5 * M1 * M2 / (M1 + M2) * (1 - restitution**2) * approach**2
    print(f"  Hertz closed form: contact {hertz_duration * 1e3:.4f} ms, peak force {hertz_peak:.3f} N "
          f"(largest saved force {peak:.3f} N); energy lost at e = {restitution:g}: ½ m (1 − e²) v² = {loss:.9f} J")

    by_e, by_log_k = velocity_derivatives(restitution)
    expected_by_e = np.array([-M2, M1]) * approach / (M1 + M2)
    print(f"∂(v1', v2')/∂e = ({by_e[0]:+.9f}, {by_e[1]:+.9f}) m/s, closed form ({expected_by_e[0]:+.9f}, "
          f"{expected_by_e[1]:+.9f}); k ∂(v1', v2')/∂k = ({by_log_k[0]:+.1e}, {by_log_k[1]:+.1e}) m/s, closed form 0")

    measured = measurements(restitution)
    result = fit_restitution(measured)
    fitted, error = result.value("restitution")
    estimate, estimate_error = least_squares_restitution(measured)
    print(f"fit of e to {measured.size} velocities (σ = {SIGMA} m/s) from e = 0.3: {fitted:.9f} ± {error:.6f} "
          f"in {result.steps} steps; closed-form least squares {estimate:.9f} ± {estimate_error:.6f}; "
          f"truth {restitution:g}")

    matplotlib.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5), layout="constrained")
    plot(axes, runs, restitution, measured, fitted)
    Path(out).mkdir(parents=True, exist_ok=True)
    fig.savefig(Path(out) / "tutorial-two-discs.png", dpi=110)
    plt.close(fig)
    saved = runs[f"eq. (50), e = {restitution:g}"].save(Path(out) / "tutorial-two-discs.npz")
    print(f"saved the e = {restitution:g} run to {saved}; read back, its largest contact force is "
          f"{float(np.max(Trajectory.load(saved).contact_history[0].normal_force)):.3f} N")
    return {"by_e": by_e, "by_log_k": by_log_k, "fitted": fitted, "fitted_error": error}


def plot(axes, runs, restitution, measured, fitted):
    """The four panels of the figure."""
    (positions, velocities), (forces, fitting_panel) = axes
    colours = ("tab:blue", "tab:orange")
    t = np.asarray(next(iter(runs.values())).t) * 1e3
    for (label, trajectory), style, e in zip(runs.items(), ("--", "-"), (1.0, restitution)):
        for k, (colour, index) in enumerate(zip(colours, (0, 3))):
            q, v = np.asarray(trajectory.q[:, index]), np.asarray(trajectory.v[:, index])
            positions.plot(t, (q - q[0]) * 1e3, style, color=colour, label=f"disc {k + 1}, {label}")
            velocities.plot(t, v, style, color=colour, label=f"disc {k + 1}, {label}")
        velocities.plot([t[-1]] * 2, closed_form(V1, V2, e), "ko", mfc="none", label=None if e == 1.0 else
                        "closed form after the impact")
    positions.set(xlabel="t (ms)", ylabel="x − x(0) (mm)", title="(a) Displacements of the centres of the discs")
    velocities.set(xlabel="t (ms)", ylabel="ẋ (m/s)", title="(b) Velocities of the discs")
    # the force the integrator applied: for eq. (50) with the damping c that simulate set at the onset
    for (label, trajectory), style in zip(runs.items(), ("--", "-")):
        forces.plot(t, np.asarray(trajectory.contact_history[0].normal_force[:, 0]), style, color="tab:green",
                    label=label)
    duration, peak = hertz_contact(V1 - V2)
    forces.axvline(LEAD * 1e3, color="grey", lw=0.8, label=f"onset, t = {LEAD * 1e3:g} ms")
    forces.axhline(peak, color="k", lw=0.8, ls=":", label="Hertz closed form: peak force")
    forces.axvline((LEAD + duration) * 1e3, color="k", lw=0.8, ls="-.", label="Hertz closed form: end of contact")
    forces.set(xlabel="t (ms)", ylabel="f (N)", title="(c) Contact force", xlim=(0.5, 4.0))
    # separation speed v₂' − v₁' = e (v₁ − v₂), shown less the truth so that the fit's deviation shows
    v1, v2 = EXPERIMENTS
    speed = np.linspace(0.0, 1.1 * np.max(v1 - v2), 2)
    excess = measured[:, 1] - measured[:, 0] - restitution * (v1 - v2)
    fitting_panel.errorbar(v1 - v2, excess * 1e3, yerr=SIGMA * np.sqrt(2) * 1e3, fmt="o", color="tab:purple",
                           label=f"synthetic measurements (σ = {SIGMA * 1e3:g} mm/s per velocity)")
    fitting_panel.plot(speed, (fitted - restitution) * speed * 1e3, color="tab:purple",
                       label=f"fit, e = {fitted:.4f}")
    fitting_panel.axhline(0.0, color="k", ls=":", label=f"truth, e = {restitution:g}")
    fitting_panel.set(xlabel="approach speed v₁ − v₂ (m/s)",
                      ylabel=f"v₂' − v₁' − {restitution:g} (v₁ − v₂) (mm/s)",
                      title=f"(d) Fit of e: separation speed less {restitution:g} × approach speed")
    for ax in (positions, velocities, forces, fitting_panel):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)


if __name__ == "__main__":
    from diffimpact.io import script_arguments

    main(script_arguments(__doc__.splitlines()[0]).out)
