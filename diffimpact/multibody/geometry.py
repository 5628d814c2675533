"""The gap geometries of a ``Contact``: from the coordinate blocks of its two bodies, the penetration δ (> 0 in
contact), the unit normal n (the direction of the force on the second body) and the contact point P.

Geometries work in 2-D (planar bodies, circles and lines) and 3-D (spatial
bodies, spheres and planes): ``CirclePlane``/``SpherePlane``,
``PointPlane``, ``CircleCircle``/``SphereSphere`` are one implementation
each, and ``SphereFace`` bounds the plane to a rectangle ([Gismeros Moreno 2022] §3.2,
Fig. 5). ``Cushion`` is a ball against a fixed cushion whose nose follows
a polyline (jaw – long face – jaw, Figs. 3–5), and ``HoledPlane`` a sphere
against a horizontal rectangle with circular holes (the cloth with its
pockets), whose ``removal`` drops the contact of a ball that has fallen
through a hole.
Body index ``None`` stands for the ground.
"""

import abc
from typing import Optional

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact._math import dot, safe_norm
from diffimpact._validation import check_positive, check_range, unit_vector
from diffimpact.multibody.bodies import orientation, point_position, position


def _body_index(name, body):
    """A body index as an integer array leaf: −1 for the ground (``None``)."""
    if body is None:
        return jnp.asarray(-1)
    if isinstance(body, bool) or not isinstance(body, (int, np.integer)) or body < 0:
        raise ValueError(f"{name} must be a body index (int >= 0) or None for the ground; got {body!r}")
    return jnp.asarray(int(body))


def _centre(pose, centre):
    """Global position of the body-fixed point ``centre``; of the centre of mass for ``None``, with no rotation."""
    return position(pose) if centre is None else point_position(pose, centre)


def _optional_point(name, centre):
    """A body-fixed centre as a float array, finite, ``None`` (the centre of mass) kept: a static choice."""
    return None if centre is None else check_range(name, centre)


class Geometry(eqx.Module):
    """Abstract gap geometry between bodies ``body_i`` and ``body_j``.

    The methods see one contact: ``pose_i`` and ``pose_j`` are the coordinate
    blocks of its two bodies (the ground's is the identity pose, so body-fixed
    vectors of the ground are global). ``penetration`` δ (m, > 0 in
    contact), ``normal`` the unit vector along which the contact pushes body j
    (−n on body i), ``point`` the contact point P (m). The body indices are
    integer leaves (−1 for the ground), so that contacts of one kind stack
    into a family (``Contact.family``).
    """

    body_i: eqx.AbstractVar[jnp.ndarray]
    body_j: eqx.AbstractVar[jnp.ndarray]

    @abc.abstractmethod
    def penetration(self, pose_i, pose_j):
        """δ (m)."""

    @abc.abstractmethod
    def normal(self, pose_i, pose_j):
        """Unit normal n, on body j."""

    @abc.abstractmethod
    def point(self, pose_i, pose_j):
        """Contact point P (m)."""

    @property
    def radius_scale(self):
        """The length an overlap is measured against (m): the radius of the circle or sphere in contact (0 for a
        point); the smaller of two."""
        return self.radius

    def removal(self, pose_i, pose_j):
        """A function that crosses zero downwards where the contact leaves the scene for good, or ``None``.

        ``simulate`` locates the crossing as an event and drops the contact
        for the rest of the run: it exerts no force and ends no segment (a
        ball fallen into a pocket, ``HoledPlane``). ``None`` (the default):
        the contact stays in play.
        """
        return None

    def exit(self, pose_i, pose_j):
        """After a ``removal`` that takes body j out (``Contact``'s ``removes_body``): a function that crosses zero
        downwards where the body is clear of the scene, or ``None`` (the default: no such removal).

        ``simulate`` locates it and then removes every contact with the body
        (``HoledPlane``: the ball's top below the plane, under which nothing
        of the table reaches).
        """
        return None


