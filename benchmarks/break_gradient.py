"""Benchmark: the four-ball break with cushions, its forward-mode gradient and a vmapped batch.

    python benchmarks/break_gradient.py [--duration 3] [--batch 64] [--batch-duration 1] [--max-events 200]
                                        [--check-duration 0.15] [--check-rtol 1e-8 1e-10] [--repeats 1]
                                        [--steps-at T ...] [--kernels T] [--plain-forward-mode]
                                        [--no-friction-steps] [--cloth-coulomb V_REG] [--cloth-damping-ratio ZETA]
                                        [--contact-steps [FAMILY ...]] [--friction-steps [FAMILY ...]]
                                        [--friction-step C] [--passage-step C]
                                        [--guard FACTOR] [--spin-step ANGLE] [--error-norm rms|max]
                                        [--solver {tsit5,bosh3,heun,kvaerno5,kencarp5}]

(With ``--batch-duration 3``, the run of docs/results/break.md, about 18 min on 2 loaded cores, most of it the
two calls of the batch; the default 1-s batch is shorter.)

The cue ball and the first three balls of the rack on the full table
(``billiard.table_model(p, balls=4)``, six cushions, six pockets), the cue
ball sliding at 10.729 m/s (``billiard.break_state(p, balls=4, speed)``),
with the settings of ``diffimpact.reproduce.table.integrate`` (``FORMULATION``:
Baumgarte, rtol = 1e-3, atol = 1e-6, ``MAX_STEPS``, near distance 5 mm)
and ``--max-events`` (the segments of the run: events and turning points;
the 3-s break has about 50 since the cloth's hops are not events, and every
member of the batch runs ``max_events + 1`` segments, so the default is 200);
saved at the start and the end only. Compile and run are timed apart
(``_timing.timed``: compile = first call − best later call); the ratios are
of times from this one process. Measured:

1. **forward**: one run of ``--duration`` s: compile, run, accepted steps,
   segments, contact events (onsets and separations).
2. **gradient**: ``jax.jacfwd`` (``simulate(..., derivatives=ForwardMode())``)
   of the cue ball's final (x, y) with respect to the ball–ball restitution
   and the cloth's friction coefficient (``Parameters.ball_restitution``,
   ``Parameters.cloth_friction``; the model is built from them inside the
   differentiated function). The cue ball: its x depends on both (the
   restitution sets the speed it keeps after the head-on hit, the cloth the
   topspin it gains before it and how soon it rolls after), and its y must
   stay 0 by the mirror symmetry of the shot, so its y row must be 0.
   Compile, run, and the ratio gradient run / forward run.
   Its steps are those of ``simulate``'s default in forward mode (the
   tangents' errors in the step-size control, and the slips' passages
   through the friction's band bounded); it is also timed with
   ``friction_steps`` (both of its bounds; the programs of the check, left out with
   ``--no-friction-steps``), against the forward run with the same bounds and
   against that of 1. ``--steps-at T ...``: the accepted steps of the
   forward run and of the gradient to each time T (the same programs, the
   duration being traced), to see where the gradient's steps go. ``--kernels T``: the XLA kernels a step of
   the forward run and of the gradient over T s (the same programs; ``_kernels.profile``), by kind and by the
   innermost Python frame of their instructions, and µs a step (best of ``--repeats``), to see what a
   gradient step costs beside a forward step (keep T short: the profiler holds every kernel's event, 4.5
   million for the gradient's 0.15 s). ``--plain-forward-mode``: the run of 1 given
   ``derivatives=ForwardMode()`` and not differentiated (as the fits' residuals are), with the tangents'
   errors (``simulate``'s default there, whose steps are the state's, but which computes the loaded slips of
   every family with friction for the passages' bound of a derivative) and without: compile and run of each.
   (Under the tangents' errors the friction guard is off: ``--guard`` changes nothing here.)
3. **check** of the gradient against central differences (relative steps
   1e-3 and 1e-4 of each parameter) over ``--check-duration`` s (through the
   first collisions, before the motion is chaotic), at the benchmark's
   tolerances, at them with ``simulate``'s ``friction_steps`` (steps bounded by
   the stiff friction's stability and the slips' passages through the
   friction's band; compiled apart; left out with
   ``--no-friction-steps``), and at each rtol of ``--check-rtol`` (atol =
   1e-3 rtol) with ``friction_steps`` (without, given ``--no-friction-steps``): without it the forward-mode
   derivatives grow through the stiff friction of the first ball–ball
   collision at any tolerance (docs/design/derivatives.md, "The break's μ derivative:
   stiff friction, not a turning point"). Then the run's own error beside its derivatives' errors, in metres:
   the cue ball's x at each check less that at the last (the tightest), and (e, μ) ∂x/∂(e, μ), the derivatives
   per relative change of each parameter, less the last's. Same compiled functions as 1 and 2
   (duration and tolerances are traced arguments). ``--cloth-coulomb V_REG``
   runs everything with the cloth's Ambrósio band (c_d's slope jumps at v0
   and v1) replaced by the smooth ``Coulomb(μ, V_REG)``, to see what the
   band's corners do to the μ column's convergence; ``--cloth-damping-ratio
   ZETA`` runs it on the cloth damped at ζ (``Parameters.cloth_damping_ratio``;
   the paper's cloth, 0, is undamped: a ball's vertical oscillation on it
   never dies out); ``--contact-steps [FAMILY ...]`` runs everything with
   ``AdaptiveSteps``' ``contact_steps`` (steps shrinking towards the closed
   contacts' onsets and separations, located or not) on ``all`` families, on
   those named of the cloth, the ball pairs and the cushions, or with none
   named on none, instead of the table's default (the cushions); ``--friction-steps [FAMILY ...]`` runs what is
   run with ``friction_steps`` with it on the families named (``all``, the default, or of the cloth, the ball
   pairs and the cushions) instead of on all of them. ``--friction-step C`` and ``--passage-step C``
   set ``AdaptiveSteps``' ``friction_step`` and ``passage_step``
   (``inf``: that bound of ``friction_steps`` left out), to see which of the
   two bounds the steps of the runs with ``friction_steps`` come from;
   ``--spin-step ANGLE`` sets its ``spin_step`` (``inf``: no bound on the
   balls' turns a step);
   ``--guard FACTOR`` sets ``ForwardMode``'s ``friction_guard`` (the shared option; no
   run here has the guard on, see 2).
   ``--solver kvaerno5`` runs everything with diffrax's L-stable implicit
   ``Kvaerno5`` instead of ``Tsit5`` (its forward-mode derivatives are those
   of the implicit stages' solutions, stable on the stiff friction at any
   step), ``--solver kencarp5`` with the IMEX ``KenCarp5`` (the friction
   implicit, the rest explicit: ``simulate``'s ``IMEX_SOLVERS``), ``--solver
   bosh3`` with diffrax's third-order explicit ``Bosh3`` (three evaluations a
   step; ``friction_steps``' stability bound scaled to its interval), ``--solver
   heun`` with the second-order ``Heun`` (two);
   ``--check-rtol`` with no value leaves the tight rtols out.
4. **batch**: ``jax.vmap`` over the cue speed, 10.729 (1 + 1e-3 k) m/s,
   k = 0 … ``--batch`` − 1, ``--batch-duration`` s each (default 1 s; the state built
   inside the vmapped function): compile, run, runs per second against
   single runs (the forward run of 1 at ``--batch-duration``), steps per
   member. Under ``vmap`` the ``lax.cond`` that skips a finished segment
   becomes a select: every member runs all ``max_events + 1`` segments'
   solves, and each segment's solve loops until its slowest member is done.
5. **map**: the same breaks by ``jax.lax.map`` (one member at a time inside
   one compiled call): compile, run, throughput against single runs and
   against the vmap.
"""

