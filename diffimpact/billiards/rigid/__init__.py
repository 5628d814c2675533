"""Rigid balls on a billiard table, simulated from event to event with the motion in between in closed form
([Leckie 2005]); see docs/design/rigid-engine.md.

``motion``: the balls' states (``Balls``, ``Parameters``) and their motion between events.
"""

from diffimpact.billiards.rigid.motion import (
    MOTION_NAMES,
    POCKETED,
    ROLLING,
    SLIDING,
    SPINNING,
    STATIONARY,
    Ball,
    Balls,
    Parameters,
    acceleration,
    ball_states,
    end_state,
    evolve,
    kinetic_energy,
    moves,
    settle,
    slip,
    trajectory_coefficients,
    transition_times,
)

__all__ = [
    "MOTION_NAMES", "POCKETED", "ROLLING", "SLIDING", "SPINNING", "STATIONARY", "Ball", "Balls", "Parameters",
    "acceleration", "ball_states", "end_state", "evolve", "kinetic_energy", "moves", "settle", "slip",
    "trajectory_coefficients", "transition_times",
]
