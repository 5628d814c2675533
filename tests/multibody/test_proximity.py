"""The contact-onset hook of ``simulate``: the proximal contacts of a ``RigidImpact`` family in one impact.

[Uchida 2015] §3a, Fig. 6: an onset triggers an impact in which every contact of the family within the
proximity tolerance takes part, resolved by one call of the impact model.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.impulse import MaxDissipationGaussSeidel, Newton, Plus, Poisson, Routh
from diffimpact.multibody import (
    CircleCircle,
    Contact,
    ContactEvents,
    LagrangeMultipliers,
    Model,
    PlanarBody,
    PointPlane,
    RigidImpact,
    SpatialBody,
    State,
    angular_velocity,
    euler_parameters,
    simulate,
)
from diffimpact.multibody.contact import _inert

# --- a brick falling flat on its four bottom corners (spatial, PLUS) --------------------------------------------

MASS, INERTIA, HALF = 2.0, np.array([0.167, 0.133, 0.0867]), np.array([0.2, 0.3, 0.4])
E, MU, SPEED, DROP = 0.5, 0.3, 2.0, 0.01
SLIDE = np.array([-1.0, 0.5])  # m/s: the corners slide throughout (μ(1 + e) SPEED < |SLIDE|)
CORNERS = np.array([(sx * HALF[0], sy * HALF[1], -HALF[2]) for sx in (-1, 1) for sy in (-1, 1)])
# constant restitution e (Poisson's hypothesis): capture and plastic velocities 0
PLUS = Plus(E, MU, capture_velocity=0.0, plastic_velocity=0.0)


def brick(proximity):
    law = RigidImpact(PLUS, proximity=proximity)
    corners = Contact.family(Contact(PointPlane(None, np.zeros(3), (0.0, 0.0, 1.0), 0, c), law) for c in CORNERS)
    return Model([SpatialBody(MASS, INERTIA)], [], [corners])


def drop(tilt):
    """The brick DROP above the ground (no gravity), turned by ``tilt`` (rad) about x: the +y corners higher by
    about 0.6 ``tilt`` m."""
    p = euler_parameters([1.0, 0.0, 0.0], tilt)
    return State(jnp.concatenate([jnp.array([0.0, 0.0, HALF[2] + DROP]), p]),
                 jnp.concatenate([jnp.array([*SLIDE, -SPEED]), jnp.zeros(4)]))


@pytest.fixture(scope="module")
def bounce():
    """(proximity, tilt) → (onset times, twist (v, ω) after every impact): all runs share one compiled simulate."""

    def run(proximity, tilt):
        trajectory = simulate(brick(proximity), drop(tilt), jnp.array([0.0, 0.02]), LagrangeMultipliers(),
                              events=ContactEvents(max_events=8))
        events = trajectory.events
        q, v = np.asarray(trajectory.q[-1]), np.asarray(trajectory.v[-1])
        times = np.asarray(events.t[: int(events.count)])
        assert np.all(np.asarray(events.onset[: int(events.count)]))  # rigid: onsets only
        return times, np.concatenate([v[:3], np.asarray(angular_velocity(q, v))])

    return run


def skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def four_point_plus():
    """The twist after PLUS on the four-point problem built here: contact frames (z, x, y), J = Q [I, −r̃]."""
    frame = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    J = np.concatenate([frame @ np.hstack([np.eye(3), -skew(r)]) for r in CORNERS])
    inverse_mass = np.diag(np.concatenate([np.full(3, 1.0 / MASS), 1.0 / INERTIA]))
    twist = np.concatenate([SLIDE, [-SPEED], np.zeros(3)])
    impulse = np.asarray(PLUS(J @ inverse_mass @ J.T, J @ twist).impulse)
    return twist + inverse_mass @ J.T @ impulse


def test_a_brick_landing_flat_bounces_without_spin_as_one_four_point_impact(bounce):
    # Closed form: the four corners compress and expand together (e = 0.5) while sliding throughout, so the
    # vertical speed is reversed times e, the slip loses μ(1 + e) SPEED along its direction and nothing spins.
    # One corner after the other (the hook before proximity) spun it at up to 1.4 rad/s.
    slip = SLIDE * (1.0 - MU * (1.0 + E) * SPEED / np.linalg.norm(SLIDE))
    expected = np.concatenate([slip, [E * SPEED], np.zeros(3)])
    for proximity in (0.0, 1e-6):  # exactly flat: the four onsets fall at one event, with or without tolerance
        times, twist = bounce(proximity, 0.0)
        assert times.size == 4 and np.ptp(times) == 0.0
        # Observed 1e-14: the round-off of the least-squares impulses of PLUS.
        np.testing.assert_allclose(twist, expected, atol=1e-12)
    # the hook's result is that of one call of the model on the four-point problem
    np.testing.assert_allclose(twist, four_point_plus(), atol=1e-12)


@pytest.mark.parametrize(
    "proximity, tilt, together",
    [(1e-6, 1e-8, True),  # corners 6e-9 m apart, inside the tolerance: one impact
     (0.0, 1e-8, False),  # no tolerance: the low pair first, then the high pair
     (1e-6, 1e-4, False)],  # corners 6e-5 m apart, beyond the tolerance
)
def test_a_tilt_inside_the_proximity_tolerance_still_bounces_without_spin(bounce, proximity, tilt, together):
    times, twist = bounce(proximity, tilt)
    spin = np.linalg.norm(twist[3:])
    if together:
        # only the low pair has an onset; the high pair takes part as proximal
        assert times.size == 2 and np.ptp(times) == 0.0
        assert spin < 1e-6 and twist[2] == pytest.approx(E * SPEED, abs=1e-6)  # symmetric to the tilt's order
    else:
        assert np.ptp(times) > 0  # two impacts
        assert spin > 0.1  # observed 0.74 rad/s: not small with the tilt


# --- a row of three discs (planar, Newton): the touching pair takes part ----------------------------------------

RADIUS, BALL_SPEED, BALL_E, ROW_GAP = 0.5, 2.0, 0.8, 1e-9


def row(proximity):
    law = RigidImpact(Newton(BALL_E), proximity=proximity)
    pairs = Contact.family(Contact(CircleCircle(i, (0.0, 0.0), RADIUS, i + 1, (0.0, 0.0), RADIUS), law)
                           for i in (0, 1))
    return Model([PlanarBody(1.0, 0.1) for _ in range(3)], [], [pairs])


def strike(proximity, gap=ROW_GAP):
    """Disc 0 moving at BALL_SPEED into disc 1, which is ``gap`` from disc 2; the velocities at the end."""
    state = State(jnp.array([-0.01, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0 + gap, 0.0, 0.0]),
                  jnp.array([BALL_SPEED, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    trajectory = simulate(row(proximity), state, jnp.array([0.0, 0.02]), LagrangeMultipliers(),
                          events=ContactEvents(max_events=8))
    return int(trajectory.events.count), np.asarray(trajectory.v[-1, ::3])


def test_newton_resolves_a_row_within_the_tolerance_as_one_impact_and_apart_pair_by_pair():
    s, e = BALL_SPEED, BALL_E
    # Within the tolerance, Newton's law of both pairs at once (unit masses): pair (0, 1) leaves at e s, pair
    # (1, 2), not approaching, at 0 with p₁ = 2 p₂ = 2(1 + e) s/3 (the row moves on as in [Uchida 2015]
    # Fig. 14, row C).
    lumped = [(1 - 2 * e) * s / 3, (1 + e) * s / 3, (1 + e) * s / 3]
    count, together = strike(1e-6)
    assert count == 1
    np.testing.assert_allclose(together, lumped, atol=1e-12)
    # discs 1 and 2 exactly touching (δ = 0 at rest, a pair that starts receding): proximal with no tolerance
    # (before, its onset function started at zero and hid every event: disc 0 passed through disc 1)
    count, touching = strike(0.0, gap=0.0)
    assert count == 1
    np.testing.assert_allclose(touching, lumped, atol=1e-12)
    # Without it, pair after pair: (0, 1), then (1, 2), after which disc 0 catches up with disc 1 again (their
    # status must follow the impulse that pair (1, 2) gave disc 1: a third impact).
    count, apart = strike(0.0)
    first, second = ((1 - e) * s / 2, (1 + e) * s / 2), (1 + e) * s / 2
    middle, last = second * (1 - e) / 2, second * (1 + e) / 2
    mean, half_rebound = (first[0] + middle) / 2, e * (first[0] - middle) / 2
    assert count == 3
    np.testing.assert_allclose(apart, [mean - half_rebound, mean + half_rebound, last], atol=1e-12)


# --- the inert contacts and the refusals -----------------------------------------------------------------------


@pytest.mark.parametrize("dimension", [2, 3])
def test_contacts_not_taking_part_get_no_impulse_from_any_model(dimension):
    # W of four contacts, the second and fourth made inert: every model's impulse is zero there (PLUS's
    # pseudoinverse leaves round-off, which the hook drops) and on the others that of the two-contact problem
    # (for Gauss–Seidel exactly so, with the inert impulses zero: the sweep sees no coupling to them).
    rng = np.random.default_rng(dimension)
    A = rng.normal(size=(4 * dimension, 4 * dimension))
    W, u = A @ A.T + 0.1 * np.eye(4 * dimension), rng.normal(size=4 * dimension)
    u[::dimension] = -np.abs(u[::dimension])  # every contact approaching
    taking_part = np.array([True, False, True, False])
    keep = np.repeat(taking_part, dimension)
    delassus, velocity = (np.asarray(x) for x in _inert(jnp.asarray(W), jnp.asarray(u), taking_part, dimension))
    models = {"newton": Newton(0.5, 0.3), "poisson": Poisson(0.5, 0.3)}
    if dimension == 3:
        models |= {"plus": Plus(0.5, 0.3), "gauss_seidel": MaxDissipationGaussSeidel(0.3)}
    for name, model in models.items():
        impulse = jax.jit(lambda W, u: model(W, u, dimension).impulse)
        whole = np.asarray(impulse(delassus, velocity))
        if name == "plus":
            assert np.abs(whole[~keep]).max() <= 1e-15 * np.abs(whole).max(), name
        else:
            assert np.all(whole[~keep] == 0.0), name
        if name != "gauss_seidel":
            alone = np.asarray(impulse(W[np.ix_(keep, keep)], u[keep]))
            assert np.abs(alone).max() > 0.01, name
            np.testing.assert_allclose(whole[keep], alone, rtol=0, atol=1e-14 * np.abs(alone).max(), err_msg=name)


@pytest.mark.parametrize("proximity, error, match", [
    (-1e-6, ValueError, r"proximity \(m\) must be finite and in \[0, inf\)"),
    (np.nan, ValueError, r"proximity \(m\) must be finite"),
    (np.inf, ValueError, r"proximity \(m\) must be finite"),
    ([1e-6, 1e-6], ValueError, "proximity must be one distance"),
    ("1e-6", TypeError, "proximity"),
])
def test_bad_proximity_values_are_refused(proximity, error, match):
    with pytest.raises(error, match=match):
        RigidImpact(Newton(0.5), proximity=proximity)


def test_models_that_do_not_suit_the_family_are_refused():
    state = State(jnp.array([-0.01, 0.0, 0.0, 1.0, 0.0, 0.0, 2.5, 0.0, 0.0]), jnp.array([1.0] + [0.0] * 8))
    bodies = [PlanarBody(1.0, 0.1) for _ in range(3)]
    for law, match in [
        (RigidImpact(Routh(0.2, 0.5)), "Routh resolves one contact at a time"),
        (RigidImpact(Plus(0.5)), "Plus resolves spatial contacts"),
    ]:
        pairs = Contact.family(Contact(CircleCircle(i, (0.0, 0.0), RADIUS, i + 1, (0.0, 0.0), RADIUS), law)
                               for i in (0, 1))
        with pytest.raises(ValueError, match=match):
            simulate(Model(bodies, [], [pairs]), state, jnp.array([0.0, 0.01]), LagrangeMultipliers())
