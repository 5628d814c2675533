"""Uchida, Sherman & Delp 2015 Example 2, figs. 11–13: the brick falls flat on four spheres, PLUS beside the compliant brick.

    python examples/papers/uchida2015_brick_four_points.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-brick-four-points``. Writes
plus-brick-four-points.csv and plus-brick-four-points.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import plus

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(plus.run_four_points(args.out, quick=args.quick))
