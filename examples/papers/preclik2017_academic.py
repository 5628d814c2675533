"""Preclik, Eibl & Rüde 2017 §4.1, Table 1, Fig. 7: Coulomb solutions and the maximally dissipative impulse.

    python examples/papers/preclik2017_academic.py [--quick] [--out DIR]

The same as ``diffimpact reproduce maxdiss-academic``. Writes
maxdiss-academic.csv and maxdiss-academic.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import max_dissipation

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(max_dissipation.run_academic(args.out, quick=args.quick))
