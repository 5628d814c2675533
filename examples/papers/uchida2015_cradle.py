"""Uchida, Sherman & Delp 2015 Example 3, fig. 14, Table 2: the five-ball row by PLUS beside the compliant row and model C.

    python examples/papers/uchida2015_cradle.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-cradle``. Writes
plus-cradle.csv and plus-cradle.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import plus

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(plus.run_cradle(args.out, quick=args.quick))
