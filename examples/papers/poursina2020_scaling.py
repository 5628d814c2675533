"""[Poursina 2020], figs. 3–5: how c_opt scales with the effective mass, the impact velocity and the stiffness (§4.2).

    python examples/papers/poursina2020_scaling.py [--quick] [--out DIR]

One row a quantity: ln c_opt against its logarithm for a few n, and the slope against n beside eq. (35).
"""

from pathlib import Path

import diffimpact
from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
names = ("mass", "velocity", "stiffness")
study = damping.scaling_study(args.quick, names=names)
fig, axes = figure(len(names), 2)
for name, row in zip(names, axes):
    damping.plot_scaling(study, name, row)
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_scaling.png"))
