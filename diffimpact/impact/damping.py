"""Optimal damping of the Hertz contact with a linear damper ([Poursina 2020]).

For f = c δ̇ + k δ^n with separation at zero force (eqs. (7), (20)), the
optimal damping c_opt reproduces a desired restitution e at separation
(eq. (23)). Dimensional analysis of eq. (8) in the units of
``diffimpact.impact.central.impact_scales`` shows that

    c_opt = ĉ(n, e) · [k v^(n−1) m^n]^(1/(n+1)),            (eq. (49) with ĉ = α(e^β − 1))

exactly, where ĉ(n, e) is the optimal damping of the unit system
m = v = k = 1. The paper finds these exponents numerically (sections
4.2.1–4.2.3); ``diffimpact reproduce damping-scaling`` repeats those studies
with the exact method below, which works on the dimensional problem.

* ``"exact"``: c by Newton iterations (optimistix) on ln e_out(ln c) = ln e
  through the event-terminated solve of m δ̈ + c δ̇ + k δ^n = 0, started from
  the ``"improved"`` closed form (from the heavy-damping limit below, for
  e < 1e-4); converged to |e_out − e|/e ≤ 1e-8 (eq. (24)). Derivatives with
  respect to m, v, k, n and e follow from the implicit function theorem,
  with the partial derivatives of e_out computed by forward-mode
  differentiation of the solve. Every e in (0, 1] is solved.
* ``"paper"``: eq. (49) with α(n), β(n) of eqs. (46)–(47).
* ``"improved"``: ĉ(n, e) from a Chebyshev fit in (n, sqrt(−ln e)), made by
  ``diffimpact reproduce damping-improved`` (see ``improved_unit_damping``),
  times the scale of eq. (49).

The two closed forms are fitted on e ≥ 1e-4 (the range in which [Poursina 2020]
§5.1 verifies eq. (49)) and refuse smaller e (``CLOSED_FORM_RANGE``): below
it the paper's e^β(n) has the wrong power and the Chebyshev fit extrapolates
(+2.5 % at e = 1e-6).

Heavy damping. In units of the damping time m/c and of m v/c, the impact is
x'' + x' + ε x^n = 0 with ε = k m^n v^(n−1)/c^(n+1) = ĉ^−(n+1). For ε ≪ 1
the body stops at x ≈ 1 and creeps back at x' ≈ −ε x^n until the force
vanishes, where x'' = 0, so e = ε x_s^n with x_s = 1 − O(ε ln(1/ε)), that is

    ĉ = e^(−1/(n+1)) (1 + O(e ln(1/e)))                      (e → 0)

(for n = 1, e ≈ 1/(4ξ²) of ``kelvin_voigt_restitution``). Below
``ASYMPTOTIC_RESTITUTION`` the correction is under 1e-18 and ``"exact"``
returns this limit (and its derivatives) without the solve.

Near the elastic limit. For small damping the energy lost is the damper's
work along the elastic path plus what separation at zero force leaves: in
the unit system the force vanishes on the way out at δ_s = ĉ^(1/n), where
the spring still holds δ_s^(n+1)/(n+1) and the damper has not worked over
the last δ_s, so
    1 − e² = 4 I(n) ĉ − (2n/(n+1)) ĉ^(1+1/n) + O(ĉ²),
    I(n) = ∫₀^δm √(1 − 2δ^(n+1)/(n+1)) dδ = δm Γ(1 + 1/p) Γ(3/2)/Γ(1/p + 3/2),
with p = n + 1 and δm = (p/2)^(1/p) the elastic peak penetration. Its root
ĉ agrees with the solve to about (1 − e) ĉ (0.85–1.0 (1 − e) for
1 − e from 1e-2 to 1e-4 over n ∈ [1, 2], tests/impact/test_damping.py).
Closer to e = 1 the solve cannot resolve 1 − e in e_out (it returned c = 0
at 1 − e = 1e-10, where c/(1 − e) is finite), so ``"exact"`` returns this
root for 1 − e < ``NEAR_ELASTIC_GAP``, where its relative error (≈ 1 − e) is
within the solve's own tolerance in e, and 0 at e = 1.
``damping_lambda(n, e)`` is the exact slack variable λ of eq. (34).
"""

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from diffimpact._broadcast import broadcast_map
from diffimpact._validation import check_positive, check_range, check_shapes, require_float64
from diffimpact.contact.normal import HertzLinearDamper
from diffimpact.impact.central import central_impact

