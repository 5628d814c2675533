"""Ball–cushion impact of Mathavan, Jackson & Parkin (2010), eqs. (12)–(17).

References are independent of the module: a SciPy ``solve_ivp`` of the same
ODE (14) in the impulse, closed forms (frictionless impact, the head-on ball
with topspin 2V/R), the paper's statements (Figs. 8–10), energy, and finite
differences. Compiled calls are shared (one vmapped program per step count,
fixed batch size) to keep the file fast.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from diffimpact.impulse import mathavan_2010
from diffimpact.impulse.mathavan_2010 import cushion_rebound

# The paper's snooker parameters (section 3.5): kg, m, -, -, -.
MASS, RADIUS = 0.1406, 0.02625
RESTITUTION, CUSHION_FRICTION, CLOTH_FRICTION = 0.98, 0.14, 0.212
STEPS = 5000
BATCH = 256  # every batched evaluation is padded to this size, so each step count compiles once

# A case: (speed, incidence, topspin, sidespin, mass, radius, height, restitution, μ_w, μ_s).
NAMES = ("speed", "incidence", "topspin", "sidespin", "mass", "radius", "height", "restitution",
         "cushion_friction", "cloth_friction")


def case(speed=1.0, degrees=45.0, top=1.0, side=0.0, *, mass=MASS, radius=RADIUS, height=None,
         restitution=RESTITUTION, cushion_friction=CUSHION_FRICTION, cloth_friction=CLOTH_FRICTION):
    """A case with spins given as ω R / V (top = 1: rolling) and the incidence in degrees."""
    height = 1.4 * radius if height is None else height
    return (speed, np.radians(degrees), top * speed / radius, side * speed / radius, mass, radius, height,
            restitution, cushion_friction, cloth_friction)


def _rebound(params, steps):
    return cushion_rebound(*params[:4], mass=params[4], radius=params[5], height=params[6],
                           restitution=params[7], cushion_friction=params[8], cloth_friction=params[9],
                           steps=steps)


def _outputs(params, steps):
    """All outputs as one vector: v_x, v_y, ω_x, ω_y, ω_z, P_f, P_c."""
    r = _rebound(params, steps)
    return jnp.concatenate([r.velocity, r.angular_velocity, r.impulse[None], r.compression_impulse[None]])


class Evaluator:
    """jit(vmap(cushion_rebound)) on batches padded to BATCH rows; one compilation per step count."""

    def __init__(self):
        self._compiled = {}

    def __call__(self, cases, steps=STEPS):
        cases = np.atleast_2d(np.asarray(cases, dtype=float))
        assert len(cases) <= BATCH
        padded = np.concatenate([cases, np.repeat(cases[-1:], BATCH - len(cases), axis=0)])
        if steps not in self._compiled:
            self._compiled[steps] = jax.jit(jax.vmap(lambda p: _outputs(p, steps)))
        return np.asarray(self._compiled[steps](jnp.asarray(padded)))[: len(cases)]


@pytest.fixture(scope="module")
def evaluate():
    return Evaluator()


def speed_of(out):
    return np.hypot(out[:, 0], out[:, 1])


def angle_of(out):
    return np.arctan2(-out[:, 1], out[:, 0])


def kinetic_energy(velocity, angular_velocity, mass, radius):
    return 0.5 * mass * np.sum(velocity**2, -1) + 0.2 * mass * radius**2 * np.sum(angular_velocity**2, -1)


def initial_state(c):
    speed, alpha, top, side = c[:4]
    return (np.array([speed * np.cos(alpha), speed * np.sin(alpha)]),
            np.array([-top * np.sin(alpha), top * np.cos(alpha), side]))


def b_min(c):
    """Lower bound of the bracket of (14b) over the slip directions."""
    sin_t = c[6] / c[5] - 1.0
    cos_t = np.sqrt(1.0 - sin_t**2)
    return cos_t - c[8] * sin_t - c[9] * (sin_t + c[8] * cos_t)


# ---------------------------------------------------------------------------------------------
# 1. Against an independent integrator of the same ODE


def scipy_rebound(c):
    """Eqs. (14a–f) in P_I by DOP853 (rtol 1e-11), the work W (16a) as a state, events (16c), (16b).

    Written from the paper's equations with atan2 slip angles; no friction at a contact whose
    slip is below 1e-12 of the speed scale (eq. (15)).
    """
    speed, alpha, top, side, mass, radius, height, e, mu_w, mu_s = c
    sin_t = (height - radius) / radius
    cos_t = np.sqrt(1.0 - sin_t**2)
    zero = 1e-12 * (speed + radius * (abs(top) + abs(side)))
    spin_rate = 5.0 / (2.0 * mass * radius)

    def direction(x, y):
        if np.hypot(x, y) <= zero:
            return 0.0, 0.0
        angle = np.arctan2(y, x)
        return np.cos(angle), np.sin(angle)

    def rhs(impulse, y):
        vx, vy, wx, wy, wz, _ = y
        cos_phi, sin_phi = direction(vx + wy * radius * sin_t - wz * radius * cos_t, -vy * sin_t + wx * radius)
        cos_phi_c, sin_phi_c = direction(vx - wy * radius, vy + wx * radius)
        kappa = sin_t + mu_w * sin_phi * cos_t  # P_C / P_I, eq. (8)
        return [
            -(mu_w * cos_phi + mu_s * cos_phi_c * kappa) / mass,
            -(cos_t - mu_w * sin_t * sin_phi + mu_s * sin_phi_c * kappa) / mass,
            -spin_rate * (mu_w * sin_phi + mu_s * sin_phi_c * kappa),
            -spin_rate * (mu_w * cos_phi * sin_t - mu_s * cos_phi_c * kappa),
            spin_rate * mu_w * cos_phi * cos_t,
            -vy * cos_t,  # dW/dP_I = ż′_I, eq. (16a)
        ]

    v0, w0 = initial_state(c)
    options = dict(method="DOP853", rtol=1e-11, atol=1e-13)
    span = 20.0 * mass * speed

    def compression_ends(impulse, y):
        return y[1]

    compression_ends.terminal, compression_ends.direction = True, -1
    first = solve_ivp(rhs, (0.0, span), [*v0, *w0, 0.0], events=compression_ends, **options)
    impulse_c, state_c = first.t_events[0][0], first.y_events[0][0]
    target = (1.0 - e**2) * state_c[5]

    def restitution_ends(impulse, y):
        return y[5] - target

    restitution_ends.terminal, restitution_ends.direction = True, 1
    second = solve_ivp(rhs, (impulse_c, impulse_c + span), state_c, events=restitution_ends, **options)
    impulse_f, state_f = second.t_events[0][0], second.y_events[0][0]
    return np.concatenate([state_f[:5], [impulse_f, impulse_c]])


SCIPY_CASES = {
    "rolling 45°": case(1.0, 45.0, 1.0),
    "stun 30°": case(1.3, 30.0, 0.0),
    "right side 60°": case(0.8, 60.0, 1.0, 1.5),
    "left side 60°": case(0.8, 60.0, 1.0, -1.5),
    "topspin 2V/R 50°": case(1.0, 50.0, 2.0),
    "head-on rolling": case(1.0, 90.0, 1.0),
    "draw, pool ball, low cushion": case(1.2, 70.0, -1.0, 0.5, mass=0.17, radius=0.028575,
                                         height=1.3 * 0.028575, restitution=0.8, cushion_friction=0.2,
                                         cloth_friction=0.3),
}


@pytest.fixture(scope="module")
def scipy_reference():
    return {name: scipy_rebound(c) for name, c in SCIPY_CASES.items()}


@pytest.fixture(scope="module")
def euler(evaluate):
    cases = list(SCIPY_CASES.values())
    return {steps: dict(zip(SCIPY_CASES, evaluate(cases, steps))) for steps in (STEPS // 2, STEPS)}


def state_error(out, reference, radius):
    """Largest difference of v and R ω (m/s)."""
    scale = np.array([1.0, 1.0, radius, radius, radius])
    return np.max(np.abs((out[:5] - reference[:5]) * scale))


@pytest.mark.parametrize("name", SCIPY_CASES)
def test_agrees_with_scipy_to_euler_accuracy(name, euler, scipy_reference):
    # Forward Euler's global error is O(ΔP): bounded here by one step's change of the normal
    # velocity, Δv = (1 + e) v_y0 / (b_min N) (the step, ΔP/M); observed 0.01–0.4 of it.
    c = SCIPY_CASES[name]
    out, reference = euler[STEPS][name], scipy_reference[name]
    step_velocity = (1.0 + c[7]) * c[0] * np.sin(c[1]) / (b_min(c) * STEPS)
    assert state_error(out, reference, c[5]) <= step_velocity
    # The impulses to O(1/N) as well (observed ≤ 0.3/N).
    np.testing.assert_allclose(out[5:], reference[5:], rtol=1.0 / STEPS)


@pytest.mark.parametrize("name", [n for n in SCIPY_CASES if n != "head-on rolling"])
def test_error_halves_when_steps_double(name, euler, scipy_reference):
    # First order: error ∝ ΔP. Head-on rolling is left out: there the cushion slip reverses
    # exactly through zero (its x part is 0 by symmetry), a jump of the rates of (14) inside a
    # step, so the O(ΔP) error has a coefficient that depends on where in the step the jump
    # falls (it is still within the bound of the test above).
    radius = SCIPY_CASES[name][5]
    coarse = state_error(euler[STEPS // 2][name], scipy_reference[name], radius)
    fine = state_error(euler[STEPS][name], scipy_reference[name], radius)
    assert 1.8 < coarse / fine < 2.2


# ---------------------------------------------------------------------------------------------
# 2. The paper's statements and closed forms


def test_outputs_scale_with_speed_and_rebound_angle_does_not_fig8(evaluate):
    # No length or time scale but V in (14) (gravity neglected, constant μ): for fixed ω R / V
    # every output is proportional to V (Fig. 8: a rolling ball's rebound angle is independent
    # of its speed).
    speeds = np.array([0.37, 1.0, 2.9])
    spins = [(40.0, 1.0, 0.0), (70.0, -0.5, 0.8)]
    cases = [case(v, a, t, s) for a, t, s in spins for v in speeds]
    out = evaluate(cases).reshape(len(spins), len(speeds), -1)
    scaled = out / speeds[None, :, None]
    np.testing.assert_allclose(scaled, np.repeat(scaled[:, :1], len(speeds), axis=1), rtol=1e-11, atol=1e-13)
    angles = np.arctan2(-out[..., 1], out[..., 0])
    np.testing.assert_allclose(angles, np.repeat(angles[:, :1], len(speeds), axis=1), atol=1e-12)


def test_head_on_with_topspin_2v_over_r_rebounds_at_e_times_speed_fig9(evaluate):
    # Head-on, ω_T = 2V/R: v = (0, V), ω = (−2V/R, 0, 0). The slips (12), (13) are
    # (0, −(2 + sin θ)V) at the cushion and (0, −V) at the table: sin φ = sin φ′ = −1, and they
    # keep that sign to the end (the cushion slip rises at (sin θ b + 2.5(μ_w + μ_s κ)) per unit
    # P/M, by 1.86 V < 2.4 V over the impact; the table slip falls at b − 2.5(μ_w + μ_s κ) > 0).
    # So the bracket b of (14b) is constant, v_y is linear in P, W ∝ v_y², and (16b) gives
    # v_y(P_f) = −e V exactly: rebound speed e V, "the incident speed" of Fig. 9 read off a plot
    # (0.98 V), also for the Euler scheme, which is exact for a constant rate. The only
    # departure is the smooth slip direction (``_slip_direction``), which shortens the friction
    # by 1 − ½(floor/s)²: floors ≈ 3e-4 V (one step's worth of slip at N = 5000) against slips
    # of order V here, so a few 1e-8 of V at most.
    rows = [(v, e) for v in (0.5, 2.0) for e in (0.98, 0.7)]
    out = evaluate([case(v, 90.0, 2.0, restitution=e) for v, e in rows])
    for (v, e), o in zip(rows, out):
        assert abs(o[0]) < 1e-13
        np.testing.assert_allclose(o[1], -e * v, rtol=1e-7)


def test_largest_speed_loss_near_40_degrees_fig9(evaluate):
    # "For any given speed–spin conditions, the speed loss is largest for the ball incident
    # angles around 40°": the minimiser over α of the rebound speed lies in 35°–45°.
    degrees = np.arange(20.0, 71.0)
    tops = (-1.0, 0.0, 1.0, 2.0)
    out = evaluate([case(1.0, a, t) for t in tops for a in degrees])
    speeds = speed_of(out).reshape(len(tops), len(degrees))
    for top, row in zip(tops, speeds):
        assert 35.0 <= degrees[np.argmin(row)] <= 45.0, top
        assert row.min() < 0.95  # a real loss, not round-off


def test_side_spin_fig10(evaluate):
    # Right spin ω_S = +2V/R (rolling) rebounds faster than it came in, at every α; left spin
    # ω_S = −2V/R near α = 90° bounces back to its own side (β > 90°) and, at 90°, also faster.
    degrees = np.arange(5.0, 91.0, 5.0)
    right = evaluate([case(1.0, a, 1.0, 2.0) for a in degrees])
    assert np.all(speed_of(right) > 1.0)
    left = evaluate([case(1.0, a, 1.0, -2.0) for a in (80.0, 85.0, 90.0)])
    assert np.all(angle_of(left) > np.pi / 2)
    assert speed_of(left)[-1] > 1.0


def test_frictionless_limit_closed_form(evaluate):
    # μ_w = μ_s = 0: only the normal impulse along I–G acts, v_z ≡ 0 holds the ball down, so
    # v_x and the spin are unchanged and energetic restitution gives v_y → −e v_y (W ∝ v_y²).
    rng = np.random.default_rng(0)
    rows = [(a, e, h) for a in (10.0, 45.0, 90.0) for e in (0.0, 0.5, 1.0) for h in (1.0, 1.4, 1.9)]
    cases = [case(1.3, a, rng.uniform(-2, 2), rng.uniform(-2, 2), height=h * RADIUS, restitution=e,
                  cushion_friction=0.0, cloth_friction=0.0) for a, e, h in rows]
    out = evaluate(cases)
    for c, o in zip(cases, out):
        v0, w0 = initial_state(c)
        np.testing.assert_allclose(o[:2], [v0[0], -c[7] * v0[1]], atol=1e-13)
        np.testing.assert_allclose(o[2:5], w0, rtol=1e-13, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# 3. Energy and the impulse bounds


@pytest.fixture(scope="module")
def energy_cases():
    rng = np.random.default_rng(1)
    n = BATCH - 16
    cases = [case(rng.uniform(0.3, 3.0), rng.uniform(2.0, 90.0), rng.uniform(-2, 3), rng.uniform(-3, 3),
                  height=rng.uniform(1.2, 1.6) * RADIUS, restitution=rng.choice([0.0, 1.0, rng.uniform()]),
                  cushion_friction=rng.uniform(0, 0.4), cloth_friction=rng.uniform(0, 0.5)) for _ in range(n)]
    # Elastic with little or no friction, and stick-like cases (μ_w = 0, cloth friction strong
    # enough to hold a rolling ball, so Euler chatters about zero slip), where a gain would show.
    for mu_w, mu_s in [(0.0, 0.0), (1e-4, 1e-4), (0.0, 0.7), (0.0, 1.0)]:
        for degrees in (30.0, 90.0):
            for top in (0.0, 1.0):
                cases.append(case(1.0, degrees, top, restitution=1.0, cushion_friction=mu_w, cloth_friction=mu_s))
    return np.array(cases)


def test_kinetic_energy_never_increases(evaluate, energy_cases):
    out = evaluate(energy_cases)
    for c, o in zip(energy_cases, out):
        v0, w0 = initial_state(c)
        before = kinetic_energy(v0, w0, c[4], c[5])
        after = kinetic_energy(o[:2], o[2:5], c[4], c[5])
        assert after <= before * (1.0 + 1e-12)


def test_impulses_within_the_bound_that_sets_the_step(evaluate, energy_cases):
    # P_c ≤ M v_y0 / b_min and P_f ≤ (1 + e) M v_y0 / b_min (module docstring).
    out = evaluate(energy_cases)
    bound = np.array([c[4] * c[0] * np.sin(c[1]) / b_min(c) for c in energy_cases])
    compression, final = out[:, 6], out[:, 5]
    assert np.all(np.isfinite(out))
    assert np.all((0.0 < compression) & (compression <= final))
    assert np.all(compression <= bound * (1 + 1e-9))
    assert np.all(final <= (1.0 + energy_cases[:, 7]) * bound * (1 + 1e-9))


# ---------------------------------------------------------------------------------------------
# 4. Derivatives

SMOOTH = np.array(case(1.1, 48.0, 0.6, 0.3, restitution=0.9))  # no zero slip on the way
ROLLING = np.array(case(1.0, 45.0, 1.0))  # zero slip at the table at the start
HEAD_ON_ROLLING = np.array(case(1.0, 90.0, 1.0))


@pytest.fixture(scope="module")
def derivatives():
    def speed(p):
        return _rebound(p, STEPS).speed

    def all_derivatives(p):
        outputs = lambda q: _outputs(q, STEPS)  # noqa: E731
        return jax.grad(speed)(p), jax.jacfwd(outputs)(p), jax.jacrev(outputs)(p)

    return jax.jit(all_derivatives)


def test_speed_gradient_matches_central_differences(derivatives, evaluate):
    # Relative step 1e-6: rounding in the 5000 steps leaves ~1e-14 noise on the speed, ~1e-8
    # relative on the differences; truncation is ~h² (observed agreement ≤ 6e-8). The output is
    # smooth between the parameter values where the end crosses a step node, where the
    # derivative jumps by O(1/N) relative; such a point lies within ±h with probability ~N h =
    # 5e-3 (deterministic here: fixed point and steps). rtol 1e-5 sits between the two.
    gradient = np.asarray(derivatives(jnp.asarray(SMOOTH))[0])
    checked = [NAMES.index(n) for n in ("restitution", "cushion_friction", "cloth_friction", "speed",
                                        "incidence", "topspin")]
    rows = []
    steps = []
    for k in checked:
        h = 1e-6 * abs(SMOOTH[k])
        for sign in (1.0, -1.0):
            row = SMOOTH.copy()
            row[k] += sign * h
            rows.append(row)
        steps.append(h)
    speeds = speed_of(evaluate(rows))
    differences = (speeds[0::2] - speeds[1::2]) / (2.0 * np.array(steps))
    np.testing.assert_allclose(gradient[checked], differences, rtol=1e-5)
    assert np.all(np.abs(differences) > 1e-3)  # the check has teeth


def test_forward_and_reverse_jacobians_agree(derivatives):
    _, forward, reverse = derivatives(jnp.asarray(SMOOTH))
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)
    # The velocity does not depend on the mass (dq = dP/M, ΔP ∝ M); the impulses scale with it.
    np.testing.assert_allclose(forward[:5, NAMES.index("mass")], 0.0, atol=1e-10)


@pytest.mark.parametrize("restitution", [1e-12, 0.5, 1.0])
def test_restitution_derivative_frictionless_closed_form(derivatives, restitution):
    # Without friction v_y → −e v_y0, so ∂v_y/∂e = −v_y0 for every e, also for a tiny one
    # (where 1 − e² rounds to 1). A scheme-independent value for both Jacobians.
    point = np.array(case(1.3, 35.0, 0.4, -0.6, restitution=restitution, cushion_friction=0.0,
                          cloth_friction=0.0))
    _, forward, reverse = derivatives(jnp.asarray(point))
    column = NAMES.index("restitution")
    expected = -1.3 * np.sin(np.radians(35.0))
    np.testing.assert_allclose(forward[1, column], expected, rtol=1e-10)
    np.testing.assert_allclose(reverse[1, column], expected, rtol=1e-10)


@pytest.mark.parametrize("point", [ROLLING, HEAD_ON_ROLLING], ids=["rolling 45°", "head-on rolling"])
def test_derivatives_finite_at_zero_slip(derivatives, point):
    speed, forward, reverse = (np.asarray(d) for d in derivatives(jnp.asarray(point)))
    assert np.all(np.isfinite(speed)) and np.all(np.isfinite(forward))
    # the two modes differentiate the slip's zero crossing alike (forward and reverse through the same branches)
    np.testing.assert_allclose(reverse, forward, rtol=1e-9, atol=1e-12 * np.abs(forward).max())


# ---------------------------------------------------------------------------------------------
# 5. Transformations: vmap over each argument, jit, broadcasting

TRANSFORM_STEPS = 2  # run eagerly (``disable_jit``): a few steps suffice, the code path is the same
BASE = case(1.0, 50.0, 0.7, 0.4, height=1.5 * RADIUS, restitution=0.9)


def test_vmap_over_each_argument_equals_broadcast_call():
    with jax.disable_jit():
        for k, name in enumerate(NAMES):
            values = BASE[k] * np.array([0.95, 1.0, 1.05])
            args = list(BASE)
            args[k] = values
            in_axes = [None] * len(NAMES)
            in_axes[k] = 0
            mapped = jax.vmap(lambda *a: _outputs(a, TRANSFORM_STEPS), in_axes=in_axes)(*args)
            broadcast = _rebound(args, TRANSFORM_STEPS)
            assert broadcast.velocity.shape == (3, 2), name
            expected = np.concatenate([broadcast.velocity, broadcast.angular_velocity,
                                       broadcast.impulse[:, None], broadcast.compression_impulse[:, None]], axis=1)
            np.testing.assert_allclose(mapped, expected, rtol=1e-13, atol=1e-15, err_msg=name)


def test_jit_equals_eager():
    compiled = jax.jit(lambda p: _outputs(p, TRANSFORM_STEPS))(jnp.asarray(BASE))
    with jax.disable_jit():
        eager = _outputs(BASE, TRANSFORM_STEPS)
    np.testing.assert_allclose(compiled, eager, rtol=1e-13, atol=1e-15)


def test_arguments_broadcast_and_properties():
    r = cushion_rebound(np.array([[0.5], [1.5]]), np.radians([30.0, 60.0, 90.0]), 10.0,
                        steps=np.int64(TRANSFORM_STEPS))  # NumPy integers are accepted
    assert r.velocity.shape == (2, 3, 2) and r.angular_velocity.shape == (2, 3, 3)
    assert r.impulse.shape == r.compression_impulse.shape == r.speed.shape == r.angle.shape == (2, 3)
    np.testing.assert_allclose(r.speed, np.hypot(r.velocity[..., 0], r.velocity[..., 1]), rtol=1e-15)
    np.testing.assert_allclose(r.speed * np.cos(r.angle), r.velocity[..., 0], atol=1e-15)
    np.testing.assert_allclose(r.speed * np.sin(r.angle), -r.velocity[..., 1], rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# 6. Bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(speed=0.0), r"speed must be finite and in \(0, inf\)"),
        (dict(speed=np.nan), r"speed must be finite"),
        (dict(speed=np.inf), r"speed must be finite"),
        (dict(incidence=0.0), r"incidence must be finite and in \(0, 1.5708\]"),
        (dict(incidence=np.pi / 2 + 1e-9), r"incidence must be finite and in \(0, 1.5708\]"),
        (dict(topspin=np.nan), r"topspin must be finite"),
        (dict(sidespin=-np.inf), r"sidespin must be finite"),
        (dict(mass=0.0), r"mass must be finite and in \(0, inf\)"),
        (dict(radius=-0.02), r"radius must be finite and in \(0, inf\)"),
        (dict(height=0.9 * RADIUS), r"height must be finite and in \[radius, 2 radius\)"),
        (dict(height=2.0 * RADIUS), r"height must be finite and in \[radius, 2 radius\)"),
        (dict(height=np.nan), r"height must be finite"),
        (dict(restitution=1.01), r"restitution must be finite and in \[0, 1\]"),
        (dict(restitution=-0.1), r"restitution must be finite and in \[0, 1\]"),
        (dict(cushion_friction=-0.1), r"cushion_friction must be finite and in \[0, inf\)"),
        (dict(cloth_friction=np.nan), r"cloth_friction must be finite and in \[0, inf\)"),
        (dict(cushion_friction=1.0, cloth_friction=1.0), r"cushion_friction and cloth_friction must satisfy"),
        (dict(height=1.95 * RADIUS, cushion_friction=0.3), r"cushion_friction and cloth_friction must satisfy"),
        (dict(steps=0), r"steps must be a Python int >= 1"),
        (dict(steps=100.0), r"steps must be a Python int >= 1"),
        (dict(steps=True), r"steps must be a Python int >= 1"),
        (dict(steps=np.float64(100)), r"steps must be a Python int >= 1"),
    ],
)
def test_bad_input_raises_naming_the_parameter(kwargs, message):
    arguments = dict(speed=1.0, incidence=0.5)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        cushion_rebound(**arguments)


def test_bad_input_under_jit_raises_with_the_message():
    # Under jax.jit the compiled eqx.error_if raises jax's runtime error carrying the message
    # (under eqx.filter_jit it is an equinox.EquinoxRuntimeError).
    def velocity(speed, friction):
        return cushion_rebound(speed, 0.5, cloth_friction=friction, steps=TRANSFORM_STEPS).velocity

    run = jax.jit(velocity)
    with pytest.raises((eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError), match="speed must be finite"):
        jax.block_until_ready(run(-1.0, 0.2))
    with pytest.raises((eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError), match="must satisfy"):
        jax.block_until_ready(run(1.0, 2.0))
    assert np.all(np.isfinite(run(1.0, 0.2)))


def test_module_defaults_are_the_papers():
    assert (mathavan_2010.MASS, mathavan_2010.RADIUS) == (MASS, RADIUS)
    assert (mathavan_2010.RESTITUTION, mathavan_2010.CUSHION_FRICTION, mathavan_2010.CLOTH_FRICTION) == (
        RESTITUTION, CUSHION_FRICTION, CLOTH_FRICTION)
    assert mathavan_2010.STEPS == STEPS


def test_derivatives_stay_smooth_where_a_contact_could_stick():
    # A ball without spin at 60° and 90° (and μ_w = 0.2): the cushion contact's slip would reverse, and the
    # paper's scheme, reversing the friction at every step, jumped by O(ΔP) as e varied, with derivatives
    # spiking to 9e5. With the friction of a step limited to what stops the slip, the derivative follows the
    # differences of the outputs on a fine grid of e.
    restitution = jnp.linspace(0.89, 0.91, 201)
    for degrees in (60.0, 90.0):
        def speed(e):
            return cushion_rebound(1.0, np.radians(degrees), 0.0, restitution=e, cushion_friction=0.2).speed

        values = np.asarray(jax.vmap(speed)(restitution))
        differences = np.diff(values) / np.diff(np.asarray(restitution))
        gradient = np.asarray(jax.vmap(jax.grad(speed))(restitution))
        midpoint = 0.5 * (gradient[1:] + gradient[:-1])
        np.testing.assert_allclose(midpoint, differences, rtol=1e-3)