class CirclePlane(Geometry):
    """Circle (2-D) or sphere (3-D) of radius R on body j against a line or plane on body i.

    The plane passes through the body-fixed point ``plane_point`` with the
    body-fixed outward normal ``plane_normal`` (normalised here); the centre C
    is the body-fixed point ``centre`` (``None``, the default: the centre of mass). δ = R −
    (C − P₀) · n, the sphere–plane gap of [Gismeros Moreno 2022], eq. (3.2); P = C − (R −
    δ/2) n, the middle of the overlap. Vectors have 2 components for planar
    bodies and 3 for spatial ones. The plane is unbounded: the scene must
    keep contacts within the real surface (or use ``SphereFace``).
    ``body_i=None`` makes it a ground plane given in global coordinates.
    ``SpherePlane`` is the same class.
    """

    body_i: jnp.ndarray
    plane_point: jnp.ndarray
    plane_normal: jnp.ndarray
    body_j: jnp.ndarray
    centre: Optional[jnp.ndarray]
    radius: jnp.ndarray

    def __init__(self, body_i, plane_point, plane_normal, body_j, centre=None, radius=0.0):
        self.body_i = _body_index("body_i", body_i)
        self.plane_point = check_range("plane_point", plane_point)
        self.plane_normal = unit_vector("plane_normal", plane_normal)
        self.body_j = _body_index("body_j", body_j)
        self.centre = _optional_point("centre", centre)
        self.radius = check_range("radius", radius, 0.0, shape=())
        _same_dimension(plane_point=self.plane_point, plane_normal=self.plane_normal, centre=self.centre)

    def normal(self, pose_i, pose_j):
        return orientation(pose_i) @ self.plane_normal

    def penetration(self, pose_i, pose_j):
        offset = _centre(pose_j, self.centre) - point_position(pose_i, self.plane_point)
        return self.radius - dot(offset, self.normal(pose_i, pose_j))

    def point(self, pose_i, pose_j):
        depth = self.radius - self.penetration(pose_i, pose_j) / 2
        return _centre(pose_j, self.centre) - depth * self.normal(pose_i, pose_j)


SpherePlane = CirclePlane


def _same_dimension(**vectors):
    shapes = {name: jnp.shape(value) for name, value in vectors.items() if value is not None}
    if len(set(shapes.values())) > 1 or list(shapes.values())[0] not in ((2,), (3,)):
        raise ValueError(f"geometry vectors must all have 2 (planar) or 3 (spatial) components; got {shapes}")


def PointPlane(body_i, plane_point, plane_normal, body_j, point=None):
    """A body-fixed point of body j against a line or plane on body i: ``CirclePlane`` with R = 0."""
    return CirclePlane(body_i, plane_point, plane_normal, body_j, point, 0.0)


class CircleCircle(Geometry):
    """Circles (2-D) or spheres (3-D) of radii R_i, R_j centred at body-fixed points of bodies i and j.

    δ = R_i + R_j − |C_j − C_i| ([Gismeros Moreno 2022], eq. (3.1)), n = (C_j − C_i)/|C_j − C_i|;
    P = C_i + (R_i − δ/2) n, the middle of the overlap. The centres must not coincide. A centre ``None`` is
    the body's centre of mass (a ball). ``SphereSphere`` is the same class.
    """

    body_i: jnp.ndarray
    centre_i: Optional[jnp.ndarray]
    radius_i: jnp.ndarray
    body_j: jnp.ndarray
    centre_j: Optional[jnp.ndarray]
    radius_j: jnp.ndarray

    def __init__(self, body_i, centre_i, radius_i, body_j, centre_j, radius_j):
        self.body_i, self.body_j = _body_index("body_i", body_i), _body_index("body_j", body_j)
        self.centre_i, self.centre_j = _optional_point("centre_i", centre_i), _optional_point("centre_j", centre_j)
        self.radius_i = check_range("radius_i", radius_i, 0.0, shape=())
        self.radius_j = check_range("radius_j", radius_j, 0.0, shape=())
        if centre_i is not None or centre_j is not None:
            _same_dimension(centre_i=self.centre_i, centre_j=self.centre_j)

    @property
    def radius_scale(self):
        return jnp.minimum(self.radius_i, self.radius_j)

    def _axis(self, pose_i, pose_j):
        return _centre(pose_j, self.centre_j) - _centre(pose_i, self.centre_i)

    def normal(self, pose_i, pose_j):
        axis = self._axis(pose_i, pose_j)
        return axis / safe_norm(axis)

    def penetration(self, pose_i, pose_j):
        return self.radius_i + self.radius_j - safe_norm(self._axis(pose_i, pose_j))

    def point(self, pose_i, pose_j):
        # ½(C_i + C_j) + ½(R_i − R_j) n, which is C_i + (R_i − δ/2) n written so that swapping the two bodies
        # gives the same bits: mirror-image pairs listed in opposite orders (j, i) stay mirror images
        middle = (_centre(pose_i, self.centre_i) + _centre(pose_j, self.centre_j)) / 2
        return middle + (self.radius_i - self.radius_j) / 2 * self.normal(pose_i, pose_j)


