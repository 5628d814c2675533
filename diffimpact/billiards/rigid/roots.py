r"""When a polynomial of degree ≤ 4 in time first reaches zero from above: the events of the rigid engine.

Between events every ball's centre moves on a polynomial of degree ≤ 2 in t
(``motion``), so the square of the distance between two centres, minus
(2R)², is a quartic p(t), and the distance of a centre from a cushion's
nose line, minus R, a quadratic: an event is the first t ≥ 0 at which p,
positive (apart), reaches zero (touching) [Leckie 2005]. Leckie and
Greenspan solve the quartic in closed form; its formulas lose every digit
near a double root (a grazing contact) and need cases for vanishing leading
coefficients (two balls with the same deceleration, a ball at rest). Here
the root is bracketed instead, and found by Newton's method where it needs
no guess:

1. the roots of p'' (a quadratic, in closed form: ``quadratic_roots``) and
   of p''' (linear) cut [0, T] (T the horizon: the polynomials hold until
   the balls' next change of state) into at most four pieces on which p' is
   monotone and of one curvature;
2. on each piece where p' changes sign, Newton's method finds p' = 0 from
   the end where p' p''' > 0: by Fourier's classical condition its iterates
   then approach the root from that side without passing it, and converge
   quadratically once close;
3. these points cut [0, T] further into at most eight pieces on which p is
   monotone and of one curvature; the first on which p falls from above
   zero to zero or below holds the event, and Newton's method from its
   Fourier end finds it.

Each search stops when its iterate stops moving or crosses zero in
rounding (after ``iterations`` steps at most, 64 by default: from a Fourier
end Newton's method converges at least linearly, halving the distance to
a double root at each step), and all the searches of a batch run in one
``lax.while_loop`` until the last has stopped: a few steps where the roots
are simple, more near a double root. Vanishing leading coefficients only
make pieces empty and a double root is the end of a piece, so no case is
singled out.

"Zero" is zero within the rounding of p: |p| ≤ 16 ε Σ s_k |t|^k, with ε
the machine epsilon and s_k a bound of the terms that made coefficient k
(``scale``; by default |c_k|). A pair touching at t = 0 (just after a
collision) counts only if it approaches, p'(0) below minus the same bound
of p', or presses together, p'(0) zero within that bound and p''(0) below
minus its own: balls moving apart, or touching at rest, are no event.

Derivatives. Where p crosses zero with p'(t*) < 0, the implicit function
theorem gives dt*/dc = −(∂p/∂c)/p'(t*). The search runs on values with no
derivative (``stop_gradient``) and the result is

    t = t* − (p(t*; c) − p(t*; c)|_stopped) / p'(t*),

one Newton step whose value is t* and whose derivative is exactly that of
the theorem, for forward and reverse mode alike. At a double root
(p'(t*) = 0, a graze) the root is not differentiable; its derivative is
returned as 0, and so is that of a contact at t = 0 (the root is pinned).
"""

import jax
import jax.numpy as jnp

#: Rounding of p: multiples of ε Σ s_k |t|^k below which |p| counts as zero.
ROUNDING_MULTIPLE = 16.0


def polynomial(coefficients, t):
    """p(t) = Σ c_k t^k by Horner's rule; ``coefficients`` lowest degree first on the last axis."""
    result = coefficients[..., -1]
    for k in range(coefficients.shape[-1] - 2, -1, -1):
        result = result * t + coefficients[..., k]
    return result


def derivative(coefficients):
    """The coefficients of p' (same length, lowest degree first, the last one 0)."""
    degree = coefficients.shape[-1] - 1
    powers = jnp.arange(1, degree + 1, dtype=coefficients.dtype)
    return jnp.concatenate([coefficients[..., 1:] * powers, jnp.zeros_like(coefficients[..., :1])], axis=-1)


