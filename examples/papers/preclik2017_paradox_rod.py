"""Preclik, Eibl & Rüde 2017 §4.2: the Painlevé rod, μ*(θ) from the maximum-dissipation impact model.

    python examples/papers/preclik2017_paradox_rod.py [--quick] [--out DIR]

The same as ``diffimpact reproduce maxdiss-paradox``. Writes
maxdiss-paradox.csv and maxdiss-paradox.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import max_dissipation

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(max_dissipation.run_paradox(args.out, quick=args.quick))
