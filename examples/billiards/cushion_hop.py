"""A rolling ball into a long cushion on four tables: the paper's, a damped cloth, the nose height, and both.

    python examples/billiards/cushion_hop.py [--out DIR] [--quick]

The cue ball leaves the head spot rolling at 3 m/s across the table into
the long cushion (``diffimpact shot --aim 90 --topspin 1 --speed 3``, the
ball alone) for 2 s (0.6 s with ``--quick``) at ``diffimpact shot``'s
tolerance, on the full table of [Gismeros Moreno 2022] with its cushions
touching the ball at the centre height (the paper's faces) or at Mathavan
et al.'s nose height 7R/5, and its cloth undamped (the paper's Hertz) or
damped critically (``Parameters.cloth_damping_ratio`` = 1). The centre-height
face's friction throws a rolling ball up (its surface there moves straight
down); the nose presses it into the cloth, which the undamped cloth gives
back as a jump. Prints each table's highest hop, solver steps and energy,
and writes cushion_hop.png: the ball's height above its resting height and
its y against time. README, "Your own shot on the full table".
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import diffimpact  # noqa: E402
from diffimpact.io import script_arguments  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

SPEED = 3.0
TABLES = (("centre height, undamped cloth (the paper's)", False, 0.0), ("centre height, damped cloth", False, 1.0),
          ("nose height, undamped cloth", True, 0.0), ("nose height, damped cloth", True, 1.0))


def main():
    args = script_arguments(__doc__.splitlines()[0])
    times = table.save_times(0.6 if args.quick else 2.0)
    figure, (height, across) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for label, nose, damping in TABLES:
        p = billiard.Parameters(cloth_damping_ratio=damping)
        nose_height = p.nose_height() if nose else None
        velocity, spin = billiard.cue_strike(p, SPEED, np.pi / 2, topspin_ratio=1.0)
        state = billiard.table_state(p, [(p.cue_x, 0.0)], [velocity], [spin], nose_height)
        run = table.integrate(billiard.table_model(p, 1, nose_height), state, times, table.MAX_EVENTS,
                              rtol=table.SHOT_RTOL)
        centre = np.asarray(run.q)[:, :3]
        _, hop, when = table.highest_hop(p, times, centre[:, None])
        flown = billiard.left_table(p, run, balls=1)
        print(f"{label}: highest {1e3 * hop:.2f} mm at {when:.3f} s, {int(run.steps)} solver steps, energy "
              f"{float(run.energy[0]):.4f} → {float(run.energy[-1]):.4f} J"
              + (f", off the table at {flown[0][0]:.4f} s" if flown else ""))
        on = centre[:, 2] > 0.0  # drawn until it falls below the cloth's level off the table
        height.plot(np.asarray(times)[on], 1e3 * (centre[on, 2] - p.resting_height()), label=label, linewidth=0.9)
        across.plot(np.asarray(times)[on], centre[on, 1], linewidth=0.9)
    height.set_ylabel("height above rest (mm)")
    height.legend(fontsize=8)
    height.set_title(f"a ball rolling at {SPEED:g} m/s into the long cushion, four tables", fontsize=10)
    p = billiard.Parameters()
    for side in (-1, 1):
        across.axhline(side * (p.table_width / 2 - p.radius), color="grey", linewidth=0.6, linestyle="--")
    across.set_ylabel("y (m); dashed: touching a long cushion")
    across.set_xlabel("t (s)")
    figure.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figure.savefig(out / "cushion_hop.png", dpi=150)
    print(f"wrote {out / 'cushion_hop.png'}")


if __name__ == "__main__":
    main()
