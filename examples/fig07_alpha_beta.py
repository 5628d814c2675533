"""Seed 004, fig. 7: α(n) and β(n) from per-n fits, our curves and the paper's eqs. (46)–(47).

    python examples/fig07_alpha_beta.py [--quick] [--out DIR]

Uses the λ(n, e) grid shipped in data/.
"""

from pathlib import Path

from _common import parse

from diffimpact.reproduce import damping
from diffimpact.reproduce._io import figure, read_csv, save_figure

args = parse(__doc__.splitlines()[0])
fits = damping.alpha_beta_study(read_csv(Path(__file__).parents[1] / "data" / "damping_lambda.csv"))
fig, axes = figure(1, 2)
damping.plot_alpha_beta(fits, axes[0])
print("wrote", save_figure(fig, Path(args.out) / "fig07_alpha_beta.png"))
