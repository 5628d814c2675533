"""[Poursina 2020], fig. 5: effect of the stiffness k on c_opt (§4.2), with the slope of eq. (35).

    python examples/papers/poursina2020_stiffness_scaling.py [--quick] [--out DIR]
"""

from pathlib import Path


from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

args = script_arguments(__doc__.splitlines()[0])
study = damping.scaling_study(args.quick, names=("stiffness",))
fig, axes = figure(1, 2)
damping.plot_scaling(study, "stiffness", axes[0])
print("wrote", save_figure(fig, Path(args.out) / "fig05_stiffness_scaling.png"))
