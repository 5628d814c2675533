"""Check: the friction guard on a ball that slides into rolling on the full table, against the closed form.

    python validation/guard_rolling.py [--duration 0.9] [--rtol 1e-5] [--cloth-damping-ratios 0 1] [--factors 5 2 1]
                                       [--resting X Y]

One ball on ``billiard.table_model(p, 1)``, struck at 2 m/s along +x from (−0.9, 0) m without spin (``diffimpact
shot``'s strike), slides on the cloth and rolls from t_r on; its x after ``--duration`` s is differentiated by
the speed v0 in forward mode with the steps set by the state's error alone (``tangent_errors=False``), without
and with ``friction_steps``, at ``--rtol`` (the table's settings otherwise), for each cloth damping ratio (0: the
paper's Hertz cloth; ζ > 0: Hunt–Crossley, ``Parameters.cloth_damping_ratio``) and each ``friction_guard`` of
``--factors`` (in the solver's stability intervals; ``inf``: no guard): the derivative, or the guard's error.
``--resting X Y`` puts a second ball at rest at (X, Y) m, out of the moving ball's way (``billiard.table_model(p,
2)``): it touches nothing but the cloth, and the closed form is the same.

The closed form: the friction μ m g slows the centre and spins the ball up about the contact point at a = R − δ_s/2
(the middle of the overlap) until it rolls, at t_r = k v0 with k = 1/(μ g (1 + m a²/J)), at v_r = ρ v0, ρ = 1/(1 +
J/(m a²)); then x(T) = ½ μ g k² v0² + ρ v0 T beyond the start and dx/dv0 = μ g k² v0 + ρ T. docs/results/shot.md,
"What the paper's cushions and cloth do to a user's shot".
"""

import argparse
import dataclasses
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' helper _errors
import diffimpact  # noqa: E402
import _errors  # noqa: E402
from diffimpact.multibody import ForwardMode, ReverseMode, simulate  # noqa: E402
from diffimpact.reproduce import table  # noqa: E402
from diffimpact.scenes import billiard  # noqa: E402
from slide_to_roll import rolling_ratio  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

SPEED, START = 2.0, (-0.9, 0.0)


def closed_form(p, duration, speed=SPEED):
    """dx/dv0 after ``duration`` s of the ball launched at ``speed`` without spin (module docstring), and t_r (s)."""
    rolling = rolling_ratio(p)
    k = (1 - rolling) / (p.cloth_friction * p.gravity)  # t_r/v0: the slide takes v0 − v_r at μ g
    return p.cloth_friction * p.gravity * k**2 * speed + rolling * duration, k * speed


def struck_x(p, centres, speed, times, rtol, derivatives=ReverseMode(), friction_steps=False,
             max_events=table.MAX_EVENTS):
    """The struck ball's x at the last of ``times`` and the run's accepted steps: the first of the balls at
    ``centres`` (m) struck at ``speed`` (m/s) along +x without spin on ``billiard.table_model(p, len(centres))``,
    the table's settings at ``rtol`` and ``max_events``, with ``derivatives`` and ``friction_steps``."""
    model = billiard.table_model(p, len(centres))
    velocity, spin = billiard.cue_strike(p, speed, 0.0)
    velocities = jnp.zeros((len(centres), 2)).at[0].set(velocity)
    spins = jnp.zeros((len(centres), 3)).at[0].set(spin)
    state = billiard.table_state(p, jnp.array(centres), velocities, spins)
    settings = table.settings(model, rtol, max_events=max_events)
    settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=friction_steps)
    run = simulate(model, state, times, table.FORMULATION, derivatives=derivatives, **settings)
    return run.q[-1, 0], run.steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=0.9, help="simulated time (s)")
    parser.add_argument("--rtol", type=float, default=table.SHOT_RTOL, help="the runs' rtol (atol = rtol/1000)")
    parser.add_argument("--cloth-damping-ratios", type=float, nargs="+", default=[0.0, 1.0], metavar="ZETA")
    parser.add_argument("--factors", type=float, nargs="+", default=[ForwardMode().friction_guard, 2.0, 1.0],
                        help="ForwardMode's friction_guard of the runs (inf: no guard)")
    parser.add_argument("--resting", type=float, nargs=2, metavar=("X", "Y"), help="a second ball at rest there")
    args = parser.parse_args()
    centres = [START] if args.resting is None else [START, tuple(args.resting)]
    times = table.save_times(args.duration)
    for zeta in args.cloth_damping_ratios:
        p = billiard.Parameters(cloth_damping_ratio=zeta)
        exact, rolls = closed_form(p, args.duration)
        print(f"{len(centres)} ball{'s' if len(centres) > 1 else ''}, cloth damping ratio {zeta:g}, rtol "
              f"{args.rtol:g}, {args.duration:g} s (rolling from {rolls:.4f} s): dx/dv0 = {exact:.6f} in "
              "closed form")

        def final(speed, steps, factor):
            return struck_x(p, centres, speed, times, args.rtol,
                            derivatives=ForwardMode(tangent_errors=False, friction_guard=factor), friction_steps=steps)

        for steps in (False, True):
            for factor in args.factors:
                derivative = eqx.filter_jit(jax.jacfwd(lambda v: final(v, steps, factor), has_aux=True))
                try:
                    value, count = derivative(jnp.asarray(SPEED))
                except eqx.EquinoxRuntimeError as error:
                    print(f"  friction_steps={steps!s:5s} friction_guard = {factor:<4g} stopped: "
                          f"{_errors.message(error)[:90]}...", flush=True)
                    continue
                print(f"  friction_steps={steps!s:5s} friction_guard = {factor:<4g} dx/dv0 = {float(value):+.6e} "
                      f"({int(count)} steps; {float(value) / exact - 1:+.2e} off)", flush=True)
                if steps:
                    break  # the guard is off where friction_steps bounds every step within it


if __name__ == "__main__":
    main()
