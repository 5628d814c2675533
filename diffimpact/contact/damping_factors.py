"""Hunt–Crossley hysteresis damping factors from a coefficient of restitution.

Each function returns the factor μ of f = (μ δ̇ + k) δ^n (``HuntCrossley``,
[Poursina 2020] eq. (9)) for a contact of stiffness ``k`` hit at the impact velocity
``v = ⁻δ̇ > 0`` that should rebound with the coefficient of restitution
``e = −⁺δ̇/⁻δ̇`` (eq. (11)). Units: k in N/m^n, v in m/s, μ in N s/m^(n+1).

Eqs. (13)–(16) are approximations of the solution of the impact ODE (10) and
reproduce ``e`` only approximately; ``exact`` inverts that solution and
reproduces it for any mass and exponent n (eqs. (18)–(19)).
"""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._validation import check_positive, check_range
from diffimpact.contact.normal import HuntCrossley


def _checked(stiffness, restitution, impact_velocity):
    return (
        check_positive("stiffness", stiffness),
        check_range("restitution", restitution, 0.0, 1.0, low_open=True),
        check_positive("impact_velocity", impact_velocity),
    )


def hunt_crossley(stiffness, restitution, impact_velocity):
    """μ = 3k(1 − e)/(2v), Hunt and Crossley ([Poursina 2020], eq. (13)); for e near 1."""
    k, e, v = _checked(stiffness, restitution, impact_velocity)
    return 1.5 * k * (1.0 - e) / v


def lankarani_nikravesh(stiffness, restitution, impact_velocity):
    """μ = 3k(1 − e²)/(4v), Lankarani and Nikravesh ([Poursina 2020], eq. (14); [Gismeros Moreno 2022], eq. (3.7))."""
    k, e, v = _checked(stiffness, restitution, impact_velocity)
    return 0.75 * k * (1.0 - e) * (1.0 + e) / v


def hu_guo(stiffness, restitution, impact_velocity):
    """μ = 3k(1 − e)/(2ev), Hu and Guo ([Poursina 2020], eq. (15))."""
    k, e, v = _checked(stiffness, restitution, impact_velocity)
    return 1.5 * k * (1.0 - e) / (e * v)


def flores(stiffness, restitution, impact_velocity):
    """μ = 8k(1 − e)/(5ev), Flores et al. and Ye et al. ([Poursina 2020], eq. (16))."""
    k, e, v = _checked(stiffness, restitution, impact_velocity)
    return 1.6 * k * (1.0 - e) / (e * v)


# Taylor series are used for |x| < _SERIES_RADIUS, where the closed forms below
# cancel catastrophically; 48 terms leave a relative truncation error ≈ 2e-16.
_SERIES_RADIUS = 0.5
_SERIES_TERMS = 48
# (ln(1 + x) − x + x²/2)/x³ = Σ_{j≥0} (−1)^j x^j/(j + 3)
_LOG_REMAINDER_SERIES = np.array([(-1.0) ** j / (j + 3) for j in range(_SERIES_TERMS)])
# (1 − e^{−z})/z = Σ_{j≥0} (−z)^j/(j + 1)!
_EXP_RATIO_SERIES = np.array([(-1.0) ** j / np.prod(np.arange(1.0, j + 2)) for j in range(20)])


def _taylor_near_zero(x, series, direct):
    """``direct(x)``, replaced by the Taylor polynomial ``series`` (ascending) near x = 0.

    Each branch only sees arguments where it is used (double ``where``), so
    neither the 0/0 of ``direct`` at x = 0 nor the overflow of the polynomial
    at large |x| reaches the value or the gradient.
    """
    near_zero = jnp.abs(x) < _SERIES_RADIUS
    polynomial = jnp.polyval(series[::-1], jnp.where(near_zero, x, 0.0))
    return jnp.where(near_zero, polynomial, direct(jnp.where(near_zero, _SERIES_RADIUS, x)))


def _log_remainder(x, log1p_x):
    """(ln(1 + x) − x + x²/2)/x³ for x > −1, given ln(1 + x).

    ln(1 + x) is passed in so that x → −1 keeps full precision when the
    caller knows it exactly.
    """
    return _taylor_near_zero(x, _LOG_REMAINDER_SERIES, lambda y: (log1p_x - y + y * y / 2) / y**3)


def _exp_ratio(z):
    """(1 − e^{−z})/z, equal to 1 at z = 0."""
    return _taylor_near_zero(z, _EXP_RATIO_SERIES, lambda y: -jnp.expm1(-y) / y)