SphereSphere = CircleCircle


class HoledPlane(Geometry):
    """A sphere of radius R on body j against a fixed horizontal rectangle with circular holes (3-D): a cloth with pockets.

    The sphere–plane gap of ``SpherePlane`` to the plane z = h,
    δ_p = R − (z_C − h), counts while the centre C lies over the rectangle
    and off every hole: with m_k = |C_xy − H_k| − r_k the horizontal distance
    of C from the edge of hole k (centre H_k, radius r_k) and m_b the distance
    of C_xy inside the rectangle's nearest side,

        δ = min(δ_p, m_b, min_k m_k).

    Away from the edges δ = δ_p; as the centre passes over an edge δ crosses
    zero continuously (the contact events of ``simulate`` locate it: the plane
    lets the sphere go and it falls), and within a rim strip of the width of
    the indentation (micrometres) the force fades out instead of stepping to
    zero, as on ``SphereFace``'s rim. A sphere that has dropped through a hole
    and is carried back under the surface by its own motion would meet the
    plane from below (a deep penetration, up to metres); ``removal`` drops
    the contact instead, once the centre is off the surface and the sphere
    reaches the plane (``simulate`` locates it).

    Parameters
    ----------
    height : h, the plane's height (m).
    bounds : ((x_min, y_min), (x_max, y_max)), the rectangle (m).
    holes : (k, 2) hole centres H_k (x, y) (m), k ≥ 1.
    hole_radii : (k,) radii r_k (m), > 0.
    body_j : the sphere's body.
    radius : R (m), > 0.
    centre : the sphere's centre, body-fixed (default: the centre of mass).
    """

    body_i: jnp.ndarray
    height: jnp.ndarray
    bounds: jnp.ndarray
    holes: jnp.ndarray
    hole_radii: jnp.ndarray
    body_j: jnp.ndarray
    centre: Optional[jnp.ndarray]
    radius: jnp.ndarray

    def __init__(self, height, bounds, holes, hole_radii, body_j, radius, centre=None):
        self.body_i, self.body_j = _body_index("body_i", None), _body_index("body_j", body_j)
        self.height = check_range("height", height, shape=())
        self.bounds = check_range("bounds", bounds)
        if self.bounds.shape != (2, 2):
            raise ValueError(f"bounds must be ((x_min, y_min), (x_max, y_max)); got shape {self.bounds.shape}")
        self.bounds = check_positive("bounds' extent (x_max − x_min, y_max − y_min)", self.bounds[1] - self.bounds[0],
                                     carrier=self.bounds)
        self.holes = check_range("holes", holes)
        if self.holes.ndim != 2 or self.holes.shape[0] < 1 or self.holes.shape[1] != 2:
            raise ValueError(f"holes must have shape (k, 2) with k >= 1; got {self.holes.shape}")
        self.hole_radii = check_positive("hole_radii", hole_radii)
        if self.hole_radii.shape != (self.holes.shape[0],):
            raise ValueError(f"hole_radii must have shape ({self.holes.shape[0]},); got {self.hole_radii.shape}")
        self.radius = check_positive("radius", radius, shape=())
        self.centre = _optional_point("centre", centre)
        if self.centre is not None and self.centre.shape != (3,):
            raise ValueError(f"HoledPlane is spatial: centre must have 3 components; got shape {self.centre.shape}")

    def normal(self, pose_i, pose_j):
        return jnp.array([0.0, 0.0, 1.0])

    def plane_penetration(self, pose_i, pose_j):
        """δ_p = R − (z_C − h), the gap to the unbounded plane (m)."""
        return self.radius - (_centre(pose_j, self.centre)[2] - self.height)

    def surface_margin(self, pose_i, pose_j):
        """min(m_b, min_k m_k): how far the centre lies within the surface, negative over a hole or off it (m)."""
        centre = _centre(pose_j, self.centre)[:2]
        inside = jnp.minimum(centre - self.bounds[0], self.bounds[1] - centre)
        holes = safe_norm(centre - self.holes, axis=-1) - self.hole_radii
        return jnp.minimum(jnp.min(inside), jnp.min(holes))

    def penetration(self, pose_i, pose_j):
        return jnp.minimum(self.plane_penetration(pose_i, pose_j), self.surface_margin(pose_i, pose_j))

    def removal(self, pose_i, pose_j):
        """max(−δ_p, m): negative once the centre is off the surface (m < 0) and the sphere reaches the plane.

        The sphere has then dropped through a hole or off the edge: it falls
        for good (a pocketed ball), so that the plane cannot meet it from
        below when its own motion carries it back under the surface. A sphere
        sliding off the surface leaves it at the edge (δ_p > 0: with its
        separation); one that flies over a hole, when it falls to the plane.
        """
        return jnp.maximum(-self.plane_penetration(pose_i, pose_j), self.surface_margin(pose_i, pose_j))

    def exit(self, pose_i, pose_j):
        """z_C + R − h = 2R − δ_p, the height of the sphere's top above the plane: zero where the sphere, dropped
        through, has passed below it (m)."""
        return 2.0 * self.radius - self.plane_penetration(pose_i, pose_j)

    def point(self, pose_i, pose_j):
        depth = self.radius - self.plane_penetration(pose_i, pose_j) / 2
        return _centre(pose_j, self.centre) - depth * self.normal(pose_i, pose_j)


