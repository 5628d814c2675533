"""Contact families: stacked contacts behave as the same contacts one by one; the holed plane (cloth with pockets)."""

import itertools
import warnings

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.contact.friction import Coulomb
from diffimpact.contact.normal import Hertz, HertzLinearDamper
from diffimpact.impulse import Newton
from diffimpact.multibody import (
    AdaptiveSteps,
    CircleCircle,
    CirclePlane,
    Contact,
    ContactEvents,
    FixedSteps,
    Gravity,
    HoledPlane,
    LagrangeMultipliers,
    Model,
    OptimalDamping,
    PlanarBody,
    RigidImpact,
    SpatialBody,
    SpherePlane,
    SphereSphere,
    State,
    simulate,
)
from diffimpact.multibody.contact import body_mobilities
from diffimpact.multibody.integrate.accelerations import closed_members

MASS, RADIUS, STIFFNESS = 0.2, 0.03, 1e8


def discs(count):
    return [PlanarBody(MASS, 0.5 * MASS * RADIUS**2, name=f"disc {k}") for k in range(count)]


def pair(i, j):
    return Contact(CircleCircle(i, (0.0, 0.0), RADIUS, j, (0.0, 0.0), RADIUS),
                   HertzLinearDamper(STIFFNESS, 1.5, 2e3), Coulomb(0.3, 1e-3))


# three discs in a row, the middle one touching both neighbours (a Newton's cradle in the plane)
PAIRS = [(0, 1), (1, 2), (0, 2)]
Q = jnp.array([-0.0599, 0.0003, 0.1, 0.0, 0.0, -0.2, 0.0599, -0.0002, 0.4])
V = jnp.array([1.0, 0.2, 3.0, -0.5, 0.1, -2.0, -1.5, 0.0, 1.0])


def test_a_family_gives_the_forces_and_gaps_of_its_contacts_one_by_one():
    family = Contact.family(pair(i, j) for i, j in PAIRS)
    assert family.count == 3
    bodies = discs(3)
    model = Model(bodies, forces=[family])
    singles = Model(bodies, forces=[pair(i, j) for i, j in PAIRS])
    # each evaluated as one compiled call (op by op, every operation compiles a program of its own)
    force = eqx.filter_jit(lambda m: m.generalized_force(Q, V, 0.0))
    np.testing.assert_allclose(force(model), force(singles), rtol=1e-13, atol=1e-9)
    q = model.split(Q)
    expected = [float(contact.penetration(q)[0]) for contact in singles.forces]
    np.testing.assert_allclose(family.penetration(q), expected, rtol=1e-14)
    assert expected[0] > 0 and expected[1] > 0 and expected[2] < 0  # two pairs press, the outer pair is apart
    np.testing.assert_allclose(family.member(1).penetration(q), expected[1:2], rtol=1e-14)
    # Newton's third law: the contact forces sum to zero (no gravity), and so do their moments about the origin
    total = model.generalized_force(Q, V, 0.0).reshape(3, 3)
    np.testing.assert_allclose(total[:, :2].sum(axis=0), 0.0, atol=1e-9)
    centres = Q.reshape(3, 3)[:, :2]
    moments = centres[:, 0] * total[:, 1] - centres[:, 1] * total[:, 0] + total[:, 2]  # x F_y − y F_x + τ
    assert np.abs(total).max() > 1e3  # the discs do press (forces of kN) ...
    np.testing.assert_allclose(moments.sum(), 0.0, atol=1e-9)  # ... and the moments cancel


def test_family_refuses_mixed_kinds_and_empty_lists():
    ground = Contact(SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), 0, radius=RADIUS), Hertz(STIFFNESS))
    with pytest.raises(ValueError, match="differs in kind"):
        Contact.family([ground, Contact(SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), 1, radius=RADIUS),
                                        Hertz(STIFFNESS), Coulomb(0.2, 1e-3))])
    with pytest.raises(ValueError, match="at least one Contact"):
        Contact.family([])
    with pytest.raises(TypeError, match=r"contacts\[1\] must be a Contact"):
        Contact.family([ground, Hertz(STIFFNESS)])
    with pytest.raises(ValueError, match="body index"):
        SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), -1, radius=RADIUS)


