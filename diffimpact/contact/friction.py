"""Tangential friction force laws F_t(F_N, v_t) ([Gismeros Moreno 2022] §3.3).

Every law is an ``equinox.Module`` with a ``magnitude(F_N, |v|)`` (N, ≥ 0 for
F_N ≥ 0) and a common ``__call__(F_N, v)`` returning the friction force vector
−magnitude · v/|v|, opposed to the slip velocity ``v`` (last axis, any
dimension). All laws vanish at zero slip, so the force is continuous there,
and its Jacobian at v = 0 is the slope of the law at zero speed (the
regularising viscous slope), not NaN. A negative F_N (a contact that pulls,
as a damped law can while its bodies separate) loads no friction: ``__call__``
takes it as 0, so that friction never pushes along the slip. ``continued`` is
the law's formula at any F_N, the smooth continuation past F_N = 0 that
``simulate`` integrates through a step in which a contact separates (its
event then ends the segment where F_N = 0, as the normal law's own force is
continued past zero): a kink there would cost the step's accuracy.
``magnitude`` and ``largest_slope`` are the formula's.

Units: F_N in N, speeds in m/s, viscous coefficients in N s/m.
"""

from abc import abstractmethod

import equinox as eqx
import jax
import jax.numpy as jnp

from diffimpact._math import safe_norm
from diffimpact._validation import check_positive, check_range

def _check_ordered(lower_name, lower, upper_name, upper, *, strict):
    """Return ``upper`` after checking lower ≤ upper (< if ``strict``); the message names both."""
    gap = check_range(f"{upper_name} - {lower_name}", upper - lower, 0.0, low_open=strict)
    # 0 * gap keeps the traced check (equinox.error_if) attached to the result.
    return upper + 0.0 * gap


class FrictionLaw(eqx.Module):
    """Abstract base of friction laws F_t(F_N, v_t); see the module docstring.

    The protocol, which the laws here follow and a law written by a user
    follows too:

    * **Parameters are fields**, checked when the law is constructed
      (``diffimpact._validation``). They are differentiable leaves, numbers
      or arrays that broadcast (a family of contacts stacks its members'
      laws along a leading axis); ``jax.grad`` with respect to one works
      through ``equinox.filter_grad`` or a law built in the differentiated
      function.
    * ``magnitude(F_N, |v|)``: the force's magnitude (N), ≥ 0 for F_N ≥ 0,
      zero at zero slip and smooth there (its slope at zero speed is the
      law's regularising viscous slope), for any F_N (``continued``).
    * ``band`` (a property): the slip speed (m/s) below which the law leaves
      its sliding force for its regularisation; ``simulate``'s
      ``friction_steps`` makes a loaded slip cross it in steps.

    ``__call__``, ``continued`` and ``largest_slope`` are inherited.
    """

    @abstractmethod
    def magnitude(self, normal_force, slip_speed):
        """Friction force magnitude (N) at normal force F_N ≥ 0 and slip speed ≥ 0."""

    def __call__(self, normal_force, slip_velocity):
        """Friction force vector (N), −magnitude(F_N, |v|) v/|v|, zero at v = 0; a pulling F_N < 0 taken as 0."""
        return self.continued(jnp.where(normal_force >= 0, normal_force, 0.0), slip_velocity)

    def continued(self, normal_force, slip_velocity):
        """−magnitude(F_N, |v|) v/|v| at any F_N, negative included (the module docstring)."""
        return -self._per_speed(normal_force, safe_norm(slip_velocity))[..., None] * slip_velocity

    @property
    @abstractmethod
    def band(self):
        """The slip speed (m/s) below which the law leaves its sliding force for its zero-slip regularisation.

        ``AdaptiveSteps``' ``friction_steps`` makes a loaded slip cross ±band in steps.
        """

    def _per_speed(self, normal_force, slip_speed):
        """magnitude/|v| (N s/m), and at |v| = 0 its limit, the law's slope at zero speed."""
        moving = slip_speed > 0
        safe_speed = jnp.where(moving, slip_speed, 1.0)
        # magnitude/|v| tends to its slope at zero speed, which keeps the Jacobian exact there.
        _, slope_at_rest = jax.jvp(
            lambda speed: self.magnitude(normal_force, speed),
            (jnp.zeros_like(slip_speed),),
            (jnp.ones_like(slip_speed),),
        )
        return jnp.where(moving, self.magnitude(normal_force, safe_speed) / safe_speed, slope_at_rest)

    def largest_slope(self, normal_force, slip_speed):
        """Largest eigenvalue of ∂F_t/∂v at slip speed |v| (N s/m): max(∂magnitude/∂|v|, magnitude/|v|).

        The Jacobian of −magnitude(|v|) v/|v| has the eigenvalue −∂magnitude/∂|v|
        along v and −magnitude/|v| across it (both the slope at zero speed at
        v = 0). A slip inside a regularisation band relaxes at this rate over
        the contact's effective mass: ``AdaptiveSteps``' ``friction_steps``.
        """
        along = jax.jvp(lambda speed: self.magnitude(normal_force, speed), (slip_speed,),
                        (jnp.ones_like(slip_speed),))[1]
        return jnp.maximum(along, self._per_speed(normal_force, slip_speed))


