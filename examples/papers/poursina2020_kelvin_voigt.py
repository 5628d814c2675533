"""[Poursina 2020], fig. 9: eq. (57) (n = 1) against the exact Kelvin–Voigt restitution of eq. (55).

    python examples/papers/poursina2020_kelvin_voigt.py [--quick] [--out DIR]
"""

from pathlib import Path

import diffimpact
from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
study = damping.kelvin_voigt_study(args.quick)
fig, axes = figure(1, 2)
damping.plot_kelvin_voigt(study, axes[0])
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_kelvin_voigt.png"))
