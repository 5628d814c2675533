"""Seed 004, fig. 6: exact c_opt against e for n = 1.2 and 1.8, with the fits c = α(e^β − 1).

    python examples/fig06_c_opt_vs_e.py [--quick] [--out DIR]

Uses the λ(n, e) grid shipped in data/ (regenerate it with
``diffimpact reproduce damping-alpha-beta --out data``).
"""

from pathlib import Path

from _common import parse

from diffimpact.reproduce import damping
from diffimpact.reproduce._io import figure, read_csv, save_figure

args = parse(__doc__.splitlines()[0])
grid = read_csv(Path(__file__).parents[1] / "data" / "damping_lambda.csv")
fits = damping.alpha_beta_study(grid)
fig, axes = figure(1, 1, 5.5, 4.0)
damping.plot_c_opt_vs_e(grid, fits, axes[0, 0])
print("wrote", save_figure(fig, Path(args.out) / "fig06_c_opt_vs_e.png"))
