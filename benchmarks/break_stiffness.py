"""Where the 16-ball break's solver steps go: the ball–ball friction makes the rack's impact stiff.

Alciatore's ball–ball friction, μ(v) F_N tanh(v/v_reg) (``diffimpact.contact.Alciatore``; the paper gives
no regularisation speed v_reg, ours is v0/3 with the v0 = 0.01 m/s of its Threlfall law, 1e-4 m/s before),
has the slope μ F_N/v_reg at zero slip. While the rack's balls press on each other (forces of kN) with little slip, the slip relaxes at a rate
of order μ F_N/(v_reg m), 1e7–1e8 /s, and an explicit solver's steps are bounded by its stability, not by
the tolerance. For the break of ``diffimpact reproduce break`` (``diffimpact.reproduce.table``:
``table.FORMULATION``, rtol = 1e-3, atol = 1e-6, the near distance; the cue ball reaches the rack at
0.114 s), this counts the accepted steps and segments to ``--impact`` (0.2 s: the rack's impact and its
first bounces) and to ``--duration``, with the ball–ball friction at v_reg = 1e-4, 1e-3, v0/3 (as in
``table_model``) and 1e-2 m/s, and without it (μ = 0). Compile and run time apart (``_timing.timed``; the run
to ``--duration``); the friction variants differ in numbers only, so they share the first row's compilation
(their compile time reads about 0).

Then what v_reg does where the ball–ball friction is fitted to measurements: the cut shots of ``diffimpact fit
deflection`` (``fitting.deflection.outcomes`` at its starting parameters): the five measured shots of Mathavan
et al. 2009 (their post-slip speeds) and the predictions at 1.5 m/s (throw and rolling deflection), under
each v_reg, against v_reg = 1e-4 m/s. The paper's own ball–ball law, Threlfall's with v0 = 0.01 m/s
(``diffimpact.contact.Threlfall``), has the zero-slip slope 3 μ F_N/v0, that of tanh at v_reg = v0/3.

    python benchmarks/break_stiffness.py [--duration 1.0]
"""

import argparse
import itertools

import jax.numpy as jnp
import numpy as np

from _timing import timed
from diffimpact.contact import Alciatore
from diffimpact.impulse import alciatore
from diffimpact.multibody import Contact, Model, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard
from fitting import deflection

SAVES = 51


def _with_pairs(model, p, friction):
    """``model`` (``table_model``) with every ball pair's friction law replaced by ``friction``."""
    pairs = Contact.family(billiard.ball_pair(p, i, j, friction) for i, j in itertools.combinations(range(16), 2))
    return Model(model.bodies, forces=[*model.forces[:2], pairs, *model.forces[3:]])


def _run(model, state, duration):
    return simulate(model, state, np.linspace(0.0, duration, SAVES), table.FORMULATION, **table.settings(model))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impact", type=float, default=0.2, help="end of the rack's impact (s)")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated time (s)")
    args = parser.parse_args()
    p = billiard.Parameters()
    model, state = billiard.table_model(p), billiard.break_state(p)
    variants = {
        "Alciatore, v_reg = 1e-4 m/s": _with_pairs(model, p, Alciatore(regularisation_speed=1e-4)),
        "Alciatore, v_reg = 1e-3 m/s": _with_pairs(model, p, Alciatore(regularisation_speed=1e-3)),
        "Alciatore, v_reg = v0/3 = 3.3e-3 m/s (table_model)": model,
        "Alciatore, v_reg = 1e-2 m/s": _with_pairs(model, p, Alciatore(regularisation_speed=1e-2)),
        "no ball–ball friction": _with_pairs(model, p, Alciatore(0.0, 0.0)),
    }
    print(f"16-ball break, {type(table.FORMULATION).__name__}, rtol {table.TOLERANCES['rtol']:g}: accepted steps "
          f"(segments) to {args.impact:g} s and to {args.duration:g} s")
    print(f"{'ball–ball friction':>50} {'to impact':>14} {'to end':>14} {'compile (s)':>11} {'run (s)':>8}")
    for name, model in variants.items():
        last = {}

        def run():
            last["run"] = _run(model, state, args.duration)
            return last["run"].q

        first, best = timed(run, repeats=1)
        counts = [f"{int(r.steps)} ({int(r.segments)})" for r in (_run(model, state, args.impact), last["run"])]
        print(f"{name:>50} {counts[0]:>14} {counts[1]:>14} {first - best:11.1f} {best:8.2f}", flush=True)
    compare_cut_shots()


def cut_shots(regularisation_speed):
    """Post-slip speeds of the measured cut shots (m/s), throw and rolling deflection of the predictions (rad)."""
    params = deflection.START
    p, friction = deflection.shot_parameters(params)
    law = Alciatore(friction.offset, friction.amplitude, friction.decay, regularisation_speed)
    shots, _ = deflection.load_data()
    cut = alciatore.cut_angle(deflection.PREDICTION_FRACTIONS)
    speeds = [np.asarray(shots[k]) for k in ("speed", "cut")], [np.full(cut.shape, deflection.PREDICTION_SPEED), cut]
    measured, predicted = (billiard.cut_shots(p, law, jnp.asarray(v), jnp.asarray(c),
                                              -deflection.APPROACH - 2 * p.radius * np.cos(c), np.zeros_like(v),
                                              deflection.APPROACH / v + deflection.AFTER_SEPARATION)
                           for v, c in speeds)
    rolling = np.concatenate([np.linalg.norm(measured[k], axis=-1) for k in ("cue_rolling", "object_rolling")])
    return rolling, np.asarray(predicted["throw"]), np.asarray(predicted["deflection_rolling"])


def compare_cut_shots():
    """Print the cut shots' largest changes under each v_reg against 1e-4 m/s."""
    print("\nthe cut shots of `fit deflection` (its starting parameters): largest change against v_reg = 1e-4 m/s")
    print(f"{'v_reg (m/s)':>12} {'post-slip speeds (m/s)':>23} {'throw (°)':>10} {'deflection (°)':>15}")
    base = cut_shots(1e-4)
    for speed in (1e-3, 0.01 / 3, 1e-2):
        changes = [np.max(np.abs(a - b)) for a, b in zip(cut_shots(speed), base)]
        print(f"{speed:12.3g} {changes[0]:23.1e} {np.degrees(changes[1]):10.1e} {np.degrees(changes[2]):15.1e}")
    print(f"(the throws at v_reg = 1e-4 m/s: {np.array2string(np.degrees(base[1]), precision=3)}°)")


if __name__ == "__main__":
    main()
