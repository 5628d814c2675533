"""Direct central impact: m δ̈ + f_c(δ, δ̇) = 0 from δ = 0, δ̇ = v ([Poursina 2020] eqs. (1)–(5)).

The penetration δ of two bodies with effective mass m (eq. (3)) is integrated
with diffrax in two event-terminated phases:

1. compression, from contact onset until δ̇ = 0 (maximum penetration, point B
   of [Poursina 2020] fig. 2);
2. restitution, until separation: the force vanishes (c δ̇ + k δ^n = 0,
   eq. (20)) for laws with ``separates_at_zero_force``, otherwise δ returns
   to 0 (Hertz, Hunt–Crossley family).

Each phase ends at the located event (an ``optimistix.Newton`` root of the
event function on the dense output), and ``jax.grad`` through the solve
includes the sensitivity of the event time.

The equation is integrated in the natural units of the impact, the length
L = (m v² / k)^(1/(n+1)) (the Hertz maximum penetration up to a factor, eq.
(27)) and the time L / v, so the same tolerances serve stiffnesses from 1 to
1e10 N/m^n and masses from 1e-5 to 1e2 kg. This is a change of units only:
the force is evaluated in SI units from the law as given.

Heavy damping gets units of its own. With ĉ = ∂F/∂δ̇ at onset, in units of
m v / L, ĉ ≫ 1 means the damping time m/c is short: the body is stopped at
δ_m ≈ m v / c and then creeps back on the balance c δ̇ ≈ −f_spring, to
separate at zero force (eq. (20)) with the creep speed, so e → k m^n
v^(n−1)/c^(n+1) for f = c δ̇ + k δ^n (e ≈ 1/(4ξ²) for Kelvin–Voigt). Each
phase therefore integrates the penetration, its rate and time in units of
their sizes in that phase (δ_m, the creep speed, 1/(1 + ĉ)), and for
zero-force separation the force itself is a state (dF/dt = ∂F/∂δ δ̇ +
∂F/∂δ̇ δ̈): the event F = 0 then needs no difference of the nearly equal
spring and damper forces. Kelvin–Voigt restitution follows the closed form
to ~1e-11 for every damping ratio up to 1e10 (e = 2.5e-21); the step limit
``MAX_STEPS`` is reached below e ≈ 1e-75.
"""

import dataclasses

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._broadcast import broadcast_map
from diffimpact._validation import check_count, check_positive, check_shapes, require_float64
from diffimpact.contact.normal import NormalForceLaw

#: Integration settings. The tolerances reproduce the Kelvin–Voigt closed form
#: to about 1e-11 (tests/impact/test_central.py).
RTOL = 1e-10
ATOL = 1e-12
EVENT_TOL = 1e-12
MAX_STEPS = 4096
#: Longest phase, in units of L / v (an undamped Hertz impact lasts about 3).
T_MAX = 1e3


class ImpactResult(eqx.Module):
    """Outcome of one central impact (SI units).

    Attributes
    ----------
    restitution : e_out = −δ̇(separation) / v, [Poursina 2020] eq. (22).
    contact_duration : time from onset to separation (s).
    max_penetration : δ_m at δ̇ = 0 (m).
    separation_penetration : δ at separation, ˢδ (m), eq. (51); 0 for laws
        that separate at zero penetration.
    separated : whether separation was found within ``MAX_STEPS`` steps per
        phase. ``central_impact`` raises when it is not for concrete inputs;
        under ``jit``/``vmap``/``grad`` the result then has NaN restitution,
        contact_duration and separation_penetration.
    time, penetration, penetration_rate, force : the history on ``history``
        equally spaced times over the contact (``None`` unless requested).
    """

    restitution: jnp.ndarray
    contact_duration: jnp.ndarray
    max_penetration: jnp.ndarray
    separation_penetration: jnp.ndarray
    separated: jnp.ndarray
    time: jnp.ndarray | None
    penetration: jnp.ndarray | None
    penetration_rate: jnp.ndarray | None
    force: jnp.ndarray | None


def _phase(vector_field, event_fn, z0, args, adjoint, dense):
    event = dfx.Event(event_fn, root_finder=optx.Newton(rtol=EVENT_TOL, atol=EVENT_TOL))
    return dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        dfx.Tsit5(),
        t0=0.0,
        t1=T_MAX,
        dt0=None,
        y0=z0,
        args=args,
        saveat=dfx.SaveAt(t1=True, dense=dense),
        stepsize_controller=dfx.PIDController(rtol=RTOL, atol=ATOL),
        event=event,
        adjoint=adjoint,
        max_steps=MAX_STEPS,
        throw=False,
    )