import argparse
import dataclasses
import functools

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
import _bounds
import _errors
from _kernels import profile
from _timing import timed
from diffimpact.contact import Coulomb
from diffimpact.multibody import ReverseMode, simulate
from diffimpact.multibody.integrate.step_control import friction_step
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

diffimpact.configure()  # float64 and the CPU cap, before the first computation

BALLS = 4
SPEED = 10.729
#: Relative steps of the central differences.
STEPS = (1e-3, 1e-4)


#: The solvers of ``--solver``.
SOLVERS = {"tsit5": diffrax.Tsit5, "bosh3": diffrax.Bosh3, "heun": diffrax.Heun, "kvaerno5": diffrax.Kvaerno5, "kencarp5": diffrax.KenCarp5}


def _run(theta, speed, duration, rtol, max_events, forward=False, friction_steps=False, coulomb=None,
         cloth_damping_ratio=0.0, options=None, solver="tsit5", formulation=None, tangent_errors=True):
    """The break at (ball–ball restitution, cloth friction) = ``theta``: the ``simulate`` trajectory.

    ``coulomb``: the cloth's friction law replaced by the smooth ``Coulomb(μ, coulomb)`` (its v_reg, m/s);
    ``cloth_damping_ratio``: ``Parameters.cloth_damping_ratio``; ``options``: the parsed options, for
    ``--contact-steps``, and for ``--friction-steps``, the families that ``friction_steps`` (True) bounds;
    ``solver``: a key of ``SOLVERS``; ``formulation``: default ``table.FORMULATION``; ``forward``: in forward
    mode (``ForwardMode``, ``--guard``'s ``friction_guard``), ``tangent_errors`` as there (forward mode's steps
    judged by the derivatives' errors too).
    """
    p = dataclasses.replace(billiard.Parameters(), ball_restitution=theta[0], cloth_friction=theta[1],
                            cloth_damping_ratio=cloth_damping_ratio)
    model, state = billiard.table_model(p, balls=BALLS), billiard.break_state(p, balls=BALLS, speed=speed)
    if coulomb is not None:
        cloth = billiard.TABLE_FORCES.index("cloth")
        law = jax.tree.map(lambda x: jnp.broadcast_to(x, (BALLS,)), Coulomb(theta[1], coulomb))
        model = eqx.tree_at(lambda m: m.forces[cloth].friction, model, law)
    settings = (table.settings(model, max_events=max_events) if options is None
                else _bounds.settings(options, model, max_events=max_events))
    named = True if getattr(options, "friction_steps", None) is None else settings["steps"].friction_steps
    settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=named if friction_steps else False,
                                            rtol=rtol, atol=1e-3 * rtol)
    formulation = table.FORMULATION if formulation is None else formulation
    derivatives = _bounds.forward_mode(options, tangent_errors=tangent_errors) if forward else ReverseMode()
    return simulate(model, state, jnp.stack([0.0, duration]), formulation, derivatives=derivatives,
                    solver=SOLVERS[solver](), **settings)


