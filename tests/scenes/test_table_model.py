"""The full table as a model (``billiard.table_model``): its contact families, and a ball rolling into a pocket."""

import itertools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import (
    AdaptiveSteps,
    Baumgarte,
    Contact,
    ContactEvents,
    LagrangeMultipliers,
    State,
    angular_velocity,
    simulate,
)
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

P = billiard.Parameters()


def test_the_sixteen_ball_table_has_three_contact_families_of_every_ball_pair_and_cushion():
    model = billiard.table_model(P)
    counts = [force.count for force in model.forces[1:]]
    assert counts == [16, 120, 96]  # cloth per ball, every pair, every ball with each of the six cushions
    names = billiard.table_contact_names()
    assert [len(group) for group in names] == [1, *counts]
    assert names[2][0] == "cue–yellow" and names[3][6] == "yellow–foot cushion"
    # at the break's start every ball rests on the cloth at the static deflection and touches nothing else
    state = billiard.break_state(P)
    q = model.split(state.q)
    np.testing.assert_allclose(model.forces[1].penetration(q), P.static_deflection(), rtol=1e-12)
    # where the cloth carries its weight: no ball accelerates vertically (the cue ball slides, so only horizontally)
    accelerations = jax.jit(LagrangeMultipliers().acceleration)(model, state.q, state.v, 0.0).reshape(16, 7)
    np.testing.assert_allclose(accelerations[:, 2], 0.0, atol=1e-12 * P.gravity)
    assert float(jnp.max(model.forces[2].penetration(q))) == pytest.approx(-P.spacing, rel=1e-9)
    assert float(jnp.max(model.forces[3].penetration(q))) < -0.1
    with pytest.raises(ValueError, match="balls must be an int from 1 to 16"):
        billiard.table_model(P, 17)


@pytest.mark.parametrize("balls", [1, 2])
def test_table_forces_names_the_forces_of_the_table_in_order_and_the_settings_bound_its_cushions(balls):
    # one ball has no ball–ball family, so the cushions' index moves; counted from the contacts themselves
    model, forces = billiard.table_model(P, balls), billiard.table_forces(balls)
    assert len(forces) == len(model.forces) and forces[0] == "gravity"
    cushions = forces.index("ball–cushion")
    assert model.forces[cushions].count == 6 * balls and model.forces[forces.index("cloth")].count == balls
    assert ("ball–ball" in forces) == (balls > 1)
    assert table.settings(model)["steps"].contact_steps == (cushions,)


def test_the_table_is_built_as_from_its_contacts_one_by_one(assert_same_tree):
    # table_model builds each family from one contact of each kind (Contact.for_bodies): the same arrays as
    # the family of every contact built and checked on its own
    model = billiard.table_model(P, balls=4)
    cushions = billiard.table_cushions(P)
    families = [[billiard.table_cloth(P, i) for i in range(4)],
                [billiard.ball_pair(P, i, j) for i, j in itertools.combinations(range(4), 2)],
                [billiard.cushion(P, i, cushions[k]) for i in range(4) for k in range(len(billiard.CUSHIONS))]]
    for force, contacts in zip(model.forces[1:], families, strict=True):
        assert_same_tree(force, Contact.family(contacts))


