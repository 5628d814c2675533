"""``diffimpact fit deflection``: recovery from synthetic cut shots, gradients vs finite differences, Marlow's curve."""

import numpy as np
import pytest

from fitting import deflection, linearise
from fitting.data import DataError

TRUTH = deflection.ShotParameters(0.9, 1.4, 0.212)
NOISE = 0.005  # m/s
SEED = 11


@pytest.fixture(scope="module")
def recovery():
    # The measured shots' speeds and cut angles, with the speeds after the slip made by the model from TRUTH.
    shots, _ = deflection.load_data()
    shots = {**shots, "cue_final": np.zeros(5), "object_final": np.zeros(5)}
    options = dict(sigma=deflection.SPEED_SIGMA, optimizer=deflection.OPTIMIZER)
    z, _ = linearise(deflection.residual_function(shots), TRUTH, deflection.SPEC, **options)
    rng = np.random.default_rng(SEED)
    model = z * deflection.SPEED_SIGMA + NOISE * rng.normal(size=10)
    shots["cue_final"], shots["object_final"] = model[:5], model[5:]
    return shots, deflection.fit_shots(shots, progress=False)


@pytest.mark.slow  # the two-ball fit compiles for about 100 s; the cushion fit's tests cover the same machinery
def test_fit_recovers_restitution_and_friction_scale(recovery):
    _, result = recovery
    truth = np.array([TRUTH.ball_restitution, TRUTH.friction_scale])
    assert np.all(np.abs(result.values - truth) < 2 * result.standard_errors), (result.values, result.standard_errors)
    assert result.standard_errors[0] < 0.05


@pytest.mark.slow
def test_jacobian_through_the_collision_matches_central_differences(recovery, check_fit_jacobian):
    # Forward-mode derivatives through the event-located ball–ball contact against central differences of the
    # same compiled step. The tangents are not in the solver's error control (``billiard.SHOT_RTOL``), so both
    # run at rtol 1e-10 (a leaf of the residual function: no new compilation), where h = 1e-3 is safe.
    shots, result = recovery
    problem = (deflection.residual_function(shots, rtol=1e-10), TRUTH, deflection.SPEC)
    check_fit_jacobian(problem, result.unconstrained, 1e-3, 2e-3, 2e-3, sigma=deflection.SPEED_SIGMA,
                       optimizer=deflection.OPTIMIZER)


def test_marlow_refit_returns_alciatores_coefficients():
    # TP A.14's a, b, c come from the same three points, so the refit must land on them (to their printed digits).
    result, _ = deflection.fit_marlow()
    np.testing.assert_allclose(result.values, [9.951e-3, 0.108, 1.088], rtol=2e-3)
    assert result.loss < 1e-3  # three parameters through three points


def test_bad_cut_shot_file_is_refused(tmp_path):
    path = tmp_path / "shots.csv"
    path.write_text("cue_speed_m_per_s,cut_angle_deg,cue_post_slip_speed_m_per_s,object_post_slip_speed_m_per_s\n"
                    "1.0,95,0.5,0.5\n1.2,30,,0.6\n")
    with pytest.raises(DataError, match=r"shots\.csv:2: cut_angle_deg = 95 ° is out of range.*\n.*shots\.csv:3: "
                             r"cue_post_slip_speed_m_per_s: empty cell"):
        deflection.load_data(path)
