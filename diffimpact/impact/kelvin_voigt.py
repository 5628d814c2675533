r"""Exact restitution of the Kelvin–Voigt impact with zero-force separation ([Poursina 2020] §5.2).

The impact m δ̈ + c δ̇ + k δ = 0, δ(0) = 0, δ̇(0) = v > 0 ([Poursina 2020] eq. (54))
ends when the contact force vanishes, c δ̇ + k δ = 0 (eq. (20); Butcher and
Segalman 2000), and e = −δ̇(t_s)/v (eq. (22)). It depends on the damping
ratio ξ = c / (2 √(k m)) (eq. (56)) only.

Derivation
----------
With ω = √(k/m), τ = ω t and x = ω δ / v: x'' + 2ξ x' + x = 0, x(0) = 0,
x'(0) = 1, and the force is proportional to F = 2ξ x' + x, with F(0) = 2ξ > 0.

* ξ < 1, ξ = cos α, ω_d = √(1 − ξ²) = sin α, α ∈ (0, π/2]:
  x = e^{−ξτ} sin(ω_d τ)/ω_d and
  F = e^{−ξτ} [2ξ cos θ + (1 − 2ξ²) sin θ / ω_d] with θ = ω_d τ.
  F = 0 where (sin θ, cos θ) ∝ (2ξω_d, 2ξ² − 1) = (sin 2α, cos 2α): the first
  root is θ_s = atan2(2ξω_d, 2ξ² − 1) = 2α = 2 arccos ξ ∈ (0, π). This is the
  quadrant remark after eq. (55): the principal arctan of
  2ξω_d/(2ξ² − 1) gives 2α − π for ξ < √2/2 (then e > 1 for small ξ), jumps
  by π at ξ = √2/2 and is 0/0-undefined there, where θ_s = π/2 is right.
  At θ_s, x' = e^{−ξτ_s}(cos 2α − 2cos²α) = −e^{−ξτ_s}, so
      ω t_s = 2 arccos(ξ)/√(1 − ξ²),   e = exp(−2ξ arccos(ξ)/√(1 − ξ²)),
  which is eq. (55), first branch, with the arctan taken as atan2.
  At ξ = 0, F = x vanishes at τ = 0 only on its way up: separation at
  τ_s = π with e = 1.
* ξ = 1: x = τ e^{−τ}, F = 2 − τ, so ω t_s = 2 and e = e^{−2} ≈ 0.1353.
* ξ > 1, s = √(ξ² − 1), roots r± = −ξ ± s, x = (e^{r₊τ} − e^{r₋τ})/(2s).
  Since 2ξ r± + 1 = −r±², F = (r₋² e^{r₋τ} − r₊² e^{r₊τ})/(2s), whose only
  root is ω t_s = ln(r₋²/r₊²)/(2s) = 2 arccosh(ξ)/s > 0, and there
  x' = −(r₋/r₊) e^{r₋τ_s}, so
      e = exp(−2ξ arccosh(ξ)/s) = ((ξ − s)/(ξ + s))^{ξ/s}.

All three are e = exp(−ξ ω t_s) with ω t_s = 2 h(ξ), where
h(ξ) = arccos(ξ)/√(1 − ξ²) is analytic through ξ = 1 (it equals
arccosh(ξ)/√(ξ² − 1) for ξ > 1); around ξ = 1 it is the series
h = Σ a_n (ξ − 1)^n, a_0 = 1, a_n = −n a_{n−1}/(2n + 1) (from
(1 − ξ²) h' = ξ h − 1), radius 2.

The over-damped branch of eq. (55) as transcribed, with exponent
2ξs/(2ξ² − 1), is wrong: the exponent must be ξ/s. The printed form equals
exp(−2β tanh 2β) instead of exp(−2β coth β), β = arccosh ξ; it tends to 1
(not e^{−2}) as ξ → 1⁺ (0.992 at ξ = 1.001; 0.158 instead of 0.0756 at
ξ = 1.5; both tend to 1/(4ξ²) as ξ → ∞, 3 % apart at ξ = 10). The under-damped branch is right with atan2.

Properties: separation always happens, for every ξ > 0 (ω t_s is finite and
decreases from π at ξ → 0 through 2 at ξ = 1 to ≈ 2 ln(2ξ)/ξ). e is
strictly decreasing (ξ h(ξ) = α cot α, resp. β coth β with ξ = cosh β, is
increasing), e = 1 − πξ + O(ξ²) as ξ → 0, e(√2/2) = e^{−π/2}, e(1) = e^{−2},
and e ≈ (1 + (1/2 − ln 2ξ)/ξ²)/(4ξ²) → 0 (never reached) as ξ → ∞. So
ξ ↦ e is a bijection of [0, ∞) onto (0, 1].
"""

import jax.numpy as jnp
import optimistix as optx

from diffimpact._validation import check_positive, check_range

# |ξ − 1| below which the series is used: terms fall like (|ξ − 1|/2)^n, so
# 14 terms leave < 1e-20 relative; outside, the closed forms have no cancellation.
_SERIES_HALF_WIDTH = 0.05
_SERIES_TERMS = 14