METHODS = ("exact", "paper", "improved")
#: Exponent range of the fits ([Poursina 2020] §4.2.4) and of every method here.
EXPONENT_RANGE = (1.0, 2.0)
#: Newton stops once its step in ln c is below this. A Newton step estimates the
#: error of the iterate it corrects, and convergence from the improved guess is
#: quadratic, so the returned c is far more accurate than the tolerance: over the
#: paper's grid |e_out − e|/e ≤ 5e-11 (eq. (24) asks 1e-8; checked against SciPy in
#: tests/impact/test_damping.py). Tighter values only add a Newton iteration.
NEWTON_TOL = 1e-6
NEWTON_MAX_STEPS = 32

#: e range of the closed forms "paper" and "improved": the improved fit's data
#: and the range in which [Poursina 2020] §5.1 verifies eq. (49).
CLOSED_FORM_RANGE = (1e-4, 1.0)
#: e range of the improved fit: x = −ln e ∈ [0, IMPROVED_X_MAX].
IMPROVED_X_MAX = float(-np.log(CLOSED_FORM_RANGE[0]))
#: Below this e, "exact" is the heavy-damping limit ĉ = e^(−1/(n+1)), whose
#: relative error (n/(n+1)) · O(e ln(1/e)) is below 1e-18 here.
ASYMPTOTIC_RESTITUTION = 1e-20
#: Above 1 − this e, "exact" is the near-elastic root of 1 − e² = 4 I(n) ĉ − (2n/(n+1)) ĉ^(1+1/n) (module
#: docstring), accurate to about (1 − e) relative, where the solve no longer resolves 1 − e.
NEAR_ELASTIC_GAP = 1e-4
#: Chebyshev coefficients a_ij of the improved fit (rows: n̂ degree i, columns:
#: ŝ degree j), written by ``diffimpact reproduce damping-improved``.
IMPROVED_COEFFICIENTS = (
    (1.653678735700e-01, 9.967128444990e-01, 3.180755874030e-01, 5.929238103300e-02, 2.096003922000e-03, -2.423266963000e-03, -3.346174920000e-04, -2.661755800000e-05, 9.123766700000e-05),
    (-3.148491983590e-01, -3.349649830220e-01, -1.139021618400e-01, 4.841739099000e-03, -1.245230658000e-03, 3.601491650000e-04, 2.374108900000e-05, -4.209212500000e-05, -1.519302000000e-06),
    (3.476288191800e-02, 2.987713266800e-02, 1.206291118900e-02, 5.183462980000e-04, -6.433073740000e-04, 2.256406500000e-04, -7.197480900000e-05, 3.372014900000e-05, -1.028280500000e-05),
    (-3.641919887000e-03, -2.855470205000e-03, -1.140307285000e-03, -2.075672470000e-04, 1.640592390000e-04, -5.470909300000e-05, 1.223969600000e-05, -4.000450000000e-06, 1.326940000000e-06),
    (3.752312910000e-04, 2.855966110000e-04, 1.000443230000e-04, 4.012111900000e-05, -2.707889400000e-05, 7.724635000000e-06, -5.446910000000e-07, -1.982810000000e-07, 3.499700000000e-08),
)

#: α(n) of eq. (46), highest power first.
PAPER_ALPHA = (0.3331, -1.48, 3.077, -2.306, 1.794)
#: β(n) = a n^b + c of eq. (47), as (a, b, c).
PAPER_BETA = (1.285, 0.2553, -1.725)


def damping_scale(mass, impact_velocity, stiffness, exponent):
    """[k v^(n−1) m^n]^(1/(n+1)) of eq. (49), in N s/m."""
    n = exponent
    return (stiffness * impact_velocity ** (n - 1.0) * mass**n) ** (1.0 / (n + 1.0))


def paper_alpha(exponent):
    """α(n), [Poursina 2020] eq. (46)."""
    return jnp.polyval(jnp.asarray(PAPER_ALPHA), exponent)