def _half_restitution_deficit(restitution):
    """c = (1 − e²)/(2e²): d P(d) = c is eq. (19) divided by d² (see ``_scaled_residual``)."""
    return (1.0 - restitution) * (1.0 + restitution) / (2.0 * restitution**2)


def _scaled_residual(scaled_log_gap, restitution):
    """Residual of eq. (19) ([Poursina 2020]) in the unknown s = −ln(1 − d)/c.

    Taking logarithms, eq. (19) reads f(d) = ln(1 + d/e) − ln(1 − d) − d(1 + 1/e)
    = 0. The terms of order d cancel and the d² terms leave −c d², so with
    R(x) = (ln(1 + x) − x + x²/2)/x³ the non-trivial root solves

        d P(d) = c,   P(d) = R(d/e)/e³ + R(−d) > 0,   c = (1 − e²)/(2e²).

    The unknown s = z/c with z = −ln(1 − d) stays of order one for every e in
    (0, 1] (s → 3/2 as e → 1, s ≈ 2e as e → 0), keeps 1 − d = e^{−z} exact when
    d rounds to 1, and makes d = 1 − e^{−sc} vanish exactly at e = 1. The
    residual s (d/z) P(d) − 1 = f(d)/(c d²) is of order one with a slope of
    order one in s (2/3 at e = 1, 1 as e → 0), so tolerances on it are relative.
    """
    e = restitution
    z = scaled_log_gap * _half_restitution_deficit(e)
    d = -jnp.expm1(-z)
    x = d / e
    hysteresis_sum = _log_remainder(x, jnp.log1p(x)) / e**3 + _log_remainder(-d, -z)
    return scaled_log_gap * _exp_ratio(z) * hysteresis_sum - 1.0


#: e at and below which ``exact``'s d is 1 to double precision: 1 − d ≈ 46 exp(−46) ≈ 5e-19.
FULL_DEFICIT_RESTITUTION = 1.0 / 45.0


def exact(stiffness, restitution, impact_velocity):
    """μ = d k/(e v), which reproduces e exactly ([Poursina 2020], eq. (18)).

    d ∈ [0, 1) is the non-trivial root of (1 + d/e)/(1 − d) = exp(d(1 + 1/e))
    (eq. (19)), found by bisection (optimistix) and differentiated implicitly;
    e = 1 gives μ = 0. The relation holds for any mass and any exponent n of
    ``HuntCrossley``, since it follows from the phase-plane solution of eq. (10).
    For e ≤ ``FULL_DEFICIT_RESTITUTION``, 1 − d ≈ (1 + 1/e) exp(−(1 + 1/e))
    (eq. (19) with d → 1) is below 1e-18, so d = 1 to double precision and
    μ = k/(e v), with no root to find (the bisection's bracket overflows for
    e below about 1e-100).
    """
    k, e, v = _checked(stiffness, restitution, impact_velocity)
    full = e <= FULL_DEFICIT_RESTITUTION
    e_solved = jnp.where(full, 0.5, e)
    c = _half_restitution_deficit(e_solved)
    # At the root z = −ln(1 − d) < 1 + 1/e, i.e. s < 2e/(1 − e); and s ≤ 3/2
    # (its e → 1 limit, approached from below; checked numerically).
    upper = jax.lax.stop_gradient(2.0 * e_solved / jnp.maximum(e_solved, 1.0 - e_solved))

    def solve(restitution_, upper_):
        solution = optx.root_find(
            _scaled_residual,
            optx.Bisection(rtol=1e-14, atol=1e-14, flip=False),
            upper_ / 2,
            args=restitution_,
            options=dict(lower=0.0, upper=upper_),
        )
        return solution.value

    scaled_log_gap = jnp.vectorize(solve)(e_solved, upper)
    d = jnp.where(full, 1.0, -jnp.expm1(-scaled_log_gap * c))
    return d * k / (e * v)


def lankarani_nikravesh_law(stiffness, restitution, impact_velocity):
    """Lankarani–Nikravesh force (μ δ̇ + k) δ^{3/2} ([Gismeros Moreno 2022], eqs. (3.3) and (3.7)).

    Returns a ``HuntCrossley`` law with n = 3/2 and μ from ``lankarani_nikravesh``.
    """
    return HuntCrossley(stiffness, 1.5, lankarani_nikravesh(stiffness, restitution, impact_velocity))
