"""Rigid balls on a billiard table, simulated from event to event with the motion in between in closed form
([Leckie 2005]); see docs/design/rigid-engine.md.

``motion``: the balls' states (``Balls``, ``Parameters``) and their motion between events; ``roots``: when a
polynomial of degree ≤ 4 first reaches zero, with exact derivatives; ``detection``: the table (``Table``) and every
candidate event's time as arrays.
"""

from diffimpact.billiards.rigid.detection import (
    BALL_BALL,
    BALL_CUSHION,
    BALL_POCKET,
    EVENT_NAMES,
    TRANSITION,
    Event,
    EventTimes,
    Table,
    ball_pairs,
    event_times,
    next_event,
)
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
from diffimpact.billiards.rigid.roots import first_crossing, quadratic_roots

__all__ = [
    "BALL_BALL", "BALL_CUSHION", "BALL_POCKET", "EVENT_NAMES", "TRANSITION", "Event", "EventTimes", "Table",
    "ball_pairs", "event_times", "next_event",
    "MOTION_NAMES", "POCKETED", "ROLLING", "SLIDING", "SPINNING", "STATIONARY", "Ball", "Balls", "Parameters",
    "acceleration", "ball_states", "end_state", "evolve", "first_crossing", "kinetic_energy", "moves",
    "quadratic_roots", "settle", "slip", "trajectory_coefficients", "transition_times",
]
