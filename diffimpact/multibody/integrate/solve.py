"""A run without contacts, one diffrax solve (``solve``), and what every run shares: the accelerations traced
once (``acceleration``) and the ``Trajectory`` of the saved states (``saved_trajectory``)."""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact.multibody.integrate import progress as run_progress
from diffimpact.multibody.integrate.options import AdaptiveSteps
from diffimpact.multibody.integrate.step_control import SpinController, spin_bounded, tangent_errors
from diffimpact.multibody.trajectory import Trajectory


@eqx.filter_jit
def acceleration(formulation, model, q, v, t):
    """``formulation.acceleration(model, q, v, t)``, traced once per model structure and shapes.

    diffrax traces a solve's vector field several times (five for Tsit5 with
    an event), and each trace of the 16-ball table's accelerations takes
    about 0.4 s; this jit's cache serves the later traces, and XLA inlines
    the call (docs/design/event-engine.md, "Tracing the accelerations once").
    """
    return formulation.acceleration(model, q, v, t)


@eqx.filter_jit
def solve(model, state0, save_times, formulation, solver, steps, derivatives, max_steps, progress):
    """The run of a model without ``Contact``s: one diffrax solve from ``state0``, saved at ``save_times``.

    ``steps``: ``StepSizes`` (``checked``); the adaptive steps of spatial bodies are bounded by ``spin_step``
    (``SpinController``), and in forward mode by the tangents' errors (``TangentErrors``). ``derivatives``:
    ``Derivatives``. The other arguments as ``simulate``'s, checked.
    """
    controller, dt0 = steps.controller()
    if isinstance(steps, AdaptiveSteps):
        controller = tangent_errors(controller, derivatives)
        if spin_bounded(model, steps.spin_step):
            controller = SpinController(controller, steps.spin_step)

    def vector_field(t, y, args):
        q, v = y
        return v, acceleration(formulation, model, q, v, t)

    solution = dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        formulation.wrap_solver(model, solver),
        t0=state0.t,
        t1=save_times[-1],
        dt0=dt0,
        y0=(state0.q, state0.v),
        saveat=dfx.SaveAt(ts=save_times),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=derivatives.adjoint(segments=False),
        progress_meter=run_progress.meter(progress, state0.t, save_times[-1], state0.t, save_times[-1]),
    )
    if progress:
        run_progress.finish(solution.ys)
    return saved_trajectory(model, save_times, *solution.ys, solution.stats["num_accepted_steps"], jnp.asarray(1))


def saved_trajectory(model, save_times, q, v, steps, segments, events=None, contact_history=None, removed=None):
    """The ``Trajectory`` of the saved states, with their diagnostics.

    ``removed``: (family index, removal times) pairs, the time each contact of
    that family was removed (``Geometry.removal``; inf if it was not): from
    then on its elastic energy is not counted (a fallen ball under the
    surface is not stored in the plane); ``None`` for a model without contacts.
    """
    def diagnostics(q, v, t):
        gone = sum(jnp.sum(jnp.where(t >= times, model.forces[k].elastic_energies(model.split(q)), 0.0))
                   for k, times in removed or ())
        return (
            jnp.linalg.norm(model.constraint(q, t)),
            jnp.linalg.norm(model.constraint_velocity(q, v, t)),
            model.energy(q, v) - gone,
            model.linear_momentum(q, v),
            model.angular_momentum(q, v),
        )

    removals = None if removed is None else tuple(dict(removed).get(k) for k in range(len(model.forces)))
    return Trajectory(save_times, q, v, *jax.vmap(diagnostics)(q, v, save_times), steps, segments, events,
                      contact_history, removals)
