"""``Trajectory.contact_history`` against the contact laws evaluated independently, and ``save``/``load``."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

import diffimpact
from diffimpact.contact.friction import Coulomb
from diffimpact.contact.normal import Hertz
from diffimpact.multibody import (
    CircleCircle,
    CirclePlane,
    Contact,
    ContactEvents,
    Gravity,
    LagrangeMultipliers,
    Model,
    OptimalDamping,
    PlanarBody,
    State,
    Trajectory,
    simulate,
)

MASS, RADIUS, EXPONENT, G = 0.5, 0.05, 1.5, 9.81


def disc(name):
    return PlanarBody(MASS, 0.5 * MASS * RADIUS**2, name=name)


@pytest.fixture(scope="module")
def discs():
    """Two equal discs, 2 mm apart, closing at 2 m/s with an elastic Hertz contact (contact ≈ 2.6 ms from 1 ms)."""
    contact = Contact(CircleCircle(0, (0.0, 0.0), RADIUS, 1, (0.0, 0.0), RADIUS), Hertz(1e7, EXPONENT))
    state = State([0.0, 0.0, 0.0, 2 * RADIUS + 2e-3, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    return simulate(Model([disc("disc 1"), disc("disc 2")], forces=[contact]), state, jnp.linspace(0.0, 4e-3, 801),
                    LagrangeMultipliers(), events=ContactEvents(max_events=4), contact_history=True)


def test_elastic_hertz_force_is_k_delta_to_the_three_halves_and_its_impulse_is_m_delta_v(discs):
    history = discs.contact_history[0]
    q = np.asarray(discs.q)
    penetration = 2 * RADIUS - (q[:, 3] - q[:, 0])
    np.testing.assert_allclose(history.penetration[:, 0], penetration, rtol=0, atol=1e-17)
    np.testing.assert_array_equal(history.gap, -history.penetration)  # no recovering surface
    force = 1e7 * np.maximum(penetration, 0.0) ** EXPONENT
    assert force.max() > 700.0 and np.sum(force > 0) > 500  # the whole pulse is sampled
    np.testing.assert_allclose(history.normal_force[:, 0], force, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(history.normal[:, 0], np.tile([1.0, 0.0], (len(q), 1)), atol=1e-15)
    np.testing.assert_array_equal(history.friction_force, 0.0)
    # impulse–momentum: ∫ f dt (trapezoid, 5 µs steps over the 2.6 ms pulse: error ~ (5 µs / 2.6 ms)² ≈ 4e-6)
    # is the momentum disc 2 has gained, m v₂' = m · 2 m/s (equal discs exchange their velocities)
    impulse = np.trapezoid(np.asarray(history.normal_force[:, 0]), np.asarray(discs.t))
    assert impulse == pytest.approx(MASS * float(discs.v[-1, 3]), rel=2e-5)
    assert impulse == pytest.approx(MASS * 2.0, rel=2e-5)


SOFT, RESTITUTION, FRICTION = 1e5, 0.3, 0.2


@pytest.fixture(scope="module")
def bouncing():
    """A disc dropped from 5 cm while sliding at 0.5 m/s onto a soft eq. (50) contact with Coulomb friction.

    It leaves the ground at zero force with a residual penetration, flies and lands again slower: two
    impacts, each with its own damping c set at its onset.
    """
    ground = CirclePlane(None, (0.0, 0.0), (0.0, 1.0), 0, (0.0, 0.0), RADIUS)
    law = OptimalDamping(SOFT, EXPONENT, RESTITUTION, method="improved")
    model = Model([disc("ball")], forces=[Gravity((0.0, -G)), Contact(ground, law, Coulomb(FRICTION))])
    state = State([0.0, RADIUS + 0.05, 0.0], [0.5, 0.0, 0.0])
    return simulate(model, state, jnp.linspace(0.0, 0.2, 401), LagrangeMultipliers(),
                    events=ContactEvents(max_events=12), contact_history=True)


def test_forces_follow_the_law_set_at_each_onset(bouncing):
    events = bouncing.events
    assert int(events.count) == 3 and [bool(x) for x in events.onset[:3]] == [True, False, True]
    assert bouncing.contact_history[0] is None  # gravity
    history = bouncing.contact_history[1]
    t, q, v = (np.asarray(x) for x in (bouncing.t, bouncing.q, bouncing.v))
    penetration, rate = RADIUS - q[:, 1], -v[:, 1]
    np.testing.assert_allclose(history.penetration[:, 0], penetration, rtol=0, atol=1e-17)
    # f = c δ̇ + k δⁿ between an onset and the next separation, c of that impact (m, −δ̇ at the onset); else 0
    force = np.zeros_like(t)
    ends = [float(events.t[1]), np.inf]
    for onset, end in zip((0, 2), ends):
        damping = float(diffimpact.optimal_damping(MASS, -float(events.v[onset, 1]), SOFT, EXPONENT, RESTITUTION,
                                                   method="improved"))
        inside = (t >= float(events.t[onset])) & (t < end)
        assert inside.sum() > 10 and np.all(penetration[inside] > 0)
        force[inside] = damping * rate[inside] + SOFT * penetration[inside] ** EXPONENT
    assert abs(float(events.v[2, 1])) < 0.5 * abs(float(events.v[0, 1]))  # two different impacts
    np.testing.assert_allclose(history.normal_force[:, 0], force, rtol=1e-12, atol=1e-10)
    # Coulomb: −μ f_N tanh(|u|/v_reg) sign(u), u = ẋ + φ̇ (R − δ/2) the slip of the ball's point at P
    slip = v[:, 0] + v[:, 2] * (RADIUS - penetration / 2)
    friction = -FRICTION * force * np.tanh(np.abs(slip) / 1e-4) * np.sign(slip)
    np.testing.assert_allclose(history.friction_force[:, 0, 0], friction, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(history.friction_force[:, 0, 1], 0.0)
    np.testing.assert_array_equal(history.normal[:, 0], np.tile([0.0, 1.0], (len(t), 1)))


def test_gap_after_a_zero_force_separation_is_to_the_recovering_surface(bouncing):
    """After the separation the zone recovers by c ẋ + k xⁿ = 0: x_s = δ_r (1 + r τ/2)⁻², r = (k/c) √δ_r (n = 3/2).

    The gap is x_s − δ until the bodies turn to approach it (ġ = ẋ_s − δ̇ < 0) with δ < 0, where the zone counts
    as recovered: −δ from then on, as while in contact.
    """
    events, history = bouncing.events, bouncing.contact_history[1]
    t, gap = np.asarray(bouncing.t), np.asarray(history.gap[:, 0])
    penetration, rate = RADIUS - np.asarray(bouncing.q[:, 1]), -np.asarray(bouncing.v[:, 1])
    separation, landing = float(events.t[1]), float(events.t[2])
    damping = float(diffimpact.optimal_damping(MASS, -float(events.v[0, 1]), SOFT, EXPONENT, RESTITUTION,
                                               method="improved"))
    residual = RADIUS - float(events.q[1, 1])
    elapsed = t - separation
    decay = SOFT / damping * np.sqrt(residual)
    surface = residual * (1 + decay * np.maximum(elapsed, 0.0) / 2) ** -2
    surface_rate = -SOFT / damping * surface**EXPONENT
    flight = (t >= separation) & (t < landing)
    receding = flight & (surface_rate - rate > 1e-3)
    approaching = flight & (surface_rate - rate < -1e-3)
    assert receding.sum() > 5 and approaching.sum() > 5
    np.testing.assert_allclose(gap[receding], surface[receding] - penetration[receding], rtol=1e-10, atol=1e-16)
    assert np.all(surface[receding] > 1e-4)  # the recovering surface is seen: x_s ≫ the tolerance
    np.testing.assert_array_equal(gap[approaching], -penetration[approaching])
    np.testing.assert_array_equal(gap[~flight], -penetration[~flight])
    np.testing.assert_array_equal(history.normal_force[flight], 0.0)


def test_save_and_load_give_back_every_field(bouncing, discs, tmp_path, assert_same_tree):
    # with histories and removal times of a family beside another force (gravity), of a family alone, and without
    # contacts
    without_contacts = dataclasses.replace(discs, events=None, contact_history=None, removals=None)
    for run in (bouncing, discs, without_contacts):
        path = run.save(tmp_path / "run.npz")
        assert_same_tree(Trajectory.load(path), run)
    assert [p.name for p in tmp_path.iterdir()] == ["run.npz"]  # no temporary file left


def test_load_refuses_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        Trajectory.load(tmp_path / "missing.npz")
    (tmp_path / "notes.txt").write_text("t, q\n0, 1\n")
    np.savez(tmp_path / "other.npz", t=np.zeros(3))
    np.save(tmp_path / "array.npy", np.zeros(3))
    for name in ("notes.txt", "other.npz", "array.npy"):
        with pytest.raises(ValueError, match="is not a trajectory file written by Trajectory.save"):
            Trajectory.load(tmp_path / name)
