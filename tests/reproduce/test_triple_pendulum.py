"""``plus-triple-pendulum`` ([Uchida 2015] Example 4, Fig. 15): the scene, PLUS's impact and the compliant one.

The reproduction runs once (a module-scoped fixture, one stiffness: 100 GPa) and the slow tests read its CSVs.
"""

import numpy as np
import pytest
from scipy.special import beta

from diffimpact.io import read_csv
from diffimpact.reproduce import triple_pendulum as study


def _grid_inertia(spacing=0.005):
    """Mass, centre and inertia tensor of the cylinder and the sphere summed over a grid of cells, about the pin.

    The cells' centres lie half a spacing off the solids' end planes and centre planes, so the sums keep their
    symmetries.
    """
    p = study.PENDULUM
    r, length, radius = p["cylinder_radius"], p["length"], p["sphere_radius"]
    across = (np.arange(round(2 * radius / spacing)) + 0.5) * spacing - radius
    axis = -(np.arange(round((length + radius) / spacing)) + 0.5) * spacing
    x, y, z = np.meshgrid(across, across, axis, indexing="ij")
    cells = np.stack([x.ravel(), y.ravel(), z.ravel()], 1)
    # the cylinder along −z from the pin, the sphere centred on its free end; each solid carries its own mass
    cylinder = (cells[:, 0] ** 2 + cells[:, 1] ** 2 <= r ** 2) & (cells[:, 2] >= -length) & (cells[:, 2] <= 0)
    sphere = np.sum((cells - [0.0, 0.0, -length]) ** 2, 1) <= radius ** 2
    weights = (p["cylinder_mass"] * cylinder / cylinder.sum() + p["sphere_mass"] * sphere / sphere.sum())
    mass = weights.sum()
    centre = weights @ cells / mass
    arm = cells - centre
    tensor = np.einsum("k,kij->ij", weights, np.einsum("ki,ki->k", arm, arm)[:, None, None] * np.eye(3)
                       - arm[:, :, None] * arm[:, None, :])
    return mass, -centre[2], tensor


def test_welded_link_is_the_parallel_axis_sum_of_cylinder_and_sphere():
    mass, centre, inertia = study.welded_link()
    # by hand: c = (1 · 0.5 + 1 · 1)/2; I_t = (3 · 0.01 + 1)/12 + 0.25² + 0.4 · 0.25² + 0.25², I_a = 0.01/2 + 0.025
    assert mass == 2.0 and centre == pytest.approx(0.75, abs=1e-15)
    np.testing.assert_allclose(inertia, [1.03 / 12 + 0.15, 1.03 / 12 + 0.15, 0.03], rtol=1e-14)
    # against a 5 mm grid of the two solids (its error: the grid's staircase surfaces, ~0.2 %)
    grid_mass, grid_centre, tensor = _grid_inertia()
    assert grid_mass == pytest.approx(2.0, rel=1e-12) and grid_centre == pytest.approx(centre, abs=1e-4)
    np.testing.assert_allclose(np.diag(tensor), inertia, rtol=3e-3)
    assert np.abs(tensor - np.diag(np.diag(tensor))).max() < 1e-5  # principal axes: the body axes


def test_initial_state_is_the_chain_at_the_pin_angles():
    state = study.initial_state()
    model = study.pendulum_model(study.compliant_contact(1e9))
    assert np.abs(np.asarray(model.constraint(state.q, state.t))).max() < 1e-15
    # θ = (π/4, 3π/4, 5π/6) relative: links at π/4, π (up) and 11π/6 from the downward vertical
    points = study.chain_points(np.asarray(state.q))
    s = np.sqrt(0.5)
    np.testing.assert_allclose(points[:, [0, 2]], [[0.0, 2.0], [s, 2.0 - s], [s, 3.0 - s],
                                                   [s - 0.5, 3.0 - s - np.sqrt(0.75)]], atol=1e-15)


