r"""Balls on the cloth and their motion between events, in closed form.

W. Leckie, M. Greenspan, "An event-based pool physics simulator", *Advances
in Computer Games 11*, LNCS 4250 (Springer, 2006; conference 2005), cited as
[Leckie 2005]; D. G. Alciatore, technical proofs TP 4.1 and TP 4.2 (the sliding
ball's slip, its time to natural roll and the final speed;
billiards.colostate.edu), cited as [Alciatore TP 4.1], [Alciatore TP 4.2]. The
papers' own equation numbers could not be read from a copy here; the
numbers (M1)–(M7) below are this module's, each a standard result of those
sources derived again for an inertia I that need not be 2mR²/5.

A ball of radius R, mass m and moment of inertia I lies on the cloth, the
plane z = 0 (x, y on the cloth, z up). Its state is its centre r (on the
plane), velocity v (on the plane) and angular velocity ω (3-D). The contact
point sits at −R ẑ from the centre, so it slips at

    u = v + ω × (−R ẑ) = (v_x − R ω_y, v_y + R ω_x).                   (M1)

[Leckie 2005] sort a ball into one of four
states, here with a fifth for a ball that has left the table:

* ``SLIDING`` (u ≠ 0): kinetic friction −μ_s m g û opposes the slip and keeps
  its direction. Then

      a = −μ_s g û,   dω_xy/dt = (μ_s m g R / I) (−û_y, û_x),
      du/dt = −μ_s g (1 + m R²/I) û,                                  (M2)

  so v and ω_xy are linear in t, r quadratic, and the slip ends at

      τ_s = |u₀| / (μ_s g (1 + m R²/I))  (= 2|u₀|/(7 μ_s g) for I = 2mR²/5). (M3)

* ``ROLLING`` (u = 0, v ≠ 0): rolling resistance decelerates the ball by
  μ_r g along v̂, ω_xy follows from u = 0, and the ball stops at

      τ_r = |v₀| / (μ_r g).                                           (M4)

* ``SPINNING`` (v = 0, ω = ω_z ẑ): only the spin about the vertical.
* ``STATIONARY``: at rest.
* ``POCKETED``: removed from play.

In every state the spin about the vertical, ω_z, decays under a torque
μ_sp m g R, at the rate

    α = μ_sp m g R / I  (= 5 μ_sp g / (2R) for I = 2mR²/5),           (M5)

until it is zero, and stays zero: ω_z(t) = sign(ω_z0) max(|ω_z0| − α t, 0).
It does not enter the slip (M1), so its zero crossing in a sliding or
rolling ball is no event; a spinning ball stops at

    τ_sp = |ω_z0| / α.                                                (M6)

In every state the centre moves on a polynomial of degree ≤ 2 in t,

    r(t) = r₀ + v₀ t + a t²/2,   v(t) = v₀ + a t,                      (M7)

with a of (M2) while sliding, −μ_r g v̂₀ while rolling and 0 otherwise,
valid until the ball's next change of state (``transition_times``).

Every function takes arrays of all the balls at once (``Balls``) and works
under ``jit``, ``vmap`` and the derivatives of JAX.
"""

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact._validation import check_positive, check_range, is_concrete

#: Motion-state codes of ``Balls.motion``, after [Leckie 2005] (and a code for a ball out of play).
STATIONARY, SPINNING, SLIDING, ROLLING, POCKETED = 0, 1, 2, 3, 4
#: Each motion-state code's name.
MOTION_NAMES = ("stationary", "spinning", "sliding", "rolling", "pocketed")


