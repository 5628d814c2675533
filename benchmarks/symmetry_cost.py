"""What the break's mirror symmetry to the bit costs a step: the exact sums and the AVX cap, against plain sums and FMA.

The 16-ball break stays mirror-symmetric to the last bit because (``diffimpact``'s module docstring) the contact
families sum their forces and their effective masses' and rates' products exactly, in any order
(``diffimpact._exact_sums``), and XLA's CPU code is capped at AVX, so that no fused multiply-add rounds a
mirror-image term otherwise. This measures how much of a step that symmetry is. The 4-s break of
``diffimpact reproduce break`` (``table.integrate``, jitted with the state and save times as arguments), each
setting in a process of its own (XLA reads its flags when its CPU backend starts), in one run:

* **exact sums, AVX** (the package as it is);
* **plain sums, AVX**: ``Contact``'s ``body_totals`` and ``exact_sum`` replaced, in this process only, by the
  plain scatter-add and ``jnp.sum`` (their derivative rules' own sums);
* **exact sums, FMA** and **plain sums, FMA**: ``XLA_FLAGS=--xla_cpu_max_isa=AVX512`` (this processor's best,
  with fused multiply-adds; XLA takes the most the processor has).

For each: compile (first call − best later call), run (best of ``--repeats``), steps, µs a step, the energy at
the end and the largest mirror error (m) of the saved centres; then each setting's µs a step against the
package's. The runs take other steps and end elsewhere (the break is chaotic); µs a step is what compares.

    python benchmarks/symmetry_cost.py [--duration 4] [--repeats 3]
"""

import argparse
import json
import os

from _processes import measured

SETTINGS = {"exact sums, AVX (the package)": ("exact", ""), "plain sums, AVX": ("plain", ""),
            "exact sums, FMA": ("exact", "--xla_cpu_max_isa=AVX512"),
            "plain sums, FMA": ("plain", "--xla_cpu_max_isa=AVX512")}


def measure(sums, duration, repeats):
    """The child: this process's run of the break, as a dict."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import diffimpact.multibody.contact as contact
    from _timing import timed
    from diffimpact import _exact_sums
    from diffimpact.reproduce import table
    from diffimpact.scenes import billiard

    if sums == "plain":
        contact.body_totals = _exact_sums._scatter_totals
        contact.exact_sum = lambda terms: jnp.sum(terms, axis=-1)
    p = billiard.Parameters()
    model, state, times = billiard.table_model(p), billiard.break_state(p), table.save_times(duration)
    run_break = jax.jit(lambda s, t: table.integrate(model, s, t, table.MAX_EVENTS))
    last = {}

    def call():
        last["run"] = run_break(state, times)
        return last["run"].q

    first, best = timed(call, repeats=repeats)
    run = last["run"]
    centres = np.asarray(run.q).reshape(len(times), -1, 7)[:, :, :2]
    partner = table.mirror_partners(p)
    mirror = np.abs(centres[:, :, 0] - centres[:, partner, 0]) + np.abs(centres[:, :, 1] + centres[:, partner, 1])
    return {"compile": first - best, "run": best, "steps": int(run.steps), "energy": float(run.energy[-1]),
            "mirror": float(mirror.max()), "isa": os.environ.get("XLA_FLAGS", "")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0, help="simulated time of the break (s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after the first call")
    parser.add_argument("--child", choices=("exact", "plain"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.duration, args.repeats)))
        return
    results = {}
    for name, (sums, flags) in SETTINGS.items():
        r = results[name] = measured(__file__, [f"--child={sums}", "--duration", str(args.duration),
                                                "--repeats", str(args.repeats)], name, flags)
        print(f"{name:31s} XLA_FLAGS {r['isa']!r:30s} compile {r['compile']:5.1f} s, run {r['run']:.3f} s, "
              f"{r['steps']} steps, {1e6 * r['run'] / r['steps']:5.1f} µs a step, E(end) {r['energy']:.4f} J, "
              f"mirror error {r['mirror']:.2e} m", flush=True)
    package = next(iter(results.values()))
    per_step = package["run"] / package["steps"]
    for name, r in list(results.items())[1:]:
        print(f"{name} / the package: {r['run'] / r['steps'] / per_step:.2f}× a step")


if __name__ == "__main__":
    main()
