"""The examples of the PLUS paper (seed 001, Uchida, Sherman & Delp 2015), §4.

Only the problems live here for now; the reproductions follow below.
"""

import numpy as np

#: Example 1 (Table A1): the childproof brick and its single-point impact.
BRICK = dict(mass=2.0, inertia=(0.167, 0.133, 0.0867), half_extents=(0.2, 0.3, 0.4), sphere_radius=0.1)
EXAMPLE_1 = dict(velocity=(-5.0, 0.0, -5.74), friction=(0.125, 0.225, 0.325), min_restitution=(0.392, 0.387, 0.373),
                 capture_velocity=0.01, plastic_velocity=0.1, transition_velocity=0.1, max_direction_change=0.01,
                 stiffness=10e9, dissipation=0.26)
#: Fig. 10: θ_max (rad) and the number of intervals the paper states.
FIGURE_10 = ((0.01, 116), (0.15, 11), (0.25, 8))


def rotation_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rotation_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


#: Example 1's orientation: body-fixed rotations of π/4 about x, then π/6 about the new y.
EXAMPLE_1_ROTATION = rotation_x(np.pi / 4) @ rotation_y(np.pi / 6)


def brick_vertices(rotation, half_extents=BRICK["half_extents"]):
    """The eight vertices (sphere centres) relative to the centre of mass, in the world frame."""
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    return (signs * np.asarray(half_extents)) @ rotation.T


def contact_problem(points, rotation, twist, mass=BRICK["mass"], inertia=BRICK["inertia"]):
    """(W, u⁻) of contacts with the ground plane z = 0 at ``points`` (k, 3) of a free rigid body.

    ``points`` relative to the centre of mass (world frame), ``twist`` the
    body's (v, ω) in the world frame. Each contact's frame is normal first:
    (z, x, y). W = J M⁻¹ Jᵀ with J the map from the twist to the contact
    velocities v + ω × r.
    """
    inverse_inertia = rotation @ np.diag(1.0 / np.asarray(inertia)) @ rotation.T
    frame = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    J = np.concatenate([frame @ np.hstack([np.eye(3), -_skew(r)]) for r in np.atleast_2d(points)])
    M_inverse = np.block([[np.eye(3) / mass, np.zeros((3, 3))], [np.zeros((3, 3)), inverse_inertia]])
    W = J @ M_inverse @ J.T
    return 0.5 * (W + W.T), J @ np.asarray(twist, float)


def example_1_problem():
    """(W, u⁻, contact point) of Example 1: the lowest sphere's bottom, the brick translating at v^(start)."""
    vertices = brick_vertices(EXAMPLE_1_ROTATION)
    lowest = vertices[np.argmin(vertices[:, 2])]
    point = lowest - np.array([0.0, 0.0, BRICK["sphere_radius"]])
    W, u = contact_problem(point, EXAMPLE_1_ROTATION, np.concatenate([EXAMPLE_1["velocity"], np.zeros(3)]))
    return W, u, point
