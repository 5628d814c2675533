"""The first crossing of zero of quartics and quadratics: known roots, double and near-double roots, vanishing
leading coefficients, contacts at t = 0, and derivatives against central differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from diffimpact.billiards.rigid.roots import first_crossing, polynomial, quadratic_roots

crossing = jax.jit(first_crossing)


def from_roots(*roots, leading=1.0):
    """Coefficients, lowest degree first, of leading · Π (t − r) padded to degree 4."""
    high_first = leading * np.poly(roots) if roots else np.array([leading])
    return np.pad(high_first[::-1], (0, 5 - len(high_first)))


def test_the_first_of_four_simple_roots():
    cases = np.stack([
        from_roots(1.0, 2.0, 3.0, 4.0),
        from_roots(1.0, 2.0, 3.0, 4.0, leading=-1.0),  # below zero at t = 0, rises through 1, falls through 2
        np.pad(np.polymul([1.0, -3.5, 1.5], [1.0, 0.0, 1.0])[::-1], (0, 0)),  # (t − 0.5)(t − 3)(t² + 1)
        from_roots(-2.0, -1.0, 0.25, 0.75, leading=-3.0),  # the first crossing is downwards through 0.75
    ])
    # to the rounding of p over |p'| at the root: ~1e-13 / 2 at t = 2 of the second
    np.testing.assert_allclose(crossing(cases, 10.0), [1.0, 2.0, 0.5, 0.75], rtol=1e-13)


def test_a_root_past_the_horizon_is_no_event():
    assert np.isinf(crossing(from_roots(1.0, 2.0, 3.0, 4.0), 0.999))
    assert crossing(from_roots(1.0, 2.0, 3.0, 4.0), 1.0) == pytest.approx(1.0, rel=1e-15)


def test_random_quartics_against_the_roots_numpy_finds():
    rng = np.random.default_rng(3)
    roots = rng.uniform(-1.0, 4.0, size=(200, 4))
    leading = rng.choice([-1.0, 1.0], size=200) * rng.uniform(0.1, 10.0, size=200)
    cases = np.stack([from_roots(*r, leading=a) for r, a in zip(roots, leading, strict=True)])
    horizon = 3.0
    expected = []
    for c in cases:
        slope = np.polyder(c[::-1])
        candidates = [r.real for r in np.roots(c[::-1]) if abs(r.imag) < 1e-9 and 0 < r.real <= horizon
                      and np.polyval(slope, r.real) < 0]
        expected.append(min(candidates, default=np.inf))
    found = np.asarray(crossing(cases, horizon))
    expected = np.array(expected)
    np.testing.assert_array_equal(np.isinf(found), np.isinf(expected))
    assert np.sum(np.isfinite(expected)) > 100
    # each root to the rounding of p there over |p'| (twice: numpy's root carries as much)
    finite = np.isfinite(expected)
    t = expected[finite]
    powers = t[:, None] ** np.arange(5)
    rounding = 16 * np.finfo(float).eps * np.sum(np.abs(cases[finite]) * powers, axis=1)
    slope = np.sum(cases[finite, 1:] * np.arange(1, 5) * powers[:, :4], axis=1)
    assert np.all(np.abs(found[finite] - t) <= 2 * rounding / np.abs(slope))


def test_a_double_root_is_found_as_a_graze():
    """p touches zero without crossing: (t − 1)²(t − 3)(t − 4), (t − 0.3)²(t² + 1) (0.3 not a double, so the
    minimum may fall just above or below zero), the quadratic (t − 2)². A double root moves by √(rounding)."""
    cases = np.stack([
        from_roots(1.0, 1.0, 3.0, 4.0),
        np.pad(np.polymul([1.0, -0.6, 0.09], [1.0, 0.0, 1.0])[::-1], (0, 0)),
        from_roots(2.0, 2.0),
    ])
    np.testing.assert_allclose(crossing(cases, 5.0), [1.0, 0.3, 2.0], rtol=1e-7)


@pytest.mark.parametrize("gap", [1e-3, 1e-6, 1e-9])
def test_near_double_roots_are_told_apart(gap):
    """Two roots ``gap`` apart: the first is found to within the rounding r of p over |p'(1)| = 6 gap, and never
    worse than √(r / 6) (p''(1)/2 = 6), reached once the dip between the roots is lost in r (gap = 1e-9)."""
    near = from_roots(1.0, 1.0 + gap, 3.0, 4.0)
    rounding = 16 * np.finfo(float).eps * np.abs(near).sum()
    error = min(rounding / (6 * gap), np.sqrt(rounding / 6))
    assert abs(crossing(near, 5.0) - 1.0) <= error


@pytest.mark.parametrize("gap", [1e-3, 1e-6])
def test_a_near_miss_is_no_event(gap):
    """(t − 1)²(t² + 1) lifted by 2 gap²: its minimum near 1, 2 gap², stays above its rounding (~1e-14)."""
    lifted = np.polymul([1.0, -2.0, 1.0], [1.0, 0.0, 1.0])[::-1] + np.array([2.0, 0, 0, 0, 0]) * gap**2
    assert np.isinf(crossing(lifted, 5.0))


def test_vanishing_leading_coefficients():
    cases = np.stack([
        from_roots(1.5, 2.5),  # a quadratic: c₄ = c₃ = 0
        from_roots(2.0, leading=-1.0),  # 2 − t
        from_roots(leading=1.0),  # a positive constant
        from_roots(1.0, 2.0) + np.array([0, 0, 0, 0, 1e-30]),  # a quartic in name only
        from_roots(0.5, 1.0, 3.0, leading=-1.0),  # a cubic
    ])
    np.testing.assert_allclose(crossing(cases, 4.0), [1.5, 2.0, np.inf, 1.0, 0.5], rtol=1e-15)


def contact_quartic(separation_rate, acceleration=0.0, radius=0.028575):
    """|Δr(t)|² − (2R)² for two balls touching at t = 0 along x, Δr = (2R + w t + a t²/2, 0), with the scale of
    its terms."""
    d0, d1, d2 = 2 * radius, separation_rate, 0.5 * acceleration
    c = np.array([d0 * d0 - (2 * radius) ** 2, 2 * d0 * d1, d1 * d1 + 2 * d0 * d2, 2 * d1 * d2, d2 * d2])
    scale = np.array([d0 * d0 + (2 * radius) ** 2, 2 * d0 * abs(d1), d1 * d1 + 2 * d0 * abs(d2), 2 * abs(d1 * d2),
                      d2 * d2])
    return c, scale


def test_touching_at_t_zero_counts_only_when_approaching_or_pressing():
    """Moving apart (or at rest, or apart and then turning back only later) is no contact at t = 0; moving
    together is, and so is pressing together (no normal speed, decelerated towards each other). The constant term
    of |Δr|² − (2R)² rounds to ±ε (2R)², seen through ``scale``."""
    cases = [contact_quartic(-0.5), contact_quartic(0.5), contact_quartic(0.0), contact_quartic(0.5, -2.0),
             contact_quartic(0.0, -2.0), contact_quartic(0.0, 2.0)]
    coefficients = np.stack([c for c, _ in cases])
    scales = np.stack([s for _, s in cases])
    rounded = coefficients + np.array([1e-18, 0, 0, 0, 0])  # the rounding of the constant term, above zero
    for c in (coefficients, rounded, coefficients - np.array([1e-18, 0, 0, 0, 0])):
        found = crossing(c, 1.0, scales)
        assert found[0] == 0.0 and found[4] == 0.0
        assert np.all(np.isinf(np.asarray(found)[[1, 2, 5]]))
        # apart at 0.5 m/s, decelerated towards each other at 2 m/s²: back in contact at t = 2 w/a = 0.5 s
        np.testing.assert_allclose(found[3], 0.5, rtol=1e-12)


def test_batches_of_any_leading_shape():
    cases = np.stack([from_roots(1.0, 2.0, 3.0, 4.0), from_roots(0.5, 5.0)] * 3).reshape(3, 2, 5)
    horizon = np.array([[10.0], [0.7], [0.2]])
    found = first_crossing(cases, horizon)
    assert found.shape == (3, 2)
    np.testing.assert_allclose(found, [[1.0, 0.5], [np.inf, 0.5], [np.inf, np.inf]], rtol=1e-15)


@pytest.mark.parametrize("case", [from_roots(0.7, 1.3, 2.9, 3.6, leading=0.8), from_roots(1.2, 2.2),
                                  np.pad(np.polymul([1.0, -3.5, 1.5], [2.0, 0.1, 1.0])[::-1], (0, 0))])
def test_derivatives_of_the_root_against_central_differences(case, central_jacobian):
    exact = jax.jacfwd(lambda c: first_crossing(c, 3.0))(case)
    reverse = jax.grad(lambda c: first_crossing(c, 3.0))(case)
    numeric = central_jacobian(lambda c: np.atleast_1d(crossing(c, 3.0)), case, 1e-7)[0]
    assert np.all(np.isfinite(exact))
    np.testing.assert_allclose(exact, numeric, rtol=1e-6, atol=1e-9 * np.abs(numeric).max())
    np.testing.assert_allclose(reverse, exact, rtol=1e-14)


def test_derivatives_are_zero_at_a_contact_at_t_zero():
    c, scale = contact_quartic(-0.5)
    assert np.all(jax.jacfwd(lambda c: first_crossing(c, 1.0, scale))(c) == 0.0)


def test_quadratic_roots_in_every_case():
    cases = np.array([[2.0, -3.0, 1.0], [1.0, 0.0, 1.0], [4.0, -4.0, 1.0], [3.0, -1.0, 0.0], [1.0, 0.0, 0.0],
                      [1e-20, 1.0, 1e-20]])
    low, high = quadratic_roots(jnp.asarray(cases))
    np.testing.assert_allclose(low, [1.0, np.nan, 2.0, 3.0, np.nan, -1e20], rtol=1e-15)
    np.testing.assert_allclose(high, [2.0, np.nan, 2.0, np.nan, np.nan, -1e-20], rtol=1e-15)
    # the stable form keeps the small root of x² + 1e8 x + 1 to full precision
    small = quadratic_roots(jnp.array([1.0, 1e8, 1.0]))[1]
    np.testing.assert_allclose(small, -1e-8, rtol=1e-15)
    assert polynomial(jnp.array([1.0, 1e8, 1.0]), small) == pytest.approx(0.0, abs=1e-15)


def test_quadratic_roots_derivatives_against_central_differences(central_jacobian):
    case = np.array([2.0, -3.0, 1.0])
    exact = jax.jacfwd(lambda c: jnp.stack(quadratic_roots(c)))(case)
    numeric = central_jacobian(lambda c: np.stack(quadratic_roots(jnp.asarray(c))), case, 1e-6)
    np.testing.assert_allclose(exact, numeric, rtol=1e-8)


def test_more_than_five_coefficients_are_refused():
    with pytest.raises(ValueError, match="degree ≤ 4"):
        first_crossing(np.ones(6), 1.0)