def quadratic_roots(coefficients):
    """The real roots (low, high) of c₀ + c₁ t + c₂ t², NaN where there is none.

    The stable form q = −(c₁ + sign(c₁) √Δ)/2, roots q/c₂ and c₀/q (no
    cancellation); a linear polynomial (c₂ = 0) has its one root as ``low``
    and NaN as ``high``. ``coefficients``: (..., 3).
    """
    c0, c1, c2 = coefficients[..., 0], coefficients[..., 1], coefficients[..., 2]
    discriminant = c1**2 - 4 * c0 * c2
    real = discriminant >= 0
    positive = discriminant > 0
    root = jnp.where(positive, jnp.sqrt(jnp.where(positive, discriminant, 1.0)), 0.0)
    q = -0.5 * (c1 + jnp.where(c1 < 0, -root, root))
    quadratic = c2 != 0
    nonzero_q = q != 0
    first = jnp.where(quadratic, q / jnp.where(quadratic, c2, 1.0), jnp.nan)
    second = jnp.where(nonzero_q, c0 / jnp.where(nonzero_q, q, 1.0), 0.0)  # q = 0: c₁ = Δ = 0, a double root 0
    low = jnp.where(real, jnp.minimum(first, second), jnp.nan)
    high = jnp.where(real, jnp.maximum(first, second), jnp.nan)
    linear = ~quadratic & (c1 != 0)
    low = jnp.where(quadratic, low, jnp.where(linear, -c0 / jnp.where(linear, c1, 1.0), jnp.nan))
    return low, jnp.where(quadratic, high, jnp.nan)


def _rounding(scale, t):
    """ROUNDING_MULTIPLE ε Σ s_k |t|^k: how far the computed p(t) may lie from p(t)."""
    return ROUNDING_MULTIPLE * jnp.finfo(scale.dtype).eps * polynomial(scale, jnp.abs(t))


def _newton(coefficients, low, high, iterations):
    """The zero of f = Σ c_k t^k on [low, high], where f is monotone, of one curvature and changes sign, by
    Newton's method from the end where f f″ > 0 (Fourier's condition: the iterates then approach the zero from
    that side without passing it, quadratically once close), until they stop moving or cross zero in rounding,
    at most ``iterations`` steps. Every argument broadcasts against the others' leading axes."""
    slope, curvature = derivative(coefficients), derivative(derivative(coefficients))
    at_low = polynomial(coefficients, low)
    left = at_low * polynomial(curvature, 0.5 * (low + high)) > 0
    start = jnp.where(left, low, high)
    side = jnp.sign(jnp.where(left, at_low, polynomial(coefficients, high)))

    def unfinished(state):
        return (state[3] < iterations) & ~jnp.all(state[2])

    def step(state):
        x, value, done, count = state
        rate = polynomial(slope, x)
        moving = (rate != 0) & ~done
        new = jnp.clip(x - value / jnp.where(moving, rate, 1.0), low, high)
        new_value = polynomial(coefficients, new)
        moved = moving & (new != x)
        x, value = jnp.where(moved, new, x), jnp.where(moved, new_value, value)
        return x, value, done | ~moved | (jnp.sign(new_value) != side), count + 1

    value = polynomial(coefficients, start)
    return jax.lax.while_loop(unfinished, step, (start, value, value == 0, 0))[0]


def _pad(coefficients):
    coefficients = jnp.asarray(coefficients, float)
    if not 1 <= coefficients.shape[-1] <= 5:
        raise ValueError(f"coefficients must hold 1 to 5 values (degree ≤ 4) on their last axis; got "
                         f"{coefficients.shape[-1]}")
    width = [(0, 0)] * (coefficients.ndim - 1) + [(0, 5 - coefficients.shape[-1])]
    return jnp.pad(coefficients, width)


