"""Uchida, Sherman & Delp 2015 Example 3, fig. 14, Table 2: the five-ball row by PLUS beside the compliant row and model C.

    python examples/seed001_fig14_cradle.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-cradle``. Writes
plus-cradle.csv and plus-cradle.png.
"""

from _common import parse

from diffimpact.reproduce import plus

args = parse(__doc__.splitlines()[0])
print(plus.run_cradle(args.out, quick=args.quick))
