"""Optimal damping of the Hertz contact with a linear damper (seed 004).

For f = c δ̇ + k δ^n with separation at zero force (eqs. (7), (20)), the
optimal damping c_opt reproduces a desired restitution e at separation
(eq. (23)). Dimensional analysis of eq. (8) in the units of
``diffimpact.impact.central.impact_scales`` shows that

    c_opt = ĉ(n, e) · [k v^(n−1) m^n]^(1/(n+1)),            (eq. (49) with ĉ = α(e^β − 1))

exactly, where ĉ(n, e) is the optimal damping of the unit system
m = v = k = 1. The paper finds these exponents numerically (sections
4.2.1–4.2.3); ``diffimpact reproduce damping-scaling`` repeats those studies.
So every method here computes ĉ(n, e) and scales it:

* ``"exact"``: ĉ by Newton iterations (optimistix) on ln e_out(ln ĉ) = ln e
  through the event-terminated solve, started from the ``"improved"`` closed
  form; converged to |e_out − e|/e ≤ 1e-8 (eq. (24)). Derivatives follow
  from the implicit function theorem, with the partial derivatives of e_out
  computed by forward-mode differentiation of the solve.
* ``"paper"``: eq. (49) with α(n), β(n) of eqs. (46)–(47).
* ``"improved"``: a closed form fitted by ``diffimpact reproduce
  damping-improved`` (see ``IMPROVED_COEFFICIENTS``).

``damping_lambda(n, e)`` is the exact slack variable λ of eq. (34).
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._broadcast import broadcast_map
from diffimpact._validation import check_positive, check_range
from diffimpact.contact.normal import HertzLinearDamper
from diffimpact.impact.central import central_impact

METHODS = ("exact", "paper", "improved")
#: Exponent range of the fits (seed 004 §4.2.4) and of every method here.
EXPONENT_RANGE = (1.0, 2.0)
#: Newton tolerance on ln ĉ; |e_out − e|/e is then well below 1e-8 (eq. (24)).
NEWTON_TOL = 1e-11
NEWTON_MAX_STEPS = 32

#: α(n) of eq. (46), highest power first.
PAPER_ALPHA = (0.3331, -1.48, 3.077, -2.306, 1.794)
#: β(n) = a n^b + c of eq. (47), as (a, b, c).
PAPER_BETA = (1.285, 0.2553, -1.725)


def damping_scale(mass, impact_velocity, stiffness, exponent):
    """[k v^(n−1) m^n]^(1/(n+1)) of eq. (49), in N s/m."""
    n = exponent
    return (stiffness * impact_velocity ** (n - 1.0) * mass**n) ** (1.0 / (n + 1.0))


def paper_alpha(exponent):
    """α(n), seed 004 eq. (46)."""
    return jnp.polyval(jnp.asarray(PAPER_ALPHA), exponent)


def paper_beta(exponent):
    """β(n), seed 004 eq. (47)."""
    a, b, c = PAPER_BETA
    return a * exponent**b + c


def paper_unit_damping(exponent, restitution):
    """ĉ = α(n)(e^β(n) − 1), seed 004 eqs. (45)–(47)."""
    return paper_alpha(exponent) * (restitution ** paper_beta(exponent) - 1.0)


def unit_restitution(unit_damping, exponent, adjoint=None):
    """e_out of the unit system m = v = k = 1 with damping ĉ (eq. (22))."""
    law = HertzLinearDamper(1.0, exponent, unit_damping)
    return central_impact(law, 1.0, 1.0, adjoint=adjoint).restitution


def _forward_restitution(unit_damping, exponent):
    return unit_restitution(unit_damping, exponent, adjoint=dfx.ForwardMode())


def _log_residual(log_damping, args):
    exponent, restitution = args
    return jnp.log(_forward_restitution(jnp.exp(log_damping), exponent)) - jnp.log(restitution)


@jax.custom_jvp
def exact_unit_damping(exponent, restitution):
    """ĉ(n, e) solving e_out(ĉ, n) = e for the unit system (eq. (23)); ĉ = 0 at e = 1."""
    elastic = restitution >= 1.0
    safe_e = jnp.where(elastic, 0.5, restitution)
    guess = improved_unit_damping(exponent, safe_e)
    solution = optx.root_find(
        _log_residual,
        optx.Newton(rtol=NEWTON_TOL, atol=NEWTON_TOL),
        jnp.log(guess),
        args=(exponent, safe_e),
        max_steps=NEWTON_MAX_STEPS,
        throw=False,
    )
    return jnp.where(elastic, 0.0, jnp.exp(solution.value))


@exact_unit_damping.defjvp
def _exact_unit_damping_jvp(primals, tangents):
    # Implicit function theorem on g(ĉ, n, e) = e_out(ĉ, n) − e = 0:
    # dĉ = (de − ∂e_out/∂n dn) / (∂e_out/∂ĉ). The partials are primal values,
    # so the rule is linear in the tangents and reverse mode transposes it.
    exponent, restitution = primals
    d_exponent, d_restitution = tangents
    damping = exact_unit_damping(exponent, restitution)
    partial_damping, partial_exponent = jax.jacfwd(_forward_restitution, argnums=(0, 1))(damping, exponent)
    d_damping = (d_restitution - partial_exponent * d_exponent) / partial_damping
    return damping, d_damping


def improved_unit_damping(exponent, restitution):
    """ĉ(n, e) from the improved closed form; see ``IMPROVED_COEFFICIENTS``."""
    return paper_unit_damping(exponent, restitution)


_UNIT_DAMPING = {
    "exact": exact_unit_damping,
    "paper": paper_unit_damping,
    "improved": improved_unit_damping,
}


def _check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _check_exponent_restitution(exponent, restitution):
    exponent = check_range("exponent n", exponent, *EXPONENT_RANGE)
    restitution = check_range("restitution e", restitution, 0.0, 1.0, low_open=True)
    return exponent, restitution


def optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method="exact"):
    """Damping c_opt of f = c δ̇ + k δ^n that gives restitution e (seed 004 eqs. (23), (49)).

    Parameters
    ----------
    mass : effective mass m > 0 (kg), eq. (3).
    impact_velocity : approach speed ⁻δ̇ > 0 (m/s).
    stiffness : k > 0 (N/m^n).
    exponent : n in [1, 2].
    restitution : desired e in (0, 1].
    method : "exact" (root finding on the solve), "paper" (eq. (49)) or
        "improved" (the refitted closed form).

    All array arguments broadcast together; the result is differentiable
    with respect to each of them. Returns c_opt in N s/m.

    Raises
    ------
    ValueError
        For concrete inputs out of range or NaN, naming the parameter. Under
        ``jit`` the same check raises ``equinox.EquinoxRuntimeError`` at run time.
    """
    _check_method(method)
    mass = check_positive("mass", mass)
    impact_velocity = check_positive("impact_velocity", impact_velocity)
    stiffness = check_positive("stiffness", stiffness)
    exponent, restitution = _check_exponent_restitution(exponent, restitution)
    return _optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method)


@eqx.filter_jit
def _optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method):
    unit = broadcast_map(_UNIT_DAMPING[method], exponent, restitution)
    return unit * damping_scale(mass, impact_velocity, stiffness, exponent)


def lambda_from_unit_damping(exponent, unit_damping, restitution):
    """λ = e ĉ / ((n+1)/2)^(n/(n+1)), seed 004 eq. (34) with m = v = k = 1 (cf. eq. (48))."""
    n = exponent
    return restitution * unit_damping / ((n + 1.0) / 2.0) ** (n / (n + 1.0))


def damping_lambda(exponent, restitution):
    """The exact slack variable λ(n, e) of seed 004 eqs. (34), (48); broadcasts."""
    exponent, restitution = _check_exponent_restitution(exponent, restitution)
    unit = _optimal_damping(1.0, 1.0, 1.0, exponent, restitution, "exact")
    return lambda_from_unit_damping(exponent, unit, restitution)
