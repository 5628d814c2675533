"""[Poursina 2020], fig. 6: exact c_opt against e for n = 1.2 and 1.8, with the fits c = α(e^β − 1).

    python examples/papers/poursina2020_damping_against_restitution.py [--quick] [--out DIR]

Fits the λ(n, e) grid shipped in data/ with ``fitting.damping`` (regenerate
the grid with ``diffimpact reproduce damping-lambda --out data``).
"""

from pathlib import Path

import diffimpact
from diffimpact.io import figure, save_figure, script_arguments
from fitting import damping

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
columns, _ = damping.load_data()
fits = damping.study(columns, quick=args.quick)
fig, axes = figure(1, 1, 5.5, 4.0)
damping.plot_c_opt_vs_e(columns, fits, axes[0, 0])
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_damping_against_restitution.png"))
