"""Preclik, Eibl & Rüde 2017 §3.1: the time-stepping scheme with block Gauss–Seidel, on spheres.

    python examples/papers/preclik2017_time_stepping.py [--quick] [--out DIR]

The same as ``diffimpact reproduce maxdiss-stepping``: a sphere launched
sliding on a plane beside the closed form (slip time, slip distance, rolling
at 5/7 of the launch speed) and ten spheres poured into a box. Writes
maxdiss-stepping.csv, maxdiss-stepping-sliding.csv,
maxdiss-stepping-convergence.csv and maxdiss-stepping.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import max_dissipation

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(max_dissipation.run_stepping(args.out, quick=args.quick))
