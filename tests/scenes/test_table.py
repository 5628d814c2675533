"""The full pool table's geometry (``billiard.table_cushions``, ``pockets``, ``rack``): no simulation.

Mirror symmetry about both axes, the long faces on the boundary of the
2.54 × 1.27 m playing surface, the jaws at the WPA cut angles and open
pockets, the rack's exact spacings, and the corner cases of [Gismeros Moreno 2022]
Fig. 4 at every lip, from ``Cushion``'s gap and normal evaluated on positions.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import Cushion
from diffimpact.scenes import billiard

P = billiard.Parameters()
GROUND = jnp.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # the identity pose the ground's geometry is seen from
R = P.radius
HALF = np.array([P.table_length, P.table_width]) / 2
CUSHIONS = np.asarray(billiard.table_cushions(P))
HOLES = billiard.pockets(P)
INDEX = {name: k for k, name in enumerate(billiard.CUSHIONS)}
POCKET = {name: k for k, name in enumerate(billiard.POCKETS)}
#: Mirror images: y → −y swaps left and right; x → −x swaps head and foot.
MIRROR_Y = {"foot": "foot", "head": "head", "left-foot": "right-foot", "left-head": "right-head"}
MIRROR_X = {"foot": "head", "left-foot": "left-head", "right-foot": "right-head"}
POCKET_MIRROR_Y = {"foot-left": "foot-right", "head-left": "head-right", "left-side": "right-side"}
POCKET_MIRROR_X = {"foot-left": "head-left", "foot-right": "head-right", "left-side": "left-side",
                   "right-side": "right-side"}


def both_ways(pairs):
    return {**pairs, **{b: a for a, b in pairs.items()}}


def unit(v):
    return np.asarray(v) / np.linalg.norm(v, axis=-1, keepdims=True)


def _gap_and_normal(vertices, centre):
    ball = jnp.concatenate([centre, jnp.array([R, 1.0, 0.0, 0.0, 0.0])])
    face = Cushion(vertices, 0, R)
    return face.penetration(GROUND, ball), face.normal(GROUND, ball)[:2]


#: ``Cushion``'s penetrations (6, n) and horizontal normals (6, n, 2) for balls centred at (n, 2) (x, y) at centre
#: height, against each of the (6, 4, 2) cushions: one compilation per n.
_gaps = jax.jit(jax.vmap(jax.vmap(_gap_and_normal, (None, 0)), (0, None)))


def gaps(centres, cushions=CUSHIONS):
    gap, normal = _gaps(jnp.asarray(cushions), jnp.atleast_2d(jnp.asarray(centres, dtype=float)))
    return np.asarray(gap), np.asarray(normal)


@pytest.mark.parametrize("flip, pairs", [((1, -1), MIRROR_Y), ((-1, 1), MIRROR_X)])
def test_cushions_are_mirror_symmetric_about_both_axes(flip, pairs):
    # the mirror image of a cushion, run backwards (a mirror turns counter-clockwise into clockwise), is its partner
    for name, partner in both_ways(pairs).items():
        np.testing.assert_allclose(CUSHIONS[INDEX[name]][::-1] * flip, CUSHIONS[INDEX[partner]], atol=1e-15)


@pytest.mark.parametrize("flip, pairs", [((1, -1), POCKET_MIRROR_Y), ((-1, 1), POCKET_MIRROR_X)])
def test_pockets_are_mirror_symmetric_about_both_axes(flip, pairs):
    for name, partner in both_ways(pairs).items():
        k, j = POCKET[name], POCKET[partner]
        np.testing.assert_allclose(np.asarray(HOLES.centres[k]) * flip, HOLES.centres[j], atol=1e-15)
        np.testing.assert_allclose(np.asarray(HOLES.axes[k]) * flip, HOLES.axes[j], atol=1e-15)
        np.testing.assert_allclose(np.asarray(HOLES.lips[k])[::-1] * flip, HOLES.lips[j], atol=1e-15)
        assert float(HOLES.radii[k]) == float(HOLES.radii[j])


def test_long_faces_lie_on_the_boundary_of_the_playing_surface_between_the_pockets():
    assert CUSHIONS.shape == (6, 4, 2)
    faces = CUSHIONS[:, 1:3]
    for face in faces:
        on = np.isclose(np.abs(face), HALF, rtol=0, atol=1e-15)  # which coordinate sits on its boundary
        assert on.all(axis=0).sum() == 1, face
        assert (np.abs(face) <= HALF + 1e-15).all()
    # the long faces and the pocket mouths go once round the rectangle: the faces' lengths plus the
    # mouths' lengths along the nose lines (a corner mouth covers mouth/√2 of each of its two nose lines)
    lengths = np.linalg.norm(faces[:, 1] - faces[:, 0], axis=1).sum()
    mouths = 4 * np.sqrt(2) * P.corner_mouth + 2 * P.side_mouth
    assert lengths + mouths == pytest.approx(2 * (P.table_length + P.table_width), rel=1e-14)
    # counter-clockwise: the table's centre lies on the left of every long face
    along = faces[:, 1] - faces[:, 0]
    assert (np.cross(along, -faces[:, 0]) > 0).all()


def test_jaws_leave_the_lips_at_the_wpa_cut_angles_and_end_at_the_rail():
    corner = np.array(billiard.CORNER_POCKETS)
    start_corner, end_corner = np.roll(corner, 1), corner
    for k, (jaw_end, lip, other_lip, other_jaw_end) in enumerate(CUSHIONS):
        for tip, here, there, is_corner in ((jaw_end, lip, other_lip, start_corner[k]),
                                            (other_jaw_end, other_lip, lip, end_corner[k])):
            angle = np.degrees(np.arccos(unit(tip - here) @ unit(there - here)))  # inside the rubber
            assert angle == pytest.approx(P.corner_cut_angle if is_corner else P.side_cut_angle, abs=1e-12)
            # the jaw's far end sits the cushion's width behind the nose line, off the table
            assert abs(np.cross(unit(there - here), tip - here)) == pytest.approx(P.cushion_width, rel=1e-12)
            assert np.max(np.abs(tip) - HALF) == pytest.approx(P.cushion_width, rel=1e-12)


def test_jaws_meet_the_pockets_at_the_lips():
    # pocket k's mouth runs from cushion k's end lip to cushion k + 1's start lip, as wide as the WPA mouth
    for k in range(6):
        np.testing.assert_array_equal(HOLES.lips[k, 0], CUSHIONS[k, 2])
        np.testing.assert_array_equal(HOLES.lips[k, 1], CUSHIONS[(k + 1) % 6, 1])
        mouth = P.corner_mouth if billiard.CORNER_POCKETS[k] else P.side_mouth
        assert float(np.linalg.norm(HOLES.lips[k, 1] - HOLES.lips[k, 0])) == pytest.approx(mouth, rel=1e-14)
        middle = np.asarray(HOLES.lips[k]).mean(axis=0)
        shelf = P.corner_shelf if billiard.CORNER_POCKETS[k] else P.side_shelf
        np.testing.assert_allclose(HOLES.drops[k], middle + shelf * np.asarray(HOLES.axes[k]), atol=1e-15)
        # the drop point a shelf behind the mouth's middle lies as far from both lips, √((mouth/2)² + shelf²); the
        # hole (assumed half the mouth across, ``pockets``) has its edge there and its centre on the axis beyond
        for lip in HOLES.lips[k]:
            assert float(np.linalg.norm(HOLES.drops[k] - lip)) == pytest.approx(np.hypot(mouth / 2, shelf), rel=1e-12)
        assert float(HOLES.radii[k]) == pytest.approx(mouth / 2, rel=1e-14)
        np.testing.assert_allclose(HOLES.centres[k], HOLES.drops[k] + mouth / 2 * np.asarray(HOLES.axes[k]), atol=1e-15)
        # the axis is normal to the mouth and points off the table
        assert float(HOLES.axes[k] @ (HOLES.lips[k, 1] - HOLES.lips[k, 0])) == pytest.approx(0.0, abs=1e-15)
        assert float(HOLES.axes[k] @ middle) > 0
    # corner pockets on the diagonals of the corners, side pockets on x = 0
    np.testing.assert_allclose(np.abs(np.asarray(HOLES.axes)[[0, 2, 3, 5]]), np.sqrt(0.5), rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(HOLES.centres)[[1, 4], 0], 0.0)


def segments_cross(a, b, c, d):
    """Whether the segments ab and cd cross at a point inside both."""
    def side(p, q, r):
        return np.cross(q - p, r - p)
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def test_cushions_do_not_cross_each_other_or_the_pocket_openings():
    segments = [(polyline[i], polyline[i + 1]) for polyline in CUSHIONS for i in range(3)]
    mouths = [tuple(np.asarray(lips)) for lips in HOLES.lips]
    for i, (a, b) in enumerate(segments):
        for c, d in segments[i + 1:] + mouths:
            assert not segments_cross(a, b, c, d)


@pytest.mark.parametrize("pocket", billiard.POCKETS)
def test_a_ball_rolls_into_every_pocket_along_its_axis_without_touching_a_cushion(pocket):
    # from the table, through the middle of the mouth, down to the centre of the hole: the path is open
    k = POCKET[pocket]
    axis, middle = np.asarray(HOLES.axes[k]), np.asarray(HOLES.lips[k]).mean(axis=0)
    depth = np.linspace(-0.3, float(np.linalg.norm(HOLES.centres[k] - middle)), 200)
    path = middle + depth[:, None] * axis
    assert gaps(path)[0].max() < -0.01 * R
    inside = np.asarray(billiard.pocket_depth(P, path))
    assert (inside[:, k] > 0).any() and (np.delete(inside, k, axis=1) < 0).all()
    # on the axis the ball drops exactly past the slate's edge, a shelf behind the middle of the mouth line
    shelf = float(P.corner_shelf if billiard.CORNER_POCKETS[k] else P.side_shelf)
    edge = np.asarray(billiard.pocket_depth(P, middle + np.array([shelf - 1e-9, shelf, shelf + 1e-9])[:, None] * axis))
    assert edge[0, k] < 0 < edge[2, k] and abs(edge[1, k]) < 1e-15


def test_no_ball_on_the_playing_surface_is_pocketed_unless_it_is_in_a_mouth():
    # a grid of centres at least R from every nose line (where the cushions can put a ball): none is in a hole
    x = np.linspace(-HALF[0] + R, HALF[0] - R, 301)
    y = np.linspace(-HALF[1] + R, HALF[1] - R, 151)
    grid = np.stack(np.meshgrid(x, y), axis=-1).reshape(-1, 2)
    assert (np.asarray(billiard.pocket_depth(P, grid)) < 0).all()


def test_rack_is_the_triangle_with_the_apex_on_the_foot_spot_and_neighbours_2r_plus_alpha_apart():
    alpha = P.spacing
    centres = np.asarray(billiard.rack(P))
    assert centres.shape == (16, 2) and len(billiard.RACK_BALLS) == 16
    np.testing.assert_array_equal(centres[0], [P.cue_x, 0.0])
    np.testing.assert_array_equal(centres[1], [P.rack_x, 0.0])
    assert P.rack_x == pytest.approx(P.table_length / 2 - P.table_length / 4)  # the foot spot
    assert P.cue_x == pytest.approx(-P.table_length / 2 + P.table_length / 4)  # the head spot
    balls = centres[1:]
    distance = np.linalg.norm(balls[:, None] - balls[None], axis=-1)[np.triu_indices(15, 1)]
    side = 2 * R + alpha
    neighbours = np.isclose(distance, side, rtol=1e-12, atol=0)
    assert neighbours.sum() == 30  # the 30 edges of a triangular lattice of 15 points
    # every gap between neighbours is α > 0, and the next nearest pairs are √3 d apart
    assert (distance[neighbours] - 2 * R == pytest.approx(alpha, rel=1e-9))
    assert distance[~neighbours].min() == pytest.approx(np.sqrt(3) * side, rel=1e-12)
    # the first four are the four-ball break's (``initial_state``): fig. 9's triangle behind the apex
    back = P.rack_x + side * np.cos(np.pi / 6)
    np.testing.assert_array_equal(centres[:4], [(P.cue_x, 0.0), (P.rack_x, 0.0), (back, side / 2), (back, -side / 2)])


def test_rack_is_mirror_symmetric_about_the_aim_line():
    centres = np.asarray(billiard.rack(P))
    start = 1
    for r in range(billiard.RACK_ROWS):
        row = centres[start: start + r + 1]
        np.testing.assert_array_equal(row[::-1] * [1, -1], row)  # the j-th ball and the (r − j)-th mirror each other
        assert np.ptp(row[:, 0]) == 0
        start += r + 1


def test_rack_with_zero_spacing_touches_and_negative_spacing_is_refused():
    balls = np.asarray(billiard.rack(P, spacing=0.0))[1:]
    distance = np.linalg.norm(balls[:, None] - balls[None], axis=-1)[np.triu_indices(15, 1)]
    assert distance.min() == pytest.approx(2 * R, rel=1e-14)
    with pytest.raises(ValueError, match=r"spacing must be finite and in \[0, inf\)"):
        billiard.rack(P, spacing=-1e-6)


def test_every_ball_of_the_rack_is_clear_of_the_cushions_and_the_pockets():
    centres = np.asarray(billiard.rack(P))
    assert gaps(centres)[0].max() < -R
    assert (np.asarray(billiard.pocket_depth(P, centres)) < 0).all()


def lip_cases(k, end):
    """Fig. 4's three cases at one lip: positions with gap δ to the long face, the corner, the jaw, and their normals."""
    jaw_end, lip, other_lip, other_jaw_end = CUSHIONS[k]
    if end:
        jaw_end, lip, other_lip = other_jaw_end, other_lip, lip
    pocket = k if end else (k - 1) % 6
    opposite = np.asarray(HOLES.lips[pocket, 1 if end else 0])  # the other lip of the same mouth
    long_normal = unit(-lip)
    long_normal = unit(long_normal - (long_normal @ unit(other_lip - lip)) * unit(other_lip - lip))
    jaw = unit(jaw_end - lip)
    jaw_normal = np.array([-jaw[1], jaw[0]])
    jaw_normal *= np.sign(jaw_normal @ (opposite - lip))  # facing the mouth, not the rubber
    between = unit(long_normal + jaw_normal)
    delta, inset = 1e-4, 1e-3
    return {
        "a: normal to the long side": (lip + inset * unit(other_lip - lip) + (R - delta) * long_normal, long_normal),
        "b: between the normals, at the corner": (lip + (R - delta) * between, between),
        "c: normal to the short side": (lip + inset * jaw + (R - delta) * jaw_normal, jaw_normal),
    }, delta


