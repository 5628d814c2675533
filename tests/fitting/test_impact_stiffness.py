"""The impact-stiffness study (quick variant): k and e recovered within their reported uncertainties."""

import json

import numpy as np
import pytest

from fitting import impact_stiffness


@pytest.fixture(scope="module")
def study():
    return impact_stiffness.study(quick=True, progress=False)


def test_force_penetration_history_fit_recovers_k_and_e(study):
    _, history_fit, _ = study
    assert history_fit.converged
    assert history_fit.names == ("stiffness", "restitution")
    assert np.all(np.abs(impact_stiffness.deviations(history_fit)) < 3.0)
    # The noise was drawn with the documented σ, so χ²/(N − P) should be near 1.
    assert 0.5 < history_fit.residual_variance < 1.6
    # A 1 % force and penetration noise pins k and e to well below 1 %.
    assert np.all(history_fit.standard_errors / history_fit.values < 0.01)


def test_duration_and_restitution_fit_recovers_k_and_e(study):
    data, _, scalar_fit = study
    assert scalar_fit.converged
    assert np.all(np.abs(impact_stiffness.deviations(scalar_fit)) < 3.0)
    # Two data, two parameters: the fit passes through the data and e's error is σ_e.
    np.testing.assert_allclose(scalar_fit.weighted_residuals, 0.0, atol=1e-6)
    assert scalar_fit.value("restitution")[1] == pytest.approx(impact_stiffness.RESTITUTION_SIGMA, rel=1e-3)
    np.testing.assert_allclose(data["true_scalars"][1], impact_stiffness.TRUTH.restitution, rtol=1e-5)


def test_outputs_are_written(study, tmp_path):
    json_path, csv_path, png_path = impact_stiffness.write_outputs(tmp_path, *study)
    record = json.loads(json_path.read_text())
    deviation = record["fit_force_penetration_history"]["deviation_in_standard_errors"]
    assert set(deviation) == {"stiffness", "restitution"}
    header = csv_path.read_text().splitlines()[0].split(",")
    assert header[:3] == ["time_s", "force_data_N", "force_fit_N"]
    assert png_path.stat().st_size > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"impact-stiffness.{ext}" for ext in ("csv", "json", "png")
    )