@pytest.mark.without_fma
def test_a_mirror_image_state_of_the_packed_rack_gets_the_mirror_image_accelerations_to_the_last_bit():
    # The rack squeezed so that every ball presses on its neighbours (up to six ball–ball forces on one ball),
    # moving and spinning, mirror-symmetric about y = 0: the accelerations must be the mirror image, bit for bit.
    # Summed in the order of the family, the forces on a ball and on its mirror image (whose contacts come in
    # another order) came out 7e-15 N apart, and the break amplified that to metres (docs/design/mirror-symmetry.md).
    model = billiard.table_model(P)
    partner = table.mirror_partners(P)
    centres = np.array(billiard.rack(P, 0.0))
    centres[1:] = [P.rack_x, 0.0] + (centres[1:] - [P.rack_x, 0.0]) * (1 - 3e-4)
    rng = np.random.default_rng(0)
    velocities, spins = rng.normal(size=(16, 2)), 30 * rng.normal(size=(16, 3))
    for k, image in enumerate(partner):
        if image == k:  # on the aim line: no sideways motion, spin about y only
            velocities[k, 1], spins[k, [0, 2]] = 0.0, 0.0
        elif image > k:
            velocities[image], spins[image] = velocities[k] * [1, -1], spins[k] * [-1, 1, -1]
    q, v = billiard.ball_state(P, centres, velocities, spins)
    q = jnp.asarray(q).reshape(16, 7).at[:, 2].add(-1e-6).ravel()  # into the cloth, too

    def mirrored(x):  # (x, y, z, e0, e1, e2, e3) → (x, −y, z, e0, −e1, e2, −e3) of the partner
        return np.asarray(x).reshape(16, 7)[partner] * [1, -1, 1, 1, -1, 1, -1]

    np.testing.assert_array_equal(mirrored(q), np.asarray(q).reshape(16, 7))
    np.testing.assert_array_equal(mirrored(v), np.asarray(v).reshape(16, 7))
    assert float(jnp.min(model.forces[2].penetration(model.split(q)))) < 0 < float(
        jnp.max(model.forces[2].penetration(model.split(q))))
    acceleration = jax.jit(lambda q, v: Baumgarte(20.0, 20.0).acceleration(model, q, v, 0.0))(q, v)
    assert float(jnp.max(jnp.abs(acceleration))) > 100.0
    np.testing.assert_array_equal(mirrored(acceleration), np.asarray(acceleration).reshape(16, 7))


def one_ball(state, max_events=8):
    """0.5 s of one ball on the table from ``state``, saved at 0, 0.4 and 0.5 s: one compilation for every test here."""
    return simulate(billiard.table_model(P, balls=1), state, jnp.array([0.0, 0.4, 0.5]), LagrangeMultipliers(),
                    steps=AdaptiveSteps(rtol=1e-9, atol=1e-11), events=ContactEvents(max_events=max_events))


@pytest.mark.parametrize("name", ["foot-left", "right-side"])  # a corner and a side pocket: one compilation
def test_a_ball_rolling_down_a_pocket_axis_drops_where_its_centre_reaches_the_hole(name):
    # A rolling ball keeps its speed on the cloth (no rolling resistance in the model), so it leaves the cloth at
    # t = (distance to the hole's edge)/speed, and pocketed() names that pocket.
    pocket = billiard.POCKETS.index(name)
    holes = billiard.pockets(P)
    axis, centre, radius = (np.asarray(x[pocket]) for x in (holes.axes, holes.centres, holes.radii))
    speed, distance = 1.0, 0.4
    start = centre - distance * axis
    velocity = speed * axis
    run = one_ball(billiard.table_state(P, [start], velocity, billiard.rolling_spin(P, velocity)))
    found = billiard.pocketed(P, run, balls=1)
    assert [(ball, pocket_name) for _, ball, pocket_name in found] == [("cue", name)]
    # It leaves the cloth (the removal) where its centre reaches the hole's edge, the force faded out over the rim
    # strip of the indentation's width δ_s (tens of micrometres), at its rolling speed. The contact point lies at
    # mid-overlap, a = R − δ_s/2 below the centre: struck rolling about R (ω = v/R), it slips a little and
    # settles, the angular momentum about the contact point kept, at v' = v (m a + J/R)/(m a + J/a).
    m, inertia, indentation = (float(x) for x in (P.mass, P.inertia, P.static_deflection()))
    lever = float(P.radius) - indentation / 2
    rolling = speed * (m * lever + inertia / float(P.radius)) / (m * lever + inertia / lever)
    assert found[0][0] == float(run.removals[1][0]) == pytest.approx((distance - float(radius)) / rolling, rel=1e-4)
    assert found[0][0] != pytest.approx((distance - float(radius)) / speed, rel=1e-4)  # (v' is 3.8e-4 below v)
    assert int(run.events.count) == 0  # the cloth's onsets and separations are not located
    assert float(run.q[-1, 2]) < 0  # it has fallen below the slate
    # out of the scene where its top passes below the cloth (``HoledPlane.exit``): its contacts with the cushions'
    # faces are removed then, after a free fall of its centre from R − δ_s to −R that began where the cloth's force
    # began to fade, at most the strip's δ_s/v' before the removal
    assert billiard.table_forces(1)[2] == "ball–cushion"
    fall = np.sqrt(2 * (2 * P.radius - indentation) / P.gravity)
    after = np.asarray(run.removals[2]) - float(run.removals[1][0])
    assert np.all((fall - indentation / rolling <= after) & (after <= fall))


