"""Direct central impact: m δ̈ + f_c(δ, δ̇) = 0 from δ = 0, δ̇ = v (seed 004 eqs. (1)–(5)).

The penetration δ of two bodies with effective mass m (eq. (3)) is integrated
with diffrax in two event-terminated phases:

1. compression, from contact onset until δ̇ = 0 (maximum penetration, point B
   of seed 004 fig. 2);
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
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from diffimpact._broadcast import broadcast_map
from diffimpact._validation import check_positive
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
    restitution : e_out = −δ̇(separation) / v, seed 004 eq. (22).
    contact_duration : time from onset to separation (s).
    max_penetration : δ_m at δ̇ = 0 (m).
    separation_penetration : δ at separation, ˢδ (m), eq. (51); 0 for laws
        that separate at zero penetration.
    separated : whether separation was found within the integration window.
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


def _phase(vector_field, event_fn, y0, args, adjoint, dense):
    event = dfx.Event(event_fn, root_finder=optx.Newton(rtol=EVENT_TOL, atol=EVENT_TOL))
    return dfx.diffeqsolve(
        dfx.ODETerm(vector_field),
        dfx.Tsit5(),
        t0=0.0,
        t1=T_MAX,
        dt0=None,
        y0=y0,
        args=args,
        saveat=dfx.SaveAt(t1=True, dense=dense),
        stepsize_controller=dfx.PIDController(rtol=RTOL, atol=ATOL),
        event=event,
        adjoint=adjoint,
        max_steps=MAX_STEPS,
        throw=False,
    )


def _scaled_force(law, y, scales):
    length, speed = scales
    return law.force(length * y[0], speed * y[1])


def _vector_field(t, y, args):
    law, mass, scales = args
    length, speed = scales
    acceleration = -_scaled_force(law, y, scales) / mass
    return jnp.stack([y[1], acceleration * length / speed**2])


def _compression_ends(t, y, args, **kwargs):
    return y[1]


def _separation(t, y, args, **kwargs):
    law, mass, scales = args
    if law.separates_at_zero_force:
        return _scaled_force(law, y, scales) / (mass * scales[1] ** 2 / scales[0])
    return y[0]


def impact_scales(law, mass, impact_velocity):
    """Natural length L = (m v²/k)^(1/(n+1)) and speed v of an impact."""
    length = (mass * impact_velocity**2 / law.stiffness) ** (1.0 / (law.exponent + 1.0))
    return length, impact_velocity


def _solve(law, mass, impact_velocity, adjoint, history):
    scales = impact_scales(law, mass, impact_velocity)
    length, speed = scales
    args = (law, mass, scales)
    dense = history > 0
    first = _phase(_vector_field, _compression_ends, jnp.array([0.0, 1.0]), args, adjoint, dense)
    y_max = first.ys[-1]
    second = _phase(_vector_field, _separation, y_max, args, adjoint, dense)
    y_sep = second.ys[-1]
    t_max, t_sep = first.ts[-1], second.ts[-1]
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
                t <= t_max, first.evaluate(jnp.minimum(t, t_max)), second.evaluate(jnp.clip(t - t_max, 0.0, t_sep))
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
    """Resolve a direct central impact in time (seed 004 eq. (4)).

    Parameters
    ----------
    law : NormalForceLaw
        The contact force law; its array fields broadcast with ``mass`` and
        ``impact_velocity``.
    mass : effective mass m = m_i m_j / (m_i + m_j) (kg), eq. (3).
    impact_velocity : approach speed ⁻δ̇ > 0 (m/s), eq. (5).
    history : int
        Number of equally spaced samples of δ, δ̇ and the force over the
        contact to return (0: none).
    adjoint : diffrax adjoint; the default supports reverse mode
        (``jax.grad``); pass ``diffrax.ForwardMode()`` for ``jax.jvp``/``jacfwd``.

    Returns
    -------
    ImpactResult, with the broadcast shape of the inputs (history samples on
    a trailing axis).
    """
    if not isinstance(law, NormalForceLaw):
        raise TypeError(f"law must be a diffimpact.contact.NormalForceLaw, got {type(law).__name__}")
    if not isinstance(history, int) or history < 0:
        raise ValueError(f"history must be a non-negative int, got {history!r}")
    mass = check_positive("mass", mass)
    impact_velocity = check_positive("impact_velocity", impact_velocity)
    adjoint = dfx.RecursiveCheckpointAdjoint() if adjoint is None else adjoint
    return _central_impact(law, mass, impact_velocity, adjoint, history)


@eqx.filter_jit
def _central_impact(law, mass, impact_velocity, adjoint, history):
    return broadcast_map(lambda *a: _solve(*a, adjoint, history), law, mass, impact_velocity)
