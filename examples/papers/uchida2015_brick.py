"""Uchida, Sherman & Delp 2015 Example 1, figs. 8–10: the brick's single-point impact by PLUS beside the compliant brick.

    python examples/papers/uchida2015_brick.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-brick``. Writes
plus-brick.csv and plus-brick.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import plus

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(plus.run_brick(args.out, quick=args.quick))
