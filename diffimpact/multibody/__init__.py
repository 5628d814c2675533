"""Planar and spatial multibody dynamics in absolute coordinates ([Gismeros Moreno 2022], section 2).

Bodies are ``PlanarBody`` (x, y, φ) or ``SpatialBody`` (x, y, z and the Euler
parameters e0..e3, eq. (2.8)); a model is one or the other. Build a static
``Model`` from bodies, constraints and forces, give an initial
``State`` and integrate with ``simulate`` under one of the ``Formulation``s.
``Contact`` forces (``diffimpact.multibody.contact``) add compliant or
instantaneous impacts, resolved by contact events in ``simulate``.

The modules, in the order a run goes through them: ``bodies``,
``constraints``, ``forces``, ``geometry`` (the contacts' gaps),
``impact_laws`` (laws set at each onset, rigid impacts) and ``contact`` (the
contact families), which make up a ``model``; ``formulations`` (the
accelerations of the constrained system); ``simulate`` (the entry point:
its options ``AdaptiveSteps`` or ``FixedSteps``, ``ContactEvents``,
``ReverseMode`` or ``ForwardMode``), ``integrate`` (the engine: segments
of diffrax solves between contact events, the events, the step control) and
``trajectory`` (what a run returns).
"""

from diffimpact.multibody.bodies import (
    Body,
    PlanarBody,
    SpatialBody,
    angular_velocity,
    orientation,
    point_position,
)
from diffimpact.multibody.contact import (
    Contact,
    contact_frame,
    impact_problem,
    impact_velocity,
    normal_response,
    resolve_at_onset,
)
from diffimpact.multibody.geometry import (
    CircleCircle,
    CirclePlane,
    Cushion,
    Geometry,
    HoledPlane,
    PointPlane,
    SphereFace,
    SpherePlane,
    SphereSphere,
)
from diffimpact.multibody.constraints import (
    Constraint,
    Driver,
    EulerParameters,
    Ground,
    RevolutePlanar,
    RevoluteSpatial,
    Spherical,
)
from diffimpact.multibody.forces import AppliedTorque, Force, Gravity, JointDamping, SpringDamper
from diffimpact.multibody.formulations import (
    AugmentedLagrangian,
    Baumgarte,
    DirectCorrection,
    Formulation,
    LagrangeMultipliers,
    ProjectedSolver,
    project,
)
from diffimpact.multibody.impact_laws import (
    HuntCrossleyImpact,
    ImpactLaw,
    OptimalDamping,
    RigidImpact,
)
from diffimpact.multibody.model import Model, State
from diffimpact.multibody.integrate import IMEX_SOLVERS, AdaptiveSteps, ContactEvents, Derivatives, FixedSteps
from diffimpact.multibody.integrate import ForwardMode, ReverseMode, StepSizes
from diffimpact.multibody.simulate import check_initial_state, project_initial_state, simulate
from diffimpact.multibody.trajectory import ContactHistory, Events, Trajectory
from diffimpact.rotations import euler_parameters, euler_rates, euler_rotation, euler_torque

__all__ = [
    "CircleCircle", "CirclePlane", "Contact", "Cushion", "Events", "Geometry", "HoledPlane", "HuntCrossleyImpact",
    "ImpactLaw", "OptimalDamping", "PointPlane", "RigidImpact", "contact_frame",
    "impact_problem", "impact_velocity", "normal_response", "resolve_at_onset",
    "AppliedTorque", "AugmentedLagrangian", "Baumgarte", "Body", "Constraint",
    "DirectCorrection", "Driver", "Force", "Formulation", "Gravity", "Ground",
    "JointDamping", "LagrangeMultipliers", "Model", "PlanarBody", "ProjectedSolver",
    "RevolutePlanar", "SpringDamper", "State", "Trajectory", "ContactHistory", "IMEX_SOLVERS", "check_initial_state",
    "point_position", "project", "project_initial_state", "simulate",
    "EulerParameters", "RevoluteSpatial", "SpatialBody", "SphereFace", "SpherePlane",
    "SphereSphere", "Spherical", "angular_velocity", "euler_parameters", "euler_rates",
    "euler_rotation", "euler_torque", "orientation",
    "AdaptiveSteps", "ContactEvents", "Derivatives", "FixedSteps", "ForwardMode", "ReverseMode", "StepSizes",
]
