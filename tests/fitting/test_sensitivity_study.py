"""The ``sensitivity`` study: dimensional-analysis zeros, finite-difference agreement, sweep = nominal."""

import json

import numpy as np
import pytest

from diffimpact.io import read_csv
from fitting import sensitivity_study as ss

K, E, N, V0, M = range(5)
V_OUT, E_OUT = range(2)


@pytest.fixture(scope="module")
def hunt_crossley():
    return ss.nominal("hunt-crossley-flores")


def test_hunt_crossley_flores_restitution_depends_on_e_and_n_only(hunt_crossley):
    s = hunt_crossley["normalised"]
    # With μ = 8k(1 − e)/(5 e v0) the impact ODE in its natural units has μ v0/k and n as its only
    # parameters: e_out does not depend on k, v0 or m, and v_out = e_out v0 scales with v0.
    np.testing.assert_allclose(s[E_OUT, [K, V0, M]], 0.0, atol=1e-8)
    np.testing.assert_allclose(s[V_OUT, [K, M]], 0.0, atol=1e-8)
    np.testing.assert_allclose(s[V_OUT, V0], 1.0, atol=1e-8)
    # Flores' factor over-damps at e = 0.3 (e_out ≈ 0.256) and e_out grows faster than e.
    assert 0.25 < hunt_crossley["outputs"][E_OUT] < 0.26
    assert 1.1 < s[E_OUT, E] < 1.4
    assert hunt_crossley["discrepancy"] < 1e-4


def test_bad_model_is_named():
    with pytest.raises(ValueError, match="model must be one of"):
        ss.contact_law(ss.NOMINAL, "kelvin")


@pytest.mark.slow
def test_quick_run_writes_tables_and_the_sweep_matches_the_nominal_point(tmp_path):
    summary = ss.run(tmp_path, quick=True, pendulum=False)  # the two pendulums: test_sensitivity_two_pendulum.py
    record = json.loads((tmp_path / "sensitivity.json").read_text())
    table = read_csv(tmp_path / "sensitivity.csv")
    optimal = record["optimal-damping"]["normalised_sensitivity"]["e_out"]
    # Optimal damping reproduces e whatever k, n, v0, m (improved closed form: to ~1e-6).
    assert optimal["restitution"] == pytest.approx(1.0, abs=1e-4)
    assert all(abs(optimal[name]) < 1e-9 for name in ("stiffness", "impact_velocity", "mass"))
    # The closed form's restitution error varies with n: 3e-4 of sensitivity left.
    assert abs(optimal["exponent"]) < 1e-3
    for model in ss.MODELS:
        assert record[model]["max_abs_discrepancy_normalised"] < 1e-4
        row = np.argmin(np.abs(table["e"] - 0.3))
        key = f"S_{model.replace('-', '_')}_v_out_e"
        assert table[key][row] == pytest.approx(record[model]["normalised_sensitivity"]["v_out"]["restitution"], rel=1e-9)
    assert (tmp_path / "sensitivity.png").stat().st_size > 10_000
    assert "max |S − S_central-difference|" in summary
    assert not list(tmp_path.glob("*.checkpoint.json"))
