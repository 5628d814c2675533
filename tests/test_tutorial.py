"""The tutorial, examples/tutorial_two_discs.py, against the closed form of a central impact of two discs."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from diffimpact.contact import Hertz
from diffimpact.multibody import Trajectory

ROOT = Path(__file__).resolve().parents[1]
RESTITUTION = 0.6


@pytest.fixture(scope="module")
def tutorial():
    spec = importlib.util.spec_from_file_location("tutorial_two_discs", ROOT / "examples" / "tutorial_two_discs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runs(tutorial):
    """The tutorial's two runs: elastic Hertz (e = 1) and the eq. (50) law at e = RESTITUTION."""
    return {1.0: tutorial.run(Hertz(tutorial.STIFFNESS, tutorial.EXPONENT)),
            RESTITUTION: tutorial.run(tutorial.damped(RESTITUTION))}


def _after(m1, m2, v1, v2, e):
    """Velocities after a central impact: momentum conserved and v₂' − v₁' = e (v₁ − v₂)."""
    v_cm = (m1 * v1 + m2 * v2) / (m1 + m2)
    return np.array([v_cm - e * m2 * (v1 - v2) / (m1 + m2), v_cm + e * m1 * (v1 - v2) / (m1 + m2)])


@pytest.mark.parametrize("e", [1.0, RESTITUTION])
def test_velocities_momentum_and_energy_match_the_central_impact(tutorial, runs, e):
    t, run = tutorial, runs[e]
    after = np.asarray(run.v[-1])[[0, 3]]
    # eq. (50) with the "improved" c_opt restitutes e to 1.5e-5 at worst; Hertz is elastic to the tolerances
    np.testing.assert_allclose(after, _after(t.M1, t.M2, t.V1, t.V2, e), rtol=0, atol=1e-7 if e == 1 else 5e-5)
    np.testing.assert_allclose(np.asarray(run.linear_momentum[:, 0]), t.M1 * t.V1 + t.M2 * t.V2, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(run.linear_momentum[:, 1]), 0.0, atol=1e-15)
    kinetic = 0.5 * t.M1 * t.V1**2 + 0.5 * t.M2 * t.V2**2
    lost = 0.5 * t.M1 * t.M2 / (t.M1 + t.M2) * (1 - e**2) * (t.V1 - t.V2) ** 2
    energy = np.asarray(run.energy)
    assert energy[0] == pytest.approx(kinetic, rel=1e-12)
    assert energy[-1] == pytest.approx(kinetic - lost, rel=1e-7 if e == 1 else 1e-4)
    if e == 1.0:  # elastic: kinetic plus contact energy is constant throughout
        np.testing.assert_allclose(energy, kinetic, rtol=1e-7)
    assert float(run.events.t[0]) == pytest.approx(t.LEAD, rel=1e-9)  # the gap closes at v₁ − v₂


def test_hertz_contact_duration_and_peak_force(tutorial, runs):
    """δ_m from ½ m v² = k δ_m^(n+1)/(n+1); duration 2 ∫₀^δm dδ/δ̇, by quadrature; peak force k δ_m^n."""
    t, run = tutorial, runs[1.0]
    mass, speed, n = t.M1 * t.M2 / (t.M1 + t.M2), t.V1 - t.V2, t.EXPONENT
    deepest = ((n + 1) * mass * speed**2 / (2 * t.STIFFNESS)) ** (1 / (n + 1))
    integral = quad(lambda x: (1 - x ** (n + 1)) ** -0.5, 0, 1)[0]
    assert float(run.events.t[1] - run.events.t[0]) == pytest.approx(2 * deepest / speed * integral, rel=1e-8)
    peak = float(np.max(run.contact_history[0].normal_force))  # the saved sample nearest the peak
    assert peak == pytest.approx(t.STIFFNESS * deepest**n, rel=1e-3)
    assert peak <= t.STIFFNESS * deepest**n * (1 + 1e-9)


@pytest.mark.slow
def test_derivatives_fit_and_figure(tutorial, runs, tmp_path):
    """The whole script: ∂v'/∂e against the closed form, ∂v'/∂k = 0, and the fit of e against least squares.

    v' = u + e b is linear in e: ê = Σ b (v' − u)/Σ b², standard error s/√(Σ b²/σ²), s² = χ²/(N − 1).
    """
    t = tutorial
    results = t.main(tmp_path, RESTITUTION)
    closing = t.V1 - t.V2
    np.testing.assert_allclose(results["by_e"], np.array([-t.M2, t.M1]) * closing / (t.M1 + t.M2), rtol=1e-4)
    # eq. (50) restitutes e whatever k: the velocities after the impact do not depend on k
    np.testing.assert_allclose(results["by_log_k"], 0.0, atol=1e-6)
    v1, v2 = t.EXPERIMENTS
    measured = t.measurements(RESTITUTION)
    u = (t.M1 * v1 + t.M2 * v2) / (t.M1 + t.M2)
    b = np.stack([-t.M2 * (v1 - v2), t.M1 * (v1 - v2)], axis=1) / (t.M1 + t.M2)
    estimate = np.sum(b * (measured - u[:, None])) / np.sum(b**2)
    chi2 = np.sum((measured - u[:, None] - estimate * b) ** 2) / t.SIGMA**2 / (measured.size - 1)
    error = np.sqrt(chi2 / np.sum(b**2)) * t.SIGMA
    assert results["fitted"] == pytest.approx(estimate, abs=5e-5)
    assert results["fitted_error"] == pytest.approx(error, rel=1e-3)
    assert abs(estimate - RESTITUTION) < 3 * error  # the noise is seeded: the truth lies within 3σ
    assert (tmp_path / "tutorial-two-discs.png").stat().st_size > 0
    saved = Trajectory.load(tmp_path / "tutorial-two-discs.npz")  # the damped run, its contact history included
    np.testing.assert_array_equal(saved.contact_history[0].normal_force,
                                  runs[RESTITUTION].contact_history[0].normal_force)
