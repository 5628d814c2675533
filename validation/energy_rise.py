"""Check: how much the 16-ball break's energy rises, against the tolerance.

    python validation/energy_rise.py [--duration 4] [--rtols 1e-3 1e-4 1e-5] [--shot K] [--cloth-damping ZETA]
                                     [--error-norm max] [--contact-steps [FAMILY ...]]
                                     [--friction-steps [FAMILY ...]] [--cloth-located]

The table's energy (``Trajectory.energy``) counts the contacts' elastic energy, and every force but gravity
dissipates or is conservative, so it must not rise but by the integration's error. For the break of ``diffimpact
reproduce break`` (saves every 2 ms; ``table.settings``, atol = rtol/1000), or with ``--shot K`` shot K of
``random_shots.py`` (seed 1, ``--mode cue``), under ``table.FORMULATION`` and the Lagrange multipliers, at each
rtol: the accepted steps, the largest rise above an earlier value (``table.energy_rise``), from when to when, how
many of the save intervals the energy rises in (by more than 1 µJ) and the sum of those rises, the energy at the
end, the ball–ball and ball–cushion contacts closed during the largest rise (from their events), and the balls that
landed on the cloth in it (their cloth gap open at one save and closed at the next: the cloth's onsets are not
events). ``--error-norm max`` runs them under the largest scaled error as the step control's norm
(Matlab's ``ode45``'s; ``_bounds``); ``--contact-steps [FAMILY ...]`` with ``simulate``'s ``contact_steps``
(every step bounded by the closed contacts' depths and rates) on ``all`` families, on those named of the cloth, the
ball pairs and the cushions, or with none named on none, instead of the table's default (the cushions);
``--friction-steps [FAMILY ...]`` with ``simulate``'s ``friction_steps`` (steps bounded by the friction's stability
and the loaded slips' passages through its band) on the families named, or all; ``--cloth-damping`` sets the cloth's damping ratio
(``billiard.Parameters.cloth_damping_ratio``; 0, the paper's undamped cloth, by default); ``--cloth-located``
locates the cloth's onsets and separations (``table_model(p, cloth_located=True)``, 4 × ``table.MAX_EVENTS``
events allowed; its landings are then events, not listed as landed).

docs/design/table-settings.md, "The energy check"; docs/design/event-engine.md, "Pocketed balls out of the
scene; the landings on the cloth".
"""

import argparse
import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _bounds
import diffimpact  # noqa: E402
import _bounds  # noqa: E402
import random_shots  # noqa: E402
from diffimpact.multibody import LagrangeMultipliers, simulate  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0, help="simulated time (s)")
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-3, 1e-4, 1e-5], help="relative tolerances")
    parser.add_argument("--shot", type=int, default=None, metavar="K",
                        help="random_shots.py's shot K (seed 1, cue mode) instead of the break")
    _bounds.add_contact_steps(parser)
    _bounds.add_friction_steps(parser)
    parser.add_argument("--cloth-damping", type=float, default=0.0, metavar="ZETA", help="the cloth's damping ratio")
    _bounds.add_options(parser)
    parser.add_argument("--cloth-located", action="store_true", help="locate the cloth's onsets and separations")
    args = parser.parse_args()
    p = billiard.Parameters(cloth_damping_ratio=args.cloth_damping)
    model, times = billiard.table_model(p, cloth_located=args.cloth_located), table.save_times(args.duration)
    max_events = 4 * table.MAX_EVENTS if args.cloth_located else table.MAX_EVENTS
    if args.shot is None:
        state, title = billiard.break_state(p), "the 16-ball break"
    else:
        rng = np.random.default_rng(1)
        shots = [random_shots.shot(rng, p, "cue") for _ in range(args.shot + 1)]
        state, title = billiard.table_state(p, *shots[args.shot]), f"random_shots.py's shot {args.shot} (seed 1)"
    names = billiard.table_contact_names()

    @eqx.filter_jit
    def run(formulation, rtol):
        return simulate(model, state, times, formulation, **_bounds.settings(args, model, rtol=rtol,
                                                                             max_events=max_events))

    print(f"{title}, cloth damping ratio {args.cloth_damping:g}, {args.duration:g} s, saved every {1e3 * table.SAVE_INTERVAL:g} ms; atol = rtol/1000")
    print(f"  {'formulation':<22} {'rtol':>6} {'steps':>6} {'largest rise (J)':>16} {'from–to (s)':>13} "
          f"{'rising intervals':>16} {'their sum (J)':>13} {'E(end) (J)':>10}  closed then; landed then")
    for name, formulation in (("table.FORMULATION", table.FORMULATION), ("Lagrange multipliers",
                                                                         LagrangeMultipliers())):
        for rtol in args.rtols:
            trajectory = run(formulation, rtol)
            energy = np.asarray(trajectory.energy)
            rises = np.diff(energy)
            rising = rises > 1e-6
            end = int(np.argmax(energy - np.minimum.accumulate(energy)))
            start = int(np.argmin(energy[:end + 1]))
            print(f"  {name:<22} {rtol:6.0e} {int(trajectory.steps):6d} {table.energy_rise(energy):16.2e} "
                  f"{float(times[start]):6.3f}–{float(times[end]):<6.3f} {int(rising.sum()):7d} of {len(rises):<6d} "
                  f"{rises[rising].sum():13.2e} {energy[-1]:10.4f}  "
                  + ", ".join(closed(trajectory.events, names, float(times[start]), float(times[end])))
                  + "; " + ", ".join(landed(model, names, trajectory.q[start:end + 1])), flush=True)


def landed(model, names, q):
    """Names of the cloth's contacts whose gap closed between two of the saved coordinates ``q``: balls that
    landed on the cloth (its onsets are not events)."""
    cloth = model.forces[billiard.TABLE_FORCES.index("cloth")]
    depth = np.asarray(jax.vmap(lambda x: cloth.penetration(model.split(x)))(q))
    closing = ((depth[:-1] < 0) & (depth[1:] > 0)).any(axis=0)
    return [names[billiard.TABLE_FORCES.index("cloth")][ball] for ball in np.flatnonzero(closing)]


def closed(events, names, start, end):
    """Names of the contacts with an event that were closed at some time in [start, end] (s)."""
    count = int(events.count)
    t, family, member, onset = (np.asarray(x[:count]) for x in (events.t, events.contact, events.member, events.onset))
    found = []
    for k in sorted({(int(f), int(m)) for f, m in zip(family, member)}):
        mine = (family == k[0]) & (member == k[1])
        onsets, separations = t[mine & onset], t[mine & ~onset]
        if any(a <= end and not ((separations >= a) & (separations < start)).any() for a in onsets):
            found.append(names[k[0]][k[1]])
    return found


if __name__ == "__main__":
    main()
