"""[Poursina 2020], figs. 11–12: two pendulums with eq. (50), Hunt–Crossley (16) and Newton impacts.

    python examples/papers/poursina2020_two_pendulums.py [--quick] [--out DIR]

Fig. 11 (θ̇1, θ̇2 over 8 s) and fig. 12 (force–penetration loop of the first
contact) come from one simulation per model, so they share one script and
one PNG.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import two_pendulum

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(two_pendulum.run(args.out, quick=args.quick))