def test_on_a_located_cloth_a_dropped_ball_lands_and_leaves_as_events_at_the_free_fall_times_and_speed():
    # table_model(cloth_located=True): the cloth's onsets and separations are events. A ball let go at rest 5 mm
    # above the cloth (its centre at R + 5 mm) touches it after a free fall, t = sqrt(2h/g), and leaves the undamped
    # Hertz cloth (no slip: no friction) at the speed it came with, sqrt(2 g h) upwards
    model = billiard.table_model(P, balls=1, cloth_located=True)
    assert model.forces[1].located and not billiard.table_model(P, balls=1).forces[1].located
    drop = 5e-3
    q, v = billiard.ball_state(P, [[0.3, 0.2]], [0.0, 0.0])
    q = jnp.asarray(q).at[2].set(P.radius + drop)
    run = simulate(model, State(q, jnp.asarray(v)), jnp.array([0.0, 0.05]), LagrangeMultipliers(),
                   steps=AdaptiveSteps(rtol=1e-10, atol=1e-12), events=ContactEvents(max_events=8))
    events = run.events
    assert int(events.count) == 2 and [bool(x) for x in events.onset[:2]] == [True, False]
    assert [int(x) for x in events.contact[:2]] == [1, 1]
    assert float(events.t[0]) == pytest.approx(np.sqrt(2 * drop / P.gravity), abs=1e-8)
    assert float(events.v[1, 2]) == pytest.approx(np.sqrt(2 * P.gravity * drop), rel=1e-6)


def rebound(centre, velocity, normal):
    """One ball rolled from ``centre`` at ``velocity`` into a cushion: (the ball–cushion family's members of its events,
    the first onset's and separation's times, and the centre's displacement, the velocity and the angular velocity at
    the separation), each vector as (along ``normal``, along the tangent to its right, vertical)."""
    velocity = np.asarray(velocity, dtype=float)
    run = one_ball(billiard.table_state(P, [centre], velocity, billiard.rolling_spin(P, velocity)))
    events = run.events
    count = int(events.count)
    assert [int(x) for x in events.contact[:count]] == [billiard.table_forces(1).index("ball–cushion")] * count
    q, v = np.asarray(events.q[1]), np.asarray(events.v[1])
    axes = np.array([[normal[0], normal[1], 0.0], [normal[1], -normal[0], 0.0], [0.0, 0.0, 1.0]])
    moved = np.r_[q[:2] - centre, q[2] - P.resting_height()]
    return ([int(x) for x in events.member[:count]], np.asarray(events.t[:2]),
            axes @ moved, axes @ v[:3], axes @ np.asarray(angular_velocity(q, v)))