def _arccos_ratio(damping_ratio):
    """h(ξ) = arccos(ξ)/√(1 − ξ²), analytic through ξ = 1; ω t_s = 2 h ([Poursina 2020], eq. (55)).

    Double-``where``: each branch sees a safe argument, so the unused branch
    puts no NaN into the gradient.
    """
    xi = jnp.asarray(damping_ratio, dtype=float)
    offset = xi - 1.0
    under = offset <= -_SERIES_HALF_WIDTH
    over = offset >= _SERIES_HALF_WIDTH
    near = ~(under | over)

    xi_under = jnp.where(under, xi, 0.5)
    h_under = jnp.arccos(xi_under) / (jnp.sqrt(1.0 - xi_under) * jnp.sqrt(1.0 + xi_under))

    xi_over = jnp.where(over, xi, 2.0)
    h_over = jnp.arccosh(xi_over) / (jnp.sqrt(xi_over - 1.0) * jnp.sqrt(xi_over + 1.0))

    w = jnp.where(near, offset, 0.0)
    coefficient = 1.0
    coefficients = [coefficient]
    for n in range(1, _SERIES_TERMS):
        coefficient = -n * coefficient / (2 * n + 1)
        coefficients.append(coefficient)
    h_near = jnp.zeros_like(w)
    for coefficient in reversed(coefficients):  # Horner
        h_near = h_near * w + coefficient

    return jnp.where(under, h_under, jnp.where(over, h_over, h_near))


def kelvin_voigt_restitution(damping_ratio):
    """Exact coefficient of restitution of the Kelvin–Voigt impact ([Poursina 2020], eq. (55), corrected).

    e = exp(−2ξ arccos(ξ)/√(1 − ξ²)) for ξ < 1, e^{−2} at ξ = 1 and
    ((ξ − s)/(ξ + s))^{ξ/s}, s = √(ξ² − 1), for ξ > 1, with separation at zero
    force (eq. (20)). See the module docstring for the derivation and the
    correction of the printed over-damped branch.

    Parameters
    ----------
    damping_ratio : array_like
        ξ = c / (2 √(k m)) (eq. (56)), finite and ≥ 0 (dimensionless).

    Returns
    -------
    jax.Array
        e = −δ̇(t_s)/δ̇(0) in (0, 1]; 1 at ξ = 0.
    """
    xi = check_range("damping_ratio", damping_ratio, 0.0, jnp.inf, high_open=True)
    return jnp.exp(-2.0 * xi * _arccos_ratio(xi))


def kelvin_voigt_separation_time(damping_ratio, stiffness=1.0, mass=1.0):
    """Contact duration t_s of the Kelvin–Voigt impact to zero force ([Poursina 2020], eqs. (20), (54)).

    t_s = 2 h(ξ)/ω with ω = √(k/m), h(ξ) = arccos(ξ)/√(1 − ξ²) (arccosh(ξ)/√(ξ² − 1)
    for ξ > 1, 1 at ξ = 1). With the default k = m = 1 it is ω t_s.

    Parameters
    ----------
    damping_ratio : array_like
        ξ = c / (2 √(k m)), finite and ≥ 0.
    stiffness : array_like
        k (N/m), > 0.
    mass : array_like
        m (kg), > 0.

    Returns
    -------
    jax.Array
        t_s (s), independent of the impact velocity.
    """
    xi = check_range("damping_ratio", damping_ratio, 0.0, jnp.inf, high_open=True)
    stiffness = check_positive("stiffness", stiffness)
    mass = check_positive("mass", mass)
    return 2.0 * _arccos_ratio(xi) * jnp.sqrt(mass / stiffness)


def _log_restitution_residual(log1p_xi, minus_log_restitution):
    # Divided by 1 + (−ln e) so that rounding stays ~1e-16 and an absolute
    # tolerance works for every e down to 1e-300.
    xi = jnp.expm1(log1p_xi)
    return (2.0 * xi * _arccos_ratio(xi) - minus_log_restitution) / (1.0 + minus_log_restitution)


def kelvin_voigt_damping_ratio(restitution):
    """Damping ratio ξ giving the restitution e, inverse of eq. (55) ([Poursina 2020], eqs. (55)–(56)).

    Solves −ln e = 2ξ h(ξ) by Newton's method (optimistix) in y = ln(1 + ξ),
    in which −ln e(ξ) is concave with slope from π (ξ = 0) down to 2
    (ξ → ∞); started at y = −ln(e)/π, left of the root, the iteration then
    increases monotonically to it. Gradients come from the implicit function
    theorem (``optimistix.ImplicitAdjoint``).

    Parameters
    ----------
    restitution : array_like
        e, in (0, 1].

    Returns
    -------
    jax.Array
        ξ ≥ 0 (0 at e = 1); the damping is c = 2ξ √(k m) (eq. (56)).
    """
    restitution = check_range("restitution", restitution, 0.0, 1.0, low_open=True)
    target = 0.0 - jnp.log(restitution)  # +0.0, not -0.0, at e = 1
    solver = optx.Newton(rtol=1e-12, atol=1e-12)
    solution = optx.root_find(
        _log_restitution_residual, solver, target / jnp.pi, args=target, max_steps=100
    )
    return jnp.expm1(solution.value)
