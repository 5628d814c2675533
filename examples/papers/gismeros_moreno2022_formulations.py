"""[Gismeros Moreno 2022], figs. 10–16: the four-ball break on the table, 3 s, under the four formulations; Table 3's α sweep.

    python examples/papers/gismeros_moreno2022_formulations.py [--quick] [--out DIR]

The cue ball and the first three balls of the rack on the pool table with
its six cushions (spatial bodies on a Hertz cloth, Lankarani–Nikravesh
ball–ball and ball–cushion contacts), 3 s with largest steps of 0.01 s and
0.00001 s (the paper's two default time steps; the small one over the
break's first 0.2 s, and for 3 s under the Lagrange multipliers): the cue
ball's spurious y-motion, the drift of the Euler parameters, the mirror
error, the yellow ball's x and the CPU times; then the rack spacing α of
Table 3 (values assumed): the balls' rise (fig. 10) and the yellow ball's x
(fig. 11). Same as ``diffimpact reproduce formulations``."""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import formulations

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(formulations.run(args.out, quick=args.quick))
