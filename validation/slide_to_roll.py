"""Check: a ball launched sliding on the table's cloth, its rolling speed against the closed form, by tolerance.

    python validation/slide_to_roll.py [--speeds 1 2 3] [--duration 0.8] [--rtols 1e-3 1e-4 1e-5]
                                       [--error-norm max] [--friction-steps cloth] [--friction-step C]
                                       [--passage-step C] [--contact-steps [FAMILY ...]]

One ball on the full table (``billiard.table_model(p, balls=1)``) at (−1.2, 0) m, launched along +x at v0 without
spin (a stun: ``billiard.cue_strike`` with no topspin), on the paper's undamped cloth and on the cloth damped
critically (``cloth_damping_ratio`` 1). The cloth's friction turns the slide into rolling, and by the angular
momentum about the contact point, which the friction does not change, the ball then rolls at

    v = v0 / (1 + J/(m a²)),   a = R − δ_s/2

(a the lever of the contact point, the middle of the overlap, at the static deflection δ_s; 0.71568 v0 for the
paper's ball, against 5/7 = 0.71429 for a point contact of a solid sphere). The model has no rolling resistance:
Ambrósio's law exerts no force on a slip below v0 = 1e-4 m/s, so once rolling the ball keeps that speed. Run with
``reproduce break``'s settings (``table.settings``, ``FORMULATION``) at each rtol (atol = 1e-3 rtol), or
``--friction-steps cloth`` with ``simulate``'s ``friction_steps`` on the cloth; ``--error-norm``,
``--friction-step``, ``--passage-step`` and ``--contact-steps`` as in ``_bounds``. Prints each run's accepted steps and v/v0 at
half the duration and at its end, against the closed form. docs/results/shot.md, "`diffimpact shot`".
"""

import argparse
import sys
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _bounds
import diffimpact  # noqa: E402
import _bounds  # noqa: E402
from diffimpact.multibody import simulate  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

START = (-1.2, 0.0)


def rolling_ratio(p):
    """The closed form v/v0 of a ball launched sliding without spin on the table's cloth, once it rolls."""
    lever = p.radius - p.static_deflection() / 2
    return 1.0 / (1.0 + p.inertia / (p.mass * lever**2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeds", type=float, nargs="+", default=[1.0, 2.0, 3.0], help="launch speeds v0 (m/s)")
    parser.add_argument("--duration", type=float, default=0.8, help="simulated time (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-3, 1e-4, 1e-5], help="relative tolerances")
    _bounds.add_contact_steps(parser)
    _bounds.add_friction_steps(parser)
    _bounds.add_options(parser)
    args = parser.parse_args()
    times = jnp.linspace(0.0, args.duration, 41)
    print(f"a ball launched sliding along +x from {START} m, {args.duration:g} s; v/v0 at {args.duration / 2:g} s "
          f"and {args.duration:g} s; {_bounds.contact_steps_label(args)}")
    for zeta in (0.0, 1.0):
        p = billiard.Parameters(cloth_damping_ratio=zeta)
        model = billiard.table_model(p, 1)
        exact = float(rolling_ratio(p))

        @eqx.filter_jit
        def run(state, rtol):
            return simulate(model, state, times, table.FORMULATION, **_bounds.settings(args, model, rtol=rtol,
                                                                                      max_events=50))

        print(f"  cloth damping ratio {zeta:g}: closed form v/v0 = {exact:.5f}")
        for rtol in args.rtols:
            cells = []
            for speed in args.speeds:
                velocity, spin = billiard.cue_strike(p, speed, 0.0)
                trajectory = run(billiard.table_state(p, [START], [velocity], [spin]), rtol)
                ratio = np.asarray(trajectory.v)[:, 0] / speed
                cells.append(f"v0 {speed:g}: {int(trajectory.steps):5d} steps, {ratio[20]:.5f} {ratio[-1]:.5f} "
                             f"({ratio[-1] / exact - 1:+.1e})")
            print(f"    rtol {rtol:g}   " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
