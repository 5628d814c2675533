"""The pool table of ``diffimpact.scenes.billiard`` as the rigid engine's ``Table``, and the break on it.

``pool_table``: the six cushions' nose polylines of ``billiard.table_cushions`` (a WPA 9-ft table, jaw – long
face – jaw) as 18 straight segments, their 24 vertices (each jaw's lip, where it meets the long face, and its end
at the rail) as tips of radius 0, and the six holes of ``billiard.pockets``. A ball's centre then stays R from the
rubber everywhere: R from a segment where its foot falls on it, R from a vertex around the corners, the polyline
rounded by the ball as a compliant nose is by its contact (``billiard.cushion``). ``break_balls``: the cue ball
and the 15-ball rack of ``billiard.rack`` (the positions of ``billiard.break_state``), the cue ball sliding along
+x without spin.
"""

import jax.numpy as jnp

from diffimpact._validation import check_count, check_positive
from diffimpact.billiards.rigid.detection import Table
from diffimpact.billiards.rigid.motion import ball_states
from diffimpact.scenes import billiard


def pool_table(p=None):
    """The full pool table of ``billiard.Parameters`` ``p`` (default ``billiard.Parameters()``) as a ``Table``.

    Segments (K = 18): cushion c of ``billiard.CUSHIONS`` gives segments 3c (the jaw at its start), 3c + 1 (the
    long face) and 3c + 2 (the jaw at its end). Tips (M = 24, radius 0): cushion c gives tips 4c (the start
    jaw's end at the rail), 4c + 1 and 4c + 2 (the lips) and 4c + 3 (the end jaw's end). Pockets (Q = 6): the
    holes of ``billiard.pockets``, in the order of ``billiard.POCKETS``; a ball is out of play when its centre
    enters one, where ``billiard.pocket_depth`` turns positive.
    """
    p = billiard.Parameters() if p is None else p
    noses = billiard.table_cushions(p)  # (6, 4, 2)
    segments = jnp.stack([noses[:, :-1], noses[:, 1:]], axis=2).reshape(-1, 2, 2)
    holes = billiard.pockets(p)
    return Table(segments, holes.centres, holes.radii, noses.reshape(-1, 2))


def break_balls(params, p=None, balls=16, speed=None):
    """The break on ``pool_table(p)``: the cue ball and the first ``balls`` − 1 of the rack at the centres of
    ``billiard.rack(p)``, the cue ball sliding at ``speed`` (m/s, default ``p.speed``) along +x without spin,
    the others at rest; ``motion.Balls`` for ``params`` (``motion.Parameters``)."""
    p = billiard.Parameters() if p is None else p
    check_count("balls", balls, low=1)
    if balls > len(billiard.RACK_BALLS):
        raise ValueError(f"balls must be at most {len(billiard.RACK_BALLS)} (the cue ball and the rack); got {balls}")
    centres = billiard.rack(p)[:balls]
    speed = check_positive("speed", p.speed if speed is None else speed)
    return ball_states(params, centres, jnp.zeros_like(centres).at[0, 0].set(speed))
