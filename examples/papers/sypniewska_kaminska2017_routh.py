"""[Sypniewska-Kamińska 2017] §4, figs. 5–9: the double pendulum by Routh's method, μ = 0 and 0.15, with the joint forces.

    python examples/papers/sypniewska_kaminska2017_routh.py [--quick] [--out DIR]

The same as ``diffimpact reproduce routh-double-pendulum``. Writes
routh-double-pendulum.csv, routh-double-pendulum-collisions.csv and
routh-double-pendulum.png.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import double_pendulum

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(double_pendulum.run_routh(args.out, quick=args.quick))
