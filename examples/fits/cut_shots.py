"""Fit the ball–ball restitution and friction scale to measured cut shots; refit Alciatore's μ(v).

    python examples/fits/cut_shots.py [--quick] [--out DIR]

The same as ``diffimpact fit deflection``: the five cut shots of Mathavan,
Jackson & Parkin (Am. J. Phys. 77, 2009), both balls' speeds once they roll
again, through the two-ball simulation on the cloth; μ(v) = a + b e^(−c v)
refitted to Marlow's three points; predictions for the 30° rule and throw.
Writes deflection.json, .csv and .png.
"""

import diffimpact
from diffimpact.io import script_arguments
from fitting import deflection

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(deflection.run(args.out, quick=args.quick))