def _scaled_force(law, x, u, scales):
    """The force in units of m v²/L at the dimensionless (δ/L, δ̇/v) = (x, u); then ẍ = −F."""
    mass, length, speed = scales
    return law.force(length * x, speed * u) * length / (mass * speed**2)


def _damping(law, x, u, scales):
    """∂F/∂u: the dimensionless damping coefficient at (x, u)."""
    return jax.jvp(lambda w: _scaled_force(law, x, w, scales), (u,), (jnp.ones_like(u),))[1]


# Each phase integrates z = y / unit componentwise, with ``unit`` the size the
# component reaches in that phase, so that the absolute tolerance is relative
# to it. This matters when the damping is heavy: with ĉ = ∂F/∂u ≫ 1 the
# penetration stays near 1/ĉ and the rebound speed is about F_max/ĉ
# (ĉ^−(n+1) for c δ̇ + k δ^n), far below the unit length and speed.


def _compression_field(t, z, args):
    law, scales, unit, clock = args
    x, u = z * unit
    return clock * jnp.stack([u, -_scaled_force(law, x, u, scales)]) / unit


def _compression_ends(t, y, args, **kwargs):
    return y[1]


def _restitution_field(t, z, args):
    law, scales, unit, clock = args
    if not law.separates_at_zero_force:
        return _compression_field(t, z, args)
    # The force F is a state of its own, dF/dτ = ∂F/∂x u − ∂F/∂u F: the
    # separation event F = 0 (eq. (20)) then needs no difference of the
    # nearly equal spring and damper forces of a heavily damped contact.
    x, u, force = z * unit
    rate = jax.jvp(lambda x_, u_: _scaled_force(law, x_, u_, scales), (x, u), (u, -force))[1]
    return clock * jnp.stack([u, -force, rate]) / unit


def _separation(t, y, args, **kwargs):
    law = args[0]
    return y[2] if law.separates_at_zero_force else y[0]


def impact_scales(law, mass, impact_velocity):
    """Natural length L = (m v²/k)^(1/(n+1)) and speed v of an impact."""
    length = (mass * impact_velocity**2 / law.stiffness) ** (1.0 / (law.exponent + 1.0))
    return length, impact_velocity


def _solve(law, mass, impact_velocity, adjoint, history):
    length, speed = impact_scales(law, mass, impact_velocity)
    scales = (mass, length, speed)
    dense = history > 0
    # Compression: δ_m/L ≈ x_1 = 1/(1 + ĉ) with ĉ the damping at onset; the
    # velocity ends on its way to the damped creep speed, about u_1 = F/(F + ĉ)
    # with F the spring force at x_1, where the event δ̇ = 0 must be resolved.
    start = jnp.array([0.0, 1.0])
    onset_damping = _damping(law, jnp.asarray(0.0), jnp.asarray(1.0), scales)
    x_1 = 1.0 / (1.0 + onset_damping)
    spring_1 = _scaled_force(law, x_1, jnp.zeros_like(x_1), scales)
    unit_1 = jnp.stack([x_1, jnp.minimum(1.0, spring_1 / (spring_1 + onset_damping))])
    # Time in units of the damping time, likewise ≈ 1/(1 + ĉ) (so in units of m/c when ĉ ≫ 1).
    clock = x_1
    first = _phase(_compression_field, _compression_ends, start / unit_1, (law, scales, unit_1, clock), adjoint, dense)
    y_max = first.ys[-1] * unit_1
    # Restitution: δ stays below δ_m; the rebound speed is about F/(F + ĉ) at δ_m.
    force_max = _scaled_force(law, y_max[0], y_max[1], scales)
    rebound = force_max / (force_max + _damping(law, y_max[0], y_max[1], scales))
    if law.separates_at_zero_force:
        y_2 = jnp.stack([y_max[0], y_max[1], force_max])
        unit_2 = jnp.stack([y_max[0], rebound, rebound * force_max])
    else:
        y_2, unit_2 = y_max, jnp.stack([y_max[0], jnp.ones_like(rebound)])
    second = _phase(_restitution_field, _separation, y_2 / unit_2, (law, scales, unit_2, clock), adjoint, dense)
    y_sep = second.ys[-1] * unit_2
    t_max, t_sep = clock * first.ts[-1], clock * second.ts[-1]
    separated = second.event_mask & first.event_mask
    nan = jnp.nan
    restitution = jnp.where(separated, -y_sep[1], nan)
    time_unit = length / speed
    if dense:
        fraction = jnp.linspace(0.0, 1.0, history)
        total = t_max + t_sep
        t_bar = fraction * total
        ys = jax.vmap(
            lambda t: jnp.where(
                t <= t_max,
                first.evaluate(jnp.minimum(t, t_max) / clock) * unit_1,
                (second.evaluate(jnp.clip(t - t_max, 0.0, t_sep) / clock) * unit_2)[:2],
            )
        )(t_bar)
        time = t_bar * time_unit
        penetration = length * ys[:, 0]
        rate = speed * ys[:, 1]
        force = law.force(penetration, rate)
    else:
        time = penetration = rate = force = None
    return ImpactResult(
        restitution=restitution,
        contact_duration=jnp.where(separated, (t_max + t_sep) * time_unit, nan),
        max_penetration=length * y_max[0],
        separation_penetration=jnp.where(separated, length * y_sep[0], nan),
        separated=separated,
        time=time,
        penetration=penetration,
        penetration_rate=rate,
        force=force,
    )


