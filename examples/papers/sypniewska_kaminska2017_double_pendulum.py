"""[Sypniewska-Kamińska 2017], figs. 5–7: double pendulum colliding with a floor at D = 0.9 m, μ = 0 and μ = 0.15.

    python examples/papers/sypniewska_kaminska2017_double_pendulum.py [--quick] [--out DIR]

Also compares, without the obstacle, eq. (3) in minimal coordinates with the
absolute-coordinate model under the four formulations. Same as
``diffimpact reproduce double-pendulum``; the modelling choices for the
obstacle are in ``diffimpact.scenes.double_pendulum``.
"""

import diffimpact
from diffimpact.io import script_arguments
from diffimpact.reproduce import double_pendulum

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
print(double_pendulum.run(args.out, quick=args.quick))