class Parameters(eqx.Module):
    """The balls and the cloth (SI units); every field a differentiable leaf.

    The defaults: a pool ball of 57.15 mm diameter and 0.17 kg, solid (I = 2mR²/5);
    the cloth of pooltool's defaults (E. Kiefl, pooltool 0.3, ``BallParams``, which takes
    them from Alciatore's physical properties of pool equipment,
    billiards.colostate.edu/faq/physics/physical-properties): sliding friction 0.2 (also the
    value ``diffimpact.scenes.billiard`` assumes, after Gismeros Moreno et al.'s Table 2),
    rolling friction 0.01 (a rolling ball at 1 m/s runs 5.1 m) and spinning friction
    0.0127, pooltool's u_sp = (10 · 2/5 / 9) R in the same law (M5), α = 5 μ_sp g/(2R): a
    spin decay of 10 rad/s² with g taken as 9 m/s², 10.9 rad/s² with g = 9.81 m/s².
    """

    radius: float = 0.028575
    mass: float = 0.17
    inertia: float = 0.4 * 0.17 * 0.028575**2
    sliding_friction: float = 0.2
    rolling_friction: float = 0.01
    spinning_friction: float = 10 * 2 / 5 / 9 * 0.028575
    gravity: float = 9.81

    def __check_init__(self):
        """Every field a positive number, refused under its own name when concrete."""
        for name in ("radius", "mass", "inertia", "sliding_friction", "rolling_friction", "spinning_friction",
                     "gravity"):
            value = getattr(self, name)
            if is_concrete(value):
                check_positive(name, value, shape=())

    def slip_deceleration(self):
        """μ_s g (1 + m R²/I): the rate at which a sliding ball's slip speed falls, eq. (M2) (m/s²)."""
        return self.sliding_friction * self.gravity * (1.0 + self.mass * self.radius**2 / self.inertia)

    def spin_deceleration(self):
        """α = μ_sp m g R / I, the decay of the spin about the vertical, eq. (M5) (rad/s²)."""
        return self.spinning_friction * self.mass * self.gravity * self.radius / self.inertia


class Ball(NamedTuple):
    """One ball's kinematics: centre (2,), velocity (2,) on the cloth, angular velocity (3,) (SI units)."""

    position: jax.Array
    velocity: jax.Array
    angular_velocity: jax.Array


class Balls(eqx.Module):
    """Every ball's state as arrays, one row per ball (MJX style: the state is data, not objects).

    ``position`` (n, 2) and ``velocity`` (n, 2) on the cloth, ``angular_velocity`` (n, 3), ``motion`` (n,) the
    motion-state codes (``STATIONARY`` … ``POCKETED``). Build one with ``ball_states``, which reads each ball's
    state from its kinematics.
    """

    position: jax.Array
    velocity: jax.Array
    angular_velocity: jax.Array
    motion: jax.Array

    def take(self, index):
        """Ball ``index``'s kinematics (a ``Ball``)."""
        return Ball(self.position[index], self.velocity[index], self.angular_velocity[index])

    def put(self, index, ball):
        """These states with ball ``index``'s kinematics replaced by ``ball`` (its motion code unchanged)."""
        return Balls(self.position.at[index].set(ball.position), self.velocity.at[index].set(ball.velocity),
                     self.angular_velocity.at[index].set(ball.angular_velocity), self.motion)


def ball_states(params, position, velocity=None, angular_velocity=None, *, rest_speed=1e-12):
    """``Balls`` from each ball's kinematics, each in the motion state they put it in (``settle``).

    Parameters
    ----------
    params : ``Parameters``.
    position : (n, 2) centres on the cloth (m).
    velocity : (n, 2) (m/s); default at rest.
    angular_velocity : (n, 3) (rad/s); default none.
    rest_speed : the speed (m/s) below which a slip, a velocity or a spin's surface speed R|ω_z| counts as zero.
    """
    position = check_range("position", position)
    if np.ndim(position) != 2 or np.shape(position)[1] != 2:
        raise ValueError(f"position must have shape (n, 2) for n balls; got {np.shape(position)}")
    n = np.shape(position)[0]
    velocity = jnp.zeros((n, 2)) if velocity is None else check_range("velocity", velocity)
    angular_velocity = (jnp.zeros((n, 3)) if angular_velocity is None
                        else check_range("angular_velocity", angular_velocity))
    for name, value, width in (("velocity", velocity, 2), ("angular_velocity", angular_velocity, 3)):
        if np.shape(value) != (n, width):
            raise ValueError(f"{name} must have shape ({n}, {width}), one row per ball; got {np.shape(value)}")
    balls = Balls(jnp.asarray(position, float), jnp.asarray(velocity, float),
                  jnp.asarray(angular_velocity, float), jnp.full((n,), STATIONARY))
    return settle(balls, params, jnp.ones(n, bool), rest_speed=rest_speed)