def paper_beta(exponent):
    """β(n), [Poursina 2020] eq. (47)."""
    a, b, c = PAPER_BETA
    return a * exponent**b + c


def paper_unit_damping(exponent, restitution):
    """ĉ = α(n)(e^β(n) − 1), [Poursina 2020] eqs. (45)–(47)."""
    return paper_alpha(exponent) * (restitution ** paper_beta(exponent) - 1.0)


def restitution_of_damping(damping, mass, impact_velocity, stiffness, exponent, adjoint=None):
    """e_out of f = c δ̇ + k δ^n with zero-force separation, by the solve (eq. (22))."""
    law = HertzLinearDamper(stiffness, exponent, damping)
    return central_impact(law, mass, impact_velocity, adjoint=adjoint).restitution


def _forward_restitution(damping, *system):
    return restitution_of_damping(damping, *system, adjoint=dfx.ForwardMode())


def _log_residual(log_damping, args):
    system, restitution = args
    return jnp.log(_forward_restitution(jnp.exp(log_damping), *system)) - jnp.log(restitution)


def asymptotic_damping(mass, impact_velocity, stiffness, exponent, restitution):
    """Heavy-damping limit c = [k v^(n−1) m^n / e]^(1/(n+1)) of the optimal damping (e → 0)."""
    return damping_scale(mass, impact_velocity, stiffness, exponent) * restitution ** (-1.0 / (exponent + 1.0))


def elastic_path_integral(exponent):
    """I(n) = ∫₀^δm √(1 − 2δ^(n+1)/(n+1)) dδ of the near-elastic limit (module docstring): δm Γ(1 + 1/p) Γ(3/2)
    / Γ(1/p + 3/2), p = n + 1, δm = (p/2)^(1/p)."""
    p = exponent + 1.0
    log_integral = (jax.scipy.special.gammaln(1.0 + 1.0 / p) + jax.scipy.special.gammaln(1.5)
                    - jax.scipy.special.gammaln(1.0 / p + 1.5))
    return (p / 2.0) ** (1.0 / p) * jnp.exp(log_integral)


def near_elastic_unit_damping(exponent, restitution):
    """ĉ solving 1 − e² = 4 I(n) ĉ − (2n/(n+1)) ĉ^(1+1/n) (module docstring), 0 at e = 1: Newton from the
    linear root (1 − e²)/(4 I), whose correction is below 1 % for 1 − e ≤ 1e-2 (four steps, unrolled)."""
    n, target = exponent, 1.0 - restitution**2
    slope = 4.0 * elastic_path_integral(n)
    unit = target / slope
    for _ in range(4):
        safe = jnp.where(unit > 0, unit, 1.0)  # (ĉ^(1/n) and its derivative in n at ĉ = 0)
        root = jnp.where(unit > 0, safe ** (1.0 / n), 0.0)
        residual = slope * unit - (2.0 * n / (n + 1.0)) * unit * root - target
        unit = unit - residual / (slope - 2.0 * root)
    return unit


def near_elastic_damping(mass, impact_velocity, stiffness, exponent, restitution):
    """c of the near-elastic limit: ``near_elastic_unit_damping`` times the scale of eq. (49)."""
    return near_elastic_unit_damping(exponent, restitution) * damping_scale(mass, impact_velocity, stiffness, exponent)


@jax.custom_jvp
def exact_damping(mass, impact_velocity, stiffness, exponent, restitution):
    """c solving e_out(c) = e on the event-terminated solve (eq. (23)); c = 0 at e = 1.

    Newton iterations on ln c, started from the improved closed form
    (e ≥ 1e-4) or the heavy-damping limit (e < 1e-4), which is returned as
    it is for e < ``ASYMPTOTIC_RESTITUTION``; the near-elastic limit for
    1 − e < ``NEAR_ELASTIC_GAP``.
    """
    system = (mass, impact_velocity, stiffness, exponent)
    elastic = restitution > 1.0 - NEAR_ELASTIC_GAP
    limit = restitution < ASYMPTOTIC_RESTITUTION
    safe_e = jnp.where(elastic | limit, 0.5, restitution)
    fitted = safe_e >= CLOSED_FORM_RANGE[0]
    guess = jnp.where(
        fitted,
        improved_unit_damping(exponent, jnp.where(fitted, safe_e, 0.5)) * damping_scale(*system),
        asymptotic_damping(*system, safe_e),
    )
    solution = optx.root_find(
        _log_residual,
        optx.Newton(rtol=NEWTON_TOL, atol=NEWTON_TOL),
        jnp.log(guess),
        args=(system, safe_e),
        max_steps=NEWTON_MAX_STEPS,
        throw=False,
    )
    asymptotic = asymptotic_damping(*system, jnp.where(limit, restitution, 0.5))
    near_elastic = near_elastic_damping(*system, jnp.where(elastic, restitution, 1.0))
    return jnp.where(elastic, near_elastic, jnp.where(limit, asymptotic, jnp.exp(solution.value)))