def test_for_bodies_gives_the_family_of_the_contacts_built_one_by_one(assert_same_tree):
    assert_same_tree(pair(0, 1).for_bodies([0, 1, 0], [1, 2, 2]), Contact.family(pair(i, j) for i, j in PAIRS))
    # members in turn: two plane contacts of different planes, each for balls 0, 1 and 2, ball by ball
    def plane(height, body):
        return Contact(SpherePlane(None, (0.0, 0.0, height), (0.0, 0.0, 1.0), body, radius=RADIUS), Hertz(STIFFNESS))

    planes = Contact.family([plane(0.0, 0), plane(1.0, 0)]).for_bodies(None, [0, 0, 1, 1, 2, 2])
    assert_same_tree(planes, Contact.family(plane(height, body) for body in range(3) for height in (0.0, 1.0)))
    with pytest.raises(ValueError, match="positive multiple of the family's 2 contacts"):
        Contact.family([plane(0.0, 0), plane(1.0, 0)]).for_bodies(None, [0, 1, 2])
    with pytest.raises(ValueError, match="same length"):
        pair(0, 1).for_bodies([0, 1], [1, 2, 2])
    with pytest.raises(ValueError, match="body_j must be a 1-D array of body indices"):
        pair(0, 1).for_bodies([0], [-2])
    with pytest.raises(ValueError, match="body_i must be a 1-D array of body indices"):
        pair(0, 1).for_bodies([0.5], [1])


# the middle disc struck from both sides: pair (0, 1) closes, then pair (1, 2) while (0, 1) is still closed
STRUCK = State([-0.061, 0.0, 0.0, 0.0, 0.0, 0.0, 0.061, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0])
STRUCK_SAVES = jnp.array([0.0, 0.004])


def struck(forces, max_closed=None):
    return simulate(Model(discs(3), forces=forces), STRUCK, STRUCK_SAVES, LagrangeMultipliers(),
                    events=ContactEvents(max_events=8, max_closed=max_closed))


@pytest.fixture(scope="module")
def struck_family():
    return struck([Contact.family(pair(i, j) for i, j in PAIRS)])


def test_simultaneous_impacts_of_one_family_match_separate_contacts(struck_family):
    family, singles = struck_family, struck([pair(i, j) for i, j in PAIRS])
    np.testing.assert_allclose(family.v[-1], singles.v[-1], rtol=1e-9, atol=1e-12)
    count = int(family.events.count)
    assert count == int(singles.events.count) >= 4
    np.testing.assert_allclose(family.events.t[:count], singles.events.t[:count], rtol=1e-12)
    # the family's contact k is the separate model's force k
    np.testing.assert_array_equal(family.events.member[:count], singles.events.contact[:count])
    np.testing.assert_array_equal(family.events.contact[:count], 0)
    # momentum is conserved through the impacts
    np.testing.assert_allclose(family.linear_momentum[-1], family.linear_momentum[0], atol=1e-12)


