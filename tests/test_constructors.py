"""Every public constructor refuses a bad value of each of its numeric fields under that field's own name.

A property test: hypothesis draws a constructor, one of its fields and a bad value for it (not finite, out of the
field's range, of the wrong shape or the wrong type) and the constructor must raise ``ValueError`` or ``TypeError``
whose message names the field, while the valid arguments beside it build the object.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import diffimpact.contact as contact
import diffimpact.impulse as impulse
import diffimpact.multibody as mb
from diffimpact.scenes import billiard

# the kinds of field: a scalar with its lower bound (None: any finite number; a negative value is out of range
# where the bound is >= 0), or a vector of a given length (any finite components); a law's fields are numbers or
# arrays that broadcast (a family of contacts stacks its members' laws), so no shape is wrong for them
ANY, NON_NEGATIVE, POSITIVE = ("scalar", None), ("scalar", 0.0), ("scalar", 0.0)
LAW_NON_NEGATIVE, LAW_POSITIVE = ("array", 0.0), ("array", 0.0)


def vector(*lengths):
    """A vector of one of ``lengths`` components (2 or 3: planar or spatial)."""
    return ("vector", lengths)


#: (constructor, valid keyword arguments, {field: kind}) for each public constructor with numeric fields.
CONSTRUCTORS = {
    "KelvinVoigt": (contact.KelvinVoigt, dict(stiffness=1e6, damping=10.0),
                    dict(stiffness=LAW_POSITIVE, damping=LAW_NON_NEGATIVE)),
    "Hertz": (contact.Hertz, dict(stiffness=1e6, exponent=1.5),
              dict(stiffness=LAW_POSITIVE, exponent=LAW_POSITIVE)),
    "HertzLinearDamper": (contact.HertzLinearDamper, dict(stiffness=1e6, exponent=1.5, damping=10.0),
                          dict(stiffness=LAW_POSITIVE, exponent=LAW_POSITIVE, damping=LAW_NON_NEGATIVE)),
    "HuntCrossley": (contact.HuntCrossley, dict(stiffness=1e6, exponent=1.5, hysteresis=0.1),
                     dict(stiffness=LAW_POSITIVE, exponent=LAW_POSITIVE, hysteresis=LAW_NON_NEGATIVE)),
    "Coulomb": (contact.Coulomb, dict(coefficient=0.2, regularisation_speed=1e-4),
                dict(coefficient=LAW_NON_NEGATIVE, regularisation_speed=LAW_POSITIVE)),
    "Threlfall": (contact.Threlfall, dict(coefficient=0.2, tolerance_speed=0.01),
                  dict(coefficient=LAW_NON_NEGATIVE, tolerance_speed=LAW_POSITIVE)),
    "Ambrosio": (contact.Ambrosio, dict(coefficient=0.2, lower_tolerance_speed=1e-4, upper_tolerance_speed=1e-3),
                 dict(coefficient=LAW_NON_NEGATIVE, lower_tolerance_speed=LAW_POSITIVE,
                      upper_tolerance_speed=LAW_POSITIVE)),
    "Alciatore": (contact.Alciatore, dict(offset=0.01, amplitude=0.1, decay=1.0, regularisation_speed=3e-3),
                  dict(offset=LAW_NON_NEGATIVE, amplitude=LAW_NON_NEGATIVE, decay=LAW_NON_NEGATIVE,
                       regularisation_speed=LAW_POSITIVE)),
    "Stribeck": (contact.Stribeck, dict(static_coefficient=0.3, dynamic_coefficient=0.2, viscous_coefficient=0.0,
                                        transition_speed=0.01, regularisation_speed=1e-4),
                 dict(static_coefficient=LAW_NON_NEGATIVE, dynamic_coefficient=LAW_NON_NEGATIVE,
                      viscous_coefficient=LAW_NON_NEGATIVE, transition_speed=LAW_POSITIVE,
                      regularisation_speed=LAW_POSITIVE)),
    "PlanarBody": (mb.PlanarBody, dict(mass=1.0, inertia=0.1), dict(mass=POSITIVE, inertia=POSITIVE)),
    "SpatialBody": (mb.SpatialBody, dict(mass=1.0, inertia=[0.1, 0.1, 0.1]),
                    dict(mass=POSITIVE, inertia=vector(3))),
    "Gravity": (mb.Gravity, dict(g=(0.0, -9.81)), dict(g=vector(2, 3))),
    "SpringDamper": (mb.SpringDamper, dict(body_i=None, point_i=(0.0, 0.0), body_j=0, point_j=(0.0, 0.0),
                                           stiffness=10.0, damping=1.0, free_length=1.0),
                     dict(point_i=vector(2, 3), point_j=vector(2, 3), stiffness=NON_NEGATIVE, damping=NON_NEGATIVE,
                          free_length=NON_NEGATIVE)),
    "JointDamping": (mb.JointDamping, dict(body_i=None, body_j=0, coefficient=1.0), dict(coefficient=NON_NEGATIVE)),
    "AppliedTorque": (mb.AppliedTorque, dict(body=0, amplitude=1.0, frequency=2.0),
                      dict(amplitude=ANY, frequency=NON_NEGATIVE)),
    "RevolutePlanar": (mb.RevolutePlanar, dict(body_i=None, point_i=(0.0, 0.0), body_j=0, point_j=(0.0, 0.5)),
                       dict(point_i=vector(2), point_j=vector(2))),
    "Ground": (mb.Ground, dict(body=0, pose=(0.0, 0.0, 0.0)), dict(pose=vector(3, 7))),
    "Spherical": (mb.Spherical, dict(body_i=None, point_i=(0.0, 0.0, 0.0), body_j=0, point_j=(0.0, 0.0, 0.5)),
                  dict(point_i=vector(3), point_j=vector(3))),
    "RevoluteSpatial": (mb.RevoluteSpatial, dict(body_i=None, point_i=(0.0, 0.0, 0.0), axis_i=(0.0, 0.0, 1.0),
                                                 body_j=0, point_j=(0.0, 0.0, 0.5), axis_j=(0.0, 0.0, 1.0)),
                        dict(point_i=vector(3), axis_i=vector(3), point_j=vector(3), axis_j=vector(3))),
    "SphereFace": (mb.SphereFace, dict(body_i=None, face_centre=(0.0, 0.0, 0.0), face_normal=(0.0, 0.0, 1.0),
                                       face_axis=(1.0, 0.0, 0.0), half_lengths=(0.5, 0.5), body_j=0, radius=0.1),
                   dict(face_centre=vector(3), face_normal=vector(3), face_axis=vector(3), radius=NON_NEGATIVE)),
    "Cushion": (mb.Cushion, dict(vertices=[(1.0, -0.5), (1.0, 0.5)], body_j=0, radius=0.03, nose_height=0.04),
                dict(radius=POSITIVE, nose_height=POSITIVE)),
    "CircleCircle": (mb.CircleCircle, dict(body_i=0, centre_i=(0.0, 0.0), radius_i=0.1, body_j=1,
                                           centre_j=(0.0, 0.0), radius_j=0.1),
                     dict(centre_i=vector(2), radius_i=NON_NEGATIVE, centre_j=vector(2), radius_j=NON_NEGATIVE)),
    "CirclePlane": (mb.CirclePlane, dict(body_i=None, plane_point=(0.0, 0.0), plane_normal=(0.0, 1.0), body_j=0,
                                         radius=0.1),
                    dict(plane_point=vector(2), plane_normal=vector(2), radius=NON_NEGATIVE)),
    "Newton": (impulse.Newton, dict(restitution=0.5, friction=0.2),
               dict(restitution=LAW_NON_NEGATIVE, friction=LAW_NON_NEGATIVE)),
    "Poisson": (impulse.Poisson, dict(restitution=0.5, friction=0.2),
                dict(restitution=LAW_NON_NEGATIVE, friction=LAW_NON_NEGATIVE)),
    "Routh": (impulse.Routh, dict(friction=0.2, restitution=0.5),
              dict(friction=LAW_NON_NEGATIVE, restitution=LAW_NON_NEGATIVE)),
    "MaxDissipation": (impulse.MaxDissipation, dict(friction=0.2), dict(friction=LAW_NON_NEGATIVE)),
    "MaxDissipationGaussSeidel": (impulse.MaxDissipationGaussSeidel, dict(friction=0.2),
                                  dict(friction=LAW_NON_NEGATIVE)),
    "Plus": (impulse.Plus, dict(restitution=0.5, friction=0.2),
             dict(restitution=LAW_NON_NEGATIVE, friction=LAW_NON_NEGATIVE, capture_velocity=LAW_NON_NEGATIVE,
                  plastic_velocity=LAW_NON_NEGATIVE, transition_velocity=LAW_POSITIVE,
                  max_direction_change=LAW_POSITIVE, min_step=LAW_POSITIVE)),
    "RigidImpact": (mb.RigidImpact, dict(model=impulse.Newton(0.5)), dict(proximity=NON_NEGATIVE)),
    "OptimalDamping": (mb.OptimalDamping, dict(stiffness=1e6, exponent=1.5, restitution=0.5),
                       dict(stiffness=LAW_POSITIVE, exponent=LAW_POSITIVE, restitution=LAW_POSITIVE)),
    "HuntCrossleyImpact": (mb.HuntCrossleyImpact, dict(stiffness=1e6, exponent=1.5, restitution=0.5),
                           dict(stiffness=LAW_POSITIVE, exponent=LAW_POSITIVE, restitution=LAW_POSITIVE)),
    "Baumgarte": (mb.Baumgarte, dict(alpha=5.0, beta=5.0), dict(alpha=NON_NEGATIVE, beta=NON_NEGATIVE)),
    "AugmentedLagrangian": (mb.AugmentedLagrangian, dict(), dict(penalty=POSITIVE, damping_ratio=NON_NEGATIVE,
                                                               natural_frequency=POSITIVE, tolerance=POSITIVE)),
    "Parameters": (billiard.Parameters, dict(), {
        name: ANY if low == -np.inf else NON_NEGATIVE if low >= 0 else ANY
        for name, (low, _, _, _) in billiard.PARAMETER_RANGES.items()}),
}

NAMES = sorted(CONSTRUCTORS)


def bad_values(kind):
    """Values no field of ``kind`` accepts."""
    shape, bound = kind
    values = [np.nan, np.inf, -np.inf, "1.0", 1 + 2j]
    if shape in ("scalar", "array"):
        values += [np.ones(2), [[1.0]]] if shape == "scalar" else [[1.0, np.nan]]
        if bound is not None:
            values.append(-1.0)
    else:
        values += [np.ones(max(bound) + 1), np.full(bound[0], np.nan), 0.5]
    return values


@pytest.mark.parametrize("name", NAMES)
def test_the_valid_arguments_build(name):
    constructor, valid, _ = CONSTRUCTORS[name]
    constructor(**valid)


@given(data=st.data())
def test_each_field_refuses_a_bad_value_under_its_own_name(data):
    name = data.draw(st.sampled_from(NAMES), label="constructor")
    constructor, valid, fields = CONSTRUCTORS[name]
    field = data.draw(st.sampled_from(sorted(fields)), label="field")
    value = data.draw(st.sampled_from(bad_values(fields[field])), label="value")
    with pytest.raises((ValueError, TypeError), match=field):
        constructor(**{**valid, field: value})
