"""The cushion geometry ([Gismeros Moreno 2022] §3.2, Figs. 3–5): the faces' gap with their rims, the corner cases of Fig. 4, the nose.

A free ball (no gravity, no cloth) moves in the plane z = 0 towards a corner
of a cushion: the long face along the x-axis up to the corner at the origin,
then a jaw face turned by 45° into the pocket. The contact is frictionless
Lankarani–Nikravesh, so the rebound is along the contact normal; the cases run
together in one vmapped simulation.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.multibody import (
    Contact,
    ContactEvents,
    Cushion,
    HoledPlane,
    HuntCrossleyImpact,
    LagrangeMultipliers,
    Model,
    SpatialBody,
    State,
    simulate,
)

RADIUS, MASS = 0.028575, 0.17
JAW = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4)])
VERTICES = np.array([[-0.5, 0.0], [0.0, 0.0], 0.1 * JAW])
LONG_NORMAL = np.array([0.0, -1.0])  # into the table
SHORT_NORMAL = np.array([JAW[1], -JAW[0]])  # the jaw's normal, on the table side
SPEED = 1.0
GROUND = jnp.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # the identity pose the ground's geometry is seen from
RESTITUTION = 0.98


def unit(v):
    return np.asarray(v) / np.linalg.norm(v)


def start(direction, aim):
    """A ball moving along ``direction`` whose centre line passes through ``aim`` (x, y), 5 mm before contact."""
    direction = unit(direction)
    centre = np.asarray(aim) - (RADIUS + 0.005) * direction
    return np.concatenate([centre, [0.0, 1.0, 0.0, 0.0, 0.0]]), np.concatenate([SPEED * direction, [0.0] * 5])


# Fig. 4 of [Gismeros Moreno 2022]: the same corner met (a) normal to the long side, (b) from between the normals, aimed
# at the corner, (c) normal to the short side. In (a) and (c) the centre line passes 1 mm inside the face,
# so the contact stays on that face up to its end.
CASES = {
    "a: normal to the long side": start(-LONG_NORMAL, (-0.001, 0.0)),
    "b: between the normals, at the corner": start(-unit(LONG_NORMAL + SHORT_NORMAL), (0.0, 0.0)),
    "c: normal to the short side": start(-SHORT_NORMAL, 0.001 * JAW),
}
EXPECTED = {
    "a: normal to the long side": LONG_NORMAL,
    "b: between the normals, at the corner": unit(LONG_NORMAL + SHORT_NORMAL),
    "c: normal to the short side": SHORT_NORMAL,
}


@pytest.fixture(scope="module")
def rebounds():
    ball = SpatialBody(MASS, [0.4 * MASS * RADIUS**2] * 3, name="ball")
    law = HuntCrossleyImpact(1e7, 1.5, RESTITUTION, factor="lankarani_nikravesh")
    model = Model([ball], forces=[Contact(Cushion(VERTICES, 0, RADIUS), law)])
    q0 = jnp.array([CASES[name][0] for name in CASES])
    v0 = jnp.array([CASES[name][1] for name in CASES])
    run = jax.jit(jax.vmap(lambda q, v: simulate(model, State(q, v), jnp.array([0.0, 0.03]), LagrangeMultipliers(),
                                                 events=ContactEvents(max_events=8))))
    return run(q0, v0)


@pytest.mark.parametrize("index, name", list(enumerate(CASES)))
def test_fig_4_corner_cases_rebound_along_the_contact_normal(rebounds, index, name):
    events = rebounds.events
    assert int(events.count[index]) == 2  # one onset, one separation: the faces of a cushion push once
    velocity = np.asarray(rebounds.v[index, -1, :2])
    direction = velocity / np.linalg.norm(velocity)
    np.testing.assert_allclose(direction, EXPECTED[name], atol=1e-9)
    # Lankarani–Nikravesh returns close to its e for e near 1 ([Poursina 2020] fig. 1)
    assert np.linalg.norm(velocity) == pytest.approx(RESTITUTION * SPEED, abs=3e-3)


def test_gap_and_normal_in_closed_form():
    # Faces at the ball's centre height: the horizontal distance; the nose at h = 7R/5: the 3-D distance to it.
    centre = np.array([-0.2, -0.9 * RADIUS, RADIUS])
    q = (jnp.concatenate([jnp.asarray(centre), jnp.array([1.0, 0.0, 0.0, 0.0])]),)
    face, nose = Cushion(VERTICES, 0, RADIUS), Cushion(VERTICES, 0, RADIUS, nose_height=1.4 * RADIUS)
    np.testing.assert_allclose(face.penetration(GROUND, *q), 0.1 * RADIUS, rtol=1e-12)
    np.testing.assert_allclose(face.normal(GROUND, *q), [0.0, -1.0, 0.0], atol=1e-15)
    offset = np.array([0.0, -0.9 * RADIUS, -0.4 * RADIUS])
    np.testing.assert_allclose(nose.penetration(GROUND, *q), RADIUS - np.linalg.norm(offset), rtol=1e-12)
    np.testing.assert_allclose(nose.normal(GROUND, *q), unit(offset), rtol=1e-12)
    assert float(nose.normal(GROUND, *q)[2]) < 0  # the nose presses the ball into the cloth
    # past the corner the nearest point is the corner itself, seen by both faces: counted once
    beyond = np.array([0.3 * RADIUS, -0.3 * RADIUS, RADIUS])
    q = (jnp.concatenate([jnp.asarray(beyond), jnp.array([1.0, 0.0, 0.0, 0.0])]),)
    np.testing.assert_allclose(face.penetration(GROUND, *q), RADIUS - np.hypot(0.3, 0.3) * RADIUS, rtol=1e-12)


@pytest.mark.parametrize("depth", [0.5, 1.0, 40.0])
def test_vertical_faces_end_at_the_cloth_so_a_ball_below_it_is_measured_from_their_bottom_edge(depth):
    # a ball that fell through a pocket, its centre depth·R below the cloth plane, 0.9 R from the face in plan: the
    # gap to the face's bottom edge in 3-D (it touched the face while its centre was above the cloth: 0.1 R deep)
    face = Cushion(VERTICES, 0, RADIUS)
    offset = np.array([0.0, -0.9 * RADIUS, -depth * RADIUS])
    q = jnp.concatenate([jnp.asarray(offset + [-0.2, 0.0, 0.0]), jnp.array([1.0, 0.0, 0.0, 0.0])])
    np.testing.assert_allclose(face.penetration(GROUND, q), RADIUS - np.linalg.norm(offset), rtol=1e-12)
    np.testing.assert_allclose(face.normal(GROUND, q), unit(offset), rtol=1e-12)
    assert (float(face.penetration(GROUND, q)) > 0) == (depth < np.sqrt(1 - 0.9**2))
    # continuous at the cloth plane: a centre at z = 0 is the horizontal case
    level = q.at[2].set(0.0)
    np.testing.assert_allclose(face.penetration(GROUND, level), 0.1 * RADIUS, rtol=1e-12)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Cushion([[0.0, 0.0]], 0, RADIUS), r"vertices must have shape \(k \+ 1, 2\)"),
        (lambda: Cushion([[0.0, 0.0], [0.0, 0.0]], 0, RADIUS), "length of every cushion segment"),
        (lambda: Cushion(VERTICES, 0, -1.0), r"radius must be finite and in \(0, inf\)"),
        (lambda: Cushion(VERTICES, 0, RADIUS, nose_height=0.0), r"nose_height must be finite and in \(0, inf\)"),
    ],
)
def test_bad_geometry_is_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_traced_geometry_is_checked_when_the_function_runs():
    """Under ``jit`` the checks of a cushion's segments and of a holed plane's bounds ride on the arrays the
    geometry keeps (before, they rode on their extents, which were dropped, and a zero-length segment passed)."""
    vertices = eqx.filter_jit(lambda v: Cushion(v, 0, RADIUS).vertices)
    np.testing.assert_array_equal(vertices(jnp.asarray(VERTICES)), VERTICES)
    with pytest.raises(eqx.EquinoxRuntimeError, match="length of every cushion segment"):
        vertices(jnp.array([[0.0, 0.0], [0.0, 0.0]])).block_until_ready()
    bounds = eqx.filter_jit(lambda b: HoledPlane(0.0, b, [[0.3, 0.1]], [0.05], 0, RADIUS).bounds)
    np.testing.assert_array_equal(bounds(jnp.array([[-1.0, -0.5], [1.0, 0.5]])), [[-1.0, -0.5], [1.0, 0.5]])
    with pytest.raises(eqx.EquinoxRuntimeError, match="bounds' extent"):
        bounds(jnp.array([[1.0, -0.5], [1.0, 0.5]])).block_until_ready()