class SphereFace(Geometry):
    """Sphere of radius R on body j against a bounded rectangular face on body i (3-D).

    A plane face of a moving body, counted while the centre of the sphere
    projects inside it (``Cushion`` is the fixed cushion of [Gismeros Moreno 2022] §3.2, with
    the faces' rims). The sphere–plane gap of ``SpherePlane``, δ_p = R −
    (C − F) · n, counts only while the projection of the centre C on the face
    plane lies inside the rectangle |ξ| ≤ a, |η| ≤ b, with ξ, η the in-plane
    coordinates of C − F along the edge axis u and w = n × u. So that δ stays
    continuous (the contact events of ``simulate`` locate its zero crossings),

        δ = min(δ_p, a − |ξ|, b − |η|):

    δ = δ_p inside the face away from its rim, negative whenever the
    projection is outside (no contact), and within a rim strip of width δ_p
    (the indentation, micrometres) the force fades out continuously instead
    of stepping to zero. The face is one-sided and has no edges or corners
    of its own: a sphere that reaches the rim from the side is not in
    contact with this face. The contact point is C − (R − δ_p/2) n.

    Parameters
    ----------
    body_i : body carrying the face (``None``: the ground; vectors global).
    face_centre : F, centre of the rectangle, body-fixed (m).
    face_normal : n, outward normal, body-fixed (normalised here).
    face_axis : u, in-plane direction of the edges of half-length a,
        body-fixed; its component along n is removed and it is normalised.
    half_lengths : (a, b) along u and w = n × u (m), > 0.
    body_j : body carrying the sphere.
    centre : C, the sphere's centre, body-fixed (default: centre of mass).
    radius : R (m), ≥ 0.
    """

    body_i: jnp.ndarray
    face_centre: jnp.ndarray
    face_normal: jnp.ndarray
    face_axis: jnp.ndarray
    half_lengths: jnp.ndarray
    body_j: jnp.ndarray
    centre: Optional[jnp.ndarray]
    radius: jnp.ndarray

    def __init__(self, body_i, face_centre, face_normal, face_axis, half_lengths, body_j, centre=None, radius=0.0):
        self.body_i, self.body_j = _body_index("body_i", body_i), _body_index("body_j", body_j)
        spatial = " (SphereFace is spatial)"
        self.face_centre = check_range("face_centre", face_centre, shape=(3,), hint=spatial)
        self.face_normal = unit_vector("face_normal", check_range("face_normal", face_normal, shape=(3,), hint=spatial))
        axis = check_range("face_axis", face_axis, shape=(3,), hint=spatial)
        self.face_axis = unit_vector("face_axis (in the face plane)", axis - (axis @ self.face_normal) * self.face_normal)
        self.half_lengths = check_range("half_lengths", half_lengths, 0.0, low_open=True, shape=(2,),
                                        hint=": (a, b)")
        self.centre = None if centre is None else check_range("centre", centre, shape=(3,), hint=spatial)
        self.radius = check_range("radius", radius, 0.0, shape=())

    def normal(self, pose_i, pose_j):
        return orientation(pose_i) @ self.face_normal

    def _offset(self, pose_i, pose_j):
        return _centre(pose_j, self.centre) - point_position(pose_i, self.face_centre)

    def plane_penetration(self, pose_i, pose_j):
        """δ_p = R − (C − F) · n, the gap to the unbounded face plane (m)."""
        return self.radius - dot(self._offset(pose_i, pose_j), self.normal(pose_i, pose_j))

    def penetration(self, pose_i, pose_j):
        offset = self._offset(pose_i, pose_j)
        u = orientation(pose_i) @ self.face_axis
        w = jnp.cross(self.normal(pose_i, pose_j), u)
        margin = self.half_lengths - jnp.abs(jnp.stack([dot(offset, u), dot(offset, w)]))
        return jnp.minimum(self.plane_penetration(pose_i, pose_j), jnp.min(margin))

    def point(self, pose_i, pose_j):
        depth = self.radius - self.plane_penetration(pose_i, pose_j) / 2
        return _centre(pose_j, self.centre) - depth * self.normal(pose_i, pose_j)


