"""[Gismeros Moreno 2022] §4.2, figs. 17–19: cut shots, cue-ball deflection beside the 30° rule, throw beside TP A.14.

    python examples/papers/gismeros_moreno2022_cut_shots.py [--quick] [--out DIR]

The same as ``diffimpact reproduce billiards-deflection``. Writes
billiards-deflection.csv and billiards-deflection.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import billiards

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(billiards.run_deflection(args.out, quick=args.quick))
