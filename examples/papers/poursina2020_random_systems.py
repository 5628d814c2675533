"""[Poursina 2020], fig. 8: worst |e_out − e| over random systems (§5.1), for eq. (49), the improved form and exact.

    python examples/papers/poursina2020_random_systems.py [--quick] [--out DIR]
"""

from pathlib import Path

import diffimpact
from diffimpact.io import figure, save_figure, script_arguments
from diffimpact.reproduce import damping

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
study = damping.verification_study(args.quick)
fig, axes = figure(1, 1, 5.5, 4.0)
damping.plot_verification(study, axes[0, 0])
print("wrote", save_figure(fig, Path(args.out) / "poursina2020_random_systems.png"))