@pytest.mark.parametrize("max_closed", [2, (1, 2)])
def test_accelerations_of_the_closed_members_only_give_the_same_run(struck_family, max_closed):
    """``max_closed``: the segments' accelerations sum only the closed pairs (one, then two of three); the run is
    that of all members, to the round-off of the exact force sums (whose scale follows the number of terms).
    With the sizes (1, 2) the segments with one pair closed sum one member, those with two sum two.

    The same events, in the same order. Their times: each run's bisection stops within ``event_tol`` (1 + |t|)
    of its own root (``simulate``), and the two roots differ by the round-off of the two sums, which lies below
    that; so the two runs' times are within twice the bisection's bound (they differ by 4e-16 s under XLA's
    AVX2 code with fused multiply-adds, 0 without)."""
    everyone, closed = struck_family, struck([Contact.family(pair(i, j) for i, j in PAIRS)], max_closed=max_closed)
    count = int(everyone.events.count)
    assert int(closed.events.count) == count >= 4
    np.testing.assert_array_equal(everyone.events.onset[:2], True)
    np.testing.assert_array_equal(everyone.events.member[:2], [0, 1])
    np.testing.assert_array_equal(closed.events.member[:count], everyone.events.member[:count])
    np.testing.assert_array_equal(closed.events.onset[:count], everyone.events.onset[:count])
    event_tol = 1e-15  # (simulate's default)
    bound = 2 * event_tol * (1 + np.abs(everyone.events.t[:count]))
    assert np.all(np.abs(closed.events.t[:count] - everyone.events.t[:count]) <= bound)
    np.testing.assert_allclose(closed.events.v[:count], everyone.events.v[:count], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(closed.v, everyone.v, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(closed.q, everyone.q, rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("max_closed", [0, (), (2, 2), (2, 1), (1, True)])
def test_max_closed_must_be_a_count_or_increasing_counts(max_closed):
    with pytest.raises((ValueError, TypeError), match="max_closed must be an int >= 1"):
        struck([pair(0, 1)], max_closed=max_closed)


def test_a_segment_keeps_the_closed_members_and_flags_too_many():
    family = Contact.family(pair(i, j) for i, j in PAIRS)
    model = Model(discs(3), forces=[family])
    with_engaged = lambda flags: eqx.tree_at(lambda m: m.forces[0].engaged, model, jnp.asarray(flags, dtype=float))
    kept, size, too_many = closed_members(with_engaged([0.0, 1.0, 1.0]), (0,), (1, 2))
    np.testing.assert_array_equal(kept.forces[0].geometry.body_i, [1, 0])  # pairs (1, 2) and (0, 2)
    np.testing.assert_array_equal(kept.forces[0].engaged, [1.0, 1.0])
    assert int(size) == 1 and not bool(too_many)  # two closed: the second size
    kept, size, too_many = closed_members(with_engaged([0.0, 1.0, 0.0]), (0,), (1, 2))
    np.testing.assert_array_equal(kept.forces[0].geometry.body_i, [1, 0])  # pair (1, 2), then a copy of pair 0 ...
    np.testing.assert_array_equal(kept.forces[0].engaged, [1.0, 0.0])  # ... that exerts no force
    assert int(size) == 0 and not bool(too_many)  # one closed: the first size holds it
    assert bool(closed_members(with_engaged([1.0, 1.0, 0.0]), (0,), (1,))[2])
    assert closed_members(model, (0,), (3,))[0] is model  # not more members than allowed: nothing to cut


HOLE = np.array([0.3, 0.1])
HOLE_RADIUS = 0.06
BOUNDS = ((-1.0, -0.5), (1.0, 0.5))


def test_holed_plane_is_the_plane_away_from_holes_and_continuous_over_the_edge():
    plane = HoledPlane(0.0, BOUNDS, HOLE[None], [HOLE_RADIUS], 0, RADIUS)
    ground = jnp.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    depth = 1e-5

    def penetration(x):
        pose = jnp.array([x, 0.1, RADIUS - depth, 1.0, 0.0, 0.0, 0.0])
        return float(plane.penetration(ground, pose))

    edge = HOLE[0] - HOLE_RADIUS
    assert penetration(0.0) == pytest.approx(depth, rel=1e-9)  # the plane's δ
    assert penetration(edge - depth / 2) == pytest.approx(depth / 2, rel=1e-6)  # rim strip: fades out
    assert penetration(edge + 0.01) == pytest.approx(-0.01, rel=1e-9)  # over the hole: apart
    assert penetration(BOUNDS[1][0] + 0.01) == pytest.approx(-0.01, rel=1e-9)  # beyond the rectangle: apart
    # over the hole δ is the (negative) distance from its edge: d δ/dx = −1 towards the hole's centre
    slope = jax.grad(lambda x: plane.penetration(ground, jnp.array([x, 0.1, 0.02, 1.0, 0.0, 0.0, 0.0])))(0.25)
    assert float(slope) == pytest.approx(-1.0, rel=1e-12)


HOLE_STIFFNESS = 1e6


@pytest.fixture(scope="module")
def ball_over_hole():
    """``run(q0, v0, t_end)``: a frictionless ball on the holed plane (Hertz), saved at 0 and ``t_end``;
    ``located=False``: the plane's onsets and separations not located (``Contact``'s ``located``)."""
    ball = SpatialBody(MASS, [0.4 * MASS * RADIUS**2] * 3)

    def model(located):
        cloth = Contact(HoledPlane(0.0, BOUNDS, HOLE[None], [HOLE_RADIUS], 0, RADIUS), Hertz(HOLE_STIFFNESS),
                        located=located)
        return Model([ball], forces=[Gravity((0.0, 0.0, -9.81)), cloth])

    def run(q0, v0, t_end, solver=None, located=True):
        return simulate(model(located), State(q0, v0), jnp.array([0.0, t_end]), LagrangeMultipliers(), solver=solver,
                        steps=AdaptiveSteps(rtol=1e-10, atol=1e-12), events=ContactEvents(max_events=4))

    return run


def _rest(position, velocity, height=None):
    """(q, v) of the ball at ``position`` (x, y), centre ``height`` (default: the static deflection), moving at
    ``velocity`` (3 components), not spinning."""
    if height is None:
        height = RADIUS - (MASS * 9.81 / HOLE_STIFFNESS) ** (2 / 3)
    return [*position, height, 1.0, 0.0, 0.0, 0.0], [*velocity, 0.0, 0.0, 0.0, 0.0]


def test_a_ball_sliding_onto_a_hole_leaves_the_plane_when_its_centre_crosses_the_edge_and_for_good(ball_over_hole):
    # Frictionless and resting at the static deflection: the ball slides at constant speed, so the cloth lets it
    # go at t = (edge distance)/speed, and then it falls freely. At 0.25 s it has crossed the hole (far edge at
    # 0.18 s) and is back under the surface 0.23 m down: the plane must not meet it from below (``removal``).
    speed, static = 2.0, (MASS * 9.81 / HOLE_STIFFNESS) ** (2 / 3)
    run = ball_over_hole(*_rest((0.0, 0.1), (speed, 0.0, 0.0)), 0.25)
    events = run.events
    assert int(events.count) == 1 and not bool(events.onset[0])
    edge_time = (HOLE[0] - HOLE_RADIUS) / speed
    assert float(events.t[0]) == pytest.approx(edge_time, abs=1e-7)
    # then it falls freely from the state at the separation
    fall = 0.25 - float(events.t[0])
    z, rate = float(events.q[0, 2]), float(events.v[0, 2])
    assert float(run.q[-1, 2]) == pytest.approx(z + rate * fall - 0.5 * 9.81 * fall**2, abs=1e-9)
    assert float(run.q[-1, 0]) == pytest.approx(speed * 0.25, abs=1e-9)
    # it slid at the static deflection, and sank ~1e-8 m as the rim strip let go (below)
    assert z == pytest.approx(RADIUS - static, abs=1e-3 * static)
    # Hertz without damping or friction: the energy is kept but for the elastic energy of the rest, k δ^(5/2)/(5/2),
    # which the rim strip lets go without work (its force fades out as the centre crosses the edge, in 78 µs, while
    # the ball falls ~3e-8 m: ~1e-8 J); the plane stores none once the contact is gone
    stored = HOLE_STIFFNESS * static**2.5 / 2.5
    assert float(run.energy[-1]) == pytest.approx(float(run.energy[0]) - stored, abs=1e-7)


def test_a_ball_flying_over_a_hole_lands_beyond_it_and_one_landing_in_it_falls_through(ball_over_hole):
    # From 1 mm above the plane at x = 0.2, along the hole's diameter (x from 0.24 to 0.36), free flight.
    height, hop = RADIUS + 1e-3, 1e-3

    def landing(rise):  # when the lowest point is back at the plane: hop + rise t − g t²/2 = 0
        return (rise + np.sqrt(rise**2 + 2 * 9.81 * hop)) / 9.81

    # over the hole, the ball stays above the plane and lands at x = 0.61: an onset, not a removal; the same
    # with another solver (``simulate``'s ``solver``)
    for solver in (None, diffrax.Dopri5()):
        run = ball_over_hole(*_rest((0.2, 0.1), (2.0, 0.0, 1.0), height), 0.21, solver)
        assert float(run.events.t[0]) == pytest.approx(landing(1.0), abs=1e-7) and bool(run.events.onset[0])
    # it reaches the plane at x = 0.26, over the hole: no event, and it falls freely on under the surface
    t_end, rise = 0.25, 0.3
    assert 0.24 < 0.2 + landing(rise) < 0.36 and 0.2 + t_end > 0.36
    run = ball_over_hole(*_rest((0.2, 0.1), (1.0, 0.0, rise), height), t_end)
    assert int(run.events.count) == 0
    np.testing.assert_allclose(run.q[-1, :3], [0.2 + t_end, 0.1, height + rise * t_end - 0.5 * 9.81 * t_end**2],
                               atol=1e-9)


def test_a_plane_whose_contacts_are_not_located_gives_the_located_run(ball_over_hole):
    """``Contact(..., located=False)``: no onset or separation is located (the solver steps through them), the
    removal still is. Hertz's force vanishes at δ = 0, so the motion is the located run's, to the error of the
    steps that straddle the onsets and separations (measured at rtol = 1e-10: positions 2e-11 m, velocities
    2e-8 m/s, energy 7e-9 of it): a ball sliding off into the hole, one landing in it, one flying over it and
    bouncing (energy kept: undamped, frictionless) beyond it."""
    starts = [(_rest((0.0, 0.1), (2.0, 0.0, 0.0)), 0.25), (_rest((0.2, 0.1), (1.0, 0.0, 0.3), RADIUS + 1e-3), 0.25),
              (_rest((0.2, 0.1), (2.0, 0.0, 1.0), RADIUS + 1e-3), 0.21)]
    for (q0, v0), t_end in starts:
        located, not_located = (ball_over_hole(q0, v0, t_end, located=flag) for flag in (True, False))
        assert int(not_located.events.count) == 0
        np.testing.assert_allclose(not_located.removals[1], located.removals[1], rtol=1e-12)
        np.testing.assert_allclose(not_located.q[-1, :3], located.q[-1, :3], rtol=0, atol=1e-10)
        np.testing.assert_allclose(not_located.v[-1, :3], located.v[-1, :3], rtol=0, atol=1e-7)
        assert float(not_located.energy[-1]) == pytest.approx(float(located.energy[-1]), rel=5e-8)
    assert float(not_located.energy[-1]) == pytest.approx(float(not_located.energy[0]), rel=5e-8)
    # removed where the sliding ball's centre crosses the edge, and where the other reaches the plane over the hole
    assert float(ball_over_hole(*starts[0][0], 0.25, located=False).removals[1][0]) == pytest.approx(
        (HOLE[0] - HOLE_RADIUS) / 2.0, abs=1e-7)
    assert [np.isfinite(float(ball_over_hole(*start, t, located=False).removals[1][0])) for start, t in starts] == [
        True, True, False]


def test_only_a_law_that_vanishes_at_zero_penetration_may_go_unlocated():
    plane = SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), 0, radius=RADIUS)
    for law in (HertzLinearDamper(STIFFNESS, 1.5, 10.0), OptimalDamping(STIFFNESS, 1.5, 0.8), RigidImpact(Newton(0.8))):
        with pytest.raises(ValueError, match="located=False needs a NormalForceLaw whose force vanishes"):
            Contact(plane, law, located=False)
    with pytest.raises(TypeError, match="located must be a bool"):
        Contact(plane, Hertz(STIFFNESS), located=1)
    with pytest.raises(ValueError, match="differs in kind.*located=False"):
        Contact.family([Contact(plane, Hertz(STIFFNESS)), Contact(plane, Hertz(STIFFNESS), located=False)])


@pytest.fixture(scope="module")
def balls_into_holes():
    """``run(speed, t_end)``: two frictionless balls on a holed plane that removes bodies (``Contact``'s
    ``removes_body``), Hertz between them, sliding at ``speed`` towards each other, each into a hole: mirror
    images about x = ``MIRROR``, ball 0 starting as ``ball_over_hole``'s lone ball at (0, 0.1)."""
    ball = SpatialBody(MASS, [0.4 * MASS * RADIUS**2] * 3)
    holes = np.array([HOLE, [2 * MIRROR - HOLE[0], HOLE[1]]])
    cloth = Contact.family(Contact(HoledPlane(0.0, BOUNDS, holes, [HOLE_RADIUS] * 2, j, RADIUS),
                                   Hertz(HOLE_STIFFNESS), located=False, removes_body=True) for j in (0, 1))
    pair = Contact(SphereSphere(0, None, RADIUS, 1, None, RADIUS), Hertz(STIFFNESS))
    model = Model([ball, ball], forces=[Gravity((0.0, 0.0, -9.81)), cloth, pair])

    def run(speed, t_end):
        (qa, va), (qb, vb) = _rest((0.0, HOLE[1]), (speed, 0.0, 0.0)), _rest((2 * MIRROR, HOLE[1]), (-speed, 0.0, 0.0))
        return simulate(model, State(jnp.array(qa + qb), jnp.array(va + vb)), jnp.array([0.0, t_end]),
                        LagrangeMultipliers(), steps=AdaptiveSteps(rtol=1e-10, atol=1e-12),
                        events=ContactEvents(max_events=8)), (qa, va)

    return run


MIRROR = 0.45


def test_a_ball_through_a_hole_of_a_plane_that_removes_bodies_meets_nothing_once_its_top_is_below(
        balls_into_holes, ball_over_hole):
    """``Contact(..., removes_body=True)``: the removal takes the ball out of the plane's contact at the hole's
    edge, and out of every contact where its top passes below the plane (``HoledPlane.exit``). At 1 m/s the balls
    fall 2R in 0.11 s, before they pass each other under the plane at 0.42 s: each then moves as the lone ball of
    ``ball_over_hole`` with the same start, and their pair's contact is removed at the exit. At 2 m/s they meet
    at 0.21 s, 2 ms before their exits: just under the plane, they collide."""
    speed, t_end = 1.0, 0.5
    out, (qa, va) = balls_into_holes(speed, t_end)
    edge = (HOLE[0] - HOLE_RADIUS) / speed  # when each centre crosses its hole's near edge
    static = (MASS * 9.81 / HOLE_STIFFNESS) ** (2 / 3)
    exit_time = edge + np.sqrt(2 * (2 * RADIUS - static) / 9.81)  # a fall of 2R − δ_static from rest (vertically)
    assert int(out.events.count) == 0
    np.testing.assert_allclose(out.removals[1], [edge, edge], atol=1e-7)
    assert float(out.removals[2][0]) == pytest.approx(exit_time, abs=2e-4)  # (the rim strip's push: ~1e-4 s)
    alone = ball_over_hole(jnp.array(qa), jnp.array(va), t_end, located=False)
    a, b = (out.q[-1, 7 * k : 7 * k + 3] for k in (0, 1))
    np.testing.assert_allclose(a, alone.q[-1, :3], rtol=0, atol=1e-9)
    np.testing.assert_allclose(b, a * jnp.array([-1.0, 1.0, 1.0]) + jnp.array([2 * MIRROR, 0.0, 0.0]), rtol=0,
                               atol=1e-9)
    assert float(a[0]) == pytest.approx(speed * t_end, abs=1e-9) and float(a[2]) < -RADIUS
    # faster, they meet before their tops are below the plane: an onset of the pair, which bounces them back
    speed = 2.0
    met, _ = balls_into_holes(speed, t_end)
    assert bool(met.events.onset[0]) and int(met.events.member[0]) == 0 and int(met.events.contact[0]) == 2
    assert float(met.events.t[0]) == pytest.approx((MIRROR - RADIUS) / speed, abs=1e-4)
    assert float(met.events.t[0]) < (HOLE[0] - HOLE_RADIUS) / speed + np.sqrt(2 * (2 * RADIUS - static) / 9.81)
    assert float(met.q[-1, 0]) < MIRROR - RADIUS


def test_only_a_geometry_with_a_removal_may_remove_its_body():
    with pytest.raises(ValueError, match="removes_body=True needs a geometry with a removal and an exit"):
        Contact(SpherePlane(None, np.zeros(3), (0.0, 0.0, 1.0), 0, radius=RADIUS), Hertz(STIFFNESS), removes_body=True)
    with pytest.raises(ValueError, match="removes_body=True needs a compliant law"):
        Contact(HoledPlane(0.0, BOUNDS, HOLE[None], [HOLE_RADIUS], 0, RADIUS), RigidImpact(Newton(0.9)),
                removes_body=True)
    with pytest.raises(TypeError, match="removes_body must be a bool"):
        Contact(HoledPlane(0.0, BOUNDS, HOLE[None], [HOLE_RADIUS], 0, RADIUS), Hertz(STIFFNESS), removes_body=1)


def test_a_ball_bouncing_by_newton_on_the_plane_keeps_bouncing_beside_a_pair_contact_of_a_falling_ball():
    # Ball 1 is let go 5 mm above the holed plane (Newton's impacts, e = 0.9) and bounces six times in 0.3 s, at the
    # closed-form times of e-scaled free flights. Ball 0, over the hole, falls through. The balls' Hertz contact
    # (0.85 m apart) never closes, but each bounce jumps its gap's rate past its turning point's band: that function
    # must be handled at the impulse (else it starts the next segment below zero, no crossing is seen, and ball 1
    # fell through the plane after its first bounce).
    ball = SpatialBody(MASS, [0.4 * MASS * RADIUS**2] * 3)
    plane = Contact.family(Contact(HoledPlane(0.0, BOUNDS, HOLE[None], [HOLE_RADIUS], j, RADIUS),
                                   RigidImpact(Newton(0.9))) for j in (0, 1))
    pair = Contact(SphereSphere(0, None, RADIUS, 1, None, RADIUS), Hertz(STIFFNESS))
    model = Model([ball, ball], forces=[Gravity((0.0, 0.0, -9.81)), plane, pair])
    q = jnp.array([*HOLE, RADIUS + 1e-3, 1.0, 0.0, 0.0, 0.0, -0.5, -0.2, RADIUS + 5e-3, 1.0, 0.0, 0.0, 0.0])
    run = simulate(model, State(q, jnp.zeros(14)), jnp.array([0.0, 0.3]), LagrangeMultipliers(),
                   steps=AdaptiveSteps(rtol=1e-10, atol=1e-12), events=ContactEvents(max_events=40))
    count = int(run.events.count)
    bounces = np.asarray(run.events.t[:count])[np.asarray(run.events.onset[:count])]
    fall = np.sqrt(2 * 5e-3 / 9.81)  # to the first bounce; then flights of 2 e^k sqrt(2 g h)/g
    expected = fall + np.concatenate([[0.0], np.cumsum([2 * fall * 0.9**k for k in range(1, 6)])])
    np.testing.assert_allclose(bounces, expected, atol=1e-8)
    assert float(run.q[-1, 9]) > 0


# --- contacts at a distance (``near_distance``) ------------------------------------------------

NEAR = 0.02


def test_far_contacts_end_no_segment_and_a_stale_approach_is_caught_on_entering_the_near_zone():
    """Disc 0 bounces off the heavy disc 2, then hits disc 1; disc 3 passes far above them.

    Collinear elastic impacts (frictionless Hertz): the closed form of rigid
    impacts. Pair (0, 1) starts receding and turns to approach while far, so
    its status is stale until it enters the near zone; disc 3's closest
    approaches (≥ 0.24 m) end no segment. Segments: onset and separation of
    (0, 2), the near-zone entry of (0, 1), its onset and separation, the end.
    """
    masses = (MASS, MASS, 10 * MASS, MASS)
    bodies = [PlanarBody(m, 0.5 * m * RADIUS**2) for m in masses]
    family = Contact.family(Contact(CircleCircle(i, (0.0, 0.0), RADIUS, j, (0.0, 0.0), RADIUS), Hertz(STIFFNESS))
                            for i, j in itertools.combinations(range(4), 2))
    q0 = jnp.array([0.0, 0.0, 0.0, 0.2, 0.0, 0.0, -0.3, 0.0, 0.0, 0.1, 0.3, 0.0])
    v0 = jnp.array([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0])
    run = simulate(Model(bodies, forces=[family]), State(q0, v0), jnp.array([0.0, 1.0]), LagrangeMultipliers(),
                   steps=AdaptiveSteps(rtol=1e-10, atol=1e-12), events=ContactEvents(max_events=8, near_distance=NEAR))
    m, heavy = masses[0], masses[2]
    back = (m - heavy) / (m + heavy) * -1.0  # disc 0 after the heavy disc, then handed on to disc 1
    expected = np.zeros(12)
    expected[[3, 6, 9]] = back, 2 * m / (m + heavy) * -1.0, -1.0
    np.testing.assert_allclose(run.v[-1], expected, atol=1e-7)
    count = int(run.events.count)
    pairs = list(itertools.combinations(range(4), 2))
    assert [pairs[int(k)] for k in run.events.member[:count]] == [(0, 2), (0, 2), (0, 1), (0, 1)]
    assert np.asarray(run.events.onset[:count]).tolist() == [True, False, True, False]
    assert int(run.segments) == 6


def test_near_distance_is_positive_and_needs_adaptive_steps():
    model = Model(discs(2), forces=[pair(0, 1)])
    state = State(jnp.array([0.0, 0.0, 0.0, 0.1, 0.0, 0.0]), jnp.zeros(6))
    for bad in (0.0, -1e-3, np.nan):
        with pytest.raises(ValueError, match="near_distance"):
            simulate(model, state, [0.1], LagrangeMultipliers(), events=ContactEvents(near_distance=bad))
    with pytest.raises(ValueError, match="near_distance bounds adaptive steps"):
        simulate(model, state, [0.1], LagrangeMultipliers(), steps=FixedSteps(1e-3), max_steps=200,
                 events=ContactEvents(near_distance=NEAR))


def _slipless_row(count):
    """``count`` discs in a row along x, each pressing its neighbour by 0.1 mm, moving together (no slip)."""
    x = (2 * RADIUS - 1e-4) * np.arange(count)
    q = jnp.asarray(np.stack([x, np.zeros(count), np.zeros(count)], axis=1).reshape(-1))
    v = jnp.asarray(np.tile([0.3, -0.2, 0.0], count))
    return q, v


def test_slip_rates_give_the_friction_eigenvalue_of_the_accelerations():
    # Hertz without damping: the accelerations depend on the velocities through the friction alone, whose
    # Jacobian for one stuck pair has the one eigenvalue −s_F (1/m + R'²/J) summed over both discs, R' = R − δ/2
    # the lever arm of the contact point, s_F = μ f_N/v_reg; for a row, the bodies' sums bound the eigenvalues.
    law, friction = Hertz(STIFFNESS, 1.5), Coulomb(0.3, 1e-3)
    for count in (2, 3):
        contacts = Contact.family(Contact(CircleCircle(i, (0.0, 0.0), RADIUS, i + 1, (0.0, 0.0), RADIUS), law,
                                          friction) for i in range(count - 1))
        model = Model(discs(count), forces=[contacts])
        q, v = _slipless_row(count)
        jacobian = jax.jit(jax.jacfwd(lambda v: LagrangeMultipliers().acceleration(model, q, v, 0.0)))(v)
        largest = np.max(-np.linalg.eigvals(np.asarray(jacobian)).real)
        rates = np.asarray(eqx.filter_jit(lambda m, q, v: m.forces[0].slip_rates(body_mobilities(m.bodies), m.split(q),
                                                                                m.split(v)))(model, q, v))
        if count == 2:
            lever = RADIUS - 0.5e-4
            slope = 0.3 * STIFFNESS * 1e-4**1.5 / 1e-3
            expected = slope * 2 * (1 / MASS + lever**2 / (0.5 * MASS * RADIUS**2))
            np.testing.assert_allclose(rates, [expected, expected], rtol=1e-12)
            assert largest == pytest.approx(expected, rel=1e-10)
        else:
            # the middle disc's two contacts: twice the end discs' rate, and at least the largest eigenvalue
            np.testing.assert_allclose(rates, rates[0] * np.array([1.0, 2.0, 1.0]), rtol=1e-12)
            assert largest <= rates.max() and largest > rates[0]


@pytest.mark.parametrize("flag", ["friction_steps", "contact_steps"])
def test_step_bounds_are_flags_and_need_adaptive_steps(flag):
    with pytest.raises(TypeError, match=f"{flag} must be True, False or a sequence of indices"):
        AdaptiveSteps(**{flag: 1})
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{flag}'"):  # (bounds of adaptive steps)
        FixedSteps(1e-3, **{flag: True})


def test_a_contact_of_a_body_with_itself_is_refused():
    law = HertzLinearDamper(STIFFNESS, 1.5, 2e3)
    with pytest.raises(ValueError, match="contact 0 has body 0 as both body_i and body_j"):
        Contact(CircleCircle(0, (0.0, 0.0), RADIUS, 0, (0.0, 0.0), RADIUS), law)
    with pytest.raises(ValueError, match="contact 0 has the ground as both body_i and body_j"):
        Contact(CirclePlane(None, (0.0, 0.0), (0.0, 1.0), None, radius=RADIUS), law)
    with pytest.raises(ValueError, match="contact 1 has body 2 as both body_i and body_j"):
        pair(0, 1).for_bodies([0, 2], [1, 2])


@pytest.mark.parametrize("overlap, warned", [(0.2 * RADIUS, True), (2 * RADIUS, True), (1e-6, False)])
def test_bodies_that_start_deeply_overlapping_are_warned_with_the_overlap(overlap, warned):
    """Two discs whose centres are 2R − overlap apart: deeper than OVERLAP_WARNING of R, a warning names the
    family, the member, the bodies and the penetration (the law then throws them apart; they flew at 192 m/s);
    a contact closed by a micrometre, as under a resting body's weight, is not warned. (``contact_steps`` naming a
    force that is not a contact family stops the run after its checks: only the start is tested.)"""
    distance = 2 * RADIUS - overlap
    state = State([-distance / 2, 0.0, 0.0, distance / 2, 0.0, 0.0], [1.0, 0.0, 0.0, -1.0, 0.0, 0.0])
    model = Model(discs(2), forces=[pair(0, 1)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="contact_steps names model.forces"):
            simulate(model, state, [1e-3], LagrangeMultipliers(), steps=AdaptiveSteps(contact_steps=(1,)))
    messages = [str(w.message) for w in caught if "overlapping" in str(w.message)]
    assert len(messages) == int(warned)
    if warned:
        assert f"model.forces[0] (contact 0 of the family, bodies 0 and 1): penetration {overlap:.4g} m" in messages[0]


@pytest.mark.parametrize("max_events, error", [(-1, ValueError), (True, TypeError), (2.5, TypeError)])
def test_max_events_must_be_a_count(max_events, error):
    with pytest.raises(error, match="max_events must be an int >= 0"):
        simulate(Model(discs(2), forces=[pair(0, 1)]), State([0.0, 0.0, 0.0, 0.1, 0.0, 0.0], np.zeros(6)), [1e-3],
                 LagrangeMultipliers(), events=ContactEvents(max_events=max_events))


@pytest.mark.parametrize("event_tol", [-1.0, 0.0, 1.0, np.nan, np.inf])
def test_event_tol_out_of_range_is_named(event_tol):
    """(A negative or NaN tolerance reached optimistix's bisection, whose message names none of the arguments.)"""
    with pytest.raises(ValueError, match=r"event_tol must be finite and in \(0, 1\)"):
        simulate(Model(discs(2), forces=[pair(0, 1)]), State([0.0, 0.0, 0.0, 0.1, 0.0, 0.0], np.zeros(6)), [1e-3],
                 LagrangeMultipliers(), events=ContactEvents(event_tol=event_tol))
