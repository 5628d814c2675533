"""Uchida, Sherman & Delp 2015 Example 1, figs. 8–10: the brick's single-point impact by PLUS beside the compliant brick.

    python examples/seed001_fig08_10_brick.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-brick``. Writes
plus-brick.csv and plus-brick.png.
"""

from _common import parse

from diffimpact.reproduce import plus

args = parse(__doc__.splitlines()[0])
print(plus.run_brick(args.out, quick=args.quick))