def test_a_ball_into_a_jaw_or_a_lip_rebounds_as_from_the_long_face_turned_with_it():
    # The cloth and the cushions' friction are isotropic and every face of a cushion has the same profile (the nose
    # line at the same height), so a ball that meets the foot-left pocket's jaw rebounds as one that meets the foot
    # cushion's long face at the same incidence, turned with the face. A ball whose centre line runs through the lip
    # (the vertex of the nose line between face and jaw) from between the two faces' normals meets the vertex only:
    # in the vertical plane of its path the vertex is the face's nose, seen the same way, so it rebounds as from the
    # long face head-on, straight back along its path. Each run is one onset and one separation on the foot cushion.
    # The runs differ by their integration at rtol 1e-9. Against rtol 1e-11 (scratch runs of the same cases) each is
    # off by at most 5e-11 s and m in its times and displacement; in its velocity and spin, by 1e-8 m/s and 1.7e-7
    # rad/s at 48°, and by 3.3e-8 m/s and 5.4e-6 rad/s head-on (of 10.9 rad/s). Each tolerance is about twice the sum
    # of two runs' errors. A jaw turned by a degree moves the onset by 1.7e-4 s.
    cushions = np.asarray(billiard.table_cushions(P))
    jaw_end, lip, _, _ = cushions[0, ::-1]  # the foot cushion's end at the foot-left pocket: its jaw from the lip
    start = P.radius + 5e-3  # the centre 5 mm further from the face than when the ball touches its nose, 0.92 R out
    long_face = np.array([-1.0, 0.0])  # the foot cushion's long face x = L/2: its normal into the table
    along = (jaw_end - lip) / np.linalg.norm(jaw_end - lip)
    jaw = np.array([-along[1], along[0]])  # the table lies on the left of the nose line, run from lip to jaw end

    def into(point, normal, incidence):
        # the ball leaving ``start`` out from ``point`` at ``incidence`` to the face's normal, turned the same way about
        # every face's normal (on the jaw towards the lip: it rebounds off the jaw into the table)
        towards = -np.cos(incidence) * normal - np.sin(incidence) * np.array([normal[1], -normal[0]])
        return rebound(point + start * normal, towards, normal)

    def same(a, b, velocity_tolerance, spin_tolerance):
        assert a[0] == b[0] == [0, 0]  # the foot cushion (member 0), once
        np.testing.assert_allclose(a[1], b[1], rtol=0, atol=2e-10)
        np.testing.assert_allclose(a[2], b[2], rtol=0, atol=2e-10)
        np.testing.assert_allclose(a[3], b[3], rtol=0, atol=velocity_tolerance)
        np.testing.assert_allclose(a[4], b[4], rtol=0, atol=spin_tolerance)

    oblique = np.radians(48.0)  # away from the lip: off the jaw into the table, clear of the other jaw
    same(into((lip + jaw_end) / 2, jaw, oblique), into(np.array([P.table_length / 2, 0.0]), long_face, oblique),
         velocity_tolerance=5e-8, spin_tolerance=5e-7)
    between = 0.8 * long_face + 0.2 * jaw
    between /= np.linalg.norm(between)
    at_lip, head_on = into(lip, between, 0.0), into(np.array([P.table_length / 2, 0.0]), long_face, 0.0)
    same(at_lip, head_on, velocity_tolerance=1e-7, spin_tolerance=2e-5)
    assert abs(at_lip[3][1]) < 1e-12 and np.all(np.abs(at_lip[4][::2]) < 1e-12)  # straight back, spinning about its tangent


def test_more_events_than_allowed_stop_the_run_with_a_message_naming_max_events():
    # a fast ball across the table between the long cushions: an onset and a separation at every cushion, and the
    # turning points of the other cushions' gaps, more than the 8 events allowed in 0.5 s
    state = billiard.table_state(P, [[0.5, 0.0]], [0.0, 10.0])
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"more than max_events = 8 events .*; increase max_events"):
        one_ball(state)


def test_a_ball_is_pocketed_at_its_removal_from_the_cloth_in_the_hole_nearest_it_then():
    # pocketed() reads only the cloth's removal times and the saves, so runs are written down here: the ball's
    # cloth contact removed at 0.2 s, the saves in the air over the hole and below the cloth.
    from types import SimpleNamespace

    pocket = billiard.POCKETS.index("right-side")
    holes = billiard.pockets(P)
    axis, centre = (np.asarray(x[pocket]) for x in (holes.axes, holes.centres))
    pose = lambda xy, z: np.concatenate([xy, [z, 1.0, 0.0, 0.0, 0.0]])  # noqa: E731
    times = np.array([0.0, 0.1, 0.2, 0.3])
    saves = np.stack([pose(centre - 0.2 * axis, P.resting_height()), pose(centre, 0.01),
                      pose(centre + 0.01 * axis, -0.01), pose(centre + 0.5 * axis, -1.0)])
    run = SimpleNamespace(t=times, q=saves, removals=(None, np.array([0.2])))
    assert billiard.pocketed(P, run, balls=1) == [(0.2, "cue", "right-side")]
    # the hole is read at the first save from the removal on (0.2 s), not at the last (0.5 m past the hole)
    assert billiard.pocketed(P, SimpleNamespace(**{**vars(run), "removals": (None, np.array([0.15]))}),
                             balls=1) == [(0.15, "cue", "right-side")]
    assert billiard.left_table(P, run, balls=1) == []
    # not removed: neither pocketed nor off the table; removed far from every hole: it left the table
    never = SimpleNamespace(**{**vars(run), "removals": (None, np.array([np.inf]))})
    assert billiard.pocketed(P, never, balls=1) == [] == billiard.left_table(P, never, balls=1)
    flown = SimpleNamespace(**{**vars(run), "removals": (None, np.array([0.3]))})
    assert billiard.pocketed(P, flown, balls=1) == []
    assert billiard.left_table(P, flown, balls=1) == [(0.3, "cue")]


