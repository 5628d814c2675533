"""The full pool table of [Gismeros Moreno 2022] §3.2 to scale: six cushions, six pockets, the 15-ball rack.

    python examples/pool_table.py [--out DIR]

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
from _common import parse  # noqa: E402
from matplotlib.patches import Circle, Polygon, Rectangle  # noqa: E402

from diffimpact.scenes import billiard  # noqa: E402

#: Face colours of the balls of ``billiard.RACK_BALLS`` (a stripe is white with a band of its colour).
COLOURS = {"cue": "white", "yellow": "gold", "blue": "royalblue", "red": "red", "purple": "purple",
           "orange": "darkorange", "green": "forestgreen", "brown": "saddlebrown", "black": "black"}


def draw_ball(ax, centre, radius, name):
    colour = COLOURS[name.removesuffix("-stripe")]
    ax.add_patch(Circle(centre, radius, facecolor="white" if name.endswith("-stripe") else colour,
                        edgecolor="black", linewidth=0.4, zorder=4))
    if name.endswith("-stripe"):
        disc = Circle(centre, radius, transform=ax.transData, facecolor="none", edgecolor="none")
        ax.add_patch(disc)
        band = Rectangle((centre[0] - radius, centre[1] - 0.55 * radius), 2 * radius, 1.1 * radius,
                         facecolor=colour, edgecolor="none", zorder=4)
        ax.add_patch(band)
        band.set_clip_path(disc)


def draw_table(ax, p, centres=None, names=billiard.RACK_BALLS):
    """The table of ``p`` on ``ax`` (m), with balls at ``centres`` (default ``billiard.rack(p)``)."""
    half_length, half_width, width = p.table_length / 2, p.table_width / 2, p.cushion_width
    rail = 0.12
    ax.add_patch(Rectangle((-half_length - width - rail, -half_width - width - rail),
                           p.table_length + 2 * (width + rail), p.table_width + 2 * (width + rail),
                           facecolor="#5b3a1e", edgecolor="none", zorder=0))
    ax.add_patch(Rectangle((-half_length - width, -half_width - width), p.table_length + 2 * width,
                           p.table_width + 2 * width, facecolor="#1d6b3a", edgecolor="none", zorder=1))
    holes = billiard.pockets(p)
    for centre, radius in zip(np.asarray(holes.centres), np.asarray(holes.radii)):
        ax.add_patch(Circle(centre, radius, facecolor="black", edgecolor="none", zorder=1.5))
    for vertices in np.asarray(billiard.table_cushions(p)):
        # both jaws end on the rail line, so jaw – face – jaw closes into the rubber's plan
        ax.add_patch(Polygon(vertices, closed=True, facecolor="#2e8b57", edgecolor="none", zorder=2))
        ax.plot(*vertices.T, color="white", linewidth=0.8, zorder=3)
    for lips, drop in zip(np.asarray(holes.lips), np.asarray(holes.drops)):
        ax.plot(*lips.T, color="yellow", linewidth=0.6, linestyle="--", zorder=3)
        ax.plot(*drop, marker="x", color="yellow", markersize=4, zorder=3)
    ax.plot([p.cue_x, p.cue_x], [-half_width, half_width], color="white", linewidth=0.4, linestyle=":", zorder=2)
    ax.plot([p.cue_x, p.rack_x], [0.0, 0.0], marker=".", color="white", linewidth=0, zorder=2)
    centres = billiard.rack(p) if centres is None else centres
    for centre, name in zip(np.asarray(centres), names):
        draw_ball(ax, centre, p.radius, name)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


def main():
    args = parse(__doc__.splitlines()[0])
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
