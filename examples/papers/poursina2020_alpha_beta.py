"""[Poursina 2020], fig. 7: α(n) and β(n) from per-n fits, our curves and the paper's eqs. (46)–(47).

    python examples/papers/poursina2020_alpha_beta.py [--quick] [--out DIR]

Fits the λ(n, e) grid shipped in data/ with ``fitting.damping``.
"""

from pathlib import Path

import diffimpact
from diffimpact.io import figure, save_figure, script_arguments
from fitting import damping

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
columns, _ = damping.load_data()
fits = damping.study(columns, quick=args.quick)
fig, axes = figure(1, 2)
damping.plot_alpha_beta(fits, axes[0])
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_alpha_beta.png"))