@pytest.fixture(scope="module")
def reproduction(tmp_path_factory):
    out = tmp_path_factory.mktemp("plus-triple-pendulum")
    summary = study.run(out, quick=True, stiffnesses=(1e11,))
    assert (out / "plus-triple-pendulum.png").stat().st_size > 10_000
    row = {name: float(value[0]) for name, value in read_csv(out / "plus-triple-pendulum.csv").items()}  # one stiffness
    return summary, row, read_csv(out / "plus-triple-pendulum-accuracy.csv")


@pytest.fixture(scope="module")
def plus_impact(reproduction):
    """(W, u⁻, PLUS's record) at the onset (compiled already by the reproduction)."""
    start, _ = study.onset()
    model = study.pendulum_model(study.plus_contact())
    W, u = study.plus_problem(model, start)
    return W, u, study.plus_record(model, W, u)


@pytest.mark.slow
def test_plus_slides_throughout_and_loses_the_coulomb_work(reproduction, plus_impact):
    _, row, _ = reproduction
    W, u, record = plus_impact
    # the pins hold the out-of-plane tangent (t = y): a spatial contact of rank 2
    assert abs(W[1, 1]) < 1e-12 and np.linalg.matrix_rank(W, tol=1e-9) == 2
    n = int(record.intervals)
    states = np.asarray(record.friction_state[:n, 0])
    assert bool(record.converged) and 1 not in states  # never rolling (1): impending slip, then sliding
    after = np.asarray(record.velocity)
    assert np.sign(after[2]) == np.sign(u[2]) and abs(after[2]) > 1.0  # the slip grows, one-signed
    # sliding in one direction makes u_n linear in π_n, so e = 1 reverses it and the normal work is zero;
    # the friction μ π_n works against a slip that moves linearly from u_o⁻ to u_o⁺
    impulse = np.asarray(record.impulse)
    assert after[0] == pytest.approx(-u[0], rel=1e-9)
    assert -impulse[2] * np.sign(u[2]) == pytest.approx(0.1 * impulse[0], rel=1e-9)
    work = 0.1 * impulse[0] * (abs(u[2]) + abs(after[2])) / 2
    assert row["energy_loss_plus_J"] == pytest.approx(work, rel=1e-8)


@pytest.mark.slow
def test_compliant_impact_meets_the_height_bound_and_converges_to_plus(reproduction, plus_impact):
    summary, row, ladder = reproduction
    W, u, _ = plus_impact
    assert "slides throughout: True" in summary
    assert row["final_height_error"] < study.HEIGHT_ERROR
    chosen = ladder["chosen"] == 1
    assert chosen.sum() == 1 and np.all(ladder["final_height_error"][ladder["accuracy"] <= ladder["accuracy"][chosen]]
                                        < study.HEIGHT_ERROR)
    # Hertz's duration of a contact of effective mass m = 1/(W_nn − μ ŝ W_no) (the friction slides one way) at
    # k = (4/3) √R E: t_c = 2 (δ_max/v) ∫₀¹ (1 − x^(5/2))^(−1/2) dx, δ_max = (5 m v²/(4 k))^(2/5)
    mass = 1.0 / (W[0, 0] - 0.1 * np.sign(u[2]) * W[0, 2])
    k, speed = row["hertz_constant_N_per_m1_5"], -u[0]
    depth = (5 * mass * speed ** 2 / (4 * k)) ** 0.4
    duration = 2 * depth / speed * 0.4 * beta(0.4, 0.5)
    assert row["contact_duration_s"] == pytest.approx(duration, rel=1e-4)  # observed 2e-6
    # sliding throughout: the friction stays at μ f_N, the slip away from zero
    assert row["min_friction_over_mu_normal"] > 0.99 and row["min_slip_speed_m_s"] > 0.04
    # at 100 GPa the impact lasts 0.15 ms: the compliant model is PLUS to a few 10⁻⁴
    assert row["energy_loss_compliant_J"] == pytest.approx(row["energy_loss_plus_J"], rel=1e-3)
    assert row["link_rate_difference"] < 1e-3
    assert row["final_height_m"] == pytest.approx(row["plus_final_height_m"], rel=1e-3)
    assert row["compliant_run_s"] > row["plus_run_s"]
