"""``diffimpact fit cushion``: what head-on shots identify, recovery from synthetic data, gradients vs finite differences."""

import dataclasses

import numpy as np
import pytest

from fitting import cushion, linearise, parametrise
from fitting.data import DataError

# Synthetic oblique and spinning shots, which separate e_e and μ_w (head-on rolling shots do not).
OBLIQUE = {
    "speed": np.full(8, 1.0),
    "incidence": np.radians(np.array([30.0, 45.0, 60.0, 90.0, 30.0, 45.0, 60.0, 90.0])),
    "topspin_ratio": np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
    "sidespin_ratio": np.zeros(8),
}
RIGID_TRUTH = cushion.RigidParameters(0.9, 0.2)
NOISE = 0.005  # m/s
SEED = 7


@pytest.fixture(scope="module")
def measured():
    shots, _ = cushion.load_data()
    return cushion.subset(shots, shots["speed"] < cushion.RIGID_LIMIT)


def test_head_on_rolling_shots_fix_one_combination_of_e_and_mu(measured):
    # The rigid model has no scale but V: rebound = r(e_e, μ_w) V for a rolling ball head-on. The fit of both
    # is rank one, and its rebound ratio is the least-squares slope through the origin, Σ V R / Σ V².
    both = cushion.fit_model("rigid", measured, cushion.RIGID_START, cushion.RIGID_SPEC, progress=False)
    singular = np.linalg.svd(both.jacobian, compute_uv=False)
    assert singular[1] < 1e-9 * singular[0]  # round-off (zero in exact arithmetic): reported not identified
    assert np.all(np.isinf(both.standard_errors))
    assert all(line.endswith("(not identified by these data)") for line in both.summary().splitlines())
    slope = np.sum(measured["speed"] * measured["rebound_speed"]) / np.sum(measured["speed"] ** 2)
    speed, _ = cushion.rigid_rebound(both.params, *cushion._inputs(measured))
    np.testing.assert_allclose(np.asarray(speed) / measured["speed"], slope, rtol=1e-6)
    # with one of them fixed at the paper's value the other is identified, at the same slope
    alone = cushion.fit_model("rigid", measured, cushion.RIGID_PAPER, {"restitution": cushion.RESTITUTION},
                              progress=False)
    assert alone.standard_errors[0] < 0.05
    speed, _ = cushion.rigid_rebound(alone.params, *cushion._inputs(measured))
    np.testing.assert_allclose(np.asarray(speed) / measured["speed"], slope, rtol=1e-6)


def test_a_fit_that_did_not_converge_is_a_warning_line_of_the_summary(measured):
    result = cushion.fit_model("rigid", measured, cushion.RIGID_PAPER, {"restitution": cushion.RESTITUTION},
                               progress=False)
    shots, report = cushion.load_data()
    fits = {"rigid_restitution_only": result, "rigid_below_2.5": dataclasses.replace(result, converged=False)}
    lines = cushion._summary(shots, report, fits, 0.98, 0.14, 0.01, 1.0).splitlines()
    assert [line for line in lines if line.startswith("warning: ")] == [
        "warning: the fit rigid_below_2.5 did not converge (no tolerance met); its values and standard errors are "
        "not reliable"]


def synthetic(model, truth, spec):
    """The ``OBLIQUE`` shots with rebound speeds of ``model`` at ``truth`` plus noise (through the fit's own step)."""
    shots = {**OBLIQUE, "rebound_speed": np.zeros(8)}
    z, _ = linearise(cushion.residual_function(model, shots), truth, spec, sigma=cushion._sigma(shots),
                     optimizer=cushion.OPTIMIZER)
    shots["rebound_speed"] = z * cushion.SPEED_SIGMA + NOISE * np.random.default_rng(SEED).normal(size=8)
    return shots


@pytest.fixture(scope="module")
def rigid_recovery():
    shots = synthetic("rigid", RIGID_TRUTH, cushion.RIGID_SPEC)
    return shots, cushion.fit_model("rigid", shots, cushion.RIGID_START, cushion.RIGID_SPEC, progress=False)