class Coulomb(FrictionLaw):
    """Regularised Coulomb friction, μ F_N tanh(|v|/v_reg).

    ``regularisation_speed`` v_reg replaces the sign function; |v| ≫ v_reg gives
    Coulomb's μ F_N.
    """

    coefficient: jnp.ndarray
    regularisation_speed: jnp.ndarray

    def __init__(self, coefficient, regularisation_speed=1e-4):
        self.coefficient = check_range("coefficient", coefficient, 0.0)
        self.regularisation_speed = check_positive("regularisation_speed", regularisation_speed)

    @property
    def band(self):
        return self.regularisation_speed

    def magnitude(self, normal_force, slip_speed):
        return self.coefficient * normal_force * jnp.tanh(slip_speed / self.regularisation_speed)


class Threlfall(FrictionLaw):
    """Threlfall's friction, μ F_N (1 − exp(−3|v|/v0)) for |v| ≤ v0, μ F_N beyond.

    Threlfall (1978), Mech. Mach. Theory 13, 475, as reproduced by Marques,
    Flores, Claro and Lankarani (2016), Nonlinear Dyn. 86, 1407. The force
    reaches 95 % of μ F_N at the tolerance speed v0 and steps to μ F_N above it;
    [Gismeros Moreno 2022] (§3.3) uses v0 = 0.01 m/s.
    """

    coefficient: jnp.ndarray
    tolerance_speed: jnp.ndarray

    def __init__(self, coefficient, tolerance_speed=0.01):
        self.coefficient = check_range("coefficient", coefficient, 0.0)
        self.tolerance_speed = check_positive("tolerance_speed", tolerance_speed)

    @property
    def band(self):
        return self.tolerance_speed

    def magnitude(self, normal_force, slip_speed):
        build_up = -jnp.expm1(-3.0 * slip_speed / self.tolerance_speed)
        factor = jnp.where(slip_speed <= self.tolerance_speed, build_up, 1.0)
        return self.coefficient * normal_force * factor


class Ambrosio(FrictionLaw):
    """Ambrósio's friction, μ c_d F_N with a dynamic correction c_d(|v|).

    c_d = 0 below v0, (|v| − v0)/(v1 − v0) between v0 and v1, 1 above v1
    (Ambrósio (2003), as used by Flores, Ambrósio, Claro and Lankarani (2006),
    Proc. IMechE K 220). [Gismeros Moreno 2022] (§3.3) uses v0 = 1e-4 m/s and v1 = 1e-3 m/s.
    """

    coefficient: jnp.ndarray
    lower_tolerance_speed: jnp.ndarray
    upper_tolerance_speed: jnp.ndarray

    def __init__(self, coefficient, lower_tolerance_speed=1e-4, upper_tolerance_speed=1e-3):
        self.coefficient = check_range("coefficient", coefficient, 0.0)
        self.lower_tolerance_speed = check_positive("lower_tolerance_speed", lower_tolerance_speed)
        self.upper_tolerance_speed = _check_ordered(
            "lower_tolerance_speed",
            self.lower_tolerance_speed,
            "upper_tolerance_speed",
            check_positive("upper_tolerance_speed", upper_tolerance_speed),
            strict=True,
        )

    @property
    def band(self):
        return self.upper_tolerance_speed

    def magnitude(self, normal_force, slip_speed):
        ramp = (slip_speed - self.lower_tolerance_speed) / (
            self.upper_tolerance_speed - self.lower_tolerance_speed
        )
        return self.coefficient * normal_force * jnp.clip(ramp, 0.0, 1.0)