def central_impact(law, mass, impact_velocity, *, history=0, adjoint=None):
    """Resolve a direct central impact in time ([Poursina 2020] eq. (4)).

    Parameters
    ----------
    law : NormalForceLaw
        The contact force law; its array fields broadcast with ``mass`` and
        ``impact_velocity``.
    mass : effective mass m = m_i m_j / (m_i + m_j) (kg), eq. (3).
    impact_velocity : approach speed ⁻δ̇ > 0 (m/s), eq. (5).
    history : int (Python or NumPy integer)
        Number of equally spaced samples of δ, δ̇ and the force over the
        contact to return (0: none).
    adjoint : diffrax adjoint; the default supports reverse mode
        (``jax.grad``); pass ``diffrax.ForwardMode()`` for ``jax.jvp``/``jacfwd``.

    Returns
    -------
    ImpactResult, with the broadcast shape of the inputs (history samples on
    a trailing axis).

    Raises
    ------
    TypeError
        For a ``law`` that is not a ``NormalForceLaw``, a ``mass`` or
        ``impact_velocity`` that is not a real number or array of real numbers
        (a string, bool, complex number, ...), a ``history`` that is not an int.
    ValueError
        For ``mass``, ``impact_velocity`` not positive and finite, a negative
        ``history``, an empty array, shapes of ``mass``, ``impact_velocity``
        and the law's fields that do not broadcast together, or, for concrete inputs, when the solver finds no
        separation (restitution below about 1e-75, or a law that never lets
        go); under ``jit`` the inputs are checked with ``equinox.error_if``
        and a missing separation gives ``separated=False`` with NaN.
    """
    require_float64("diffimpact.impact.central_impact")
    if not isinstance(law, NormalForceLaw):
        raise TypeError(f"law must be a diffimpact.contact.NormalForceLaw, got {type(law).__name__}")
    history = check_count("history", history)
    mass = check_positive("mass", mass)
    impact_velocity = check_positive("impact_velocity", impact_velocity)
    fields = [(f"law.{f.name}", getattr(law, f.name)) for f in dataclasses.fields(law)]
    arrays = [(name, value) for name, value in fields if isinstance(value, (jax.Array, np.ndarray))]
    check_shapes([*arrays, ("mass", mass), ("impact_velocity", impact_velocity)])
    adjoint = dfx.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    result = _central_impact(law, mass, impact_velocity, adjoint, history)
    if not isinstance(result.separated, jax.core.Tracer):
        _check_separated(result.separated)
    return result


def _check_separated(separated):
    separated = np.asarray(separated)
    if separated.all():
        return
    failed = np.argwhere(~separated) if separated.ndim else np.zeros((1, 0), int)
    where = f" (first at index {tuple(failed[0].tolist())})" if separated.ndim else ""
    raise ValueError(
        f"central_impact found no separation within {MAX_STEPS} solver steps per phase for "
        f"{failed.shape[0]} of {separated.size} impacts{where}: the rebound is too slow to "
        "resolve (restitution below about 1e-75, i.e. damping far above critical) or the law "
        "never lets go; reduce the law's damping, or call under jax.jit to get NaN with "
        "separated=False instead"
    )


@eqx.filter_jit
def _central_impact(law, mass, impact_velocity, adjoint, history):
    return broadcast_map(lambda *a: _solve(*a, adjoint, history), law, mass, impact_velocity)
