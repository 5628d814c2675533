"""Preclik, Eibl & Rüde 2017 §4.2: the Painlevé rod, μ*(θ) from the maximum-dissipation impact model.

    python examples/seed003_paradox_rod.py [--quick] [--out DIR]

The same as ``diffimpact reproduce maxdiss-paradox``. Writes
maxdiss-paradox.csv and maxdiss-paradox.png.
"""

from _common import parse

from diffimpact.reproduce import max_dissipation

args = parse(__doc__.splitlines()[0])
print(max_dissipation.run_paradox(args.out, quick=args.quick))
