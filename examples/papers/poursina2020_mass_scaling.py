"""[Poursina 2020], fig. 3: effect of the effective mass m on c_opt (§4.2), with the slope of eq. (35).

    python examples/papers/poursina2020_mass_scaling.py [--quick] [--out DIR]
"""

from pathlib import Path


from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

args = script_arguments(__doc__.splitlines()[0])
study = damping.scaling_study(args.quick, names=("mass",))
fig, axes = figure(1, 2)
damping.plot_scaling(study, "mass", axes[0])
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_mass_scaling.png"))
