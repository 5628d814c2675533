"""[Poursina 2020], fig. 4: effect of the impact velocity on c_opt (§4.2), with the slope of eq. (35).

    python examples/papers/poursina2020_velocity_scaling.py [--quick] [--out DIR]
"""

from pathlib import Path


from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

args = script_arguments(__doc__.splitlines()[0])
study = damping.scaling_study(args.quick, names=("velocity",))
fig, axes = figure(1, 2)
damping.plot_scaling(study, "velocity", axes[0])
print("wrote", save_figure(fig, Path(args.out) / "fig04_velocity_scaling.png"))
