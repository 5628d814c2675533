"""[Poursina 2020], fig. 3: effect of the effective mass m on c_opt (§4.2), with the slope of eq. (35).

    python examples/fig03_mass_scaling.py [--quick] [--out DIR]
"""

from pathlib import Path

from _common import parse

from diffimpact.io import figure, save_figure
from diffimpact.reproduce import damping

args = parse(__doc__.splitlines()[0])
study = damping.scaling_study(args.quick, names=("mass",))
fig, axes = figure(1, 2)
damping.plot_scaling(study, "mass", axes[0])
print("wrote", save_figure(fig, Path(args.out) / "fig03_mass_scaling.png"))