class Alciatore(FrictionLaw):
    """Alciatore's ball–ball friction, μ(|v|) F_N tanh(|v|/v_reg) ([Gismeros Moreno 2022], eq. (3.8)).

    μ(v) = a + b exp(−c v) (``coefficient``), with a = 9.951e-3, b = 0.108 and
    c = 1.088 s/m by default: D. G. Alciatore's fit (Technical Proof TP A.14,
    "The effects of cut angle, speed, and spin on object ball throw") through
    W. C. Marlow's three ball–ball points (*The Physics of Pocket Billiards*,
    1995, Table 10; ``data/marlow_ball_ball_friction.csv``). The factor
    tanh(|v|/v_reg) makes the force vanish at zero slip; the paper gives no
    v_reg, and the default v_reg = v0/3 = 3.33e-3 m/s gives the zero-slip
    slope μ F_N/v_reg of its other ball–ball law, Threlfall's with v0 =
    0.01 m/s (3 μ F_N/v0; ``Threlfall``). A smaller v_reg makes the rack's
    impact of a break stiff for an explicit solver and changes no measured
    cut shot (docs/design/table-settings.md, "The ball–ball friction's regularisation").
    a, b, c are fields, so fits can move them.
    """

    offset: jnp.ndarray
    amplitude: jnp.ndarray
    decay: jnp.ndarray
    regularisation_speed: jnp.ndarray

    def __init__(self, offset=9.951e-3, amplitude=0.108, decay=1.088, regularisation_speed=0.01 / 3):
        self.offset = check_range("offset", offset, 0.0)
        self.amplitude = check_range("amplitude", amplitude, 0.0)
        self.decay = check_range("decay", decay, 0.0)
        self.regularisation_speed = check_positive("regularisation_speed", regularisation_speed)

    def coefficient(self, slip_speed):
        """μ(v) = a + b exp(−c v) at the slip speed v (m/s)."""
        return self.offset + self.amplitude * jnp.exp(-self.decay * slip_speed)

    @property
    def band(self):
        return self.regularisation_speed

    def magnitude(self, normal_force, slip_speed):
        return self.coefficient(slip_speed) * normal_force * jnp.tanh(slip_speed / self.regularisation_speed)


class Stribeck(FrictionLaw):
    """Stribeck friction, [μ_d + (μ_s − μ_d) exp(−(|v|/v_s)²)] F_N tanh(|v|/v_reg) + σ|v|.

    The static-to-dynamic decay of Andersson, Söderberg and Björklund (2007),
    Tribol. Int. 40, 580 (exponent 2), with a viscous term σ|v| (N s/m) that does
    not scale with F_N; see Marques et al. (2016), Nonlinear Dyn. 86, 1407.
    """

    static_coefficient: jnp.ndarray
    dynamic_coefficient: jnp.ndarray
    viscous_coefficient: jnp.ndarray
    transition_speed: jnp.ndarray
    regularisation_speed: jnp.ndarray

    def __init__(
        self,
        static_coefficient,
        dynamic_coefficient,
        viscous_coefficient,
        transition_speed,
        regularisation_speed=1e-4,
    ):
        self.dynamic_coefficient = check_range("dynamic_coefficient", dynamic_coefficient, 0.0)
        self.static_coefficient = _check_ordered(
            "dynamic_coefficient",
            self.dynamic_coefficient,
            "static_coefficient",
            check_range("static_coefficient", static_coefficient, 0.0),
            strict=False,
        )
        self.viscous_coefficient = check_range("viscous_coefficient", viscous_coefficient, 0.0)
        self.transition_speed = check_positive("transition_speed", transition_speed)
        self.regularisation_speed = check_positive("regularisation_speed", regularisation_speed)

    @property
    def band(self):
        return self.regularisation_speed

    def magnitude(self, normal_force, slip_speed):
        decay = jnp.exp(-((slip_speed / self.transition_speed) ** 2))
        coefficient = self.dynamic_coefficient + (
            self.static_coefficient - self.dynamic_coefficient
        ) * decay
        dry = coefficient * normal_force * jnp.tanh(slip_speed / self.regularisation_speed)
        return dry + self.viscous_coefficient * slip_speed
