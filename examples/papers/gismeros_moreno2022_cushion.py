"""[Gismeros Moreno 2022] §4.3, figs. 20–21: cushion impacts, compliant (centre height and nose) beside Mathavan 2010.

    python examples/papers/gismeros_moreno2022_cushion.py [--quick] [--out DIR]

The same as ``diffimpact reproduce billiards-cushion``. Writes
billiards-cushion.csv, billiards-cushion-shot.csv and billiards-cushion.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import billiards

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(billiards.run_cushion(args.out, quick=args.quick))
