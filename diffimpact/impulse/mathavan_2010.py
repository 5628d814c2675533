r"""Ball–cushion impact of billiards after Mathavan, Jackson & Parkin (2010).

S. Mathavan, M. R. Jackson, R. M. Parkin, "A theoretical analysis of billiard
ball dynamics under cushion impacts", *Proc. IMechE Part C: J. Mech. Eng.
Sci.* 224(9), 1863–1873 (2010), doi:10.1243/09544062JMES1964.

A ball of mass M, radius R (I = 2MR²/5) hits a rigid cushion whose contact
point I lies at height h above the table, R sin θ above the ball's centre
(sin θ = (h − R)/R; h = 7R/5 in the paper, so sin θ = 2/5), while it touches
the table at C. The impact is integrated in the cushion's normal impulse P_I,
which grows monotonically, with Coulomb friction at both contacts.

Frame
-----
x along the cushion (in the direction of the ball's along-cushion velocity),
y horizontal towards the cushion (the ball approaches with v_y > 0), z up.
The incidence α is measured from the cushion line (π/2 is head-on); the
initial conditions of section 3.1 are v = V (cos α, sin α, 0),
ω = (−ω_T sin α, ω_T cos α, ω_S) for topspin ω_T (ω_T = V/R rolls) and
sidespin ω_S (positive about +z; the paper's "right" spin, which speeds the
rebound up).

Equations
---------
(12a, b)  slip at the cushion, in its tangent plane (x, y′):
          ẋ_I = v_x + ω_y R sin θ − ω_z R cos θ,  ẏ′_I = −v_y sin θ + ω_x R,
          with s = |(ẋ_I, ẏ′_I)|, (cos φ, sin φ) = (ẋ_I, ẏ′_I)/s.
(13a, b)  slip at the table: ẋ_C = v_x − ω_y R,  ẏ_C = v_y + ω_x R,
          s′ = |(ẋ_C, ẏ_C)|, (cos φ′, sin φ′) = (ẋ_C, ẏ_C)/s′.
(8)       table normal impulse P_C = (sin θ + μ_w sin φ cos θ) P_I, from
          v_z ≡ 0 (3c) with gravity neglected over the impact.
(14a–f)   the six rates d(·)/dP_I of v_x, v_y, v_z (zero) and ω_x, ω_y, ω_z;
          the bracket of (14b), dv_y/dP_I = −b(φ, φ′)/M, is
          b = cos θ − μ_w sin θ sin φ + μ_s sin φ′ (sin θ + μ_w sin φ cos θ).
(15a, b)  no friction at a contact whose slip is zero ("the effects of
          stick are neglected").
(16a)     work of the cushion's normal force, W = ∫ ż′_I dP_I with
          ż′_I = −v_y cos θ, by the trapezoid rule.
(16c)     compression ends at P_c where ż′_I = 0, i.e. v_y = 0;
(16b)     restitution ends at P_f where W(P_f) = (1 − e²) W(P_c) (Stronge's
          energetic restitution, W signed and cumulative, W(P_c) < 0).
(17)      the rates are stepped by forward Euler in P_I.

Internally the variables are q = P_I/M (m/s) and the surface speeds R ω, so
mass and radius leave the loop, and W is kept as W/(M cos θ) (only the ratio
(16b) matters).

Step size and the exact end
---------------------------
The paper steps ΔP_I = (1 + e) M V sin α / N (N = 5000) until each phase
ends, so the number of steps depends on the inputs. Here the number of
steps is fixed (``lax.scan``), and the step is chosen so that the end is
always reached: b is bounded below by

    b_min = cos θ − μ_w sin θ − μ_s (sin θ + μ_w cos θ)  (|sin φ|, |sin φ′| ≤ 1),

which also holds when a contact's friction is switched off by (15). If
b_min > 0 (required), v_y falls at least at the rate b_min/M; the Euler
nodes, hence the piecewise-linear v_y(P) whose integral is the trapezoid W,
obey v_y(P) ≤ v_y0 − b_min P/M. So compression ends by
P_c ≤ M v_y0 / b_min, with |W(P_c)| ≤ cos θ M v_y0²/(2 b_min); after it
|v_y(P)| ≥ b_min (P − P_c)/M, the restitution work e² |W(P_c)| is done after
at most e M v_y0 / b_min more, and P_f ≤ (1 + e) M v_y0 / b_min. The step is
ΔP = (1 + e) M v_y0 / (b_min N) (1 + 1e-6), N = ``steps``, so the scan of N
steps always contains the end (for the paper's parameters the impact takes
76–89 % of them; the step is 1/b_min ≈ 1.34 times the paper's).

Compression ends inside the step where v_y changes sign: its linear
interpolation locates P_c and the trapezoid's partial integral gives W(P_c)
exactly. Restitution ends where the (quadratic) trapezoid integral W reaches
(1 − e²) W(P_c). The loop only detects the step in which that happens (W at
its end reaches the target) and from then on keeps its carry frozen at the
start of that step; after the loop the root of the quadratic cuts the step
there and the state is interpolated linearly, i.e. the last step is a shorter
Euler step. The number of full steps changes only where the end crosses a
node, where the interpolated output is continuous: the result is continuous
in every parameter and differentiable (``jax.grad``, ``jax.jacfwd``) almost
everywhere.

Speed: with the end located after the loop, the body is small enough for XLA
on CPU to compile the whole scalar loop as one function (about 0.2 ms per
impact at N = 5000 on one core, ``benchmarks/mathavan_2010.py``); unrolling
or a larger body makes it run kernel by kernel, about 8 times slower.

Assumptions and limits
----------------------
* v_z ≡ 0 (3c), (14c): the cushion's slope holds the ball on the table;
  gravity's impulse is neglected. With a low contact (tan θ < μ_w) the table
  impulse (8) can turn negative; the model is meant for h near 7R/5.
* Stick: the paper neglects it, friction always opposing the current slip
  (15); where a contact could stick, its explicit Euler steps then reverse
  the friction at every step (chatter), the outputs jump by O(ΔP) as a
  parameter varies and their derivatives spike (10⁵ and more). Here the
  friction of a step is limited to what brings that contact's slip to zero
  (``_slip_direction``): Coulomb while the slip exceeds what one step of full
  friction removes, proportional to the slip below that. Both schemes tend
  to the same sliding-mode (stuck) solution as ΔP → 0; this one is smooth in
  every parameter. A slip below 1e-12 of the ball's speed scale
  V + R(|ω_T| + |ω_S|) counts as zero, so that a rolling start (zero slip at
  the table up to rounding) has no friction at C, as (15b) says.
* Forward Euler is first order: the output differs from the exact solution of
  (14) by O(1/N) (up to about 2e-4 of V at N = 5000). Where a slip reverses
  exactly through zero (head-on, by symmetry) the rates jump inside a step and
  the O(1/N) error no longer halves smoothly with the step.
* At e = 0 exactly the end coincides with P_c, and the derivative with
  respect to e there lacks the one-sided term of the restitution phase
  (τ ∝ √(e²)); for any e > 0 it is complete.
* The equations contain no length or time scale besides V: for fixed
  ω_T R/V and ω_S R/V every output is exactly proportional to V (up to
  rounding), so the rebound angle does not depend on the speed (the paper's
  Fig. 8).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._broadcast import broadcast_map
from diffimpact._math import safe_norm
from diffimpact._validation import check_positive, check_range, refuse_where

#: The paper's parameters (section 3.5, Table/Fig. 7): snooker ball mass (kg), radius (m),
#: energetic restitution and ball–cushion friction fitted by the authors, ball–cloth sliding friction.
MASS = 0.1406
RADIUS = 0.02625
RESTITUTION = 0.98
CUSHION_FRICTION = 0.14
CLOTH_FRICTION = 0.212
#: sin θ for the paper's contact height h = 7R/5.
SIN_THETA_PAPER = 0.4
#: Default number of Euler steps (the paper's "initial N of 5000").
STEPS = 5000

#: Slack on the step size so that rounding cannot push the end past the last node.
_STEP_MARGIN = 1e-6
#: Slip speeds below this fraction of the speed scale count as zero slip (eq. (15)).
_ZERO_SLIP = 1e-12
#: Scan bodies per loop iteration: 1 was fastest of 1, 2, 4, 8 (2–4 take the loop out of XLA CPU's
#: one-function compilation of small loops, ~1.6 ms instead of ~0.23 ms per impact; vmapped batches: 1 too).
_UNROLL = 1


class Rebound(eqx.Module):
    """The ball's state right after a cushion impact, in the paper's frame (SI units).

    Attributes
    ----------
    velocity : (..., 2) array
        (v_x, v_y) (m/s); x along the cushion, y towards it (v_y < 0 after the impact).
    angular_velocity : (..., 3) array
        (ω_x, ω_y, ω_z) (rad/s).
    impulse : array
        Final cushion normal impulse P_I^f (N s).
    compression_impulse : array
        Cushion normal impulse at the end of compression, P_I^c (N s).
    """

    velocity: jax.Array
    angular_velocity: jax.Array
    impulse: jax.Array
    compression_impulse: jax.Array

    @property
    def speed(self):
        """Rebound speed |v| (m/s)."""
        return safe_norm(self.velocity)

    @property
    def angle(self):
        """Rebound angle β (rad) from the cushion line, like α; β > π/2: back to the side it came from."""
        return jnp.arctan2(-self.velocity[..., 1], self.velocity[..., 0])


def _slip_direction(along, across, floor):
    """(cos, sin) of a slip (eqs. (5), (9)), shortened below the slip speed ``floor`` (> 0): slip/√(s² + floor²).

    Well above ``floor`` this is the unit slip direction, so friction is
    Coulomb's μ P. Below it the friction falls in proportion to the slip, at
    most slip/floor: with ``floor`` the slip that full friction removes in
    one Euler step, a step can only bring the slip towards zero, not reverse
    it. The paper's scheme instead reverses the friction at every step once
    the contact could stick (15), and its result then chatters with the step:
    jumps of O(ΔP) in the outputs, derivatives of O(1/ΔP). Both converge to
    the same sliding-mode (stuck) solution as ΔP → 0; this one is smooth. At
    zero slip the friction vanishes, as (15) says.
    """
    inverse = jax.lax.rsqrt(along * along + across * across + floor * floor)
    return along * inverse, across * inverse


def _rates(state, sin_theta, cos_theta, cushion_friction, cloth_friction, floors):
    """d/dq of (v_x, v_y, Rω_x, Rω_y, Rω_z), q = P_I/M: eqs. (14a, b, d, e, f) with (12), (13)."""
    vx, vy, ux, uy, uz = state
    cushion_floor, cloth_floor = floors
    cos_phi, sin_phi = _slip_direction(vx + sin_theta * uy - cos_theta * uz, ux - sin_theta * vy, cushion_floor)
    cos_phi_c, sin_phi_c = _slip_direction(vx - uy, vy + ux, cloth_floor)
    # Friction impulses per unit cushion normal impulse: at I (eq. (7)) and at C (eq. (10)),
    # where the table's normal impulse is (sin θ + μ_w sin φ cos θ) P_I (eq. (8)).
    cushion_x = cushion_friction * cos_phi
    cushion_y = cushion_friction * sin_phi
    table_normal = sin_theta + cos_theta * cushion_y
    cloth_x = cloth_friction * table_normal * cos_phi_c
    cloth_y = cloth_friction * table_normal * sin_phi_c
    # 2.5 = M R²/I: angular rates times R per unit q.
    return (
        -(cushion_x + cloth_x),
        -(cos_theta - sin_theta * cushion_y + cloth_y),
        -2.5 * (cushion_y + cloth_y),
        -2.5 * (sin_theta * cushion_x - cloth_x),
        2.5 * cos_theta * cushion_x,
    )


def _quadratic_root(linear, quadratic, target):
    """Smallest τ ≥ 0 with ``linear τ + quadratic τ² = target`` (linear, target ≥ 0, quadratic > 0).

    The form 2c/(a + √(a² + 4bc)) has no cancellation; the ``where`` pairs keep
    0/0 (target = linear = 0, i.e. e = 0) and the square root at 0 out of the
    gradient.
    """
    discriminant = linear * linear + 4.0 * quadratic * target
    positive = discriminant > 0
    root = jnp.where(positive, jnp.sqrt(jnp.where(positive, discriminant, 1.0)), 0.0)
    denominator = linear + root
    ok = denominator > 0
    return jnp.where(ok, 2.0 * target / jnp.where(ok, denominator, 1.0), 0.0)


def _rebound(speed, incidence, topspin, sidespin, mass, radius, sin_theta, restitution, cushion_friction,
             cloth_friction, steps):
    """One impact (scalar parameters): ``steps`` Euler steps (17) in a scan, then the exact end."""
    cos_theta = jnp.sqrt((1.0 - sin_theta) * (1.0 + sin_theta))
    cos_a, sin_a = jnp.cos(incidence), jnp.sin(incidence)
    # Section 3.1 initial conditions, spins as surface speeds R ω.
    state = (speed * cos_a, speed * sin_a, -radius * topspin * sin_a, radius * topspin * cos_a, radius * sidespin)
    b_min = cos_theta - cushion_friction * sin_theta - cloth_friction * (sin_theta + cushion_friction * cos_theta)
    # v_y falls at least at b_min per unit q = P/M, so compression ends by q = v_y0/b_min and the
    # restitution work e²|W_c| (W_c ≥ −v_y0²/(2 b_min) in these units) by e v_y0/b_min more:
    # P_f ≤ (1 + e) M v_y0 / b_min (derivation in the module docstring).
    dq = (1.0 + restitution) * state[1] / (b_min * steps) * (1.0 + _STEP_MARGIN)
    # The slip full friction removes in one step: (1 + M R²/I) μ ΔP/M at either contact (at the table with its
    # normal impulse, at most (sin θ + μ_w cos θ) ΔP). A floor of ``_ZERO_SLIP`` of the speed scale keeps it
    # positive without friction.
    speed_scale = speed + radius * (jnp.abs(topspin) + jnp.abs(sidespin))
    least = _ZERO_SLIP * speed_scale
    floors = (jnp.maximum(3.5 * cushion_friction * dq, least),
              jnp.maximum(3.5 * cloth_friction * (sin_theta + cushion_friction * cos_theta) * dq, least))
    target_fraction = (1.0 - restitution) * (1.0 + restitution)  # 1 − e², eq. (16b)

    def increments(state):
        rates = _rates(state, sin_theta, cos_theta, cushion_friction, cloth_friction, floors)
        return tuple(dq * rate for rate in rates)

    def step(carry, _):
        # The loop only detects the step in which the impact ends and stops there (frozen carry);
        # locating the end inside that step (a square root, a division) is done once, after the loop.
        # W is W/(M cos θ) of eq. (16a), q = P_I/M. Keep the body small (module docstring, "Speed").
        state, work, q, target, q_c, compressing, done = carry
        increment = increments(state)
        following = tuple(x + dx for x, dx in zip(state, increment))
        vy, vy_next = state[1], following[1]
        work_next = work - 0.5 * dq * (vy + vy_next)  # trapezoid (16a)
        # Compression ends inside this step (16c), at the zero of the linear v_y; vy − vy_next ≥ b_min dq > 0.
        # (The quotient is written out twice, not shared: a shared one becomes a kernel of its own.)
        crossing = compressing & (vy_next <= 0.0)
        target = jnp.where(crossing, target_fraction * (work - 0.5 * dq * vy * vy / (vy - vy_next)), target)
        q_c = jnp.where(crossing, q + dq * vy / (vy - vy_next), q_c)
        # W rises monotonically after P_c, so the impact ends in this step iff W reaches the target by its end.
        ending = (crossing | ~compressing) & (work_next >= target) & ~done
        stop = done | ending
        state = tuple(jnp.where(stop, x, x_next) for x, x_next in zip(state, following))
        work = jnp.where(stop, work, work_next)
        q = jnp.where(stop, q, q + dq)
        return (state, work, q, target, q_c, compressing & ~crossing, stop), None

    zero = jnp.zeros_like(speed)
    carry = (state, zero, zero, zero, zero, jnp.array(True), jnp.array(False))
    (state, work, q, target, q_c, _, done), _ = jax.lax.scan(step, carry, None, length=steps, unroll=_UNROLL)

    # The last step, from its start: W(t0 + τ) = W0 + a τ + b τ² (t, τ in steps) reaches the target,
    # from t0 = 0, or from the crossing t0 = t_c if compression ended in the same step.
    increment = increments(state)
    vy = state[1]
    drop = -increment[1]
    crossed = vy > 0.0
    t0 = jnp.where(crossed, vy, 0.0) / drop
    work0 = work - 0.5 * dq * jnp.where(crossed, vy, 0.0) * t0  # W(P_c) if crossed
    # From P_c the work still to do is e² |W(P_c)|, written so (not target − W(P_c)) that it keeps
    # its precision, and its derivative, for tiny e, where 1 − e² rounds to 1.
    remaining = jnp.where(crossed, -(restitution * restitution) * work0, target - work0)
    tau = _quadratic_root(-dq * jnp.where(crossed, 0.0, vy), 0.5 * dq * drop, jnp.maximum(remaining, 0.0))
    t_end = jnp.minimum(t0 + tau, 1.0)
    vx, vy, ux, uy, uz = (x + t_end * dx for x, dx in zip(state, increment))
    # The bound on P_f makes ``done`` certain; NaN would flag a violation instead of a silent truncation.
    finished = lambda x: jnp.where(done, x, jnp.nan)  # noqa: E731
    return Rebound(
        velocity=finished(jnp.stack([vx, vy])),
        angular_velocity=finished(jnp.stack([ux, uy, uz]) / radius),
        impulse=finished(mass * (q + t_end * dq)),
        compression_impulse=finished(mass * q_c),
    )


def _values(*arguments):
    """What a refused check of several arguments got: up to five values of each (``refuse_where``'s ``got``)."""
    return lambda: ", ".join(str(np.asarray(a, dtype=float).ravel()[:5].tolist()) for a in arguments)


def _check_steps(steps):
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a Python int >= 1 (static, not traced); got {steps!r}")
    return int(steps)


def cushion_rebound(speed, incidence, topspin=0.0, sidespin=0.0, *, mass=MASS, radius=RADIUS, height=None,
                    restitution=RESTITUTION, cushion_friction=CUSHION_FRICTION, cloth_friction=CLOTH_FRICTION,
                    steps=STEPS):
    """State of a billiard ball right after it hits a cushion (Mathavan et al. 2010, eqs. (12)–(17)).

    Integrates eqs. (14a–f) in the cushion normal impulse by forward Euler
    (17) over ``steps`` steps to the end of restitution (16b); see the module
    docstring for the scheme and its assumptions. All array arguments
    broadcast together; the function works under ``jit``, ``vmap``, ``grad``
    and ``jacfwd`` with respect to every float argument.

    Parameters
    ----------
    speed : incident speed V > 0 (m/s).
    incidence : incidence α in (0, π/2] (rad), from the cushion line; π/2 is head-on.
    topspin : ω_T (rad/s); V/R is natural roll, 0 stun, negative draw.
    sidespin : ω_S (rad/s) about +z; positive is the paper's right spin.
    mass : M > 0 (kg). radius : R > 0 (m).
    height : cushion contact height h in [R, 2R) (m) above the table; None: 7R/5.
    restitution : energetic (Stronge) coefficient e in [0, 1].
    cushion_friction : μ_w ≥ 0, ball–cushion. cloth_friction : μ_s ≥ 0, ball–table.
    steps : number of Euler steps N (static int ≥ 1).

    Returns
    -------
    Rebound
        velocity (..., 2), angular_velocity (..., 3), impulse and
        compression_impulse (...) with the broadcast shape; ``.speed`` and
        ``.angle`` (rebound angle β from the cushion line).

    Raises
    ------
    ValueError
        For concrete inputs out of range or NaN, naming the parameter, and if
        b_min = cos θ − μ_w sin θ − μ_s (sin θ + μ_w cos θ) ≤ 0. Under ``jit``
        the same checks raise ``equinox.EquinoxRuntimeError`` at run time.
    """
    steps = _check_steps(steps)
    speed = check_positive("speed", speed)
    incidence = check_range("incidence", incidence, 0.0, np.pi / 2, low_open=True)
    topspin = check_range("topspin", topspin)
    sidespin = check_range("sidespin", sidespin)
    mass = check_positive("mass", mass)
    radius = check_positive("radius", radius)
    if height is None:
        sin_theta = jnp.asarray(SIN_THETA_PAPER)
    else:
        height = jnp.asarray(height, dtype=float)
        height = refuse_where(
            height, ~((height >= radius) & (height < 2.0 * radius)),
            "height must be finite and in [radius, 2 radius) (the cushion contact between the ball's centre "
            "and top) (height, radius)", _values(height, radius),
        )
        sin_theta = height / radius - 1.0
    restitution = check_range("restitution", restitution, 0.0, 1.0)
    cushion_friction = check_range("cushion_friction", cushion_friction, 0.0, np.inf)
    cloth_friction = check_range("cloth_friction", cloth_friction, 0.0, np.inf)

    def bracket_positive(s, mu_w, mu_s):
        c = (1.0 - s) ** 0.5 * (1.0 + s) ** 0.5
        return c - mu_w * s - mu_s * (s + mu_w * c) > 0.0

    cushion_friction = refuse_where(
        cushion_friction, ~bracket_positive(sin_theta, cushion_friction, cloth_friction),
        "cushion_friction and cloth_friction must satisfy cos θ − cushion_friction sin θ − cloth_friction "
        "(sin θ + cushion_friction cos θ) > 0, sin θ = (height − radius)/radius (else the normal speed need "
        "not fall as the impulse grows, eq. (14b)) (sin θ, cushion_friction, cloth_friction)",
        _values(sin_theta, cushion_friction, cloth_friction),
    )
    return _cushion_rebound(speed, incidence, topspin, sidespin, mass, radius, sin_theta, restitution,
                            cushion_friction, cloth_friction, steps)


@eqx.filter_jit
def _cushion_rebound(speed, incidence, topspin, sidespin, mass, radius, sin_theta, restitution,
                     cushion_friction, cloth_friction, steps):
    return broadcast_map(
        lambda *args: _rebound(*args, steps),
        speed, incidence, topspin, sidespin, mass, radius, sin_theta, restitution, cushion_friction,
        cloth_friction,
    )
