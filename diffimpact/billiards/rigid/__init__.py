"""Rigid balls on a billiard table, simulated from event to event with the motion in between in closed form
([Leckie 2005]); see docs/design/rigid-engine.md.

``motion``: the balls' states (``Balls``, ``Parameters``) and their motion between events; ``roots``: when a
polynomial of degree ≤ 4 first reaches zero, with exact derivatives; ``detection``: the table (``Table``) and every
candidate event's time as arrays; ``ball_ball``, ``ball_cushion``, ``ball_pocket``: one interface per kind of
event and its first model; ``engine``: the event loop (``simulate``, ``Engine``, ``Shot``) and ``states_at``;
``pool`` (imported on its own): the pool table of ``diffimpact.scenes.billiard`` as a ``Table`` and its break.
"""

from diffimpact.billiards.rigid.ball_ball import BallBallModel, Frictionless
from diffimpact.billiards.rigid.ball_cushion import BallCushionModel, StickingFriction
from diffimpact.billiards.rigid.ball_pocket import BallPocketModel, Capture
from diffimpact.billiards.rigid.detection import (
    BALL_BALL,
    BALL_CUSHION,
    BALL_POCKET,
    BALL_TIP,
    EVENT_NAMES,
    TRANSITION,
    Event,
    EventTimes,
    Table,
    ball_gaps,
    ball_pairs,
    cushion_gaps,
    event_times,
    next_event,
)
from diffimpact.billiards.rigid.engine import (
    EVENTS_EXHAUSTED,
    FINISHED,
    START,
    UNUSED,
    Engine,
    EventBudgetExceeded,
    Shot,
    simulate,
    states_at,
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
    rolling_spin,
    settle,
    slip,
    trajectory_coefficients,
    transition_times,
)
from diffimpact.billiards.rigid.roots import first_crossing, quadratic_roots

__all__ = [
    "BallBallModel", "BallCushionModel", "BallPocketModel", "Capture", "Frictionless", "StickingFriction",
    "EVENTS_EXHAUSTED", "FINISHED", "START", "UNUSED", "Engine", "EventBudgetExceeded", "Shot", "simulate",
    "states_at",
    "BALL_BALL", "BALL_CUSHION", "BALL_POCKET", "BALL_TIP", "EVENT_NAMES", "TRANSITION", "Event", "EventTimes", "Table",
    "ball_gaps", "ball_pairs", "cushion_gaps", "event_times", "next_event",
    "MOTION_NAMES", "POCKETED", "ROLLING", "SLIDING", "SPINNING", "STATIONARY", "Ball", "Balls", "Parameters",
    "acceleration", "ball_states", "end_state", "evolve", "first_crossing", "kinetic_energy", "moves",
    "quadratic_roots", "rolling_spin", "settle", "slip", "trajectory_coefficients", "transition_times",
]
