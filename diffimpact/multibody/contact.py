"""Compliant contact between planar or spatial bodies, usable as a force of a ``Model``.

A ``Contact`` pairs a gap geometry with a normal force law and an optional
friction law. The geometry gives the penetration δ(q) (> 0 in contact), the
unit normal n(q) (the direction of the force on the second body) and the
contact point P(q). Then ([Poursina 2020] §2, [Gismeros Moreno 2022] §3.3):

* δ̇ = ∂δ/∂q · v by autodiff (``jax.jvp``);
* f_N = law(δ, δ̇), the clipped ``__call__`` of the law: compressive only and
  zero out of contact (no tensile force for laws that separate at zero force);
* the friction force opposes the tangential part of the relative velocity of
  the two material points at P, v_t = v_rel − (v_rel · n) n;
* the generalised force is Q = Jᵀ F with F = f_N n + F_t and J = ∂r/∂q the
  Jacobian (autodiff) of r = p_j − p_i, the positions of the material points
  of the two bodies that coincide at P (torques follow from the lever arms
  in J). For the normal part, Jᵀ n = −∂δ/∂q, the virtual work of f_N on δ.

The law may be a ``NormalForceLaw`` (fixed parameters) or an ``ImpactLaw``,
whose parameters depend on the effective mass and the approach speed of each
impact (eq. (50): optimal damping; eq. (9) with a damping factor of eqs. (13)–(16)):
``simulate`` resolves it at every contact onset (``Contact.at_onset``).
``RigidImpact`` is the instantaneous (rigid) impact: no force, and at each
onset ``simulate`` applies the impulse of a model of ``diffimpact.impulse``
(Newton, Poisson, Routh, maximum dissipation) to the contact's problem in its
frame (``impact_velocity``); ``NewtonRestitution(e)`` is the frictionless
Newton impact.
Geometries work in 2-D (planar bodies, circles and lines) and 3-D (spatial
bodies, spheres and planes): ``CirclePlane``/``SpherePlane``,
``PointPlane``, ``CircleCircle``/``SphereSphere`` are one implementation
each, and ``SphereFace`` bounds the plane to a rectangle ([Gismeros Moreno 2022] §3.2,
Fig. 5). In 3-D the friction force is a 3-vector along the relative
tangential velocity and its torques come from Jᵀ F, with the lever arms of
the body orientation matrices.
Body index ``None`` stands for the ground.
"""

import abc
from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._validation import check_positive, check_range, unit_vector
from diffimpact.contact._math import positive_power, safe_norm
from diffimpact.contact import damping_factors
from diffimpact.contact.friction import FrictionLaw
from diffimpact.contact.normal import HertzLinearDamper, HuntCrossley, NormalForceLaw
from diffimpact.impact.damping import _check_exponent_restitution, _check_method, optimal_damping
from diffimpact.impulse import newton
from diffimpact.multibody.bodies import global_direction, global_point, orientation, position
from diffimpact.multibody.forces import Force
from diffimpact.multibody.formulations import _saddle_point_solve

# --- geometries -------------------------------------------------------------------


def _local(q, body, global_position):
    """Body-frame coordinates s' of a global position (inverse of ``global_point``)."""
    if body is None:
        return global_position
    return orientation(q[body]).T @ (global_position - position(q[body]))


class Geometry(eqx.Module):
    """Abstract gap geometry between bodies ``body_i`` and ``body_j``.

    ``penetration(q)`` δ (m, > 0 in contact), ``normal(q)`` the unit vector along
    which the contact pushes body j (−n on body i), ``point(q)`` the contact
    point P (m); ``q`` is the tuple of per-body coordinates.
    """

    body_i: eqx.AbstractVar[Optional[int]]
    body_j: eqx.AbstractVar[Optional[int]]

    @abc.abstractmethod
    def penetration(self, q):
        """δ(q) (m)."""

    @abc.abstractmethod
    def normal(self, q):
        """Unit normal n(q), on body j."""

    @abc.abstractmethod
    def point(self, q):
        """Contact point P(q) (m)."""


