"""Recover k and e of a Hertz + linear-damper contact from a noisy force–penetration history.

    python examples/fits/impact_stiffness.py [--quick] [--out DIR]

The same as ``diffimpact fit impact-stiffness``: synthetic data at the truth
k = 1e9 N/m^1.5, e = 0.6 (m = 0.17 kg, v = 2 m/s), fitted once to the force
and penetration history and once to contact duration plus restitution, with
Gauss–Newton standard errors. Writes impact-stiffness.json, .csv and .png.
"""

import diffimpact
from diffimpact.io import script_arguments
from fitting import impact_stiffness

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(impact_stiffness.run(args.out, quick=args.quick))