def _or_failure(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or (None, None) with the failure printed: an implicit solver's linear solve stops
    the run with an error where the tangents it is given have overflowed."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 (any run-time error of the program: reported, and the rest goes on)
        print("failed: " + _errors.message(error))
        return None, None


def _cue_xy(run):
    return run.q[-1, :2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time of 1 and 2 (s)")
    parser.add_argument("--batch", type=int, default=64, help="breaks in the vmapped batch")
    parser.add_argument("--batch-duration", type=float, default=1.0, help="simulated time of each member (s)")
    parser.add_argument("--max-events", type=int, default=200, help="simulate's max_events")
    parser.add_argument("--check-duration", type=float, default=0.15, help="simulated time of the check (s)")
    parser.add_argument("--check-rtol", type=float, nargs="*", default=[1e-8, 1e-10],
                        help="the check's tight rtols (with friction_steps)")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs after the first call")
    parser.add_argument("--steps-at", type=float, nargs="*", default=[], metavar="T",
                        help="also the accepted steps of 1 and 2 to each of these times (s), the same programs")
    parser.add_argument("--kernels", type=float, default=0.0, metavar="T",
                        help="also the XLA kernels a step of 1 and 2 over T s, by kind and by source (0: skip; the "
                             "profiler keeps every kernel's event: 0.15 s ran on a machine of 23 GB, 0.5 s ran "
                             "out of its memory)")
    parser.add_argument("--plain-forward-mode", action="store_true",
                        help="also the run of 1 given ForwardMode, not differentiated, with and without the "
                             "tangents' errors")
    parser.add_argument("--no-friction-steps", action="store_true",
                        help="checks without friction_steps: the tight rtols then go without it, and the check at the "
                             "benchmark's rtol with it is left out (its steps grow with the check's duration)")
    parser.add_argument("--cloth-coulomb", type=float, default=None, metavar="V_REG",
                        help="the cloth's Ambrósio band replaced by a smooth Coulomb law with this v_reg (m/s)")
    parser.add_argument("--cloth-damping-ratio", type=float, default=0.0, metavar="ZETA",
                        help="the cloth damped at this ratio (0: the paper's undamped Hertz cloth)")
    _bounds.add_contact_steps(parser)
    _bounds.add_friction_steps(parser)
    parser.add_argument("--solver", choices=sorted(SOLVERS), default="tsit5", help="the ODE solver of every run")
    _bounds.add_options(parser)
    args = parser.parse_args()
    bounds = _bounds.steps(args)
    run_break = functools.partial(_run, coulomb=args.cloth_coulomb, cloth_damping_ratio=args.cloth_damping_ratio,
                                  options=args, solver=args.solver)
    batch_duration = args.batch_duration
    p = billiard.Parameters()
    theta = jnp.array([p.ball_restitution, p.cloth_friction])
    rtol = table.TOLERANCES["rtol"]
    events = args.max_events

    forward = jax.jit(lambda th, speed, t, tol, steps=False: run_break(th, speed, t, tol, events, friction_steps=steps),
                      static_argnums=4)

    @functools.partial(jax.jit, static_argnums=3)
    def gradient(th, t, tol, steps=False):
        def cue(x):
            run = run_break(x, SPEED, t, tol, events, True, steps)
            return _cue_xy(run), run.steps

        return jax.jacfwd(cue, has_aux=True)(th)

    print(f"the four-ball break on the table with cushions, {SPEED} m/s; reproduce break's settings "
          f"({type(table.FORMULATION).__name__}, rtol = {rtol:g}, atol = {table.TOLERANCES['atol']:g}, "
          f"near distance {table.NEAR_DISTANCE:g} m), max_events {events}"
          + f"; {_bounds.contact_steps_label(args)}"
          + f"; solver {args.solver}"
          + f"; friction_steps' friction_step = {bounds.friction_step:g} (h λ_F ≤ "
          + f"{friction_step(SOLVERS[args.solver](), bounds.friction_step) or float('inf'):.4g} with this solver), "
          + f"passage_step = {bounds.passage_step:g}"
          + (f"; the cloth damped at ζ = {args.cloth_damping_ratio:g}" if args.cloth_damping_ratio else ""))

    last = {}

    def single(t):
        def call():
            last["run"] = forward(theta, SPEED, t, rtol)
            return last["run"].q
        first, best = timed(call, repeats=args.repeats)
        return first, best, last["run"]

    first, forward_time, run = single(args.duration)
    xy = np.asarray(_cue_xy(run))
    print(f"\n1. forward, {args.duration:g} s: compile ≈ {first - forward_time:.1f} s, run {forward_time:.3f} s, "
          f"{int(run.steps)} steps, {int(run.segments)} segments, {int(run.events.count)} contact events; "
          f"cue ball ends at ({xy[0]:.4f}, {xy[1]:.4f}) m")

    if args.plain_forward_mode:
        for errors in (True, False):
            plain = jax.jit(lambda th, errors=errors: run_break(th, SPEED, args.duration, rtol, events,
                                                                True, tangent_errors=errors))
            def plain_call(plain=plain):
                last["plain"] = plain(theta)
                return last["plain"].q

            first, plain_time = timed(plain_call, repeats=args.repeats)
            print(f"   given ForwardMode, not differentiated, tangent_errors={errors}: compile ≈ "
                  f"{first - plain_time:.1f} s, run {plain_time:.3f} s ({int(last['plain'].steps)} steps)")

    def grad_call():
        last["gradient"] = gradient(theta, args.duration, rtol)
        return last["gradient"]

    print(f"\n2. gradient (jacfwd, diffrax.ForwardMode) of the cue ball's final (x, y) w.r.t. "
          f"(ball–ball e, cloth μ), {args.duration:g} s: ", end="")
    first, gradient_time = _or_failure(timed, grad_call, repeats=args.repeats)
    if first is not None:
        jacobian, steps = (np.asarray(x) for x in last["gradient"])
        print(f"compile ≈ {first - gradient_time:.1f} s, run {gradient_time:.3f} s ({int(steps)} steps); "
              f"gradient / forward run time {gradient_time / forward_time:.2f}×")
        print(f"   d(x, y)/d(e, μ) = {np.array2string(jacobian, precision=4)} m")
    for t in args.steps_at:
        forward_steps, gradient_steps = int(forward(theta, SPEED, t, rtol).steps), int(gradient(theta, t, rtol)[1])
        print(f"   to {t:g} s: the forward run {forward_steps} steps, the gradient {gradient_steps} "
              f"({gradient_steps / forward_steps:.1f}×)")
    if args.kernels > 0:
        programs = (("forward", jax.jit(lambda th, t: forward(th, SPEED, t, rtol).steps)),
                    ("gradient", jax.jit(lambda th, t: gradient(th, t, rtol)[1])))
        for name, program in programs:
            steps = int(program(theta, args.kernels))
            by_frame, by_kind = profile(program, theta, args.kernels)
            _, seconds = timed(program, theta, args.kernels, repeats=args.repeats)
            print(f"   the {name} run's kernels, {args.kernels:g} s: {steps} steps, "
                  f"{sum(by_kind.values()) / steps:.0f} kernels a step, {1e6 * seconds / steps:.0f} µs a step")
            print("      by kind: " + ", ".join(f"{kind} {n / steps:.1f}" for kind, n in by_kind.most_common(4)))
            print("      by source: " + ", ".join(f"{where} {n / steps:.1f}" for where, n in by_frame.most_common(8)))
    friction = not args.no_friction_steps
    if friction:
        def bounded_call():
            last["bounded"] = forward(theta, SPEED, args.duration, rtol, True)
            return last["bounded"].q

        def bounded_gradient_call():
            last["gradient"] = gradient(theta, args.duration, rtol, True)
            return last["gradient"]

        _, bounded_time = timed(bounded_call, repeats=args.repeats)
        print(f"   with friction_steps (the check's "
              f"programs): forward run {bounded_time:.3f} s ({int(last['bounded'].steps)} steps), gradient run ",
              end="")
        _, bounded_gradient_time = _or_failure(timed, bounded_gradient_call, repeats=args.repeats)
        if bounded_gradient_time is not None:
            jacobian = np.asarray(last["gradient"][0])
            print(f"{bounded_gradient_time:.3f} s: {bounded_gradient_time / bounded_time:.2f}× that forward run, "
                  f"{bounded_gradient_time / forward_time:.2f}× the forward run of 1")
            print(f"   d(x, y)/d(e, μ) = {np.array2string(jacobian, precision=4)} m")

    t = args.check_duration
    print(f"\n3. check against central differences, {t:g} s (forward mode; central differences at relative steps "
          f"{', '.join(f'{h:g}' for h in STEPS)})")
    checks = ((rtol, False),) + ((rtol, True),) * friction + tuple((tol, friction) for tol in args.check_rtol)
    cue_x = {}  # the cue ball's x at each check, for its error against the tightest
    for tol, steps in checks:
        def check_call():
            last["check"] = gradient(theta, t, tol, steps)
            return last["check"]

        label = " with friction_steps" if steps else ""
        print(f"   rtol {tol:g}{label}: ", end="")
        _, gradient_time = _or_failure(timed, check_call, repeats=args.repeats)  # (simulate's friction guard)
        if gradient_time is None:
            continue
        def forward_call():
            last["forward"] = forward(theta, SPEED, t, tol, steps)
            return last["forward"].q

        _, forward_time = timed(forward_call, repeats=args.repeats)
        jacobian, count = (np.asarray(x) for x in last["check"])
        cue_x[tol, steps] = (float(_cue_xy(last["forward"])[0]), jacobian[0] * np.asarray(theta))
        columns = []
        for h in STEPS:
            columns.append(np.stack([
                (np.asarray(_cue_xy(forward(theta + d, SPEED, t, tol, steps)))
                 - np.asarray(_cue_xy(forward(theta - d, SPEED, t, tol, steps)))) / (2 * d[k])
                for k, d in enumerate(np.diag(h * np.asarray(theta)))], axis=1))
        print(f"{int(count)} steps, forward run {forward_time:.3f} s, gradient run "
              f"{gradient_time:.3f} s ({gradient_time / forward_time:.2f}×)")
        print(f"      forward mode dx/d(e, μ) = {np.array2string(jacobian[0], precision=5)}, "
              f"dy/d(e, μ) = {np.array2string(jacobian[1], precision=3)}")
        for h, fd in zip(STEPS, columns):
            error = np.abs(jacobian[0] - fd[0]) / np.abs(fd[0])
            print(f"      central differences, step {h:g}: dx/d(e, μ) = {np.array2string(fd[0], precision=5)}; "
                  f"relative difference {np.array2string(error, formatter={'float_kind': lambda v: f'{v:.1e}'})}")
    if len(cue_x) > 1:  # the run's own error beside its derivatives' errors, both in metres
        (tight_tol, tight_steps), (tight_x, tight_scaled) = list(cue_x.items())[-1]
        print(f"   against the check at rtol {tight_tol:g}{' with friction_steps' if tight_steps else ''}, in m "
              f"((e, μ) ∂x/∂(e, μ): x's change per relative change of each):")
        for (tol, steps), (x, scaled) in list(cue_x.items())[:-1]:
            print(f"      rtol {tol:g}{' with friction_steps' if steps else ''}: the cue ball's x off by "
                  f"{x - tight_x:+.2e}, (e, μ) ∂x/∂(e, μ) off by "
                  f"{np.array2string(scaled - tight_scaled, formatter={'float_kind': lambda v: f'{v:+.2e}'})}")

    if args.batch < 1:
        return
    speeds = SPEED * (1 + 1e-3 * jnp.arange(args.batch))
    batched = jax.jit(jax.vmap(lambda speed: run_break(theta, speed, batch_duration, rtol, events)))
    if batch_duration != args.duration:
        first, single_time, run = single(batch_duration)
        print(f"\n   forward, {batch_duration:g} s: run {single_time:.3f} s, {int(run.steps)} steps, "
              f"{int(run.segments)} segments")
    else:
        single_time = forward_time

    def batch_call():
        last["batch"] = batched(speeds)
        return last["batch"].q

    first, batch_time = timed(batch_call, repeats=args.repeats)
    runs = last["batch"]
    steps, segments = np.asarray(runs.steps), np.asarray(runs.segments)
    print(f"\n4. vmap of {args.batch} breaks, cue speed {SPEED} (1 + 1e-3 k) m/s, {batch_duration:g} s each: "
          f"compile ≈ {first - batch_time:.1f} s, run {batch_time:.3f} s")
    print(f"   {args.batch / batch_time:.3f} runs/s against {1 / single_time:.3f} runs/s single: "
          f"throughput {args.batch * single_time / batch_time:.2f}× ({args.batch} single runs ≈ "
          f"{args.batch * single_time:.1f} s)")
    print(f"   per member: steps {steps.min()}–{steps.max()} (mean {steps.mean():.0f}), segments "
          f"{segments.min()}–{segments.max()}; every member runs the {events + 1} segment solves of the scan")
    same = np.asarray(runs.q[0]) - np.asarray(forward(theta, speeds[0], batch_duration, rtol).q)
    print(f"   member 0 against its single run: largest difference of q {np.abs(same).max():.2e}")

    mapped = jax.jit(lambda speeds: jax.lax.map(lambda speed: run_break(theta, speed, batch_duration, rtol, events).q,
                                                speeds))
    first, map_time = timed(lambda: mapped(speeds), repeats=args.repeats)
    print(f"\n5. lax.map of the same {args.batch} breaks (one after the other in one compiled call): compile ≈ "
          f"{first - map_time:.1f} s, run {map_time:.3f} s; throughput {args.batch * single_time / map_time:.2f}× "
          f"single runs, {batch_time / map_time:.2f}× the vmap's")


if __name__ == "__main__":
    main()