class CirclePlane(Geometry):
    """Circle (2-D) or sphere (3-D) of radius R on body j against a line or plane on body i.

    The plane passes through the body-fixed point ``plane_point`` with the
    body-fixed outward normal ``plane_normal`` (normalised here); the centre C
    is the body-fixed point ``centre`` (default: the centre of mass). δ = R −
    (C − P₀) · n, the sphere–plane gap of [Gismeros Moreno 2022], eq. (3.2); P = C − (R −
    δ/2) n, the middle of the overlap. Vectors have 2 components for planar
    bodies and 3 for spatial ones. The plane is unbounded: the scene must
    keep contacts within the real surface (or use ``SphereFace``).
    ``body_i=None`` makes it a ground plane given in global coordinates.
    ``SpherePlane`` is the same class.
    """

    body_i: Optional[int] = eqx.field(static=True)
    plane_point: jnp.ndarray
    plane_normal: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    centre: jnp.ndarray
    radius: jnp.ndarray

    def __init__(self, body_i, plane_point, plane_normal, body_j, centre=None, radius=0.0):
        self.body_i = body_i
        self.plane_point = jnp.asarray(plane_point, dtype=float)
        self.plane_normal = unit_vector("plane_normal", plane_normal)
        self.body_j = body_j
        self.centre = jnp.zeros_like(self.plane_normal) if centre is None else jnp.asarray(centre, dtype=float)
        self.radius = check_range("radius", radius, 0.0)
        _same_dimension(plane_point=self.plane_point, plane_normal=self.plane_normal, centre=self.centre)

    def normal(self, q):
        return global_direction(q, self.body_i, self.plane_normal)

    def penetration(self, q):
        offset = global_point(q, self.body_j, self.centre) - global_point(q, self.body_i, self.plane_point)
        return self.radius - offset @ self.normal(q)

    def point(self, q):
        return global_point(q, self.body_j, self.centre) - (self.radius - self.penetration(q) / 2) * self.normal(q)


SpherePlane = CirclePlane


def _same_dimension(**vectors):
    shapes = {name: jnp.shape(value) for name, value in vectors.items()}
    if len(set(shapes.values())) > 1 or list(shapes.values())[0] not in ((2,), (3,)):
        raise ValueError(f"geometry vectors must all have 2 (planar) or 3 (spatial) components; got {shapes}")


def PointPlane(body_i, plane_point, plane_normal, body_j, point=None):
    """A body-fixed point of body j against a line or plane on body i: ``CirclePlane`` with R = 0."""
    return CirclePlane(body_i, plane_point, plane_normal, body_j, point, 0.0)


class CircleCircle(Geometry):
    """Circles (2-D) or spheres (3-D) of radii R_i, R_j centred at body-fixed points of bodies i and j.

    δ = R_i + R_j − |C_j − C_i| ([Gismeros Moreno 2022], eq. (3.1)), n = (C_j − C_i)/|C_j − C_i|;
    P = C_i + (R_i − δ/2) n. The centres must not coincide. ``SphereSphere`` is
    the same class.
    """

    body_i: Optional[int] = eqx.field(static=True)
    centre_i: jnp.ndarray
    radius_i: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    centre_j: jnp.ndarray
    radius_j: jnp.ndarray

    def __init__(self, body_i, centre_i, radius_i, body_j, centre_j, radius_j):
        self.body_i, self.body_j = body_i, body_j
        self.centre_i = jnp.asarray(centre_i, dtype=float)
        self.centre_j = jnp.asarray(centre_j, dtype=float)
        self.radius_i = check_range("radius_i", radius_i, 0.0)
        self.radius_j = check_range("radius_j", radius_j, 0.0)
        _same_dimension(centre_i=self.centre_i, centre_j=self.centre_j)

    def _axis(self, q):
        return global_point(q, self.body_j, self.centre_j) - global_point(q, self.body_i, self.centre_i)

    def normal(self, q):
        axis = self._axis(q)
        return axis / safe_norm(axis)

    def penetration(self, q):
        return self.radius_i + self.radius_j - safe_norm(self._axis(q))

    def point(self, q):
        centre = global_point(q, self.body_i, self.centre_i)
        return centre + (self.radius_i - self.penetration(q) / 2) * self.normal(q)