def test_a_ball_thrown_over_a_side_pocket_leaves_the_table_where_it_falls_to_the_cloth_level_beyond_the_rails():
    # A ball in the air, 0.15 m above its resting height, moving along the left side pocket's axis at 2 m/s: it
    # passes between the jaws (the cushions' faces have no top, but the pocket's mouth is open), over the hole and
    # beyond the rails, and falls freely until its centre is at the cloth's level, R above it: its cloth contact is
    # removed then, t = sqrt(2h/g) with h its centre's height above R, 0.2 m past the hole's centre and off the table.
    pocket = billiard.POCKETS.index("left-side")
    holes = billiard.pockets(P)
    axis, centre = (np.asarray(x[pocket]) for x in (holes.axes, holes.centres))
    q, v = billiard.ball_state(P, [centre - 0.15 * axis], 2.0 * axis)
    height = 0.15 + P.resting_height() - P.radius
    run = one_ball(State(jnp.asarray(q).at[2].add(0.15), jnp.asarray(v)))
    landing = np.sqrt(2 * height / P.gravity)
    assert 2.0 * landing - 0.15 > float(holes.radii[pocket]) + P.radius  # it lands past the hole, off the table
    assert billiard.pocketed(P, run, balls=1) == []
    [(time, ball)] = billiard.left_table(P, run, balls=1)
    assert ball == "cue" and time == pytest.approx(landing, abs=1e-8)
    assert int(run.events.count) == 0  # it touched nothing on its way


def test_a_ball_thrown_up_off_the_papers_cloth_gets_the_cloths_stored_energy_back_with_its_own():
    # The paper's Hertz cloth is undamped: a ball at rest on it stores (2/5) K δs^(5/2) = (2/5) m g δs (with
    # K δs^(3/2) = m g), and a ball struck straight up from rest at w leaves it with all of that and of ½ m w²:
    # its flight's apex is H = w²/(2g) + 2 δs/5 above the resting height. At 2.5 m/s it is still in the air at
    # 0.4 and 0.5 s (0.51 s of flight), where z − z_rest + ż²/(2g) is H, both times, the whole table watching.
    w, indentation = 2.5, float(P.static_deflection())
    q, v = billiard.ball_state(P, [(0.0, 0.0)], (0.0, 0.0))
    run = one_ball(State(jnp.asarray(q), jnp.asarray(v).at[2].set(w)))
    apex = w**2 / (2 * P.gravity) + 0.4 * indentation
    z, rate = np.asarray(run.q)[1:, 2], np.asarray(run.v)[1:, 2]
    assert np.all(z - P.radius > 0.02) and rate[0] > rate[1]  # in flight at both saves, off the cloth (z > R)
    # the run's error at its rtol of 1e-9 is 3.3e-8 m (in 9 steps; the same run at rtol 1e-11 and 1e-12, atol
    # rtol/100, is 3.1e-10 and 5.8e-12 off): within 1e-7, 300 times below the cloth's share of 3.1e-5 m
    np.testing.assert_allclose(z - P.resting_height() + rate**2 / (2 * P.gravity), apex, rtol=0, atol=1e-7)
    assert 0.4 * indentation > 300 * 1e-7
    assert int(run.events.count) == 0