@exact_damping.defjvp
def _exact_damping_jvp(primals, tangents):
    # Implicit function theorem on g(c, θ) = e_out(c, m, v, k, n) − e = 0:
    # dc = (de − ∇_θ e_out · dθ) / (∂e_out/∂c). The partials are primal values,
    # so the rule is linear in the tangents and reverse mode can transpose it.
    # Near e = 1 and below ASYMPTOTIC_RESTITUTION the derivative is that of the
    # limit returned there; the solve's partials are then taken at a harmless
    # damping (their cotangent is 0): at e = 1 (c = 0) the separation event
    # degenerates (the force k δ^n has a double root at δ = 0).
    *system, restitution = primals
    *d_system, d_restitution = tangents
    damping = exact_damping(*primals)
    limit = restitution < ASYMPTOTIC_RESTITUTION
    elastic = restitution > 1.0 - NEAR_ELASTIC_GAP
    solved = jnp.where(limit | elastic, damping_scale(*system), damping)
    partials = jax.jacfwd(_forward_restitution, argnums=(0, 1, 2, 3, 4))(solved, *system)
    d_out = sum(p * d for p, d in zip(partials[1:], d_system))
    implicit = (d_restitution - d_out) / partials[0]
    near_elastic = jax.jvp(near_elastic_damping, (*system, jnp.where(elastic, restitution, 1.0)), tuple(tangents))[1]
    safe_primals = (*system, jnp.where(limit, restitution, 0.5))
    asymptotic = jax.jvp(asymptotic_damping, safe_primals, tuple(tangents))[1]
    return damping, jnp.where(elastic, near_elastic, jnp.where(limit, asymptotic, implicit))


def improved_features(exponent, restitution):
    """Chebyshev coordinates (n̂, ŝ) ∈ [−1, 1]² of the improved fit.

    n̂ = 2n − 3 and ŝ = 2 sqrt(x / x_max) − 1 with x = −ln e, x_max = −ln 1e-4.
    """
    x = -jnp.log(restitution)
    return 2.0 * exponent - 3.0, 2.0 * jnp.sqrt(x / IMPROVED_X_MAX) - 1.0


def chebyshev_basis(t, degree):
    """[T_0(t), ..., T_degree(t)] stacked on a trailing axis."""
    terms = [jnp.ones_like(t), t]
    for _ in range(degree - 1):
        terms.append(2.0 * t * terms[-1] - terms[-2])
    return jnp.stack(terms[: degree + 1], axis=-1)


def improved_unit_damping(exponent, restitution):
    """ĉ(n, e) = x exp(Σ a_ij T_i(n̂) T_j(ŝ)), x = −ln e: the improved closed form.

    ``IMPROVED_COEFFICIENTS`` a_ij were fitted by least squares to ln(ĉ/x) of
    the exact optimal damping on n ∈ [1, 2], e ∈ [1e-4, 1) by
    ``diffimpact reproduce damping-improved``, which also measures its
    worst-case restitution error beside the paper's eq. (49). ĉ → 0 as e → 1.
    """
    return -jnp.log(restitution) * jnp.exp(improved_log_ratio(*improved_features(exponent, restitution)))


def improved_log_ratio(n_hat, s_hat):
    """ln(ĉ/x) = Σ a_ij T_i(n̂) T_j(ŝ) of the improved closed form, at ``improved_features``."""
    coefficients = jnp.asarray(IMPROVED_COEFFICIENTS)
    basis_n = chebyshev_basis(n_hat, coefficients.shape[0] - 1)
    basis_s = chebyshev_basis(s_hat, coefficients.shape[1] - 1)
    return jnp.einsum("...i,ij,...j->...", basis_n, coefficients, basis_s)