SphereSphere = CircleCircle


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

    body_i: Optional[int] = eqx.field(static=True)
    face_centre: jnp.ndarray
    face_normal: jnp.ndarray
    face_axis: jnp.ndarray
    half_lengths: jnp.ndarray
    body_j: Optional[int] = eqx.field(static=True)
    centre: jnp.ndarray
    radius: jnp.ndarray

    def __init__(self, body_i, face_centre, face_normal, face_axis, half_lengths, body_j, centre=None, radius=0.0):
        self.body_i, self.body_j = body_i, body_j
        self.face_centre = jnp.asarray(face_centre, dtype=float)
        self.face_normal = unit_vector("face_normal", face_normal)
        axis = jnp.asarray(face_axis, dtype=float)
        self.face_axis = unit_vector("face_axis (in the face plane)", axis - (axis @ self.face_normal) * self.face_normal)
        self.half_lengths = check_range("half_lengths", half_lengths, 0.0, low_open=True)
        if self.half_lengths.shape != (2,):
            raise ValueError(f"half_lengths must be (a, b); got shape {self.half_lengths.shape}")
        self.centre = jnp.zeros(3) if centre is None else jnp.asarray(centre, dtype=float)
        self.radius = check_range("radius", radius, 0.0)
        _same_dimension(
            face_centre=self.face_centre, face_normal=self.face_normal, face_axis=self.face_axis, centre=self.centre
        )
        if self.centre.shape != (3,):
            raise ValueError("SphereFace is spatial: its vectors must have 3 components")

    def normal(self, q):
        return global_direction(q, self.body_i, self.face_normal)

    def _offset(self, q):
        return global_point(q, self.body_j, self.centre) - global_point(q, self.body_i, self.face_centre)

    def plane_penetration(self, q):
        """δ_p = R − (C − F) · n, the gap to the unbounded face plane (m)."""
        return self.radius - self._offset(q) @ self.normal(q)

    def penetration(self, q):
        offset = self._offset(q)
        u = global_direction(q, self.body_i, self.face_axis)
        w = jnp.cross(self.normal(q), u)
        margin = self.half_lengths - jnp.abs(jnp.stack([offset @ u, offset @ w]))
        return jnp.minimum(self.plane_penetration(q), jnp.min(margin))

    def point(self, q):
        return global_point(q, self.body_j, self.centre) - (self.radius - self.plane_penetration(q) / 2) * self.normal(q)


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

    ``nose_height``: ``None`` (Gismeros Moreno et al.'s model) for vertical faces, which meet
    the ball at the height of its centre: the distance is measured in the
    horizontal plane and n is horizontal. A height h (m above the cloth) for a
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

    body_i: Optional[int] = eqx.field(static=True)
    vertices: jnp.ndarray
    nose_height: Optional[jnp.ndarray]
    body_j: Optional[int] = eqx.field(static=True)
    centre: jnp.ndarray
    radius: jnp.ndarray

    def __init__(self, vertices, body_j, radius, nose_height=None, centre=None):
        self.body_i, self.body_j = None, body_j
        self.vertices = jnp.asarray(vertices, dtype=float)
        if self.vertices.ndim != 2 or self.vertices.shape[0] < 2 or self.vertices.shape[1] != 2:
            raise ValueError(f"vertices must have shape (k + 1, 2) with k >= 1 segments; got {self.vertices.shape}")
        check_positive("length of every cushion segment", jnp.linalg.norm(jnp.diff(self.vertices, axis=0), axis=1))
        self.radius = check_positive("radius", radius)
        self.nose_height = None if nose_height is None else check_positive("nose_height", nose_height)
        self.centre = jnp.zeros(3) if centre is None else jnp.asarray(centre, dtype=float)
        if self.centre.shape != (3,):
            raise ValueError(f"Cushion is spatial: centre must have 3 components; got shape {self.centre.shape}")

    def _offset(self, q):
        """C − P* (3-vector) from the nearest point of the nose to the sphere's centre."""
        centre = global_point(q, self.body_j, self.centre)
        start, end = self.vertices[:-1], self.vertices[1:]
        along = end - start
        fraction = jnp.clip(jnp.sum((centre[:2] - start) * along, axis=1) / jnp.sum(along**2, axis=1), 0.0, 1.0)
        horizontal = centre[:2] - (start + fraction[:, None] * along)
        nearest = horizontal[jnp.argmin(jnp.sum(horizontal**2, axis=1))]
        # the nose is level, so the nearest segment in 3-D is the nearest in the plane
        vertical = 0.0 if self.nose_height is None else centre[2] - self.nose_height
        return jnp.concatenate([nearest, jnp.reshape(vertical, (1,))])

    def normal(self, q):
        offset = self._offset(q)
        return offset / safe_norm(offset)

    def penetration(self, q):
        return self.radius - safe_norm(self._offset(q))

    def point(self, q):
        return global_point(q, self.body_j, self.centre) - (self.radius - self.penetration(q) / 2) * self.normal(q)


# --- impact-dependent laws ---------------------------------------------------------


class ImpactLaw(eqx.Module):
    """A normal law whose parameters depend on each impact.

    ``at_impact(m, v)`` returns the ``NormalForceLaw`` for the effective mass m
    (kg) and approach speed v = ⁻δ̇ > 0 (m/s) at contact onset.
    """

    @abc.abstractmethod
    def at_impact(self, effective_mass, impact_velocity):
        """The law for this impact."""


class OptimalDamping(ImpactLaw):
    """Eq. (50) of [Poursina 2020]: f = c δ̇ + k δ^n with c = c_opt(m, v, k, n, e) (eq. (23)).

    ``method`` is passed to ``diffimpact.optimal_damping``.
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray
    method: str = eqx.field(static=True)

    def __init__(self, stiffness, exponent, restitution, method="exact"):
        _check_method(method)
        # the ranges of ``optimal_damping`` for this method, checked now rather than at the first impact
        exponent, self.restitution = _check_exponent_restitution(exponent, restitution, method)
        self.stiffness, self.exponent = check_positive("stiffness", stiffness), exponent
        self.method = method

    def at_impact(self, effective_mass, impact_velocity):
        damping = optimal_damping(
            effective_mass, impact_velocity, self.stiffness, self.exponent, self.restitution, self.method
        )
        return HertzLinearDamper(self.stiffness, self.exponent, damping)


#: Damping factors μ(k, e, v) of the Hunt–Crossley family for ``HuntCrossleyImpact``.
HUNT_CROSSLEY_FACTORS = {
    "hunt_crossley": damping_factors.hunt_crossley,  # [Poursina 2020] eq. (13)
    "lankarani_nikravesh": damping_factors.lankarani_nikravesh,  # eq. (14); [Gismeros Moreno 2022] eq. (3.7)
    "hu_guo": damping_factors.hu_guo,  # eq. (15)
    "flores": damping_factors.flores,  # eq. (16)
}


class HuntCrossleyImpact(ImpactLaw):
    """Hunt–Crossley, eq. (9) of [Poursina 2020], f = (μ δ̇ + k) δⁿ, with μ = factor(k, e, ⁻δ̇) set at each impact.

    ``factor`` names one of ``HUNT_CROSSLEY_FACTORS``: "flores" (eq. (16), the
    default), "lankarani_nikravesh" (eq. (14); [Gismeros Moreno 2022] eq. (3.7), its
    ball–ball and ball–cushion law with n = 3/2), "hunt_crossley", "hu_guo".
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    restitution: jnp.ndarray
    factor: str = eqx.field(static=True)

    def __init__(self, stiffness, exponent, restitution, factor="flores"):
        if factor not in HUNT_CROSSLEY_FACTORS:
            raise ValueError(f"factor must be one of {sorted(HUNT_CROSSLEY_FACTORS)}; got {factor!r}")
        self.stiffness, self.exponent = jnp.asarray(stiffness, dtype=float), jnp.asarray(exponent, dtype=float)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
        self.factor = factor

    def at_impact(self, effective_mass, impact_velocity):
        del effective_mass
        hysteresis = HUNT_CROSSLEY_FACTORS[self.factor](self.stiffness, self.restitution, impact_velocity)
        return HuntCrossley(self.stiffness, self.exponent, hysteresis)


class RigidImpact(eqx.Module):
    """An instantaneous impact resolved by ``model`` (an ``impact`` function of ``diffimpact.impulse``) at onset.

    ``RigidImpact(diffimpact.impulse.routh.impact, friction=0.15, restitution=0.9)``:
    at each onset ``simulate`` builds the contact's Delassus operator W and
    velocity u⁻ in its frame (normal first, ``impact_velocity``), calls
    ``model(W, u⁻, **parameters)`` and applies the impulse. The parameters are
    differentiable leaves. The model must suit the contact's dimension (Routh:
    planar; maximum dissipation: spatial; Newton, Poisson: either).
    """

    model: object = eqx.field(static=True)
    parameters: dict

    def __init__(self, model, **parameters):
        if not callable(model):
            raise TypeError(f"model must be an impact function of diffimpact.impulse; got {type(model).__name__}")
        self.model = model
        self.parameters = {name: jnp.asarray(value, dtype=float) for name, value in parameters.items()}


class NewtonRestitution(RigidImpact):
    """Newton's frictionless impact, ⁺δ̇ = −e ⁻δ̇ (``RigidImpact`` of ``diffimpact.impulse.newton``)."""

    def __init__(self, restitution):
        super().__init__(newton.impact, restitution=check_range("restitution", restitution, 0.0, 1.0))


# --- the force element -------------------------------------------------------------


class Contact(Force):
    """Compliant (or instantaneous) contact between two bodies; see the module docstring.

    Parameters
    ----------
    geometry : a ``Geometry`` (``CirclePlane``/``SpherePlane``, ``PointPlane``,
        ``CircleCircle``/``SphereSphere``, ``SphereFace``).
    law : ``NormalForceLaw``, ``ImpactLaw`` or ``RigidImpact`` (e.g. ``NewtonRestitution``).
    friction : optional ``FrictionLaw`` (not with a ``RigidImpact``, whose model has its own friction).

    Attributes
    ----------
    active_law : the ``NormalForceLaw`` in effect. For an ``ImpactLaw`` it is
        the law of unit mass and speed until ``simulate`` resolves it at the
        first onset (out of contact no law acts); ``None`` for a
        ``RigidImpact``.
    """

    geometry: Geometry
    law: eqx.Module
    friction: Optional[FrictionLaw]
    active_law: Optional[NormalForceLaw]
    # 1.0 while ``simulate`` has the contact closed (between its onset and
    # separation events), 0.0 while open; −1.0 outside ``simulate``.
    engaged: jnp.ndarray

    def __init__(self, geometry, law, friction=None):
        if not isinstance(geometry, Geometry):
            raise TypeError(f"geometry must be a Geometry; got {type(geometry).__name__}")
        if isinstance(law, NormalForceLaw):
            self.active_law = law
        elif isinstance(law, ImpactLaw):
            self.active_law = law.at_impact(1.0, 1.0)
        elif isinstance(law, RigidImpact):
            if friction is not None:
                raise ValueError("a RigidImpact takes friction as a parameter of its model; pass friction=None")
            self.active_law = None
        else:
            raise TypeError(
                f"law must be a NormalForceLaw, ImpactLaw or RigidImpact; got {type(law).__name__}"
            )
        if friction is not None and not isinstance(friction, FrictionLaw):
            raise TypeError(f"friction must be a FrictionLaw or None; got {type(friction).__name__}")
        self.geometry, self.law, self.friction = geometry, law, friction
        self.engaged = jnp.asarray(-1.0)

    @property
    def body_indices(self):
        return (self.geometry.body_i, self.geometry.body_j)

    @property
    def impulsive(self):
        """Whether the contact is an instantaneous (rigid) impact."""
        return isinstance(self.law, RigidImpact)

    def penetration(self, q):
        """δ(q) (m)."""
        return self.geometry.penetration(q)

    def penetration_rate(self, q, v):
        """δ and δ̇ = ∂δ/∂q · v."""
        return jax.jvp(self.geometry.penetration, (q,), (v,))

    def normal_force(self, q, v):
        """f_N (N).

        Inside ``simulate`` the events decide: between onset and separation the
        law's ``force`` acts as it is (as in ``diffimpact.central_impact``), so
        the vector field is smooth within each segment; otherwise zero. Outside
        ``simulate`` the clipped law: ≥ 0, zero for δ ≤ 0.
        """
        if self.impulsive:
            return jnp.asarray(0.0)
        penetration, rate = self.penetration_rate(q, v)
        by_event = jnp.where(self.engaged > 0.5, self.active_law.force(penetration, rate), 0.0)
        return jnp.where(self.engaged < 0, self.active_law(penetration, rate), by_event)

    def separation_function(self, q, v):
        """Positive in contact, crossing zero downwards at separation.

        f(δ, δ̇)/k (units m^n) for laws that separate at zero force (eq. (20)),
        else δ (m). ``simulate`` locates its sign change in time (bisection),
        so only the sign matters.
        """
        penetration, rate = self.penetration_rate(q, v)
        law = self.active_law
        if law is not None and law.separates_at_zero_force:
            return law.force(penetration, rate) / law.stiffness
        return penetration

    def _relative_point(self, q, at):
        """p_j(q) − p_i(q) for the material points of bodies j and i at P(``at``)."""
        contact_point = self.geometry.point(at)
        i, j = self.geometry.body_i, self.geometry.body_j
        return global_point(q, j, _local(at, j, contact_point)) - global_point(q, i, _local(at, i, contact_point))

    def __call__(self, bodies, q, v, t):
        del bodies, t
        if self.impulsive:
            return tuple(jnp.zeros_like(qi) for qi in q)
        normal = self.geometry.normal(q)
        normal_force = self.normal_force(q, v)
        force = normal_force * normal
        relative = lambda x: self._relative_point(x, q)  # noqa: E731
        if self.friction is not None:
            velocity = jax.jvp(relative, (q,), (v,))[1]
            force = force + self.friction(normal_force, velocity - (velocity @ normal) * normal)
        return jax.vjp(relative, q)[1](force)[0]

    def potential_energy(self, bodies, q):
        """Elastic energy k δ^(n+1)/(n+1) stored in the contact (J), δ > 0; zero when impulsive."""
        del bodies
        if self.impulsive:
            return jnp.asarray(0.0)
        law = self.active_law
        return law.stiffness * positive_power(self.penetration(q), law.exponent + 1.0) / (law.exponent + 1.0)

    def at_onset(self, effective_mass, impact_velocity):
        """The contact with its ``ImpactLaw`` resolved for this impact (itself otherwise)."""
        if not isinstance(self.law, ImpactLaw):
            return self
        return eqx.tree_at(lambda c: c.active_law, self, self.law.at_impact(effective_mass, impact_velocity))


# --- impact quantities of a contact in a constrained model --------------------------


def normal_response(model, contact, q, t):
    """Gap gradient w = ∂δ/∂q, M_c⁻¹ w and the effective mass m = 1/(wᵀ M_c⁻¹ w).

    M_c⁻¹ w is the velocity change per unit generalised impulse w under the
    constraints: ``[[M, Dᵀ], [D, 0]] [Δv; λ] = [w; 0]`` (the impulsive form of eq.
    (2.20) of [Gismeros Moreno 2022], with Δ(D v) = 0). m is the effective mass of eq. (3)
    of [Poursina 2020] for the contact normal of the constrained system.
    """
    w = jax.grad(lambda x: contact.penetration(model.split(x)))(q)
    response = _saddle_point_solve(
        model.mass_matrix(q), model.jacobian(q, t), w, jnp.zeros(len(model.constraint(q, t)))
    )
    return w, response, 1.0 / (w @ response)


def resolve_at_onset(model, contact, q, v, t):
    """``contact`` with its law set for an impact at (q, v, t) (see ``Contact.at_onset``).

    m from ``normal_response`` and ⁻δ̇ = w · v; a non-approaching onset
    (⁻δ̇ ≤ 0, grazing) uses 1 m/s. A contact without an ``ImpactLaw`` is returned as it is.
    """
    if not isinstance(contact.law, ImpactLaw):
        return contact
    w, _, mass = normal_response(model, contact, q, t)
    rate = w @ v
    return contact.at_onset(mass, jnp.where(rate > 0, rate, 1.0))


def contact_frame(contact, q):
    """Q (d × d): the contact normal n (the direction of the force on the second body) and tangents, columns."""
    n = contact.geometry.normal(q)
    if n.shape[0] == 2:
        return jnp.stack([n, jnp.stack([-n[1], n[0]])], axis=1)
    helper = jnp.eye(3)[jnp.argmin(jnp.abs(n))]  # the axis least aligned with n
    t = jnp.cross(n, helper)
    t = t / jnp.linalg.norm(t)
    return jnp.stack([n, t, jnp.cross(n, t)], axis=1)


def impact_velocity(model, contact, q, v, t):
    """Velocities after the ``RigidImpact`` of ``contact`` at (q, v, t), by impulse–momentum under the constraints.

    J = Qᵀ ∂r/∂q maps v to the contact velocity u = J v in the frame Q of
    ``contact_frame`` (u_n = n · ṙ < 0 approaching; r = p_j − p_i the material
    points at the contact point). With M_c⁻¹ the constrained inverse of
    ``normal_response``, W = J M_c⁻¹ Jᵀ; the model's impulse λ then changes
    v by M_c⁻¹ Jᵀ λ, keeping the constraint velocities. Models give no impulse
    to a contact that is not approaching.
    """
    relative = lambda x: contact._relative_point(model.split(x), model.split(q))  # noqa: E731
    jacobian = contact_frame(contact, model.split(q)).T @ jax.jacfwd(relative)(q)
    mass, constraint = model.mass_matrix(q), model.jacobian(q, t)
    zero = jnp.zeros(len(model.constraint(q, t)))
    responses = jax.vmap(lambda row: _saddle_point_solve(mass, constraint, row, zero))(jacobian)
    result = contact.law.model(jacobian @ responses.T, jacobian @ v, **contact.law.parameters)
    return v + responses.T @ result.impulse