class Cushion(Geometry):
    """A ball (sphere of radius R on body j) against a fixed cushion whose nose follows a polyline (3-D).

    [Gismeros Moreno 2022] §3.2, Figs. 3–5: each cushion is a central rectangular prism with a
    triangular prism at each pocket end, so seen from above the faces a ball can
    reach are the segments of a polyline, jaw – long face – jaw, through
    ``vertices`` (x, y) on the cloth plane z = 0. The paper bounds each plane
    face so that "if any of the coordinates of the projection of the sphere is
    out of the boundaries of the plane (s_x ± R and s_y ± R), contact will not
    happen". Read literally (the whole projected disc within the face) a ball
    aimed at the corner between two faces touches neither and sinks into the
    cushion; with the bounds widened by R both faces push near the corner and
    the force doubles. Here the reading is the exact contact of a sphere with
    the bounded faces: the gap is measured to the closest point of the nearest
    face, its rim included, so a centre that projects up to R beyond a face's
    end touches its edge, with the normal from the edge to the centre, and the
    faces of one cushion count once (the least distance over the segments):

        δ = R − min_k |C − P_k|,   n = (C − P*)/|C − P*|,

    with P_k the point of segment k closest to the centre C and P* the nearest.
    Where the contact lies inside a face the rebound is normal to that face; at
    a corner the normal turns from one face's to the other's through the
    directions between (Fig. 4: normal to the long side, back along the
    original direction for a ball aimed at the corner, normal to the short side).

    ``nose_height``: ``None`` (Gismeros Moreno et al.'s model) for vertical faces standing on
    the cloth plane z = 0, which meet a ball whose centre is above it at the
    height of its centre: the distance is measured in the horizontal plane and
    n is horizontal. The faces end at the cloth (the paper bounds each face; its
    height is not given, and here they are not bounded above): a ball whose
    centre is below z = 0, one that fell through a pocket, is measured from the
    faces' bottom edge, C − P* = (horizontal offset, z), so the cushions do not
    reach under the table. A height h (m above the cloth) for a
    cushion that touches the ball at its nose line z = h (Mathavan et al. 2010:
    h = 7R/5): the distance is measured in 3-D to the segments at that height,
    so for a ball on the cloth n points down from the nose to the centre and the
    cushion presses the ball into the cloth.

    Parameters
    ----------
    vertices : (k + 1, 2) corners of the nose polyline (x, y) in global
        coordinates (m), k ≥ 1 segments of positive length.
    body_j : the ball's body.
    radius : R (m), > 0.
    nose_height : ``None`` or h (m), > 0.
    centre : the sphere's centre, body-fixed (default: the centre of mass).
    """

    body_i: jnp.ndarray
    vertices: jnp.ndarray
    nose_height: Optional[jnp.ndarray]
    body_j: jnp.ndarray
    centre: Optional[jnp.ndarray]
    radius: jnp.ndarray

    def __init__(self, vertices, body_j, radius, nose_height=None, centre=None):
        self.body_i, self.body_j = _body_index("body_i", None), _body_index("body_j", body_j)
        self.vertices = check_range("vertices", vertices)
        if self.vertices.ndim != 2 or self.vertices.shape[0] < 2 or self.vertices.shape[1] != 2:
            raise ValueError(f"vertices must have shape (k + 1, 2) with k >= 1 segments; got {self.vertices.shape}")
        self.vertices = check_positive("length of every cushion segment",
                                       jnp.linalg.norm(jnp.diff(self.vertices, axis=0), axis=1), carrier=self.vertices)
        self.radius = check_positive("radius", radius, shape=())
        self.nose_height = None if nose_height is None else check_positive("nose_height", nose_height, shape=())
        self.centre = _optional_point("centre", centre)
        if self.centre is not None and self.centre.shape != (3,):
            raise ValueError(f"Cushion is spatial: centre must have 3 components; got shape {self.centre.shape}")

    def _offset(self, pose_j):
        """C − P* (3-vector) from the nearest point of the nose to the sphere's centre."""
        centre = _centre(pose_j, self.centre)
        start, end = self.vertices[:-1], self.vertices[1:]
        # measured from each segment's middle, so that a segment given end first, or mirrored, gives the same
        # bits: (start + end)/2, end − start = −(start − end) and the products are exact under a sign change,
        # so the mirror-image cushions of the table keep a mirror-symmetric break mirror-symmetric
        middle, along = (start + end) / 2, end - start
        fraction = jnp.clip(dot(centre[:2] - middle, along) / dot(along, along), -0.5, 0.5)
        horizontal = centre[:2] - (middle + fraction[:, None] * along)
        # the first nearest segment, picked segment by segment: a chain of selections XLA fuses
        squared = dot(horizontal, horizontal)
        nearest, least = horizontal[0], squared[0]
        for k in range(1, len(squared)):
            closer = squared[k] < least
            nearest, least = jnp.where(closer, horizontal[k], nearest), jnp.where(closer, squared[k], least)
        # the nose is level, so the nearest segment in 3-D is the nearest in the plane; vertical faces stand on
        # the cloth, z ≥ 0: level with a centre above it, from their bottom edge to one below it
        vertical = jnp.minimum(centre[2], 0.0) if self.nose_height is None else centre[2] - self.nose_height
        return jnp.concatenate([nearest, jnp.reshape(vertical, (1,))])

    def normal(self, pose_i, pose_j):
        offset = self._offset(pose_j)
        return offset / safe_norm(offset)

    def penetration(self, pose_i, pose_j):
        return self.radius - safe_norm(self._offset(pose_j))

    def point(self, pose_i, pose_j):
        depth = self.radius - self.penetration(pose_i, pose_j) / 2
        return _centre(pose_j, self.centre) - depth * self.normal(pose_i, pose_j)
