"""Double pendulum of [Sypniewska-Kamińska 2017] (sections 2–4), with and without the obstacle.

Link 1 is a rod OA of mass m₁, length l₁, centre C₁ at its middle; link 2 (rod
plus disk) has mass m₂ and centre C₂ at distance l_c from the joint A. The
angles ψ₁, ψ₂ of OA and AC₂ are measured from the downward vertical,
counter-clockwise positive; O is the origin. Joint dampers c₁ (at O), c₂ (at
A) and torques M_k(t) = M₀ₖ cos(Ω_k t) act on the links.

Two descriptions of the same system:

- minimal coordinates ψ₁, ψ₂ and eq. (3), integrated directly
  (``simulate_minimal``);
- absolute coordinates with two revolute joints built from
  ``diffimpact.multibody`` (``model``, ``initial_state``), simulable with any
  formulation.

In absolute coordinates each link's body frame has its y'-axis along the link
from its far end towards its upper joint, so the body angle φ_k equals ψ_k.

The obstacle (``obstacle_model``). [Sypniewska-Kamińska 2017] constrains the motion by eq. (2),
D − l₁ cos ψ₁ − (l₂ + r) cos ψ₂ − r ≥ 0, "only the disk placed at the end of
the pendulum may come into contact": the obstacle is a fixed horizontal plane
(a floor) at the depth D = 0.9 m below O, the disk of radius r = 0.05 m is
centred on the axis of link 2 at l₂ + r = 0.65 m from A (d + l_c in eq. (32)),
and the point M that hits is the lowest point of the disk. The sliding
velocity s of eq. (32) is the horizontal velocity of that material point,
disk spin included (the −r Δω₂ term). Since l₁ + l₂ + 2r = 1.2 m > D, the
hanging equilibrium ψ₁ = ψ₂ = 0 (energy −40.007 J) lies behind the obstacle.
The numbers are consistent with the stated l_c and I₂: a uniform rod of
length l₂ plus a thin uniform disk of radius r with m₂ = 3.8 kg and
l_c = 0.3627 m need a rod of 3.119 kg and a disk of 0.681 kg, which give
I₂ = 0.163 kg m² (paper: ≈ 0.164).

The paper resolves each collision as a rigid impact by Routh's method with
Poisson's restitution k = 0.9 and Coulomb friction μ (eqs. (28)–(37)). Here
the collision is compliant, the contact force acting over a short time
(choices, none given in the paper):

* normal force: Hertz with a linear damper, f = K δ^n + c δ̇ ([Poursina 2020], eq.
  (50)), with the damping c of each impact chosen so that the central impact
  of the contact's effective mass has restitution e = k = 0.9
  (``OptimalDamping``). For μ = 0 the three restitution hypotheses (Newton,
  Poisson, energetic) coincide, so this is the paper's collision law in the
  rigid limit K → ∞. With friction the effective mass along the normal is
  changed by the tangential force, so the realised ratio of normal impulses is
  close to, not exactly, Poisson's k;
* stiffness K = 1e9 N/m^1.5, n = 3/2 (steel-like; a collision lasts under
  1 ms; the undamped Hertz estimate of the largest penetration, for the first
  impact at 7.1 m/s with an effective mass of 1.9 kg, is 1.7 mm);
* friction: Coulomb's law regularised as μ F_N tanh(|s|/v_reg) with
  v_reg = 1 mm/s (``diffimpact.contact.friction.Coulomb``): sliding as in eq.
  (30) whenever |s| ≫ v_reg; sticking (s = 0 in Routh's method) becomes a
  stiff viscous phase.

For reference, ``simulate_routh`` implements the paper's own model: eq. (3)
between collisions and Routh's rigid impact with Poisson's restitution and
Coulomb friction at each (``diffimpact.impulse.routh``, the construction of fig. 4 in
the impulse plane), with the collision instant located by a root finder on
eq. (7) instead of the paper's linear interpolation (eqs. (9)–(11)).

The floor is an unbounded line; the disk can only reach it from above
(the centre of the disk is above the floor whenever the lowest point
touches it, as link 2 then points downwards).
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._validation import check_positive, check_range, require_float64
from diffimpact.contact.friction import Coulomb
from diffimpact.impulse import Routh
from diffimpact.multibody import (
    AppliedTorque,
    CirclePlane,
    Contact,
    Gravity,
    JointDamping,
    Model,
    OptimalDamping,
    PlanarBody,
    RevolutePlanar,
    RigidImpact,
    State,
)

#: Energy at the stable equilibrium ψ₁ = ψ₂ = 0, "about −40.007 J" ([Sypniewska-Kamińska 2017], section 4).
EQUILIBRIUM_ENERGY = -40.007


class Parameters(eqx.Module):
    """Parameters of [Sypniewska-Kamińska 2017], section 4 (SI units); damping and torques default to zero."""

    m1: jnp.ndarray
    m2: jnp.ndarray
    l1: jnp.ndarray
    lc: jnp.ndarray
    I1: jnp.ndarray
    I2: jnp.ndarray
    c1: jnp.ndarray
    c2: jnp.ndarray
    M01: jnp.ndarray
    M02: jnp.ndarray
    Omega1: jnp.ndarray
    Omega2: jnp.ndarray
    g: jnp.ndarray
    l2: jnp.ndarray
    r: jnp.ndarray

    def __init__(
        self, m1=3.2, m2=3.8, l1=0.5, lc=0.3627, I1=6.76e-2, I2=0.164,
        c1=0.0, c2=0.0, M01=0.0, M02=0.0, Omega1=0.0, Omega2=0.0, g=9.81, l2=0.6, r=0.05,
    ):
        self.m1, self.m2 = check_positive("m1", m1), check_positive("m2", m2)
        self.l1, self.lc = check_positive("l1", l1), check_positive("lc", lc)
        self.I1, self.I2 = check_positive("I1", I1), check_positive("I2", I2)
        self.c1, self.c2 = check_range("c1", c1, 0.0), check_range("c2", c2, 0.0)
        self.M01, self.M02 = jnp.asarray(M01, dtype=float), jnp.asarray(M02, dtype=float)
        self.Omega1, self.Omega2 = jnp.asarray(Omega1, dtype=float), jnp.asarray(Omega2, dtype=float)
        self.g = check_positive("g", g)
        # l₂ (rod of link 2) and r (disk radius) only place the disk that hits the obstacle.
        self.l2, self.r = check_positive("l2", l2), check_positive("r", r)


#: Initial state of [Sypniewska-Kamińska 2017], section 4: ψ₁, ψ₂ (rad) and ψ̇₁, ψ̇₂ (rad/s).
INITIAL_ANGLES = (np.deg2rad(140.0), np.deg2rad(-90.0))
INITIAL_RATES = (1.2, -0.5)


def mass_matrix(p, psi):
    """A of [Sypniewska-Kamińska 2017], eq. (3)."""
    a12 = p.l1 * p.lc * p.m2 * jnp.cos(psi[0] - psi[1])
    a11 = p.I1 + p.l1**2 * (p.m1 / 4 + p.m2)
    a22 = p.I2 + p.lc**2 * p.m2
    return jnp.array([[a11, a12], [a12, a22]])


def generalized_force(p, t, psi, dpsi):
    """Q = (q₁, q₂) of [Sypniewska-Kamińska 2017], eq. (3)."""
    coupling = p.l1 * p.lc * p.m2 * jnp.sin(psi[0] - psi[1])
    q1 = (
        p.M01 * jnp.cos(p.Omega1 * t) - (p.c1 + p.c2) * dpsi[0] + p.c2 * dpsi[1]
        - coupling * dpsi[1] ** 2 - (p.m1 / 2 + p.m2) * p.g * p.l1 * jnp.sin(psi[0])
    )
    q2 = (
        p.M02 * jnp.cos(p.Omega2 * t) + p.c2 * (dpsi[0] - dpsi[1])
        + coupling * dpsi[0] ** 2 - p.m2 * p.g * p.lc * jnp.sin(psi[1])
    )
    return jnp.stack([q1, q2])


def minimal_energy(p, psi, dpsi):
    """Mechanical energy ½ ψ̇ᵀ A ψ̇ + V with V = 0 at the height of O (J)."""
    potential = -(p.m1 / 2 + p.m2) * p.g * p.l1 * jnp.cos(psi[0]) - p.m2 * p.g * p.lc * jnp.cos(psi[1])
    return 0.5 * dpsi @ mass_matrix(p, psi) @ dpsi + potential


@eqx.filter_jit
def simulate_minimal(p, psi0, dpsi0, save_times, rtol=1e-10, atol=1e-10):
    """Integrate A ψ̈ = Q ([Sypniewska-Kamińska 2017], eqs. (3)–(5)) with Tsit5; returns ψ, ψ̇ at ``save_times``."""
    require_float64("diffimpact.scenes.double_pendulum.simulate_minimal")

    def vector_field(t, y, args):
        psi, dpsi = y
        return dpsi, jnp.linalg.solve(mass_matrix(p, psi), generalized_force(p, t, psi, dpsi))

    save_times = jnp.asarray(save_times, dtype=float)
    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field), dfx.Tsit5(), save_times[0], save_times[-1], None,
        (jnp.asarray(psi0, dtype=float), jnp.asarray(dpsi0, dtype=float)),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=dfx.PIDController(rtol=rtol, atol=atol),
        max_steps=100_000,
    )
    return solution.ys


def model(p):
    """Absolute-coordinate model: links 0 and 1, revolute joints at O and A."""
    link1 = PlanarBody(p.m1, p.I1, name="link1")
    link2 = PlanarBody(p.m2, p.I2, name="link2")
    half = p.l1 / 2
    return Model(
        bodies=(link1, link2),
        constraints=(
            RevolutePlanar(0, jnp.stack([0.0, half]), None, (0.0, 0.0)),
            RevolutePlanar(0, jnp.stack([0.0, -half]), 1, jnp.stack([0.0, p.lc])),
        ),
        forces=(
            Gravity((0.0, -p.g)),
            JointDamping(None, 0, p.c1),
            JointDamping(0, 1, p.c2),
            AppliedTorque(0, p.M01, p.Omega1),
            AppliedTorque(1, p.M02, p.Omega2),
        ),
    )


def absolute_coordinates(p, psi, dpsi):
    """q, v of both links from ψ, ψ̇ (φ_k = ψ_k)."""
    direction = lambda angle: jnp.stack([jnp.sin(angle), -jnp.cos(angle)])  # noqa: E731
    position = lambda psi: jnp.concatenate([  # noqa: E731
        p.l1 / 2 * direction(psi[0]), psi[:1],
        p.l1 * direction(psi[0]) + p.lc * direction(psi[1]), psi[1:],
    ])
    return jax.jvp(position, (jnp.asarray(psi, dtype=float),), (jnp.asarray(dpsi, dtype=float),))


def joint_reactions(p, t, psi, dpsi):
    """The joint forces of [Sypniewska-Kamińska 2017] figs. 8–9 between collisions: (R, P) at O and (H, V) at A (N).

    Signs as in eqs. (13)–(16) (x horizontal, z up): link 1 receives (H − R, V + P),
    link 2 receives (−H, −V) from link 1 (and the floor's (T, F) during a
    collision, not included here). From Newton's law for each link with the
    centres' accelerations of ψ̈ = A⁻¹ Q (eq. (3)):
    H = −m₂ ẍ₂, V = −m₂ (z̈₂ + g), R = H − m₁ ẍ₁, P = m₁ (z̈₁ + g) − V.
    Hanging at rest: P = (m₁ + m₂) g, V = −m₂ g.
    """
    ddpsi = jnp.linalg.solve(mass_matrix(p, psi), generalized_force(p, t, psi, dpsi))
    velocity = lambda psi, dpsi: absolute_coordinates(p, psi, dpsi)[1]  # noqa: E731
    acceleration = jax.jvp(velocity, (psi, dpsi), (dpsi, ddpsi))[1]
    H, V = -p.m2 * acceleration[3], -p.m2 * (acceleration[4] + p.g)
    return jnp.stack([H - p.m1 * acceleration[0], p.m1 * (acceleration[1] + p.g) - V, H, V])


def initial_state(p, psi=INITIAL_ANGLES, dpsi=INITIAL_RATES, t=0.0):
    """``State`` in absolute coordinates for angles ψ and rates ψ̇ ([Sypniewska-Kamińska 2017] values by default)."""
    return State(*absolute_coordinates(p, psi, dpsi), t)


def angles(q):
    """ψ₁, ψ₂ reconstructed from the link positions in q (..., 6): directions of OA and AC₂."""
    joint = 2 * q[..., :2]  # A = 2 C₁ since O is the origin and C₁ is the middle of OA
    link2 = q[..., 3:5] - joint
    return jnp.stack(
        [jnp.arctan2(joint[..., 0], -joint[..., 1]), jnp.arctan2(link2[..., 0], -link2[..., 1])], axis=-1
    )


def energy(p, q, v):
    """Mechanical energy in absolute coordinates (J), V = 0 at the height of O."""
    return model(p).energy(q, v)


class Obstacle(eqx.Module):
    """The floor at depth D below O and the contact law of the disk on it (see the module docstring).

    Parameters
    ----------
    distance : D (m), [Sypniewska-Kamińska 2017]: 0.9; must satisfy eq. (1), l₁ < D < l₁ + l₂ + 2r.
    friction : Coulomb coefficient μ ([Sypniewska-Kamińska 2017]: 0 and 0.15).
    restitution : e of the compliant law, standing for Poisson's k ([Sypniewska-Kamińska 2017]: 0.9).
    stiffness : K (N/m^exponent), our choice.
    exponent : n of the Hertz law.
    regularisation_speed : v_reg of the regularised Coulomb law (m/s).
    """

    distance: jnp.ndarray
    friction: jnp.ndarray
    restitution: jnp.ndarray
    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    regularisation_speed: jnp.ndarray

    def __init__(self, distance=0.9, friction=0.0, restitution=0.9, stiffness=1e9, exponent=1.5,
                 regularisation_speed=1e-3):
        self.distance = check_positive("distance", distance)
        self.friction = check_range("friction", friction, 0.0)
        self.restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
        self.stiffness = check_positive("stiffness", stiffness)
        self.exponent = check_positive("exponent", exponent)
        self.regularisation_speed = check_positive("regularisation_speed", regularisation_speed)


def disk_centre_offset(p):
    """Body-frame position of the disk centre on link 2, (0, −d) with d = l₂ + r − l_c (eq. (18))."""
    return jnp.stack([0.0, -(p.l2 + p.r - p.lc)])


def gap(p, obstacle, psi):
    """f of [Sypniewska-Kamińska 2017], eq. (7): D − l₁ cos ψ₁ − (l₂ + r) cos ψ₂ − r (m), ≥ 0 off the obstacle."""
    return obstacle.distance - p.l1 * jnp.cos(psi[..., 0]) - (p.l2 + p.r) * jnp.cos(psi[..., 1]) - p.r


def obstacle_model(p, obstacle, rigid=False):
    """``model(p)`` plus the disk–floor ``Contact`` as ``forces[-1]``.

    ``rigid=True`` replaces the compliant law by Sypniewska-Kamińska et al.'s (2017) own collision law,
    the rigid impact of Routh's method with k = ``obstacle.restitution`` and
    μ = ``obstacle.friction`` (``RigidImpact`` of ``diffimpact.impulse.Routh``;
    for μ = 0 it is Newton's impact), as a reference for the compliant one.
    """
    if not (float(p.l1) < float(obstacle.distance) < float(p.l1 + p.l2 + 2 * p.r)):
        raise ValueError(
            f"obstacle.distance must satisfy eq. (1) of Sypniewska-Kamińska et al. 2017, l1 < D < l1 + l2 + 2r = "
            f"{float(p.l1 + p.l2 + 2 * p.r):g} m; got {float(obstacle.distance):g}"
        )
    geometry = CirclePlane(
        None, jnp.stack([0.0, -obstacle.distance]), (0.0, 1.0), 1, disk_centre_offset(p), p.r
    )
    if rigid:
        contact = Contact(geometry, RigidImpact(Routh(obstacle.friction, obstacle.restitution)))
    else:
        contact = Contact(
            geometry,
            OptimalDamping(obstacle.stiffness, obstacle.exponent, obstacle.restitution),
            Coulomb(obstacle.friction, obstacle.regularisation_speed),
        )
    base = model(p)
    return Model(bodies=base.bodies, constraints=base.constraints, forces=(*base.forces, contact))


def angular_velocities(v):
    """ψ̇₁, ψ̇₂ (rad/s) from absolute velocities (..., 6) (φ_k = ψ_k)."""
    return v[..., jnp.array([2, 5])]


# --- Sypniewska-Kamińska et al.'s (2017) own collision model: Routh's rigid impact (section 3.4) ----------------------


def contact_jacobian(p, psi):
    """J with (c, s) = J ψ̇, normal first: the upward (closing) and horizontal (sliding) velocity of the lowest
    disk point M.

    x_M = l₁ sin ψ₁ + (l₂ + r) sin ψ₂ plus the spin term r ψ̇₂ of the material point at M (eq. (32));
    y_M = −l₁ cos ψ₁ − (l₂ + r) cos ψ₂ − r.
    """
    arm = p.l2 + p.r
    return jnp.array([
        [p.l1 * jnp.sin(psi[0]), arm * jnp.sin(psi[1])],
        [p.l1 * jnp.cos(psi[0]), arm * jnp.cos(psi[1]) + p.r],
    ])


@eqx.filter_jit
def _free_flight(p, obstacle, t0, psi0, dpsi0, save_times, t_end):
    """Eq. (3) from (t0, ψ, ψ̇) until the disk reaches the floor (f of eq. (7) crosses 0 downwards) or t_end."""

    def vector_field(t, y, args):
        psi, dpsi = y
        return dpsi, jnp.linalg.solve(mass_matrix(p, psi), generalized_force(p, t, psi, dpsi))

    event = dfx.Event(lambda t, y, args, **kwargs: gap(p, obstacle, y[0]),
                      root_finder=optx.Newton(rtol=1e-12, atol=1e-12), direction=False)
    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field), dfx.Tsit5(), t0, t_end, None, (psi0, dpsi0),
        saveat=dfx.SaveAt(subs=(dfx.SubSaveAt(ts=jnp.clip(save_times, t0, t_end)), dfx.SubSaveAt(t1=True))),
        stepsize_controller=dfx.PIDController(rtol=1e-10, atol=1e-10), event=event, max_steps=100_000,
    )
    return solution.ys[0], solution.ts[1][0], tuple(y[0] for y in solution.ys[1]), jnp.any(solution.event_mask)


def simulate_routh(p, obstacle, save_times, max_collisions=64):
    """Sypniewska-Kamińska et al.'s (2017) model: eq. (3) between collisions, Routh's rigid impact at each (``diffimpact.impulse.routh``).

    Returns ψ, ψ̇ at ``save_times`` (arrays (len, 2); the state after the
    impact at a collision instant) and the collisions as an array of rows
    (t, ψ₁, ψ₂, ψ̇₁⁻, ψ̇₂⁻, ψ̇₁⁺, ψ̇₂⁺, case), the case of Fig. 4 of [Sypniewska-Kamińska 2017]
    (0–4 for a–e, ``routh.CASES``).
    """
    require_float64("diffimpact.scenes.double_pendulum.simulate_routh")
    save_times = jnp.asarray(save_times, dtype=float)
    t, t_end = float(save_times[0]), float(save_times[-1])
    psi, dpsi = jnp.array(INITIAL_ANGLES, dtype=float), jnp.array(INITIAL_RATES, dtype=float)
    psi_saved, dpsi_saved = np.full((len(save_times), 2), np.nan), np.full((len(save_times), 2), np.nan)
    rows = []
    times = np.asarray(save_times)
    for _ in range(max_collisions + 1):
        (psi_s, dpsi_s), t1, (psi, dpsi_before), hit = _free_flight(
            p, obstacle, jnp.asarray(t), psi, dpsi, save_times, jnp.asarray(t_end))
        t1 = float(t1)
        inside = (times >= t) & ((times < t1) | (not bool(hit)))
        psi_saved[inside], dpsi_saved[inside] = np.asarray(psi_s)[inside], np.asarray(dpsi_s)[inside]
        if not bool(hit):
            return psi_saved, dpsi_saved, np.array(rows).reshape(-1, 8)
        jacobian = contact_jacobian(p, psi)
        response = jnp.linalg.solve(mass_matrix(p, psi), jacobian.T)
        result = Routh(obstacle.friction, obstacle.restitution)(jacobian @ response, jacobian @ dpsi_before)
        dpsi = dpsi_before + response @ result.impulse
        rows.append((t1, *np.asarray(psi), *np.asarray(dpsi_before), *np.asarray(dpsi), int(result.case)))
        t = t1
    raise RuntimeError(f"more than max_collisions = {max_collisions} collisions")
