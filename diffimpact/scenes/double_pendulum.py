"""Double pendulum of seed 002 (sections 2–3.1), without the obstacle.

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
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_positive, check_range
from diffimpact.multibody import (
    AppliedTorque,
    Gravity,
    JointDamping,
    Model,
    PlanarBody,
    RevolutePlanar,
    State,
)

#: Energy at the stable equilibrium ψ₁ = ψ₂ = 0, "about −40.007 J" (seed 002, section 4).
EQUILIBRIUM_ENERGY = -40.007


class Parameters(eqx.Module):
    """Parameters of seed 002, section 4 (SI units); damping and torques default to zero."""

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

    def __init__(
        self, m1=3.2, m2=3.8, l1=0.5, lc=0.3627, I1=6.76e-2, I2=0.164,
        c1=0.0, c2=0.0, M01=0.0, M02=0.0, Omega1=0.0, Omega2=0.0, g=9.81,
    ):
        self.m1, self.m2 = check_positive("m1", m1), check_positive("m2", m2)
        self.l1, self.lc = check_positive("l1", l1), check_positive("lc", lc)
        self.I1, self.I2 = check_positive("I1", I1), check_positive("I2", I2)
        self.c1, self.c2 = check_range("c1", c1, 0.0), check_range("c2", c2, 0.0)
        self.M01, self.M02 = jnp.asarray(M01, dtype=float), jnp.asarray(M02, dtype=float)
        self.Omega1, self.Omega2 = jnp.asarray(Omega1, dtype=float), jnp.asarray(Omega2, dtype=float)
        self.g = check_positive("g", g)


#: Initial state of seed 002, section 4: ψ₁, ψ₂ (rad) and ψ̇₁, ψ̇₂ (rad/s).
INITIAL_ANGLES = (np.deg2rad(140.0), np.deg2rad(-90.0))
INITIAL_RATES = (1.2, -0.5)


def mass_matrix(p, psi):
    """A of seed 002, eq. (3)."""
    a12 = p.l1 * p.lc * p.m2 * jnp.cos(psi[0] - psi[1])
    a11 = p.I1 + p.l1**2 * (p.m1 / 4 + p.m2)
    a22 = p.I2 + p.lc**2 * p.m2
    return jnp.array([[a11, a12], [a12, a22]])


def generalized_force(p, t, psi, dpsi):
    """Q = (q₁, q₂) of seed 002, eq. (3)."""
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
    """Integrate A ψ̈ = Q (seed 002, eqs. (3)–(5)) with Tsit5; returns ψ, ψ̇ at ``save_times``."""

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


def initial_state(p, psi=INITIAL_ANGLES, dpsi=INITIAL_RATES, t=0.0):
    """``State`` in absolute coordinates for angles ψ and rates ψ̇ (seed 002 values by default)."""
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
