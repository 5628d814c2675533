"""Normal contact force laws f_c(δ, δ̇) for a penetration δ ≥ 0 ([Poursina 2020] §2–3, [Gismeros Moreno 2022] §3.3).

Every law is an ``equinox.Module``: a pytree whose float fields (stiffness,
damping, ...) can be differentiated, vmapped and fitted. Each law provides

* ``force(δ, δ̇)``: the law's formula. For δ < 0 it is continued as an odd
  function (``sign(δ)|δ|^n``) so that an integrator that steps slightly past
  separation sees a smooth force; physically it is meaningful for δ ≥ 0 only.
* ``__call__(δ, δ̇)``: the force applied between bodies: ``force`` while δ > 0,
  never tensile (clipped at 0), and 0 out of contact.
* ``separates_at_zero_force``: whether the bodies separate when the force
  vanishes ([Poursina 2020] eq. (20): Kelvin–Voigt, Hertz with a linear damper) or
  when the penetration returns to zero (Hertz, Hunt–Crossley family).
* ``stiffness`` and ``exponent`` (k and n of k δ^n), which also set the natural
  length scale of an impact ([Poursina 2020] eq. (27)).

``free_surface`` gives the recovery of the contact zone after a zero-force
separation with residual penetration ([Poursina 2020] eq. (51)), used by the
multibody driver to decide when the bodies touch again.

Units: δ in m, δ̇ in m/s, k in N/m^n, forces in N.
"""

from abc import abstractmethod
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from diffimpact._math import signed_power
from diffimpact._validation import check_positive, check_range


class NormalForceLaw(eqx.Module):
    """Abstract base of normal force laws f_c(δ, δ̇); see the module docstring.

    The protocol, which the laws here follow and a law written by a user
    follows too:

    * **Parameters are fields**, checked when the law is constructed
      (``diffimpact._validation``: a ``ValueError`` naming the parameter).
      They are differentiable leaves, numbers or arrays that broadcast: a
      family of contacts (``multibody.Contact.family``) stacks its members'
      laws along a leading axis, and ``jax.grad`` with respect to one works
      through ``equinox.filter_grad`` or a law built in the differentiated
      function.
    * ``force(δ, δ̇)``: the law's formula (N), smooth, continued past δ = 0
      (as an odd function of δ), since an integrator steps slightly past
      separation. ``__call__`` (clipped: compressive only, zero out of
      contact) is inherited.
    * ``stiffness`` and ``exponent``, k and n of k δⁿ (fields or
      properties): the elastic energy k δⁿ⁺¹/(n + 1) and the scale of the
      separation function f/k.
    * ``separates_at_zero_force`` (a class attribute): ``True`` if the bodies
      separate where the force vanishes (then the law is f = c δ̇ + k δⁿ with
      a ``damping`` field c, from which ``free_surface`` recovers the
      contact zone), ``False`` if where the penetration does.
    """

    separates_at_zero_force: eqx.AbstractClassVar[bool]
    stiffness: eqx.AbstractVar[jnp.ndarray]  # k in f = k δ^n + ... (N/m^n)
    exponent: eqx.AbstractVar[jnp.ndarray]  # n in f = k δ^n + ...

    @abstractmethod
    def force(self, penetration, penetration_rate):
        """The law's formula (N), continued oddly for negative penetration."""

    def __call__(self, penetration, penetration_rate):
        """Contact force (N): compressive only, zero out of contact."""
        force = self.force(penetration, penetration_rate)
        return jnp.where(penetration > 0, jnp.maximum(force, 0.0), 0.0)


class KelvinVoigt(NormalForceLaw):
    """Linear spring–damper, f = k δ + c δ̇ ([Poursina 2020] eq. (54)).

    Separation when the force vanishes (Butcher–Segalman; [Poursina 2020] eq. (20)).
    """

    stiffness: jnp.ndarray
    damping: jnp.ndarray
    separates_at_zero_force: ClassVar[bool] = True

    def __init__(self, stiffness, damping):
        self.stiffness = check_positive("stiffness", stiffness)
        self.damping = check_range("damping", damping, 0.0)

    @property
    def exponent(self):
        return jnp.asarray(1.0)

    def force(self, penetration, penetration_rate):
        return self.stiffness * penetration + self.damping * penetration_rate


class Hertz(NormalForceLaw):
    """Elastic Hertz contact, f = k δ^n ([Poursina 2020] eq. (6); [Gismeros Moreno 2022] eq. (3.9) with n = 3/2)."""

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    separates_at_zero_force: ClassVar[bool] = False

    def __init__(self, stiffness, exponent=1.5):
        self.stiffness = check_positive("stiffness", stiffness)
        self.exponent = check_positive("exponent", exponent)

    def force(self, penetration, penetration_rate):
        del penetration_rate
        return self.stiffness * signed_power(penetration, self.exponent)


