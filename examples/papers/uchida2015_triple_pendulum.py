"""Uchida, Sherman & Delp 2015 Example 4, fig. 15: CPU time of a PLUS impact against the compliant impact of a triple pendulum.

    python examples/papers/uchida2015_triple_pendulum.py [--quick] [--out DIR]

The same as ``diffimpact reproduce plus-triple-pendulum``. Writes
plus-triple-pendulum.csv, plus-triple-pendulum-accuracy.csv and
plus-triple-pendulum.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import triple_pendulum

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(triple_pendulum.run(args.out, quick=args.quick))
