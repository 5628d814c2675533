"""Forward dynamics of a multibody ``Model`` with diffrax.

``simulate`` integrates the first-order system q̇ = v, v̇ = formulation's
accelerations with an adaptive Tsit5 solver and returns the saved states with
their diagnostics. It is a pure function of pytrees: it works under ``jit``,
``vmap`` and ``grad`` (gradients by diffrax's recursive checkpointing).
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.multibody.formulations import Formulation, project
from diffimpact.multibody.model import Model, State

#: Largest constraint residual accepted in an initial state (m or rad, m/s or rad/s).
CONSTRAINT_TOLERANCE = 1e-8


class Trajectory(eqx.Module):
    """Saved states and diagnostics, one row per save time.

    Attributes
    ----------
    t : save times (s).
    q, v : coordinates and velocities, (len(t), n).
    constraint_violation : ‖Φ(q, t)‖.
    velocity_violation : ‖Φ̇(q, v, t)‖.
    energy : kinetic plus potential energy (J).
    linear_momentum : Σ m ṙ, (len(t), 2) for planar bodies.
    angular_momentum : about the origin, (len(t),) for planar bodies.
    """

    t: jnp.ndarray
    q: jnp.ndarray
    v: jnp.ndarray
    constraint_violation: jnp.ndarray
    velocity_violation: jnp.ndarray
    energy: jnp.ndarray
    linear_momentum: jnp.ndarray
    angular_momentum: jnp.ndarray


def _is_concrete(*arrays):
    return not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(arrays))


def check_initial_state(model, state, tolerance=CONSTRAINT_TOLERANCE):
    """Raise if ``state`` violates Φ = 0 or Φ̇ = 0 by more than ``tolerance``, or D is rank deficient.

    Concrete input: a ``ValueError`` naming the first violated constraint and
    its residual, or the rank of D for redundant constraints. Traced input:
    the violation check is compiled in with ``equinox.error_if`` (the rank
    check is skipped; a singular system then gives non-finite results).
    Returns ``state`` (threaded through ``error_if`` when traced).
    """
    if not model.constraints:
        return state
    residual = model.constraint(state.q, state.t)
    rate = model.constraint_velocity(state.q, state.v, state.t)
    if not _is_concrete(model, state):
        bad = (jnp.max(jnp.abs(residual)) > tolerance) | (jnp.max(jnp.abs(rate)) > tolerance)
        message = f"initial state violates the constraints by more than {tolerance:g}"
        return eqx.error_if(state, bad, message)
    offsets = np.cumsum([0] + [c.size for c in model.constraints])
    for name, a, b in zip(model.constraint_names, offsets[:-1], offsets[1:]):
        for what, values in (("position", residual), ("velocity", rate)):
            values = np.asarray(values[a:b])
            if np.max(np.abs(values)) > tolerance:
                raise ValueError(
                    f"initial state violates {name}: {what} residual {values.tolist()} "
                    f"exceeds {tolerance:g}; use project_initial_state to correct it"
                )
    jacobian = np.asarray(model.jacobian(state.q, state.t))
    rank = np.linalg.matrix_rank(jacobian)
    if rank < jacobian.shape[0]:
        raise ValueError(
            f"constraint Jacobian is singular: rank {rank} < {jacobian.shape[0]} equations "
            "(redundant constraints, or a singular configuration)"
        )
    return state


def project_initial_state(model, state, iterations=10):
    """Correct ``state`` onto Φ = 0, Φ̇ = 0 by the direct-correction projection (eqs. (2.24)–(2.29))."""
    q, v = project(model, state.q, state.v, state.t, iterations)
    return State(q, v, state.t)


def simulate(
    model,
    state0,
    save_times,
    formulation,
    *,
    rtol=1e-10,
    atol=1e-10,
    max_steps=100_000,
    constraint_tolerance=CONSTRAINT_TOLERANCE,
    progress=False,
):
    """Integrate the equations of motion from ``state0`` and save at ``save_times``.

    Parameters
    ----------
    model : ``Model``.
    state0 : ``State`` consistent with the constraints (see
        ``project_initial_state``).
    save_times : increasing times (s); the integration runs from ``state0.t``
        to the last one.
    formulation : a ``Formulation`` instance, e.g. ``Baumgarte()``.
    rtol, atol : tolerances of the PID step-size controller.
    max_steps : cap on solver steps.
    constraint_tolerance : largest accepted initial constraint residual.
    progress : show diffrax's tqdm progress meter.

    Returns
    -------
    ``Trajectory``.
    """
    if not isinstance(formulation, Formulation):
        raise TypeError(
            "formulation must be an instance of a diffimpact.multibody Formulation "
            "(LagrangeMultipliers(), Baumgarte(), AugmentedLagrangian(), DirectCorrection()); "
            f"got {formulation!r}"
        )
    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model; got {type(model).__name__}")
    if not isinstance(state0, State):
        raise TypeError(f"state0 must be a State; got {type(state0).__name__}")
    if state0.q.shape != (model.size,) or state0.v.shape != (model.size,):
        raise ValueError(
            f"state0.q and state0.v must have shape ({model.size},); "
            f"got {state0.q.shape} and {state0.v.shape}"
        )
    state0 = check_initial_state(model, state0, constraint_tolerance)
    return _simulate(
        model, state0, jnp.asarray(save_times, dtype=float), formulation,
        jnp.asarray(rtol, dtype=float), jnp.asarray(atol, dtype=float), max_steps, progress,
    )


@eqx.filter_jit
def _simulate(model, state0, save_times, formulation, rtol, atol, max_steps, progress):
    def vector_field(t, y, args):
        q, v = y
        return v, formulation.acceleration(model, q, v, t)

    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        formulation.wrap_solver(model, dfx.Tsit5()),
        t0=state0.t,
        t1=save_times[-1],
        dt0=None,
        y0=(state0.q, state0.v),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=dfx.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps,
        progress_meter=dfx.TqdmProgressMeter() if progress else dfx.NoProgressMeter(),
    )
    q, v = solution.ys

    def diagnostics(q, v, t):
        return (
            jnp.linalg.norm(model.constraint(q, t)),
            jnp.linalg.norm(model.constraint_velocity(q, v, t)),
            model.energy(q, v),
            model.linear_momentum(q, v),
            model.angular_momentum(q, v),
        )

    return Trajectory(save_times, q, v, *jax.vmap(diagnostics)(q, v, save_times))