class HertzLinearDamper(NormalForceLaw):
    """Hertz spring with a linear damper, f = c δ̇ + k δ^n ([Poursina 2020] eq. (7)).

    The bodies separate when the force vanishes, c δ̇ + k δ^n = 0 (eq. (20)),
    possibly with a residual penetration (eq. (51)). With the damping from
    ``diffimpact.optimal_damping`` this is the force model of eq. (50).
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    damping: jnp.ndarray
    separates_at_zero_force: ClassVar[bool] = True

    def __init__(self, stiffness, exponent, damping):
        self.stiffness = check_positive("stiffness", stiffness)
        self.exponent = check_positive("exponent", exponent)
        self.damping = check_range("damping", damping, 0.0)

    def force(self, penetration, penetration_rate):
        return self.damping * penetration_rate + self.stiffness * signed_power(
            penetration, self.exponent
        )


class HuntCrossley(NormalForceLaw):
    """Hunt–Crossley hysteresis damping, f = (μ δ̇ + k) δ^n ([Poursina 2020] eq. (9)).

    ``hysteresis`` is the damping factor μ (s/m · k units: N s/m^(n+1)); the
    functions of ``diffimpact.contact.damping_factors`` give it from a
    coefficient of restitution ([Poursina 2020] eqs. (13)–(19), [Gismeros Moreno 2022] eq. (3.7)).
    Force and penetration vanish together at separation.
    """

    stiffness: jnp.ndarray
    exponent: jnp.ndarray
    hysteresis: jnp.ndarray
    separates_at_zero_force: ClassVar[bool] = False

    def __init__(self, stiffness, exponent, hysteresis):
        self.stiffness = check_positive("stiffness", stiffness)
        self.exponent = check_positive("exponent", exponent)
        self.hysteresis = check_range("hysteresis", hysteresis, 0.0)

    def force(self, penetration, penetration_rate):
        return (self.hysteresis * penetration_rate + self.stiffness) * signed_power(
            penetration, self.exponent
        )


def free_surface(law, residual, elapsed):
    """Indentation x_s and its rate ẋ_s of the contact zone after a zero-force separation.

    A law f = c δ̇ + k δ^n (``KelvinVoigt``, ``HertzLinearDamper``) separates when
    f = 0 ([Poursina 2020] eq. (20)) with a residual penetration δ_r > 0 (eq. (51)).
    With the body gone, the spring and damper of the law still act on the
    deformed zone: c ẋ_s + k x_s^n = 0, x_s(0) = δ_r. Its solution is

        x_s = δ_r (1 + (n − 1) r τ)^(−1/(n − 1)),  r = (k/c) δ_r^(n−1),

    (x_s = δ_r e^(−r τ) for n = 1; for n < 1 the zone is flat again after
    τ = 1/((1 − n) r)), and ẋ_s = −(k/c) x_s^n. The bodies touch again when
    δ = x_s. For laws that separate at δ = 0, or without damping, x_s = 0.

    Parameters
    ----------
    law : a ``NormalForceLaw``.
    residual : δ_r (m), ≥ 0.
    elapsed : τ (s), time since the separation, ≥ 0.

    Returns
    -------
    (x_s, ẋ_s) in m and m/s.
    """
    residual, elapsed = jnp.asarray(residual, dtype=float), jnp.asarray(elapsed, dtype=float)
    if not law.separates_at_zero_force:
        return jnp.zeros_like(residual), jnp.zeros_like(residual)
    n = law.exponent
    active = (residual > 0) & (law.damping > 0)
    ratio = law.stiffness / jnp.where(active, law.damping, 1.0)  # k/c
    safe_residual = jnp.where(active, residual, 1.0)
    rate = ratio * safe_residual ** (n - 1.0) * jnp.maximum(elapsed, 0.0)  # r τ
    linear = jnp.abs(n - 1.0) < 1e-9
    safe_n = jnp.where(linear, 2.0, n)
    base = jnp.maximum(1.0 + (safe_n - 1.0) * rate, 0.0)
    flat = base <= 0
    power = jnp.where(flat, 0.0, jnp.where(flat, 1.0, base) ** (-1.0 / (safe_n - 1.0)))
    x = jnp.where(active, safe_residual * jnp.where(linear, jnp.exp(-rate), power), 0.0)
    return x, -ratio * signed_power(x, n)
