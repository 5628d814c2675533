"""Rotations in the plane and in space: the planar rotation matrix, the skew matrix, the Euler parameters'
matrices G and E, the rotation A(p), ṗ of an angular velocity and the generalised force of a torque
([Gismeros Moreno 2022] eqs. (2.3)–(2.7), (2.17); Nikravesh 1988, Computer-Aided Analysis of Mechanical Systems),
and the small matrix products they are built from.

Shared math below the models: the multibody bodies (``diffimpact.multibody.bodies``) and the rigid-sphere time
stepper (``diffimpact.rigid_spheres``) both build on it.
"""

import jax.numpy as jnp

from diffimpact._math import dot


def _matrix(rows, columns, entries):
    """The (rows, columns) + shape matrix of equally shaped ``entries`` in row order.

    One stack where ``jnp.array`` of nested lists converts, expands and concatenates every entry and row (16
    operations for a planar rotation instead of 5): these matrices are traced at every use of a pose.
    """
    stacked = jnp.stack(entries)
    return stacked.reshape((rows, columns) + stacked.shape[1:])


def rotation(angle):
    """Planar rotation matrix A(φ) of eq. (2.3)."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    return _matrix(2, 2, [c, -s, s, c])


def skew(vector):
    """The skew-symmetric matrix ṽ of eq. (2.17): ṽ a = v × a."""
    x, y, z = vector[0], vector[1], vector[2]
    zero = jnp.zeros_like(x)
    return _matrix(3, 3, [zero, -z, y, z, zero, -x, -y, x, zero])


def euler_g(p):
    """G(p) = [−e, −ẽ + e0 I] (3×4): ω' = 2 G ṗ in the body frame (Nikravesh 1988)."""
    p = jnp.asarray(p)
    e0, e = p[0], p[1:]
    return jnp.concatenate([-e[:, None], -skew(e) + e0 * jnp.eye(3)], axis=1)


def euler_e(p):
    """E(p) = [−e, ẽ + e0 I] (3×4): ω = 2 E ṗ in the global frame, A = E Gᵀ."""
    p = jnp.asarray(p)
    e0, e = p[0], p[1:]
    return jnp.concatenate([-e[:, None], skew(e) + e0 * jnp.eye(3)], axis=1)


def euler_rotation(p):
    """Rotation matrix A(p) of the Euler parameters p = (e0, e1, e2, e3), eqs. (2.5)–(2.7).

    A = E Gᵀ / (pᵀp) = (2e0² − 1) I + 2(e eᵀ + e0 ẽ) for a unit p. Dividing by
    pᵀp keeps A a rotation when integration lets |p| drift from 1, so body
    shapes never distort; the derivative of A along p is then zero.
    """
    p = jnp.asarray(p)
    e0, e1, e2, e3 = p
    # E Gᵀ = (e0² − eᵀe) I + 2 e eᵀ + 2 e0 ẽ entry by entry: elementwise arithmetic that XLA fuses, where the
    # 3×4 by 4×3 product would be a matrix multiplication of its own for every body and contact.
    rows = [[e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
            [2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1)],
            [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3]]
    return jnp.stack([jnp.stack(row) for row in rows]) / (e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3)


def euler_parameters(axis, angle):
    """Unit Euler parameters of a rotation by ``angle`` (rad) about ``axis`` (eqs. (2.5)–(2.6))."""
    axis = jnp.asarray(axis, dtype=float)
    axis = axis / jnp.linalg.norm(axis)
    half = 0.5 * jnp.asarray(angle, dtype=float)
    return jnp.concatenate([jnp.cos(half)[None], jnp.sin(half) * axis])


def euler_rates(p, angular_velocity):
    """ṗ = ½ Eᵀ ω for a global angular velocity ω (rad/s), unit p; satisfies pᵀṗ = 0."""
    return 0.5 * matvec(euler_e(p).T, jnp.asarray(angular_velocity, dtype=float))


def euler_torque(p, torque):
    """Generalised force Bᵀ Aᵀ n = 2 Eᵀ n / pᵀp on the Euler parameters of a global torque n (N m)."""
    p = jnp.asarray(p)
    return 2.0 * matvec(euler_e(p).T, jnp.asarray(torque, dtype=float)) / dot(p, p)


def matvec(matrix, vector):
    """``matrix @ vector`` for a small matrix (2×2 to 4×4) as elementwise products and a sum (``_math.dot``).

    XLA fuses these with the arithmetic around them, where a matrix product is an operation of its own: vmapped
    over 120 ball pairs, or repeated for 16 bodies, the products were most of the cost of an evaluation of the
    accelerations (docs/design/event-engine.md, "Free bodies body by body; small products written out").
    """
    return dot(matrix, vector[..., None, :])


def matmul(a, b):
    """``a @ b`` for small matrices, as ``matvec``."""
    return jnp.sum(a[:, :, None] * b[None, :, :], axis=1)
