"""Benchmark: the Mathavan et al. (2010) cushion impact, jitted, vmapped, and the paper's loop in NumPy.

    python benchmarks/mathavan_2010.py [--cases 1000] [--loop-cases 5] [--repeats 3]

Compares in one run, for rolling balls (ω_T = V/R) at random incidence
α ∈ (0, π/2] and speed V ∈ [0.5, 3] m/s, N = 5000 steps, the paper's
parameters:

(a) ``diffimpact.impulse.mathavan_2010.cushion_rebound`` jitted, one impact
    per call (compile time and run time apart);
(b) the same under ``jax.vmap`` over ``--cases`` impacts, per impact;
(c) a plain NumPy/Python loop of the paper's literal scheme: ΔP = (1 + e) M V
    sin α / N, forward Euler (17) with atan2 slip angles and no friction at
    zero slip (15), stepping while v_y > 0 and then until the trapezoid work W
    reaches (1 − e²) W_c (16b), the state at that node being the result.

(a)/(b) and (c) are different discretisations of the same ODE (14), so their
outputs differ by O(1/N); the largest difference is printed.

Compile time is the first call minus the best later call.
"""

import argparse
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

import diffimpact
from diffimpact.impulse import mathavan_2010
from diffimpact.impulse.mathavan_2010 import cushion_rebound
from _timing import timed

diffimpact.configure()  # float64 and the CPU cap, before the first computation

M, R = mathavan_2010.MASS, mathavan_2010.RADIUS
E, MU_W, MU_S = mathavan_2010.RESTITUTION, mathavan_2010.CUSHION_FRICTION, mathavan_2010.CLOTH_FRICTION
N = 5000


def paper_loop(speed, incidence, topspin, sidespin, steps=N):
    """The paper's scheme as printed (section 3.4), scalar Python; returns v (2), ω (3)."""
    sin_t = 0.4  # h = 7R/5
    cos_t = math.sqrt(1.0 - sin_t**2)
    zero = 1e-12 * (speed + R * (abs(topspin) + abs(sidespin)))
    dp = (1.0 + E) * M * speed * math.sin(incidence) / steps
    vx, vy = speed * math.cos(incidence), speed * math.sin(incidence)
    wx, wy, wz = -topspin * math.sin(incidence), topspin * math.cos(incidence), sidespin
    spin_rate = 5.0 / (2.0 * M * R)
    work, work_c, compressing = 0.0, None, True
    while True:
        x_i, y_i = vx + wy * R * sin_t - wz * R * cos_t, -vy * sin_t + wx * R
        x_c, y_c = vx - wy * R, vy + wx * R
        if math.hypot(x_i, y_i) > zero:
            phi = math.atan2(y_i, x_i)
            cos_phi, sin_phi, mu_w = math.cos(phi), math.sin(phi), MU_W
        else:
            cos_phi = sin_phi = mu_w = 0.0
        if math.hypot(x_c, y_c) > zero:
            phi_c = math.atan2(y_c, x_c)
            cos_phi_c, sin_phi_c, mu_s = math.cos(phi_c), math.sin(phi_c), MU_S
        else:
            cos_phi_c = sin_phi_c = mu_s = 0.0
        kappa = sin_t + mu_w * sin_phi * cos_t
        vy_old = vy
        vx -= dp / M * (mu_w * cos_phi + mu_s * cos_phi_c * kappa)
        vy -= dp / M * (cos_t - mu_w * sin_t * sin_phi + mu_s * sin_phi_c * kappa)
        wx -= dp * spin_rate * (mu_w * sin_phi + mu_s * sin_phi_c * kappa)
        wy -= dp * spin_rate * (mu_w * cos_phi * sin_t - mu_s * cos_phi_c * kappa)
        wz += dp * spin_rate * mu_w * cos_phi * cos_t
        work += 0.5 * dp * cos_t * -(vy_old + vy)  # (16a), ż′_I = −v_y cos θ
        if compressing and vy <= 0.0:
            compressing, work_c = False, work
        if not compressing and work >= (1.0 - E**2) * work_c:
            return np.array([vx, vy]), np.array([wx, wy, wz])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="impacts in the vmapped batch (default 1000)")
    parser.add_argument("--loop-cases", type=int, default=5, help="impacts run by the NumPy loop (default 5)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    incidence = np.pi / 2 * (1.0 - rng.uniform(0.0, 1.0, args.cases))  # (0, π/2]
    speed = rng.uniform(0.5, 3.0, args.cases)
    topspin = speed / R  # rolling

    single = jax.jit(lambda v, a, w: cushion_rebound(v, a, w, steps=N))
    first, best = timed(single, speed[0], incidence[0], topspin[0], repeats=args.repeats)
    runs = [timed(single, speed[i], incidence[i], topspin[i], repeats=args.repeats)[1] for i in range(1, 6)]
    single_run = min([best, *runs])
    hoisted = "xla_cpu_small_call" in single.lower(1.0, 0.5, 1.0 / R).compile().as_text()
    print(f"(a) jitted single call, N = {N}: compile ≈ {first - best:.2f} s, run {single_run * 1e3:.3f} ms/call"
          f" (loop compiled as one function by XLA CPU: {hoisted})")

    batch = jax.jit(jax.vmap(lambda v, a, w: cushion_rebound(v, a, w, steps=N)))
    first_batch, best_batch = timed(batch, speed, incidence, topspin, repeats=args.repeats)
    per_case = best_batch / args.cases
    print(f"(b) jax.vmap over {args.cases} impacts: compile ≈ {first_batch - best_batch:.2f} s, run "
          f"{best_batch * 1e3:.1f} ms = {per_case * 1e3:.4f} ms/impact")

    loop_cases = range(args.loop_cases)
    start = time.perf_counter()
    loop_results = [paper_loop(speed[i], incidence[i], topspin[i], 0.0) for i in loop_cases]
    loop_time = (time.perf_counter() - start) / args.loop_cases
    print(f"(c) NumPy/Python loop of the paper's scheme, N = {N}, {args.loop_cases} impacts: "
          f"{loop_time * 1e3:.2f} ms/call")
    print("    peer figure for comparison (quoted, not measured here): ~0.26 ms/call, numba, N = 5000 steps")

    print(f"ratios: (c)/(a) = {loop_time / single_run:.0f}x, (c)/(b) = {loop_time / per_case:.0f}x, "
          f"(a)/(b) = {single_run / per_case:.1f}x")

    batched = jax.device_get(batch(speed, incidence, topspin))
    difference_a = difference_b = 0.0
    for i, (velocity, angular) in zip(loop_cases, loop_results):
        reference = np.concatenate([velocity, R * angular])
        one = single(speed[i], incidence[i], topspin[i])
        mine_a = np.concatenate([np.asarray(one.velocity), R * np.asarray(one.angular_velocity)])
        mine_b = np.concatenate([batched.velocity[i], R * batched.angular_velocity[i]])
        difference_a = max(difference_a, np.max(np.abs(mine_a - reference)) / speed[i])
        difference_b = max(difference_b, np.max(np.abs(mine_b - reference)) / speed[i])
    print(f"max |(a) − (c)| over v and R ω, relative to V: {difference_a:.1e}; |(b) − (c)|: {difference_b:.1e} "
          f"(O(1/N) = {1 / N:.0e}: different steps, and (c) ends at a node)")


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