def _search(c, scale, horizon, iterations):
    """t* of ``first_crossing`` on values without derivatives."""
    slope = derivative(c)
    curvature = derivative(slope)
    low, high = quadratic_roots(curvature[..., :3])  # p″ = 0
    quartic = c[..., 4] != 0
    inflection = jnp.where(quartic, -c[..., 3] / jnp.where(quartic, 4 * c[..., 4], 1.0), jnp.nan)  # p‴ = 0
    inner = jnp.sort(jnp.nan_to_num(jnp.stack([low, high, inflection], -1), nan=jnp.inf), -1)
    inner = jnp.clip(inner, 0.0, horizon[..., None])
    zero = jnp.zeros_like(horizon)[..., None]
    cuts = jnp.concatenate([zero, inner, horizon[..., None]], axis=-1)  # p' monotone, of one curvature between
    lo, hi = cuts[..., :-1], cuts[..., 1:]
    changes = polynomial(slope[..., None, :], lo) * polynomial(slope[..., None, :], hi) < 0
    extrema = jnp.where(changes, _newton(jnp.where(changes[..., None], slope[..., None, :], 1.0), lo, hi,
                                         iterations), hi)
    # p monotone and of one curvature on each piece, in order: [cut k, extremum k], [extremum k, cut k + 1]
    a = jnp.stack([lo, extrema], -1).reshape(*lo.shape[:-1], 2 * lo.shape[-1])
    b = jnp.concatenate([a[..., 1:], horizon[..., None]], -1)
    pieces = c[..., None, :]
    crossing = (polynomial(pieces, a) > _rounding(scale[..., None, :], a)) & (
        polynomial(pieces, b) <= _rounding(scale[..., None, :], b)) & (a < b)
    found = jnp.any(crossing, -1)
    piece = jnp.argmax(crossing, -1)[..., None]
    a, b = jnp.take_along_axis(a, piece, -1)[..., 0], jnp.take_along_axis(b, piece, -1)[..., 0]
    graze = polynomial(c, b) > 0  # within rounding of zero at b but not below it: the contact at b
    root = _newton(jnp.where((found & ~graze)[..., None], c, 1.0), a, b, iterations)
    first = jnp.where(found, jnp.where(graze, b, root), jnp.inf)
    # touching now and approaching, or pressing together (no approach beyond rounding, but p'' < 0)
    rate, bend = _rounding(derivative(scale), 0.0), ROUNDING_MULTIPLE * jnp.finfo(scale.dtype).eps * scale[..., 2]
    start = (jnp.abs(c[..., 0]) <= _rounding(scale, 0.0)) & (
        (c[..., 1] < -rate) | ((c[..., 1] <= rate) & (c[..., 2] < -bend)))
    return jnp.where(start, 0.0, first)


def first_crossing(coefficients, horizon, scale=None, *, iterations=64):
    """The first t ∈ [0, T] at which p(t) = Σ c_k t^k reaches zero from above, ∞ if none (see the module).

    Parameters
    ----------
    coefficients : (..., k) with k ≤ 5, lowest degree first: the polynomials, one per leading index.
    horizon : T (s), finite and ≥ 0, broadcasting against the leading axes: how far the polynomials hold.
    scale : (..., k), a bound of the magnitude of the terms summed into each coefficient (default |c|): sets the
        rounding below which p counts as zero, so that a contact computed as |Δr|² − (2R)² is seen within the
        rounding of |Δr|² rather than of the small difference.
    iterations : the most Newton steps of each search.

    Returns
    -------
    t : the leading shape; 0 where p(0) is zero within rounding and p'(0) < 0, or p'(0) is zero within rounding
        and p''(0) < 0 (pressing together); ∞ where p does not reach zero from
        above (an overlap at t = 0, p(0) < 0, counts only when p later rises above zero and falls back).
    Derivatives with respect to ``coefficients`` by the implicit function theorem (module docstring).
    """
    c = _pad(coefficients)
    scale = jnp.abs(c) if scale is None else _pad(scale)
    horizon = jnp.broadcast_to(jnp.asarray(horizon, float), c.shape[:-1])
    fixed = jax.lax.stop_gradient(c)
    root = _search(fixed, jax.lax.stop_gradient(scale), jax.lax.stop_gradient(horizon), iterations)
    found = jnp.isfinite(root)
    at = jnp.where(found, root, 0.0)
    slope = polynomial(derivative(fixed), at)
    value = polynomial(c, at)
    moving = found & (root > 0) & (slope < -_rounding(derivative(jax.lax.stop_gradient(scale)), at))
    step = (value - jax.lax.stop_gradient(value)) / jnp.where(moving, slope, 1.0)
    return root - jnp.where(moving, step, 0.0)
