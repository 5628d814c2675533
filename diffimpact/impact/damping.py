"""Optimal damping of the Hertz contact with a linear damper ([Poursina 2020]).

For f = c δ̇ + k δ^n with separation at zero force (eqs. (7), (20)), the
optimal damping c_opt reproduces a desired restitution e at separation
(eq. (23)). Dimensional analysis of eq. (8) in the units of
``diffimpact.impact.central.impact_scales`` shows that

    c_opt = ĉ(n, e) · [k v^(n−1) m^n]^(1/(n+1)),            (eq. (49) with ĉ = α(e^β − 1))

exactly, where ĉ(n, e) is the optimal damping of the unit system
m = v = k = 1. The paper finds these exponents numerically (sections
4.2.1–4.2.3); ``diffimpact reproduce damping-scaling`` repeats those studies.
The exact method below solves for ĉ and multiplies by the scale, so there
the exponents hold by construction (tests/impact/test_damping.py checks its
roots in SciPy's solve of the dimensional equation).

* ``"exact"``: ĉ by Newton iterations (optimistix) on ln e_out(ln ĉ) = ln e,
  with e_out of the unit impact x'' + ĉ x' + x^n = 0 (``unit_restitution``),
  started from the ``"improved"`` closed form (from the heavy-damping limit
  below, for e < 1e-4); converged to |e_out − e|/e ≤ 1e-8 (eq. (24)).
  Derivatives with respect to n and e follow from the implicit function
  theorem, with ∂e_out/∂ĉ and ∂e_out/∂n from the solve's forward
  sensitivities; those with respect to m, v and k from the scale. Every e
  in (0, 1] is solved.
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
Closer to e = 1 the solve cannot resolve 1 − e in e_out (at 1 − e = 1e-10 its
root is off by up to 40 %, where c/(1 − e) is finite), so ``"exact"`` returns this
root for 1 − e < ``NEAR_ELASTIC_GAP``, where its relative error (≈ 1 − e) is
within the solve's own tolerance in e, and 0 at e = 1.
``damping_lambda(n, e)`` is the exact slack variable λ of eq. (34).

The unit solve. ``unit_restitution`` integrates x'' + ĉ x' + x^n = 0 from
x = 0, x' = 1 with the Dormand–Prince 8(7) pair of ``diffrax.Dopri8``, in
the units of the compression of ``diffimpact.impact.central`` (which keep
heavy damping accurate), and carries the sensitivities ∂(x, x')/∂ĉ (and
∂/∂n) as further states, outside the error control. Until maximum
compression the independent variable is time; the onset's spring force
x^n ~ t^n is not smooth for non-integer n, and the first step is the one
whose error estimate, h^(n+1) Σ b̂_i c_i^n to leading order, is half the
tolerance. After it the independent variable is s, ds = dt/x, in which
x = exp ∫ x' ds and x^n stay smooth as x → 0: light damping separates at
x = (ĉ e)^(1/n), near that singularity of time steps. The step that would
end past separation (F = 0, eq. (20)) is replaced by Newton's iterations on
its size onto F = 0. There x'' = −F = 0, so e_out = −x' does not depend on
where the event is to first order, and ∂e_out/∂ĉ = −∂x'/∂ĉ at fixed s.
Under ``vmap`` a batch of solves runs its steps in lockstep, one loop of
fused array operations per step (docs/results/damping.md, "Speed").
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
#: quadratic (two iterations on the paper's grid), so the returned c is far more
#: accurate than the tolerance: its error in e is that of the solve,
#: |e_out − e|/e ≈ 5e-11 by SciPy (eq. (24) asks 1e-8; tests/impact/test_damping.py).
#: Tighter values only add a Newton iteration.
NEWTON_TOL = 1e-6
NEWTON_MAX_STEPS = 32
#: Step control of ``unit_restitution``: each step's error estimate against these tolerances on x and x' in
#: their units (RMS over both, as ``diffrax.PIDController``). e_out then agrees with SciPy's DOP853 at rtol 1e-13
#: to about 5e-11 relative (tests/impact/test_damping.py).
UNIT_RTOL = 1e-10
UNIT_ATOL = 1e-12
#: Steps (rejected ones included) after which ``unit_restitution`` gives up and returns NaN.
UNIT_MAX_STEPS = 4096

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
    (1.653678799229e-01, 9.967128329670e-01, 3.180755965394e-01, 5.929237426407e-02, 2.096008441477e-03, -2.423269619852e-03, -3.346160844584e-04, -2.661814909456e-05, 9.123783263584e-05),
    (-3.148492040364e-01, -3.349649727281e-01, -1.139021700425e-01, 4.841745210277e-03, -1.245234713891e-03, 3.601515262108e-04, 2.373983274568e-05, -4.209160243803e-05, -1.519440337620e-06),
    (3.476287993702e-02, 2.987713625565e-02, 1.206290836914e-02, 5.183483831399e-04, -6.433087572892e-04, 2.256414666522e-04, -7.197522610151e-05, 3.372033050618e-05, -1.028285478123e-05),
    (-3.641919213512e-03, -2.855471370061e-03, -1.140306434256e-03, -2.075679123539e-04, 1.640595916043e-04, -5.470928138355e-05, 1.223977213489e-05, -4.000471196871e-06, 1.326910560755e-06),
    (3.752303185960e-04, 2.855983370065e-04, 1.000429848385e-04, 4.012209257463e-05, -2.707948912580e-05, 7.724960221857e-06, -5.448475052878e-07, -1.982390073797e-07, 3.499422241614e-08),
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
    """e_out of f = c δ̇ + k δ^n with zero-force separation, by ``central_impact`` (eq. (22))."""
    law = HertzLinearDamper(stiffness, exponent, damping)
    return central_impact(law, mass, impact_velocity, adjoint=adjoint).restitution


# --- the unit impact x'' + ĉ x' + x^n = 0 (module docstring, "The unit solve") ---------------------------------

_TABLEAU = dfx.Dopri8.tableau
#: Order of the error estimate of ``_TABLEAU``: a step's error scales as h^(order + 1).
_ERROR_ORDER = 8
#: Bounds of the factor by which a step size changes, and its safety factor (as ``diffrax.PIDController``).
_STEP_FACTORS = (0.2, 10.0, 0.9)
#: Largest first step, in units of 1/(1 + ĉ) (an undamped compression lasts about 1.5).
_FIRST_STEP = 0.05
#: Newton steps onto the separation event.
_EVENT_STEPS = 3


def _power(x, n):
    """x^n for x ≥ 0, as exp(n ln x) so that its derivatives reuse it; 0 at x ≤ 0 with finite derivatives."""
    safe = jnp.where(x > 0, x, 1.0)
    return jnp.where(x > 0, jnp.exp(n * jnp.log(safe)), 0.0)


def _unit_force(x, u, params):
    """F = ĉ u + x^n of the unit system, params = (ĉ, n) (eq. (8) with m = v = k = 1)."""
    damping, exponent = params
    return damping * u + _power(x, exponent)


def _rates(state, params, directions, frame):
    """Rates of z = (x, x')/unit and of its sensitivities along ``directions``: d/dτ in compression (τ = t/clock),
    d/ds in restitution (ds = dτ x_1/x)."""
    unit, clock, restituting = frame

    def rates(z, p):
        x, u = z[0] * unit[0], z[1] * unit[1]
        factor = clock * jnp.where(restituting, z[0], 1.0)
        return factor * u / unit[0], -factor * _unit_force(x, u, p) / unit[1]

    z, sensitivities = state
    return rates(z, params), tuple(jax.jvp(rates, (z, params), (s, d))[1] for s, d in zip(sensitivities, directions))


def _combine(state, h, coefficients, rates):
    """state + h Σ a_i rates_i over the nonzero a_i of a tableau row."""
    terms = [(float(a), k) for a, k in zip(coefficients, rates) if a != 0]
    return jax.tree.map(lambda y, *ks: y + h * sum(a * k for (a, _), k in zip(terms, ks)), state,
                        *(k for _, k in terms))


def _step(state, rate, h, params, directions, frame):
    """One step of ``_TABLEAU``: the new state, its rate (the last stage) and the mean square of the error
    estimates of x and x' relative to the tolerance."""
    stages = [rate]
    for row in _TABLEAU.a_lower:
        stages.append(_rates(_combine(state, h, row, stages), params, directions, frame))
    new = _combine(state, h, _TABLEAU.b_sol, stages)
    errors = _combine(jax.tree.map(jnp.zeros_like, state[0]), h, _TABLEAU.b_error, [r[0] for r in stages])
    ratios = [(err / (UNIT_ATOL + UNIT_RTOL * jnp.maximum(jnp.abs(y0), jnp.abs(y1)))) ** 2
              for err, y0, y1 in zip(errors, state[0], new[0])]
    return new, stages[-1], sum(ratios) / len(ratios)


def _force_and_rate(state, rate, params, frame):
    """F = ĉ x' + x^n and its rate at a state and the state's rate."""
    unit = frame[0]
    return jax.jvp(lambda x, u: _unit_force(x * unit[0], u * unit[1], params), state[0], rate[0])


def _first_step(exponent, clock, speed_unit):
    """The first step, where the error estimate of the scaled x' is h^(n+1) clock^(n+1) |Σ b̂_i c_i^n| /
    speed_unit to leading order (stage i at x ≈ c_i h clock): half the tolerance, at most ``_FIRST_STEP``."""
    moment = jnp.abs(sum(float(b) * float(c) ** exponent for b, c in zip(_TABLEAU.b_error[1:], _TABLEAU.c)))
    tolerance = 0.5 * (UNIT_ATOL * speed_unit + UNIT_RTOL)
    step = (tolerance / jnp.maximum(moment, 1e-300)) ** (1.0 / (exponent + 1.0)) / clock
    return jnp.minimum(step, _FIRST_STEP)


def _solve_unit(unit_damping, exponent, columns):
    """e_out of x'' + ĉ x' + x^n = 0, x(0) = 0, x'(0) = 1, and ∂e_out/∂(ĉ, n)[j] for j in ``columns``.

    Adaptive ``_TABLEAU`` steps of x and x' in the units of ``diffimpact.impact.central``'s compression,
    x_1 = 1/(1 + ĉ) of x and time and the speed x_1^n/(x_1^n + ĉ) (at most 1): in time until a step ends past
    x' = 0, then in s, ds = dt/x, in which x^n stays smooth as x → 0 (x = exp ∫ x' ds). The step that would end
    past separation (F = ĉ x' + x^n = 0) is not taken: Newton's iterations on its size, with dF/ds from the
    last stage, take ``_EVENT_STEPS`` steps from the same state onto F = 0, where e_out = −x'.
    """
    params = (unit_damping, exponent)
    directions = tuple(tuple(jnp.ones_like(p) if i == j else jnp.zeros_like(p) for i, p in enumerate(params))
                       for j in columns)
    low, high, safety = _STEP_FACTORS
    x_1 = 1.0 / (1.0 + unit_damping)
    spring_1 = _power(x_1, exponent)
    unit = (x_1, jnp.minimum(1.0, spring_1 / (spring_1 + unit_damping)))
    frame = (unit, x_1, jnp.zeros_like(x_1, dtype=bool))
    zero = jnp.zeros_like(x_1)
    state = ((zero, 1.0 / unit[1]), tuple((zero, zero) for _ in columns))

    def unfinished(carry):
        return ~carry[-2] & (carry[-1] < UNIT_MAX_STEPS)

    def advance(carry):
        state, rate, restituting, step, event_step, event_steps_left, done, steps = carry
        frame = (unit, x_1, restituting)
        locating = event_steps_left > 0
        new, new_rate, ratio = _step(state, rate, jnp.where(locating, event_step, step), params, directions, frame)
        force, force_rate = _force_and_rate(new, new_rate, params, frame)
        accepted = ~locating & (ratio <= 1.0)
        crossed = accepted & (force <= 0)
        located = locating & (event_steps_left == 1)
        moved = ~done & ((accepted & ~crossed) | located)
        state, rate = jax.tree.map(lambda a, b: jnp.where(moved, a, b), (new, new_rate), (state, rate))
        factor = jnp.clip(safety * jnp.where(ratio > 0, ratio, 1e-30) ** (-0.5 / _ERROR_ORDER), low, high)
        event_step = jnp.where(locating | crossed, jnp.clip(jnp.where(locating, event_step, step)
                                                            - force / force_rate, 0.0, step), event_step)
        step = jnp.where(locating | crossed, step, step * factor)
        event_steps_left = jnp.where(crossed, _EVENT_STEPS, jnp.maximum(event_steps_left - 1, 0))
        # past maximum compression, s takes over from time: the rates gain the factor x/x_1 (product rule)
        switch = moved & ~restituting & (state[0][1] <= 0)
        (x, _), sensitivities = state
        in_s = (tuple(x * r for r in rate[0]),
                tuple(tuple(x * r + s[0] * q for r, q in zip(dr, rate[0])) for s, dr in zip(sensitivities, rate[1])))
        rate = jax.tree.map(lambda a, b: jnp.where(switch, a, b), in_s, rate)
        return state, rate, restituting | switch, step, event_step, event_steps_left, done | located, steps + 1

    start = (state, _rates(state, params, directions, frame), frame[2], _first_step(exponent, x_1, unit[1]), zero,
             jnp.zeros_like(x_1, dtype=int), jnp.zeros_like(x_1, dtype=bool), jnp.zeros_like(x_1, dtype=int))
    state, *_, done, _ = jax.lax.while_loop(unfinished, advance, start)
    (_, u), sensitivities = state
    nan = jnp.nan * zero
    restitution = jnp.where(done, -u * unit[1], nan)
    return restitution, tuple(jnp.where(done, -s[1] * unit[1], nan) for s in sensitivities)


@jax.custom_jvp
def unit_restitution(unit_damping, exponent):
    """e_out of the unit impact x'' + ĉ x' + x^n = 0 with zero-force separation (eqs. (8), (20), (22) with
    m = v = k = 1); NaN without separation within ``UNIT_MAX_STEPS`` steps.

    Its derivatives are the solve's forward sensitivities (module docstring, "The unit solve").
    """
    return _solve_unit(unit_damping, exponent, ())[0]


def _unit_restitution_jvp(primals, tangents):
    # The sensitivities are primal values and the tangent is linear in them outside the loops, so that
    # jax.linearize (optimistix's Newton) runs the solve once; an input without a tangent costs no sensitivity.
    columns = tuple(i for i, t in enumerate(tangents) if not isinstance(t, jax.custom_derivatives.SymbolicZero))
    restitution, partials = _solve_unit(*primals, columns)
    return restitution, sum(partial * tangents[i] for partial, i in zip(partials, columns))


unit_restitution.defjvp(_unit_restitution_jvp, symbolic_zeros=True)


def _log_residual(log_damping, args):
    exponent, log_restitution = args
    return jnp.log(unit_restitution(jnp.exp(log_damping), exponent)) - log_restitution


def asymptotic_unit_damping(exponent, restitution):
    """Heavy-damping limit ĉ = e^(−1/(n+1)) of the optimal damping (e → 0, module docstring)."""
    return restitution ** (-1.0 / (exponent + 1.0))


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


def _branches(restitution):
    """Masks of the near-elastic limit and of the heavy-damping limit (module docstring)."""
    return restitution > 1.0 - NEAR_ELASTIC_GAP, restitution < ASYMPTOTIC_RESTITUTION


@jax.custom_jvp
def exact_unit_damping(exponent, restitution):
    """ĉ solving e_out(ĉ) = e for the unit impact (eq. (23) with m = v = k = 1); 0 at e = 1.

    Newton iterations on ln ĉ, started from the improved closed form (e ≥ 1e-4) or the heavy-damping limit
    (e < 1e-4), which is returned as it is for e < ``ASYMPTOTIC_RESTITUTION``; the near-elastic limit for
    1 − e < ``NEAR_ELASTIC_GAP``.
    """
    elastic, limit = _branches(restitution)
    safe_e = jnp.where(elastic | limit, 0.5, restitution)
    fitted = safe_e >= CLOSED_FORM_RANGE[0]
    guess = jnp.where(fitted, improved_unit_damping(exponent, jnp.where(fitted, safe_e, 0.5)),
                      asymptotic_unit_damping(exponent, safe_e))
    solution = optx.root_find(
        _log_residual,
        optx.Newton(rtol=NEWTON_TOL, atol=NEWTON_TOL),
        jnp.log(guess),
        args=(exponent, jnp.log(safe_e)),
        max_steps=NEWTON_MAX_STEPS,
        throw=False,
    )
    asymptotic = asymptotic_unit_damping(exponent, jnp.where(limit, restitution, 0.5))
    near_elastic = near_elastic_unit_damping(exponent, jnp.where(elastic, restitution, 1.0))
    return jnp.where(elastic, near_elastic, jnp.where(limit, asymptotic, jnp.exp(solution.value)))


@exact_unit_damping.defjvp
def _exact_unit_damping_jvp(primals, tangents):
    # Implicit function theorem on e_out(ĉ, n) − e = 0: dĉ = (de − ∂e_out/∂n dn) / (∂e_out/∂ĉ). The partials are
    # primal values, so the rule is linear in the tangents and reverse mode can transpose it. Near e = 1 and below
    # ASYMPTOTIC_RESTITUTION the derivative is that of the limit returned there; the solve's partials are then
    # taken at a harmless damping (their cotangent is 0): at e = 1 (ĉ = 0) the separation event degenerates (the
    # force x^n has a double root at x = 0).
    exponent, restitution = primals
    d_exponent, d_restitution = tangents
    unit = exact_unit_damping(*primals)
    elastic, limit = _branches(restitution)
    _, (by_damping, by_exponent) = _solve_unit(jnp.where(limit | elastic, 1.0, unit), exponent, (0, 1))
    implicit = (d_restitution - by_exponent * d_exponent) / by_damping
    near_elastic = jax.jvp(near_elastic_unit_damping, (exponent, jnp.where(elastic, restitution, 1.0)), tangents)[1]
    asymptotic = jax.jvp(asymptotic_unit_damping, (exponent, jnp.where(limit, restitution, 0.5)), tangents)[1]
    return unit, jnp.where(elastic, near_elastic, jnp.where(limit, asymptotic, implicit))


def exact_damping(mass, impact_velocity, stiffness, exponent, restitution):
    """c solving e_out(c) = e (eq. (23)): ``exact_unit_damping`` times the scale of eq. (49); c = 0 at e = 1."""
    return exact_unit_damping(exponent, restitution) * damping_scale(mass, impact_velocity, stiffness, exponent)


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
