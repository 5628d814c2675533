"""[Gismeros Moreno 2022], figs. 10–16: the break shot under the four formulations at two default time steps.

    python examples/seed000_figs12_16_formulations.py [--quick] [--out DIR]

The cue ball and the first three balls of the rack (spatial bodies on a
Hertz cloth, Lankarani–Nikravesh ball–ball contacts) with largest steps of
0.01 s and 0.00001 s (the paper's two default time steps): the cue ball's
spurious y-motion, the drift of the Euler parameters, the yellow ball's x and
the CPU times. Same as ``diffimpact reproduce formulations``.
"""

from _common import parse

from diffimpact.reproduce import formulations

args = parse(__doc__.splitlines()[0])
print(formulations.run(args.out, quick=args.quick))
