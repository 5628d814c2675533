"""[Gismeros Moreno 2022] §4.2, figs. 17–19: cut shots, cue-ball deflection beside the 30° rule, throw beside TP A.14.

    python examples/seed000_figs17_19_deflection.py [--quick] [--out DIR]

The same as ``diffimpact reproduce billiards-deflection``. Writes
billiards-deflection.csv and billiards-deflection.png.
"""

from _common import parse

from diffimpact.reproduce import billiards

args = parse(__doc__.splitlines()[0])
print(billiards.run_deflection(args.out, quick=args.quick))
