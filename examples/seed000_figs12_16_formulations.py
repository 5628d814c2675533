"""Seed 000, figs. 12–16 (planar analogue): constraint drift and CPU time of the four formulations.

    python examples/seed000_figs12_16_formulations.py [--quick] [--out DIR]

The double pendulum of seed 002 at fixed steps of 0.01 s and 0.00001 s (the
paper's two default time steps); the paper's 3-D billiard model needs spatial
bodies. Same as ``diffimpact reproduce formulations``.
"""

from _common import parse

from diffimpact.reproduce import formulations

args = parse(__doc__.splitlines()[0])
print(formulations.run(args.out, quick=args.quick))
