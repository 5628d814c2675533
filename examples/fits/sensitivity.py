"""Normalised sensitivities ∂ln y/∂ln p of post-impact velocities, checked against central differences.

    python examples/fits/sensitivity.py [--quick] [--out DIR]

The same as ``diffimpact fit sensitivity``: the central impact with the
eq. (50) contact and with Hunt–Crossley + eq. (16) (k, e, n, v0, m), and the
first impact of the two pendulums of [Poursina 2020] §6 (k, e, n, release angle).
Writes sensitivity.json, the sensitivity CSVs and sensitivity.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from fitting import sensitivity_study

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(sensitivity_study.run(args.out, quick=args.quick))