_UNIT_DAMPING = {"paper": paper_unit_damping, "improved": improved_unit_damping}


def _check_method(method):
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _check_exponent_restitution(exponent, restitution, method="exact"):
    exponent = check_range("exponent n", exponent, *EXPONENT_RANGE)
    if method == "exact":
        restitution = check_range("restitution e", restitution, 0.0, 1.0, low_open=True)
    else:
        hint = f" for method={method!r}, the range of its fit (method='exact' takes (0, 1])"
        restitution = check_range("restitution e", restitution, *CLOSED_FORM_RANGE, hint=hint)
    return exponent, restitution


def optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method="exact"):
    """Damping c_opt of f = c δ̇ + k δ^n that gives restitution e ([Poursina 2020] eqs. (23), (49)).

    All array arguments broadcast together; the result is differentiable
    with respect to each of them. Returns c_opt in N s/m.

    Parameters
    ----------
    mass : effective mass m > 0 (kg), eq. (3).
    impact_velocity : approach speed ⁻δ̇ > 0 (m/s).
    stiffness : k > 0 (N/m^n).
    exponent : n in [1, 2].
    restitution : desired e in (0, 1] for "exact"; in [1e-4, 1] for the
        closed forms "paper" and "improved" (their fitted range).
    method : "exact" (root finding on the solve), "paper" (eq. (49)) or
        "improved" (the refitted closed form).

    Raises
    ------
    TypeError
        For an argument that is not a real number or array of real numbers
        (a string, bool, complex number, ...), naming it.
    ValueError
        For concrete inputs out of range or NaN, naming the parameter and its
        range; for an empty array or arguments that do not broadcast
        together; for an unknown method. Under ``jit`` the range check raises
        ``equinox.EquinoxRuntimeError`` with the same message at run time.
    """
    require_float64("diffimpact.impact.optimal_damping")
    _check_method(method)
    mass = check_positive("mass", mass)
    impact_velocity = check_positive("impact_velocity", impact_velocity)
    stiffness = check_positive("stiffness", stiffness)
    exponent, restitution = _check_exponent_restitution(exponent, restitution, method)
    check_shapes(
        [("mass", mass), ("impact_velocity", impact_velocity), ("stiffness", stiffness),
         ("exponent", exponent), ("restitution", restitution)]
    )
    return _optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method)


@eqx.filter_jit
def _optimal_damping(mass, impact_velocity, stiffness, exponent, restitution, method):
    if method == "exact":
        return broadcast_map(exact_damping, mass, impact_velocity, stiffness, exponent, restitution)
    unit = broadcast_map(_UNIT_DAMPING[method], exponent, restitution)
    return unit * damping_scale(mass, impact_velocity, stiffness, exponent)


def lambda_from_unit_damping(exponent, unit_damping, restitution):
    """λ = e ĉ / ((n+1)/2)^(n/(n+1)), [Poursina 2020] eq. (34) with m = v = k = 1 (cf. eq. (48))."""
    n = exponent
    return restitution * unit_damping / ((n + 1.0) / 2.0) ** (n / (n + 1.0))


def damping_lambda(exponent, restitution):
    """The exact slack variable λ(n, e) of [Poursina 2020] eqs. (34), (48); broadcasts.

    ``exponent`` n in [1, 2], ``restitution`` e in (0, 1]; errors as for
    ``optimal_damping``. λ → e^(n/(n+1)) ((n+1)/2)^(−n/(n+1)) as e → 0.
    """
    require_float64("diffimpact.impact.damping_lambda")
    exponent, restitution = _check_exponent_restitution(exponent, restitution)
    check_shapes([("exponent", exponent), ("restitution", restitution)])
    # m = v = k = 1 as the arrays ``optimal_damping`` passes, so that both share one compiled program
    one = jnp.asarray(1.0, dtype=float)
    unit = _optimal_damping(one, one, one, exponent, restitution, "exact")
    return lambda_from_unit_damping(exponent, unit, restitution)