def _norm(vector):
    """|x| over the last axis, with a finite derivative at 0 (the double-``where`` pattern)."""
    squared = jnp.sum(vector**2, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def _unit(vector):
    """x/|x| over the last axis, 0 where x = 0 (finite derivatives there)."""
    norm = _norm(vector)
    return jnp.where(norm[..., None] > 0, vector / jnp.where(norm > 0, norm, 1.0)[..., None], 0.0)


def _turned(vector):
    """ẑ × x on the cloth: x (…, 2) turned a quarter turn anticlockwise, (−x_y, x_x)."""
    return jnp.stack([-vector[..., 1], vector[..., 0]], axis=-1)


def rolling_spin(velocity, radius):
    """The angular velocity (…, 3) of a ball rolling at ``velocity`` (…, 2): (−v_y, v_x, 0)/R, u = 0 in (M1)."""
    velocity = jnp.asarray(velocity, float)
    return jnp.concatenate([_turned(velocity) / radius, jnp.zeros_like(velocity[..., :1])], axis=-1)


def slip(balls, params):
    """The contact point's slip velocity u = v + ω × (−R ẑ), eq. (M1), (n, 2) (m/s)."""
    return balls.velocity + params.radius * _turned(balls.angular_velocity[:, :2])


def acceleration(balls, params):
    """Each ball's constant acceleration on the cloth until its next change of state, (n, 2) (m/s²): eqs. (M2),
    (M7)."""
    sliding = -params.sliding_friction * params.gravity * _unit(slip(balls, params))
    rolling = -params.rolling_friction * params.gravity * _unit(balls.velocity)
    motion = balls.motion[:, None]
    return jnp.where(motion == SLIDING, sliding, jnp.where(motion == ROLLING, rolling, 0.0))


def trajectory_coefficients(balls, params):
    """(n, 3, 2): each centre's path r(t) = c₀ + c₁ t + c₂ t² until the ball's next change of state, eq. (M7)
    (c₁ = c₂ = 0 for a ball that does not move, whatever its velocity holds)."""
    velocity = jnp.where(moves(balls)[:, None], balls.velocity, 0.0)
    return jnp.stack([balls.position, velocity, 0.5 * acceleration(balls, params)], axis=1)


def _decayed_spin(spin, rate, time):
    """sign(ω_z0) max(|ω_z0| − α t, 0): the spin about the vertical after ``time``, eq. (M5)."""
    return jnp.sign(spin) * jnp.maximum(jnp.abs(spin) - rate * time, 0.0)


def evolve(balls, params, time):
    """Every ball's state ``time`` (s, ≥ 0; a number or one per ball) later, with no event in between.

    Positions and velocities follow eq. (M7); a sliding ball's ω_xy grows linearly (M2), a rolling ball's
    follows from u = 0, and ω_z decays by (M5) in every state. The motion codes are unchanged: ``time`` must
    not pass a ball's next change of state (``transition_times``).
    """
    t = jnp.broadcast_to(jnp.asarray(time, float), balls.motion.shape)
    c = trajectory_coefficients(balls, params)
    velocity = c[:, 1] + 2 * c[:, 2] * t[:, None]
    position = c[:, 0] + (c[:, 1] + c[:, 2] * t[:, None]) * t[:, None]
    w = balls.angular_velocity
    slip_direction = _unit(slip(balls, params))
    torque_rate = params.sliding_friction * params.mass * params.gravity * params.radius / params.inertia
    sliding = w[:, :2] + torque_rate * t[:, None] * _turned(slip_direction)
    rolling = _turned(velocity) / params.radius
    motion = balls.motion[:, None]
    horizontal = jnp.where(motion == SLIDING, sliding, jnp.where(motion == ROLLING, rolling, w[:, :2]))
    vertical = _decayed_spin(w[:, 2], params.spin_deceleration(), t)
    vertical = jnp.where(balls.motion == POCKETED, w[:, 2], vertical)
    angular_velocity = jnp.concatenate([horizontal, vertical[:, None]], axis=-1)
    return Balls(position, velocity, angular_velocity, balls.motion)


def transition_times(balls, params):
    """Each ball's time (s) to its next change of motion state: eqs. (M3), (M4), (M6); ∞ at rest or pocketed."""
    slide = _norm(slip(balls, params)) / params.slip_deceleration()
    roll = _norm(balls.velocity) / (params.rolling_friction * params.gravity)
    spin = jnp.abs(balls.angular_velocity[:, 2]) / params.spin_deceleration()
    motion = balls.motion
    return jnp.where(motion == SLIDING, slide,
                     jnp.where(motion == ROLLING, roll, jnp.where(motion == SPINNING, spin, jnp.inf)))


def moves(balls):
    """(n,) booleans: whether each ball's centre moves (sliding or rolling)."""
    return (balls.motion == SLIDING) | (balls.motion == ROLLING)


def settle(balls, params, which, *, rest_speed=1e-12):
    """The balls ``which`` (n booleans) put in the motion state their kinematics give, the others unchanged.

    A ball slides if its slip (M1) exceeds ``rest_speed`` (m/s), else rolls if its speed does, else spins if its
    spin's surface speed R|ω_z| does, else is at rest; a pocketed ball stays pocketed. The components a state
    holds at zero are set to zero (a rolling ball's ω_xy to v's rolling value), so that a ball's kinematics and
    its code agree exactly.
    """
    sliding = _norm(slip(balls, params)) > rest_speed
    rolling = _norm(balls.velocity) > rest_speed
    spinning = params.radius * jnp.abs(balls.angular_velocity[:, 2]) > rest_speed
    code = jnp.where(sliding, SLIDING, jnp.where(rolling, ROLLING, jnp.where(spinning, SPINNING, STATIONARY)))
    code = jnp.where(which & (balls.motion != POCKETED), code, balls.motion)
    still = ((code == SPINNING) | (code == STATIONARY))[:, None]
    velocity = jnp.where(still, 0.0, balls.velocity)
    rolling = _turned(balls.velocity) / params.radius
    horizontal = jnp.where(still, 0.0, jnp.where((code == ROLLING)[:, None], rolling, balls.angular_velocity[:, :2]))
    vertical = jnp.where(code == STATIONARY, 0.0, balls.angular_velocity[:, 2])
    return Balls(balls.position, velocity, jnp.concatenate([horizontal, vertical[:, None]], axis=-1), code)


def end_state(balls, params, which, *, rest_speed=1e-12):
    """The balls ``which`` taken through their change of state at its time: a sliding ball to rolling (ω_xy
    from u = 0), a rolling ball to a spin in place or rest (v = 0), a spinning ball to rest (ω_z = 0); then
    ``settle``. Removes the rounding left by ``evolve`` at τ of (M3), (M4), (M6)."""
    return settle(_ended(balls, params, which), params, which, rest_speed=rest_speed)


def _ended(balls, params, which):
    """The kinematics of ``end_state`` before ``settle``."""
    motion = balls.motion[:, None]
    pick = which[:, None]
    rolling = _turned(balls.velocity) / params.radius
    horizontal = jnp.where(pick & (motion == SLIDING), rolling, balls.angular_velocity[:, :2])
    horizontal = jnp.where(pick & (motion == ROLLING), 0.0, horizontal)
    velocity = jnp.where(pick & (motion == ROLLING), 0.0, balls.velocity)
    vertical = jnp.where(which & (balls.motion == SPINNING), 0.0, balls.angular_velocity[:, 2])
    return Balls(balls.position, velocity, jnp.concatenate([horizontal, vertical[:, None]], axis=-1), balls.motion)


def kinetic_energy(balls, params):
    """Each ball's kinetic energy m|v|²/2 + I|ω|²/2 (J), (n,)."""
    return 0.5 * params.mass * jnp.sum(balls.velocity**2, -1) + 0.5 * params.inertia * jnp.sum(
        balls.angular_velocity**2, -1)
