"""Fit Mathavan et al.'s rigid-cushion model and the compliant nose-height cushion to measured rebounds.

    python examples/fits/cushion.py [--quick] [--out DIR]

The same as ``diffimpact fit cushion``: the 19 head-on rebounds of a rolling
snooker ball of Mathavan, Jackson & Parkin (Proc. IMechE C 224, 2010), the
rigid model's e_e and μ_w (and what these shots cannot separate), the
compliant cushion through the contact-event simulation. Writes cushion.json,
.csv and .png.
"""

import diffimpact
from diffimpact.io import script_arguments
from fitting import cushion

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(cushion.run(args.out, quick=args.quick))
