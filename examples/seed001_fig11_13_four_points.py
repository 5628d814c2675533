"""Uchida, Sherman & Delp 2015 Example 2, figs. 11–13: the brick falls flat on four spheres, PLUS beside the compliant brick.

    python examples/seed001_fig11_13_four_points.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-brick-four-points``. Writes
plus-brick-four-points.csv and plus-brick-four-points.png.
"""

from _common import parse

from diffimpact.reproduce import plus

args = parse(__doc__.splitlines()[0])
print(plus.run_four_points(args.out, quick=args.quick))
