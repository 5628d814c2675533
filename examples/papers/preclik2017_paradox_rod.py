"""Preclik, Eibl & Rüde 2017 §4.2: the Painlevé rod, μ*(θ) from the maximum-dissipation impact model.

    python examples/papers/preclik2017_paradox_rod.py [--quick] [--out DIR]

The same as ``diffimpact reproduce maxdiss-paradox``. Writes
maxdiss-paradox.csv and maxdiss-paradox.png.
"""

from diffimpact.io import script_arguments
from diffimpact.reproduce import max_dissipation

args = script_arguments(__doc__.splitlines()[0])
print(max_dissipation.run_paradox(args.out, quick=args.quick))
