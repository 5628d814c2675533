"""Rigid spheres among static planes by the impulse-velocity time stepping of [Preclik 2017] §3.1.

T. Preclik, S. Eibl, U. Rüde, "The maximum dissipation principle in
rigid-body dynamics with purely inelastic impacts" (arXiv:1706.00221, 2017),
§2 (the continuous system) and §3.1 (multi-contact problems). Its §3.1
display equations are unnumbered; they are quoted here in full.

**State** (§2): per sphere i its centre x_i, the unit quaternion
φ_i = (q_w, q_x, q_y, q_z) of its body frame, its linear velocity v_i and its
angular velocity ω_i (inertial frame). Mass m_i, principal moments I_{i,0}
(diagonal in the body frame; 2/5 m r² for a solid sphere), I_ii(φ) =
R(φ) I_{i,0} R(φ)ᵀ. φ̇ = Q(φ) ω (§2, the 4×3 matrix Q_ii of Diebel) is
``rotations.euler_rates`` (½ Eᵀ ω, the same matrix row by row), R(φ) is
``rotations.euler_rotation``.

**Contacts** (§2, for spherical particles): every sphere–plane and every
sphere–sphere pair is a candidate contact j = (i₁, i₂), reactions acting
positively on i₁ and negatively on i₂, normal n_j pointing from i₂ to i₁,
contact point x̂_j ∈ argmin_{f_{S_i₂}(y) ≤ 0} f_{S_i₁}(y), n_j =
∇f_{S_i₂}(x̂_j), gap ξ_j = f_{S_i₁}(x̂_j). A sphere against a plane
{n·y = d} (solid below, i₂): x̂ = x − (n·x − d) n, ξ = n·x − d − r. Two
spheres a = i₁ < b = i₂: n = (x_a − x_b)/‖x_a − x_b‖, x̂ = x_b + r_b n (on
b's surface), ξ = ‖x_a − x_b‖ − r_a − r_b. The contact frame is (n, t, o),
normal first as everywhere in ``diffimpact.impulse``; the relative contact
velocity δv_j = v_{i₁} + ω_{i₁} × (x̂_j − x_{i₁}) − v_{i₂} − ω_{i₂} ×
(x̂_j − x_{i₂}) = W_jᵀ (v, ω) (§2) in that frame are the rows J_j of J = Wᵀ,
and the Delassus operator is A = J M⁻¹ Jᵀ, whose diagonal blocks are eq. (2)
(tests check this).

**One time step** (§3.1): positions implicit, velocities explicit,

    x' = x + δt v',
    φ' = (φ + δt Q(φ) ω') / ‖φ + δt Q(φ) ω'‖₂,
    (v', ω') = (v, ω) + M(φ)⁻¹ (W λ̃ + (f̃_ext, τ̃_ext − δt ω × I(φ) ω)),

with f̃_ext = δt m g (gravity, the only external force) and τ̃_ext = 0; λ̃
the contact reactions integrated over the step (impulses). Each contact
obeys the discrete non-penetration constraint

    ξ_j/δt + δv'_{j,n}(λ̃) ≥ 0  ⊥  λ̃_{j,n} ≥ 0,

where for a penetration (ξ_j < 0) the term ξ_j/δt is scaled by the
error-reduction parameter ε ∈ [0, 1): ε min(0, ξ_j/δt) + max(0, ξ_j/δt).
A positive gap keeps the reaction zero unless the contact would close within
the step; it then closes exactly at the step's end. Friction obeys the cone
‖λ̃_{j,to}‖ ≤ μ λ̃_{j,n} and, in place of Coulomb's "friction opposes the
slip", the maximum dissipation principle: each λ̃_j minimises the kinetic
energy E'_j at the end of the step given the other reactions, eq. (5). The
multi-contact problem is solved by non-linear block Gauss–Seidel
(``max_dissipation.block_gauss_seidel``), each block the analytic
single-contact solution of §3.2 (``max_dissipation.MaxDissipation``).

For spheres the lever arms x̂_j − x_i lie along n_j, so a normal impulse
does not turn a sphere and a tangential one does not change the normal
velocity: every diagonal block A_jj has A_nt = A_no = 0. The solver adds the
gap term to the normal velocity and minimises ½λᵀA_jjλ + λᵀ(u + (ξ/δt) e_n),
which differs from E'_j of eq. (5) by λ_n ξ/δt; on the plane of maximum
compression λ_n = (b_n − A_nt λ_t − A_no λ_o)/A_nn is then a constant, so the
two minimisers are the same (for bodies with A_nt ≠ 0 they would not be).
For homogeneous spheres (isotropic inertia) the tangential block is
a_t E₂ as well, and the maximally dissipative impulse of one block is also
the unique Coulomb one (the friction impulse opposes the post-step slip,
tests check this): the two friction laws of §4.3 differ only for anisotropic
inertia.

**Differentiability.** ``simulate`` runs under ``jit``, ``vmap``, ``grad``
and ``jacfwd`` (``lax.scan`` over steps, Gauss–Seidel with a fixed number of
sweeps). The map from parameters and initial state to the trajectory is only
piecewise smooth: derivatives jump where a contact becomes active (ξ/δt + u_n
changes sign), where a contact switches between sticking and sliding, at
ξ = 0 when ε ≠ 1, and they are the derivatives of the finite Gauss–Seidel
iteration rather than of its fixed point. Reverse mode stores every sweep of
every step; forward mode (``jax.jacfwd``) does not.

**Cost.** Every sphere pair is a candidate contact, m = n p + n(n − 1)/2 for
n spheres and p planes, and A is a dense 3m × 3m matrix: meant for tens of
spheres. A contact whose gap keeps it open is skipped by the sweep at the
cost of one block row product.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._math import normal_frame, safe_norm
from diffimpact._validation import (
    check_count,
    check_positive,
    check_range,
    check_real,
    is_concrete,
    refuse_where,
    require_float64,
    unit_vector,
)
from diffimpact.impulse.base import kinetic_energy_change
from diffimpact.impulse.max_dissipation import block_gauss_seidel
from diffimpact.rotations import euler_rates, euler_rotation

#: Standard gravity along −z (m/s²).
GRAVITY = (0.0, 0.0, -9.81)
#: Overlap refused at the start of ``simulate``, as a fraction of the smallest radius (round-off of touching spheres).
OVERLAP_TOLERANCE = 1e-9
#: The fields of a ``State``, in the order its checks name them.
_STATE_FIELDS = ("position", "velocity", "angular_velocity", "orientation")

_rotations = jnp.vectorize(euler_rotation, signature="(4)->(3,3)")


class Scene(eqx.Module):
    """The spheres, the static planes, the friction coefficient and gravity.

    Parameters
    ----------
    radius : r_i (m), > 0, shape (n,): one entry per sphere.
    mass : m_i (kg), > 0, scalar or (n,).
    inertia : principal moments I_{i,0} in the body frame (kg m²), scalar,
        (n,) or (n, 3), > 0 and I_a + I_b ≥ I_c (a real mass distribution);
        None: solid spheres, 2/5 m r².
    planes : a sequence of (normal, point) pairs: the plane through ``point``
        (m) whose solid side lies opposite ``normal`` (normalised here).
    friction : μ ≥ 0 of every contact.
    gravity : g (m/s²), (3,).
    """

    radius: jax.Array
    mass: jax.Array
    inertia: jax.Array
    plane_normal: jax.Array
    plane_offset: jax.Array
    friction: jax.Array
    gravity: jax.Array

    def __init__(self, radius, mass, *, inertia=None, planes=(), friction=0.0, gravity=GRAVITY):
        radius = check_positive("radius", radius)
        if radius.ndim != 1:
            raise ValueError(f"radius must have shape (n,), one per sphere; got {radius.shape}")
        n = radius.shape[0]
        mass = jnp.broadcast_to(check_positive("mass", mass), (n,))
        if inertia is None:
            inertia = 0.4 * mass * radius**2
        inertia = check_positive("inertia", inertia)
        inertia = jnp.broadcast_to(inertia[..., None] if inertia.ndim < 2 else inertia, (n, 3))
        total = jnp.sum(inertia, axis=-1, keepdims=True)
        self.inertia = refuse_where(inertia, total - inertia < inertia * (1 - 1e-12),
                                    "inertia must satisfy I_a + I_b >= I_c for every sphere (a real mass distribution)")
        self.radius, self.mass = radius, mass
        normals = [unit_vector(f"planes[{k}] normal", check_real(f"planes[{k}] normal", normal))
                   for k, (normal, _) in enumerate(planes)]
        points = [jnp.asarray(check_real(f"planes[{k}] point", point), float) for k, (_, point) in enumerate(planes)]
        for k, (normal, point) in enumerate(zip(normals, points)):
            if normal.shape != (3,) or point.shape != (3,):
                raise ValueError(f"planes[{k}] must be a (normal, point) pair of 3-vectors; got shapes "
                                 f"{normal.shape} and {point.shape}")
            points[k] = refuse_where(point, ~jnp.all(jnp.isfinite(point)), f"planes[{k}] point must be finite")
        self.plane_normal = jnp.stack(normals) if normals else jnp.zeros((0, 3))
        self.plane_offset = (jnp.stack([nv @ pt for nv, pt in zip(normals, points)]) if normals
                             else jnp.zeros(0))
        self.friction = check_range("friction", friction, 0.0)
        gravity = check_real("gravity", gravity)
        if np.shape(gravity) != (3,):
            raise ValueError(f"gravity must be a 3-vector; got shape {np.shape(gravity)}")
        self.gravity = refuse_where(jnp.asarray(gravity, float), ~jnp.all(jnp.isfinite(jnp.asarray(gravity))),
                                    "gravity must be finite")

    @property
    def spheres(self):
        return self.radius.shape[0]

    def pairs(self):
        """Static contact list: (first, second, plane) of length m; ``second`` is a plane index where ``plane``.

        Sphere–plane contacts come first (sphere-major), then the sphere pairs
        (first < second) in ``np.triu_indices`` order.
        """
        n, p = self.spheres, self.plane_offset.shape[0]
        sphere, plane = np.divmod(np.arange(n * p), p) if p else (np.zeros(0, int), np.zeros(0, int))
        a, b = np.triu_indices(n, 1)
        return (np.concatenate([sphere, a]), np.concatenate([plane, b]),
                np.concatenate([np.ones(n * p, bool), np.zeros(a.size, bool)]))


class State(eqx.Module):
    """Positions x (n, 3) (m), unit quaternions φ (n, 4) (q_w first), velocities v and ω (n, 3) (m/s, rad/s).

    Omitted velocities are zero and omitted orientations the identity.
    """

    position: jax.Array
    orientation: jax.Array
    velocity: jax.Array
    angular_velocity: jax.Array

    def __init__(self, position, velocity=None, angular_velocity=None, orientation=None):
        position = jnp.asarray(position, float)
        self.position = position
        self.velocity = jnp.zeros_like(position) if velocity is None else jnp.asarray(velocity, float)
        self.angular_velocity = (jnp.zeros_like(position) if angular_velocity is None
                                 else jnp.asarray(angular_velocity, float))
        self.orientation = (jnp.zeros(position.shape[:-1] + (4,)).at[..., 0].set(1.0) if orientation is None
                            else jnp.asarray(orientation, float))


class Contacts(eqx.Module):
    """Every candidate contact of a state: gap ξ (m,) (m), frame (m, 3, 3) with rows (n, t, o), lever arms
    x̂ − x_{i₁} and x̂ − x_{i₂} (m, 2, 3) (the second unused for a plane)."""

    gap: jax.Array
    frame: jax.Array
    lever: jax.Array


class Trajectory(eqx.Module):
    """The result of ``simulate``: ``steps`` + 1 states (the first the initial one) and, per step, the contact
    impulses λ̃ (steps, m, 3) in the contact frames (normal first, order of ``Scene.pairs``), the gaps ξ at the
    start of the step (steps, m) and the kinetic energy the contact impulses added, T(v') − T(v_free) (steps,),
    never positive while ε = 0 and the solve has converged."""

    time: jax.Array
    state: State
    impulse: jax.Array
    gap: jax.Array
    contact_work: jax.Array


def contacts(scene, state):
    """Gap, contact frame and lever arms of every candidate contact (§2, for spheres; module docstring)."""
    first, second, plane = scene.pairs()
    x, r = state.position, scene.radius
    sphere = np.flatnonzero(plane)
    pair = np.flatnonzero(~plane)
    # sphere i against plane k: x̂ = x − (n·x − d) n
    n_plane = scene.plane_normal[second[sphere]]
    height = jnp.sum(n_plane * x[first[sphere]], -1) - scene.plane_offset[second[sphere]]
    lever_plane = -height[:, None] * n_plane
    # sphere a against sphere b: n = (x_a − x_b)/‖·‖, x̂ = x_b + r_b n
    a, b = first[pair], second[pair]
    apart = x[a] - x[b]
    distance = safe_norm(apart)
    n_pair = apart / jnp.where(distance > 0, distance, 1.0)[:, None]
    lever_a = -(distance - r[b])[:, None] * n_pair
    lever_b = r[b][:, None] * n_pair
    normal = jnp.concatenate([n_plane, n_pair])
    return Contacts(
        gap=jnp.concatenate([height - r[first[sphere]], distance - r[a] - r[b]]),
        frame=jnp.swapaxes(jax.vmap(normal_frame)(normal), -1, -2),  # rows (n, t, o)
        lever=jnp.concatenate([jnp.stack([lever_plane, jnp.zeros_like(lever_plane)], 1),
                               jnp.stack([lever_a, lever_b], 1)]),
    )


def _world_inertia(scene, state):
    """I(φ) = R I₀ Rᵀ and its inverse, (n, 3, 3) each."""
    R = _rotations(state.orientation)
    inertia = jnp.einsum("nij,nj,nkj->nik", R, scene.inertia, R)
    return inertia, jnp.einsum("nij,nj,nkj->nik", R, 1.0 / scene.inertia, R)


def _jacobian(scene, found):
    """J = Wᵀ (m, 3, n, 6): contact-frame velocity rows over each sphere's (v, ω)."""
    first, second, plane = scene.pairs()
    m, n = first.size, scene.spheres

    def rows(frame, lever):  # e·(v + ω × r) = eᵀ v + (r × e)ᵀ ω for the frame's rows e
        return jnp.concatenate([frame, jnp.cross(lever[:, None, :], frame)], axis=-1)

    pair = np.flatnonzero(~plane)
    J = jnp.zeros((m, 3, n, 6)).at[np.arange(m), :, first].set(rows(found.frame, found.lever[:, 0]))
    return J.at[pair, :, second[pair]].set(-rows(found.frame[pair], found.lever[pair, 1]))


def _problem(scene, state, dt):
    """The contacts, J M⁻¹ (m, 3, n, 6), A = J M⁻¹ Jᵀ (3m, 3m), the free body velocities (n, 6) (external
    impulses and the gyroscopic term of §3.1 applied, no contact impulse) and the contact velocities (3m,)."""
    found = contacts(scene, state)
    J = _jacobian(scene, found)
    m, n = J.shape[0], J.shape[2]
    inertia, inverse_inertia = _world_inertia(scene, state)
    omega = state.angular_velocity
    spin = jnp.cross(omega, jnp.einsum("nij,nj->ni", inertia, omega))
    free = jnp.concatenate([state.velocity + dt * scene.gravity,
                            omega - dt * jnp.einsum("nij,nj->ni", inverse_inertia, spin)], axis=-1)
    inverse_mass = jnp.zeros((n, 6, 6)).at[:, :3, :3].set(jnp.eye(3) / scene.mass[:, None, None])
    inverse_mass = inverse_mass.at[:, 3:, 3:].set(inverse_inertia)
    JM = jnp.einsum("jkbq,bqr->jkbr", J, inverse_mass)  # J M⁻¹ = (M⁻¹ Jᵀ)ᵀ
    delassus = JM.reshape(3 * m, 6 * n) @ J.reshape(3 * m, 6 * n).T
    return found, JM, delassus, free, jnp.einsum("jkbq,bq->jk", J, free).reshape(-1)


def step(scene, state, dt, *, error_reduction=0.0, sweeps=50):
    """One time step of §3.1 (module docstring); returns (next state, λ̃ (m, 3), gaps ξ (m,), contact work).

    No checks: ``simulate`` validates its inputs once and scans this step.
    """
    found, JM, delassus, free, velocity = _problem(scene, state, dt)
    m = found.gap.shape[0]
    rate = found.gap / dt
    offset = error_reduction * jnp.minimum(0.0, rate) + jnp.maximum(0.0, rate)
    impulse = block_gauss_seidel(delassus, velocity, jnp.broadcast_to(scene.friction, (m,)), offset, sweeps)
    after = free + jnp.einsum("jkbr,jk->br", JM, impulse.reshape(m, 3))
    v, w = after[:, :3], after[:, 3:]
    turned = state.orientation + dt * jax.vmap(euler_rates)(state.orientation, w)
    new = State(state.position + dt * v, v, w, turned / jnp.linalg.norm(turned, axis=-1, keepdims=True))
    return new, impulse.reshape(m, 3), found.gap, kinetic_energy_change(delassus, velocity, impulse)


@jax.jit
def kinetic_energy(scene, state):
    """T = ½ Σ (m vᵀv + ωᵀ I(φ) ω) (J); states may carry leading axes (a trajectory's)."""
    body = jnp.einsum("...nji,...nj->...ni", _rotations(state.orientation), state.angular_velocity)
    return 0.5 * (jnp.sum(scene.mass * jnp.sum(state.velocity**2, -1), -1)
                  + jnp.sum(scene.inertia * body**2, axis=(-2, -1)))


@jax.jit
def potential_energy(scene, state):
    """U = −Σ m g·x (J), zero at the origin; states may carry leading axes."""
    return -jnp.sum(scene.mass * jnp.einsum("...ni,i->...n", state.position, scene.gravity), -1)


@eqx.filter_jit
def _state_values(scene, state):
    """What ``_check_state`` inspects, as one compiled program (op by op, each operation compiles its own):
    whether each field is finite, |φ| per sphere, the gaps and which of them overlap."""
    gap = contacts(scene, state).gap
    return ({name: jnp.all(jnp.isfinite(getattr(state, name))) for name in _STATE_FIELDS},
            jnp.linalg.norm(state.orientation, axis=-1), gap, gap < -OVERLAP_TOLERANCE * jnp.min(scene.radius))


def _check_state(scene, state):
    """``state`` after its checks (a traced state carries them on its position)."""
    n = scene.spheres
    for name in _STATE_FIELDS:
        value = check_real(f"state.{name}", getattr(state, name))
        shape = (n, 4) if name == "orientation" else (n, 3)
        if np.shape(value) != shape:
            raise ValueError(f"state.{name} must have shape {shape} for {n} spheres; got {np.shape(value)}")
    values = _state_values(scene, state)
    finite, norm, gap, overlap = jax.tree.map(np.asarray, values) if is_concrete(scene, state) else values
    position = state.position
    for name, ok in finite.items():
        position = refuse_where(position, ~ok, f"state.{name} must be finite")
    position = refuse_where(position, abs(norm - 1.0) > 1e-6, "state.orientation must hold unit quaternions "
                            "(|φ| = 1 within 1e-6)", lambda: norm.tolist())
    first, second, plane = scene.pairs()

    def overlaps():
        deepest = int(np.argmin(gap))
        other = f"plane {second[deepest]}" if plane[deepest] else f"sphere {second[deepest]}"
        return f"sphere {first[deepest]} and {other} overlap by {-float(gap[deepest]):.3g} m"

    position = refuse_where(position, overlap, "state.position: spheres must not overlap each other or a plane "
                            "at the start", overlaps)
    return eqx.tree_at(lambda s: s.position, state, position)


def simulate(scene, state, dt, steps, *, error_reduction=0.0, sweeps=50):
    """``steps`` time steps of length ``dt`` from ``state`` (§3.1; module docstring).

    Parameters
    ----------
    scene : a ``Scene``.
    state : the initial ``State``; spheres must not overlap each other or a
        plane (beyond 1e-9 of the smallest radius); quaternions of unit norm.
    dt : δt (s), > 0.
    steps : number of steps, an int ≥ 1.
    error_reduction : ε ∈ [0, 1), the share of a penetration ξ < 0 undone per
        step; 0 (default) corrects none and adds no energy.
    sweeps : Gauss–Seidel sweeps per step, an int ≥ 1.

    Returns
    -------
    A ``Trajectory``. Concrete bad input raises ``ValueError`` naming the
    argument; under ``jit`` the same checks raise when run.
    """
    require_float64("diffimpact.rigid_spheres.simulate")
    dt = check_positive("dt", dt)
    error_reduction = check_range("error_reduction", error_reduction, 0.0, 1.0, high_open=True)
    steps = check_count("steps", steps, 1)
    sweeps = check_count("sweeps", sweeps, 1)
    if not isinstance(scene, Scene) or not isinstance(state, State):
        raise TypeError("scene must be a Scene and state a State")
    return _simulate(scene, _check_state(scene, state), dt, error_reduction, steps, sweeps)


@eqx.filter_jit
def _simulate(scene, state, dt, error_reduction, steps, sweeps):
    def advance(current, _):
        new, impulse, gap, work = step(scene, current, dt, error_reduction=error_reduction, sweeps=sweeps)
        return new, (new, impulse, gap, work)

    _, (states, impulse, gap, work) = jax.lax.scan(advance, state, None, length=steps)
    states = jax.tree.map(lambda first, rest: jnp.concatenate([first[None], rest]), state, states)
    return Trajectory(jnp.arange(steps + 1) * dt, states, impulse, gap, work)
