"""The full pool table of [Gismeros Moreno 2022] §3.2 to scale: six cushions, six pockets, the 15-ball rack.

    python examples/billiards/pool_table.py [--out DIR]

Draws ``billiard.table_cushions`` (the rubber between each nose polyline,
jaw – long face – jaw, and the rail line behind it), ``billiard.pockets``
(the holes, the mouth lines and the drop points) and ``billiard.rack`` (the
cue ball on the head spot, the rack on the foot spot) seen from above, with
close-ups of a corner and a side pocket. Writes pool_table.png.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import diffimpact  # noqa: E402
from diffimpact.io import script_arguments  # noqa: E402
from diffimpact.reproduce.table import draw_ball, draw_table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def main():
    args = script_arguments(__doc__.splitlines()[0])
    p = billiard.Parameters()
    figure = plt.figure(figsize=(11, 8.2))
    top = figure.add_axes([0.06, 0.41, 0.9, 0.53])
    draw_table(top, p)
    margin = p.cushion_width + 0.12
    top.set_xlim(-p.table_length / 2 - margin, p.table_length / 2 + margin)
    top.set_ylim(-p.table_width / 2 - margin, p.table_width / 2 + margin)
    holes = billiard.pockets(p)
    for k, name in enumerate(billiard.POCKETS):
        label = np.asarray(holes.centres[k]) + 0.07 * np.asarray(holes.axes[k])
        top.text(*label, name, color="white", fontsize=7, ha="center", va="center", zorder=5)
    top.set_title(f"WPA 9-ft table, {p.table_length:g} × {p.table_width:g} m between the cushion noses\n"
                  f"cue ball on the head spot, rack apex on the foot spot, α = {p.spacing:.4g} m", fontsize=10)
    for position, pocket in ((0.06, "foot-left"), (0.55, "left-side")):
        close = figure.add_axes([position, 0.05, 0.4, 0.3])
        draw_table(close, p)
        k = billiard.POCKETS.index(pocket)
        middle = np.asarray(holes.lips[k]).mean(axis=0)
        close.set_xlim(middle[0] - 0.2, middle[0] + 0.2)
        close.set_ylim(middle[1] - 0.17, middle[1] + 0.13)
        mouth = p.corner_mouth if billiard.CORNER_POCKETS[k] else p.side_mouth
        angle = p.corner_cut_angle if billiard.CORNER_POCKETS[k] else p.side_cut_angle
        close.set_title(f"{pocket} pocket: mouth {mouth * 1e3:.1f} mm, cut angle {angle:g}°, drop (×) "
                        f"{(p.corner_shelf if billiard.CORNER_POCKETS[k] else p.side_shelf) * 1e3:.1f} mm in",
                        fontsize=9)
        # a ball on the pocket's axis heading in, for scale
        draw_ball(close, middle - 0.09 * np.asarray(holes.axes[k]), p.radius, "cue")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "pool_table.png"
    figure.savefig(path, dpi=150)
    print(path)


if __name__ == "__main__":
    main()