def test_rigid_fit_recovers_the_truth_from_oblique_shots(rigid_recovery):
    _, result = rigid_recovery
    truth = np.array([RIGID_TRUTH.restitution, RIGID_TRUTH.cushion_friction])
    assert np.all(np.abs(result.values - truth) < 2 * result.standard_errors), (result.values, result.standard_errors)
    assert np.all(result.standard_errors < 0.05)


def test_rigid_jacobian_matches_central_differences(rigid_recovery, check_fit_jacobian):
    shots, result = rigid_recovery
    problem = (cushion.residual_function("rigid", shots), RIGID_TRUTH, cushion.RIGID_SPEC)
    check_fit_jacobian(problem, result.unconstrained, 1e-5, 1e-5, 1e-6, sigma=cushion._sigma(shots),
                       optimizer=cushion.OPTIMIZER)


# The compliant cushion: the oblique and spinning shots above from a known restitution and friction (the
# rubber's modulus fixed: head-on rolling shots leave it nearly free, see ``diffimpact fit cushion``).
COMPLIANT_TRUTH = cushion.CompliantParameters(0.9, 0.2, 5e6)
COMPLIANT_SPEC = {k: cushion.COMPLIANT_SPEC[k] for k in ("restitution", "cushion_friction")}
#: Forward-mode tangents are not in the solver's error control (``billiard.SHOT_RTOL``): the check of the
#: Jacobian against differences runs both at a tighter tolerance, in the same compiled step.
CHECK_RTOL = 1e-10


@pytest.fixture(scope="module")
def compliant_shots():
    return synthetic("compliant", COMPLIANT_TRUTH, COMPLIANT_SPEC)


@pytest.mark.slow  # about two minutes: the fit's 20-odd steps each integrate 8 compliant impacts
def test_compliant_fit_recovers_restitution_and_friction(compliant_shots):
    start = cushion.CompliantParameters(0.98, 0.14, 5e6)
    result = cushion.fit_model("compliant", compliant_shots, start, COMPLIANT_SPEC, progress=False)
    truth = np.array([COMPLIANT_TRUTH.restitution, COMPLIANT_TRUTH.cushion_friction])
    assert np.all(np.abs(result.values - truth) < 2 * result.standard_errors), (result.values, result.standard_errors)
    assert np.all(result.standard_errors < 0.05)


@pytest.mark.slow  # a minute to compile; forward mode through contact events is checked in test_sensitivity_two_pendulum.py
def test_compliant_jacobian_through_the_contact_events_matches_central_differences(compliant_shots,
                                                                                 check_fit_jacobian):
    # Forward-mode derivatives through the event-located cushion contact against central differences of the
    # same compiled step at rtol 1e-10, where the differences' noise allows h = 1e-3; at the truth.
    problem = (cushion.residual_function("compliant", compliant_shots, rtol=CHECK_RTOL), COMPLIANT_TRUTH,
               COMPLIANT_SPEC)
    theta, _ = parametrise(COMPLIANT_TRUTH, COMPLIANT_SPEC)
    check_fit_jacobian(problem, theta, 1e-3, 2e-3, 2e-3, sigma=cushion._sigma(compliant_shots),
                       optimizer=cushion.OPTIMIZER)


@pytest.mark.parametrize(
    "rows, message",
    [
        ("incident_speed_m_per_s\n1.0\n", "missing column"),
        ("incident_speed_m_per_s,rebound_speed_m_per_s\n1.0,fast\n", r"\.csv:2: rebound_speed_m_per_s: not a number"),
        ("incident_speed_m_per_s,rebound_speed_m_per_s\n1.0,nan\n", r"\.csv:2: .*nan is not a finite number"),
        ("incident_speed_m_per_s,rebound_speed_m_per_s\n-1.0,0.5\n", r"\.csv:2: incident_speed_m_per_s = -1 m/s is negative"),
        ("incident_speed_m_per_s,rebound_speed_m_per_s,incidence_deg\n1.0,0.9,95\n", r"\.csv:2: incidence_deg = 95"),
    ],
)
def test_bad_data_files_are_refused_row_by_row(tmp_path, rows, message):
    path = tmp_path / "shots.csv"
    path.write_text(rows)
    with pytest.raises(DataError, match=message):
        cushion.load_data(path)