@pytest.mark.parametrize("k", range(6), ids=billiard.CUSHIONS)
@pytest.mark.parametrize("end", [False, True], ids=["start-lip", "end-lip"])
def test_fig_4_corner_cases_at_every_lip(k, end):
    # in (a) and (c) the nearest point is inside a face, 1 mm from the lip; in (b) it is the lip itself
    cases, delta = lip_cases(k, end)
    gap, found = gaps([centre for centre, _ in cases.values()], CUSHIONS[k: k + 1])
    for i, (name, (_, normal)) in enumerate(cases.items()):
        assert gap[0, i] == pytest.approx(delta, rel=1e-9), name
        np.testing.assert_allclose(found[0, i], normal, atol=1e-12, err_msg=name)
    # the three normals differ: the rebound turns from the long face's normal to the jaw's through the corner
    normals = [normal for _, normal in cases.values()]
    assert normals[0] @ normals[2] < normals[0] @ normals[1] < 1


def test_the_geometry_is_differentiable_in_the_pocket_sizes():
    def lip_x(mouth):
        return billiard.table_cushions(billiard.Parameters(side_mouth=mouth))[1, 2, 0]

    # the side lip of the left-foot cushion sits at x = mouth/2
    assert float(jax.jit(jax.grad(lip_x))(P.side_mouth)) == pytest.approx(0.5, rel=1e-14)


@pytest.mark.parametrize("field, value, message", [
    ("cloth_damping_ratio", -1.0, r"cloth_damping_ratio must be finite and in \[0, inf\); got \[-1.0\]"),
    ("ball_restitution", 1.5, r"ball_restitution must be finite and in \(0, 1\]; got \[1.5\]"),
    ("cloth_friction", -0.1, r"cloth_friction must be finite and in \[0, inf\); got \[-0.1\]"),
    ("table_length", -1.0, r"table_length must be finite and in \(0, inf\); got \[-1.0\]"),
    ("corner_cut_angle", 180.0, r"corner_cut_angle must be finite and in \[90, 180\)"),
    ("mass", [0.17, 0.2], r"mass must be a number \(a scalar\); got shape \(2,\)"),
])
def test_parameters_refuse_each_field_out_of_range_under_its_own_name(field, value, message):
    """(They failed later, in the law or geometry built from them, under its own names: "hysteresis must be …
    got [-220473290.9…]", a bare "restitution must be", "bounds' extent …".) Every field has a range."""
    assert set(billiard.PARAMETER_RANGES) == set(billiard.Parameters.__dataclass_fields__)
    with pytest.raises(ValueError, match=message):
        billiard.Parameters(**{field: value})
