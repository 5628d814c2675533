"""Forward-mode derivatives and vmap through a ball–ball collision on the cloth (``billiard.cut_shot``, head-on).

The cue ball slides without spin into the object ball (e = 0.93, Alciatore's
ball–ball friction, the cloth's Ambrósio friction) and is followed 0.2 s
past the collision, at the shots' tight tolerances (rtol = 1e-8), and at the
break's rtol = 1e-3 with ``AdaptiveSteps``' ``friction_steps``: without them the
same derivative comes out −1e23 m against −0.10 m by central differences
(the stiff friction's slip chatters across its band within the tolerance,
and the tangents of those steps grow without bound: docs/design/derivatives.md).
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.contact import Alciatore
from diffimpact.multibody import ForwardMode, ReverseMode, State, simulate
from diffimpact.reproduce import table
from diffimpact.scenes import billiard

P = billiard.Parameters()
SPEED, CUE_X, DURATION = 2.0, -0.1, 0.2


def _cue_x(restitution, speed, derivatives=ReverseMode(), **settings):
    """The cue ball's final x (m) of the head-on shot with ball–ball ``restitution`` (``settings``: ``cut_shot``'s)."""
    p = dataclasses.replace(P, ball_restitution=restitution)
    run = billiard.cut_shot(p, Alciatore(), speed, 0.0, CUE_X, 0.0, False, DURATION, derivatives=derivatives,
                            **settings)
    return run.q[-1, 0]


@pytest.fixture(scope="module")
def forward():
    return jax.jit(_cue_x)


@pytest.mark.slow  # about 1.5 min on 2 cores, most of it compiling the forward-mode derivative
def test_forward_mode_derivative_wrt_restitution_matches_central_differences(forward, central_difference):
    derivative = jax.jit(lambda e: jax.jvp(lambda x: _cue_x(x, SPEED, ForwardMode()), (e,), (1.0,))[1])
    grad = float(derivative(P.ball_restitution))
    fd = central_difference(lambda e: forward(e, SPEED), [P.ball_restitution], 0, relative_step=1e-3)
    # A harder hit leaves the cue ball less of its speed, so it ends further back.
    assert grad < 0
    # The bound is the methods' own: the differences' noise is the solves' error (about 2e-9 m at rtol = 1e-8,
    # from how they scatter at small steps) over 2h = 1.9e-3, about 1e-5 relative, and the differences at
    # relative steps 5e-4 to 2e-3 agree to 5e-5; the tangent itself is not error-controlled and sits 1.6e-4 to
    # 2e-4 from their Richardson extrapolation. 1e-3 still refutes a wrong derivative: at the break's
    # rtol = 1e-3 it comes out 1e25 times too large.
    assert grad == pytest.approx(fd, rel=1e-3)


@pytest.mark.slow  # about 1 min on 2 cores, most of it compiling
def test_forward_mode_at_the_break_tolerance_with_friction_steps(forward, central_difference):
    # rtol = 1e-3 (atol = 1e-5: ``shot_tolerances``)
    def cue_x(restitution):
        return _cue_x(restitution, SPEED, ForwardMode(), rtol=1e-3, friction_steps=True)

    grad = float(jax.jit(lambda e: jax.jvp(cue_x, (e,), (1.0,))[1])(P.ball_restitution))
    fd = central_difference(lambda e: forward(e, SPEED), [P.ball_restitution], 0, relative_step=1e-3)
    # Against the tight solves' differences (−0.1021 m): a derivative of runs at rtol = 1e-3 is as good as their
    # dependence on e, and central differences of such runs are off by up to 4 % themselves (−0.1065 m without the
    # friction steps, −0.1026 m with them); measured −0.10218 m, 0.07 % off (−0.1010 m, 1.1 %, before the friction
    # steps made slips cross the friction's band in steps). 0.5 %, a few times the run's rtol,
    # holds what the steps through the band resolve.
    assert grad == pytest.approx(fd, rel=5e-3)


@pytest.mark.slow  # about 40 s: compiles the single and the vmapped run
def test_vmap_over_the_cue_speed_matches_single_runs(forward):
    speeds = jnp.array([SPEED, 1.5 * SPEED])
    batched = np.asarray(jax.jit(jax.vmap(lambda v: _cue_x(P.ball_restitution, v)))(speeds))
    single = np.array([float(forward(P.ball_restitution, v)) for v in speeds])
    assert batched[1] > batched[0]  # a faster cue ball follows further
    # the same solves to rtol = 1e-8 (|x| ≈ 0.05 m): the programs may differ in round-off and so in their steps,
    # and then by the solves' error, about 2e-9 m (the scatter of nearby solves); the bound allows 5 times that
    np.testing.assert_allclose(batched, single, rtol=0, atol=1e-8)


def test_a_ball_rolling_and_bouncing_on_the_cloth_keeps_its_derivative_at_the_break_tolerance():
    """A ball rolling at v0 on the paper's undamped cloth, started 20 µm high, bounces on it for the whole run, and
    each bounce moves its slip through Ambrósio's band (the lever R − δ/2 moves with the depth δ). With
    ``friction_steps`` dx/dv0 after T is right at the break's rtol = 1e-3; with either of its bounds alone it came
    out 1.5e12 and 11.6 (docs/design/step-control.md, "Where the bounded break's steps go": below v0 = 1e-4 m/s
    the cloth exerts no friction, so the stability bound at a step's start is none and only the passages catch
    the slip entering the band)."""
    duration, speed, lift = 0.3, 1.0, 2e-5
    p = billiard.Parameters()
    model = billiard.table_model(p, balls=1)

    def final_x(v0, rtol):
        velocity = jnp.stack([v0, 0.0])
        q, v = billiard.ball_state(p, jnp.array([[-0.6, 0.0]]), velocity[None], billiard.rolling_spin(p, velocity)[None])
        settings = table.settings(model, rtol, max_events=20)
        settings["steps"] = dataclasses.replace(settings["steps"], friction_steps=True)
        run = simulate(model, State(q.at[2].add(lift), v), jnp.stack([0.0, duration]), table.FORMULATION,
                       derivatives=ForwardMode(), **settings)
        return run.q[-1, 0]

    # one compiled program (rtol is traced) gives the derivative and, for the differences, the values
    derivative = jax.jit(lambda v0, rtol: jax.jvp(lambda x: final_x(x, rtol), (v0,), (1.0,)))
    slope = float(derivative(speed, 1e-3)[1])
    step = 1e-5 * speed
    difference = (float(derivative(speed + step, 1e-10)[0]) - float(derivative(speed - step, 1e-10)[0])) / (2 * step)
    # Rolling without resistance, x = x0 + v0 T: the bounces' friction changes that by 3.8e-4 (measured)
    assert difference == pytest.approx(duration, rel=1e-3)
    # To the run's own tolerance (measured 3.7e-5 off); the failures above are 11.6 and 1.5e12
    assert slope == pytest.approx(difference, rel=1e-3)
