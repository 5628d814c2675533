"""[Sypniewska-Kamińska 2017] with μ = 0.15 over 10 s: the compliant disk bounces ever lower and comes to rest on the floor.

    python examples/papers/sypniewska_kaminska2017_resting_contact.py [--quick] [--out DIR]

The eq. (50) contact sets its damping anew at every impact, so, like a rigid
ball with a coefficient of restitution, the disk makes a rapid sequence of
ever smaller bounces before it stays on the floor. Each bounce costs
``simulate`` an onset, a separation and a turning point of the gap (the
events that keep a short flight from being stepped over), hence the large
``max_events``. Prints the collisions, when the last separation happened, the
largest overlap after it and whether the energy ever rose; plots the gap and
the energy. ``--quick`` runs 8 s.
"""

import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from pathlib import Path  # noqa: E402

import diffimpact  # noqa: E402
from diffimpact.io import script_arguments  # noqa: E402
from diffimpact.reproduce import double_pendulum as study  # noqa: E402
from diffimpact.scenes import double_pendulum as dp  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, before the first computation

args = script_arguments(__doc__.splitlines()[0])
p, obstacle = dp.Parameters(), dp.Obstacle(friction=0.15)
duration = 8.0 if args.quick else 10.0
times = jnp.linspace(0.0, duration, int(100 * duration) + 1)
_, run = study.obstacle_case(p, "mu0p15", times, max_events=400)
events = run.events
count = int(events.count)
onsets = int(np.sum(np.asarray(events.onset[:count])))
last_separation = max(float(events.t[i]) for i in range(count) if not bool(events.onset[i]))
gap = np.asarray(dp.gap(p, obstacle, dp.angles(run.q)))
energy = np.asarray(run.energy)
after = np.asarray(times) > last_separation
print(f"{onsets} collisions, {count} contact events; last separation at {last_separation:.4f} s")
print(f"largest overlap after it: {-gap[after].min() * 1e6:.2f} µm; at {duration:g} s: {-gap[-1] * 1e6:.2f} µm")
print(f"energy: {energy[0]:.4f} J -> {energy[-1]:.4f} J; largest rise between saves {np.diff(energy).max():.2e} J")

out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
top.plot(times, gap * 1e3)
top.set_ylabel("gap f, eq. (7) (mm)")
top.set_title("Sypniewska-Kamińska et al. 2017, μ = 0.15: bounces, then resting contact")
bottom.plot(times, energy)
bottom.set_ylabel("energy (J)")
bottom.set_xlabel("t (s)")
for axis in (top, bottom):
    axis.axvline(last_separation, color="0.6", linestyle=":", label="last separation")
top.legend()
figure.tight_layout()
figure.savefig(out / "double-pendulum-resting.png", dpi=120)
print(f"wrote {out / 'double-pendulum-resting.png'}")
