"""Sensitivities of the first impact of the two pendulums of [Poursina 2020] §6: autodiff against central differences."""

import json

import numpy as np
import pytest

from fitting import sensitivity_study as ss


@pytest.fixture(scope="module")
def table():
    return ss.pendulum_nominal()


def test_forward_mode_agrees_with_central_differences(table):
    # They agree to 1.4e-7 (docs/results/fits.md). The bound catches the 1.7e-5 that an event function divided
    # by the time since the segment start gave (the turning points before the rest band of ``simulate``).
    assert table["discrepancy"] < 2e-6
    np.testing.assert_allclose(table["normalised"], table["normalised_fd"], atol=2e-6)


def test_physics_of_the_first_impact(table):
    names, outputs = ss.PENDULUM_PARAMETERS, ss.PENDULUM_OUTPUTS
    s = dict(zip(outputs, table["normalised"]))
    k, e, n, beta = (names.index(x) for x in ("stiffness", "restitution", "exponent", "release_angle"))
    # The approach speed is set before contact: k, e, n cannot change it.
    assert np.all(np.abs(s["approach_speed"][[k, e, n]]) < 1e-9)
    # A higher drop (β) gives a faster approach.
    assert s["approach_speed"][beta] > 0.5
    # Eq. (50) restitutes e whatever k and n: the post-impact rates hinge on e, hardly on k and n.
    for output in ("theta1_dot_after", "theta2_dot_after"):
        assert abs(s[output][e]) > 0.05
        assert abs(s[output][k]) < 1e-2 * abs(s[output][e])


def test_outputs_are_written(table, tmp_path):
    result = {"damping_method": "improved", "restitution": np.array([0.3])}
    for model in ss.MODELS:
        result[model] = {"nominal": {"outputs": np.ones(2), "jacobian": np.zeros((2, 5)), "normalised": np.zeros((2, 5)),
                                     "normalised_fd": np.zeros((2, 5)), "discrepancy": 0.0},
                         "sweep": np.zeros((1, 2, 5))}
    result["two_pendulum"] = table
    ss.write_outputs(tmp_path, result)
    record = json.loads((tmp_path / "sensitivity.json").read_text())["two_pendulum"]
    assert record["max_abs_discrepancy_normalised"] == pytest.approx(table["discrepancy"])
    header = (tmp_path / "sensitivity-two-pendulum.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["output", "value", "S_k", "S_k_fd"] and "S_beta" in header
