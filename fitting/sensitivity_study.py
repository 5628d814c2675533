"""``sensitivity``: how the post-impact velocity of a central impact depends on k, e, n, v0 and m.

A sphere of effective mass m hits at v0 ([Poursina 2020] eqs. (1)–(5)); the outputs
are the rebound speed v_out = e_out v0 and the restitution e_out of the
diffrax solve, for two contact models built from the same (k, e, n):

* ``optimal-damping``: f = c δ̇ + k δ^n with c = c_opt(m, v0, k, n, e)
  (eq. (50); ``diffimpact.optimal_damping``, ``"exact"`` by default,
  ``"improved"`` closed form with ``quick``). It is built to give e_out = e,
  so ∂ln e_out/∂ln e = 1 and the other sensitivities vanish.
* ``hunt-crossley-flores``: f = (μ δ̇ + k) δ^n with μ = 8k(1 − e)/(5 e v0)
  (Flores et al., eq. (16)). In the natural units of the impact the equation
  depends only on μ v0 / k and n, so e_out (0.256 for e = 0.3) is
  independent of k, v0 and m; it is biased against e and depends on e only.

Jacobians ∂y/∂p are forward-mode derivatives through the solve
(``fitting.sensitivity.jacobian``), checked against central differences
(``finite_difference_jacobian``); the normalised sensitivities are
S = ∂ln y/∂ln p. At the nominal point m = 0.2 kg, v0 = 3 m/s,
k = 1e8 N/m^1.5, n = 1.5, e = 0.3, and along a sweep of e (the other
parameters nominal), batched by ``fitting.sharding.sharded_map`` over all
devices in checkpointed chunks (an interrupted run resumes). Outputs: ``sensitivity.csv`` (the sweep: S of each model, output and
parameter against e), ``sensitivity.json`` (nominal Jacobians, S, the
finite-difference discrepancies) and ``sensitivity.png``.

Two pendulums ([Poursina 2020] §6, ``diffimpact.scenes.two_pendulum``, eq. (50)
contact with the improved closed form of c_opt): the outputs are the angular
velocities θ̇₁⁺, θ̇₂⁺ just after the first impact (at the separation event,
t ≈ 1.1428 s) and the approach speed v₀ = δ̇ at its onset; the parameters are
k, e, n and, standing in for the approach speed, the release angle β of rod 2
(θ₂(0) = −β, nominal π/2 rad; rod 2 falls from rest, so β sets how fast its
tip arrives). ∂ln v₀/∂ln β is in the table, so a reader can convert:
∂ln y/∂ln v₀ ≈ (∂ln y/∂ln β) / (∂ln v₀/∂ln β), approximate because β also
moves the contact point and the rod angles at impact. Forward-mode Jacobian
(``diffrax.ForwardMode`` through the contact events), central differences with relative
step ``PENDULUM_RELATIVE_STEP``. Written to ``sensitivity-two-pendulum.csv``
(one row per output: S, S_fd and their difference per parameter), the
``two_pendulum`` entry of ``sensitivity.json``, and a bar chart in
``sensitivity.png``.
"""

import functools
from pathlib import Path

import diffrax as dfx
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.contact.damping_factors import flores
from diffimpact.contact.normal import HertzLinearDamper, HuntCrossley
from diffimpact.impact.central import central_impact
from diffimpact.impact.damping import optimal_damping
from diffimpact.io import figure, save_figure, write_csv, write_json
from diffimpact.multibody import AdaptiveSteps, ContactEvents, ForwardMode, LagrangeMultipliers, simulate
from diffimpact.scenes import two_pendulum as tp
from fitting.checkpoint import Checkpoint, resumable_map
from fitting.sensitivity import as_function_of_values, finite_difference_jacobian, jacobian
from fitting.sharding import sharded_map

NAME = "sensitivity"
MODELS = ("optimal-damping", "hunt-crossley-flores")
OUTPUTS = ("v_out", "e_out")
#: Parameter order of the Jacobian columns, with symbols and units for tables and plots.
PARAMETERS = ("stiffness", "restitution", "exponent", "impact_velocity", "mass")
SYMBOLS = {"stiffness": ("k", "N/m^n"), "restitution": ("e", "-"), "exponent": ("n", "-"),
           "impact_velocity": ("v0", "m/s"), "mass": ("m", "kg")}
#: Central-difference step relative to each parameter: truncation error ~1e-10, solver noise ~1e-10/1e-5.
RELATIVE_STEP = 1e-5
SWEEP = {False: np.linspace(0.05, 0.95, 19), True: np.linspace(0.1, 0.9, 5)}
#: Sweep points per checkpointed chunk.
SWEEP_CHUNK = 8


class ImpactSystem(eqx.Module):
    """The parameters: k (N/m^n), e (desired restitution), n, v0 (m/s), m (kg)."""

    stiffness: jnp.ndarray
    restitution: jnp.ndarray
    exponent: jnp.ndarray
    impact_velocity: jnp.ndarray
    mass: jnp.ndarray


NOMINAL = ImpactSystem(stiffness=1e8, restitution=0.3, exponent=1.5, impact_velocity=3.0, mass=0.2)


def contact_law(system, model, damping_method="exact"):
    """The contact force law of ``model`` for ``system``."""
    if model == "optimal-damping":
        damping = optimal_damping(system.mass, system.impact_velocity, system.stiffness, system.exponent,
                                  system.restitution, method=damping_method)
        return HertzLinearDamper(system.stiffness, system.exponent, damping)
    if model == "hunt-crossley-flores":
        hysteresis = flores(system.stiffness, system.restitution, system.impact_velocity)
        return HuntCrossley(system.stiffness, system.exponent, hysteresis)
    raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def post_impact(system, model, damping_method="exact"):
    """[v_out (m/s), e_out] of the central impact (forward-mode differentiable)."""
    law = contact_law(system, model, damping_method)
    restitution = central_impact(law, system.mass, system.impact_velocity, adjoint=dfx.ForwardMode()).restitution
    return jnp.stack([restitution * system.impact_velocity, restitution])


def _values(system, names=PARAMETERS):
    return np.array([float(getattr(system, name)) for name in names])


def _checked_sensitivities(output_fn, system, names, relative_step):
    """Outputs, forward-mode Jacobian, ∂ln y/∂ln p and its central-difference counterpart, and their largest gap."""
    # the outputs by the function of the parameter values that the differences call: one compiled program for
    # both (output_fn(system) itself would compile another where the system's Python floats are static)
    fn, values = as_function_of_values(output_fn, system, names)
    outputs = np.asarray(fn(values))
    automatic = np.asarray(jacobian(output_fn, system, names, mode="fwd"))
    finite = finite_difference_jacobian(output_fn, system, names, relative_step=relative_step)
    scale = _values(system, names)[None, :] / outputs[:, None]
    return {
        "outputs": outputs,
        "jacobian": automatic,
        "normalised": automatic * scale,
        "normalised_fd": finite * scale,
        "discrepancy": float(np.max(np.abs((automatic - finite) * scale))),
    }


def nominal(model, system=NOMINAL, damping_method="exact"):
    """Outputs, Jacobian, normalised sensitivities and their finite-difference check at ``system``.

    Returns a dict: ``outputs`` (2,), ``jacobian`` and ``normalised`` (2 × 5,
    rows ``OUTPUTS``, columns ``PARAMETERS``), ``normalised_fd`` and
    ``discrepancy`` = max |S − S_fd| (dimensionless).
    """
    output_fn = functools.partial(post_impact, model=model, damping_method=damping_method)
    return _checked_sensitivities(output_fn, system, PARAMETERS, RELATIVE_STEP)


@functools.lru_cache(maxsize=16)
def _sensitivity_at_restitution(model, damping_method, base):
    """∂ln y/∂ln p as a function of e, the other parameters at ``base`` (a tuple).

    Cached, so repeated sweeps of one system get the same function and reuse
    its compiled, sharded map (``fitting.sharding``).
    """
    base = jnp.asarray(base)
    index = PARAMETERS.index("restitution")

    def normalised_at(restitution):
        values = base.at[index].set(restitution)

        def outputs(v):
            return post_impact(ImpactSystem(*v), model, damping_method)

        return jax.jacfwd(outputs)(values) * values[None, :] / outputs(values)[:, None]

    return normalised_at


def sweep(model, restitutions, system=NOMINAL, damping_method="exact", checkpoint=None):
    """Normalised sensitivities along e (the other parameters from ``system``), sharded over the devices.

    With a ``fitting.checkpoint.Checkpoint`` the sweep runs in chunks of
    ``SWEEP_CHUNK`` points, each saved when done, and a restart skips them.
    Returns an array (len(restitutions), 2, 5): ∂ln y/∂ln p, rows ``OUTPUTS``, columns ``PARAMETERS``.
    """
    normalised_at = _sensitivity_at_restitution(model, damping_method, tuple(_values(system)))
    restitutions = np.asarray(restitutions, dtype=float)
    if checkpoint is None:
        return sharded_map(normalised_at, restitutions)
    return resumable_map(normalised_at, restitutions, chunk=SWEEP_CHUNK, checkpoint=checkpoint)


def study(quick=False, checkpoint_dir=None, pendulum=True):
    """Nominal tables and e-sweeps of both models (``quick``: improved closed-form c_opt, 5 sweep points).

    With ``checkpoint_dir`` each sweep is checkpointed to
    ``sensitivity-MODEL.checkpoint.json`` there; returns (result, checkpoints).
    """
    method = "improved" if quick else "exact"
    restitutions = SWEEP[quick]
    result = {"damping_method": method, "restitution": restitutions}
    checkpoints = []
    for model in MODELS:
        checkpoint = None
        if checkpoint_dir is not None:
            meta = {"model": model, "damping_method": method, "restitution": restitutions.tolist(), "nominal": _values(NOMINAL).tolist()}
            checkpoint = Checkpoint(Path(checkpoint_dir) / f"{NAME}-{model}.checkpoint.json", meta)
            checkpoints.append(checkpoint)
        result[model] = {
            "nominal": nominal(model, damping_method=method),
            "sweep": sweep(model, restitutions, damping_method=method, checkpoint=checkpoint),
        }
    if pendulum:
        result["two_pendulum"] = pendulum_nominal()
    return (result, checkpoints) if checkpoint_dir is not None else result


PENDULUM_PARAMETERS = ("stiffness", "restitution", "exponent", "release_angle")
PENDULUM_SYMBOLS = {"stiffness": "k", "restitution": "e", "exponent": "n", "release_angle": "β"}
PENDULUM_OUTPUTS = ("theta1_dot_after", "theta2_dot_after", "approach_speed")
PENDULUM_OUTPUT_UNITS = {"theta1_dot_after": "rad/s", "theta2_dot_after": "rad/s", "approach_speed": "m/s"}
#: Just past the first impact (onset 1.1424 s, separation 1.1428 s), before the second (3.76 s).
PENDULUM_HORIZON = 1.2
PENDULUM_RELATIVE_STEP = 1e-5


class PendulumSystem(eqx.Module):
    """k (N/m^n), e, n of the eq. (50) contact and the release angle β = −θ₂(0) (rad) of rod 2."""

    stiffness: jnp.ndarray
    restitution: jnp.ndarray
    exponent: jnp.ndarray
    release_angle: jnp.ndarray


PENDULUM_NOMINAL = PendulumSystem(stiffness=1e8, restitution=0.3, exponent=1.5, release_angle=np.pi / 2)


@eqx.filter_jit
def pendulum_outputs(system):
    """[θ̇₁⁺ (rad/s), θ̇₂⁺ (rad/s), v₀ (m/s)] of the first impact of the two pendulums."""
    p = tp.Parameters(stiffness=system.stiffness, restitution=system.restitution, exponent=system.exponent)
    model = tp.model(p, "optimal", "improved")
    state = tp.initial_state(p, jnp.stack([jnp.asarray(tp.INITIAL_ANGLES[0]), -system.release_angle]))
    run = simulate(model, state, jnp.array([PENDULUM_HORIZON]), LagrangeMultipliers(),
                   steps=AdaptiveSteps(rtol=1e-10, atol=1e-10), events=ContactEvents(max_events=6),
                   derivatives=ForwardMode())
    events = run.events
    after = tp.angular_velocities(events.v[1])
    _, approach_speed = model.forces[1].penetration_rate(model.split(events.q[0]), model.split(events.v[0]))
    return jnp.stack([after[0], after[1], approach_speed[0]])


def pendulum_nominal(system=PENDULUM_NOMINAL):
    """Outputs, Jacobian, normalised sensitivities and their central-difference check for the two pendulums."""
    return _checked_sensitivities(pendulum_outputs, system, PENDULUM_PARAMETERS, PENDULUM_RELATIVE_STEP)


def _named(matrix):
    return {out: {name: float(v) for name, v in zip(PARAMETERS, row)} for out, row in zip(OUTPUTS, matrix)}


def _named_pendulum(matrix):
    return {out: {name: float(v) for name, v in zip(PENDULUM_PARAMETERS, row)}
            for out, row in zip(PENDULUM_OUTPUTS, matrix)}


def write_outputs(out_dir, result):
    """``sensitivity.csv``, ``sensitivity.json``, ``sensitivity.png``; returns their paths."""
    out = Path(out_dir)
    columns = {"e": result["restitution"]}
    for model in MODELS:
        for i, output in enumerate(OUTPUTS):
            for j, name in enumerate(PARAMETERS):
                columns[f"S_{model.replace('-', '_')}_{output}_{SYMBOLS[name][0]}"] = result[model]["sweep"][:, i, j]
    csv_path = write_csv(out / f"{NAME}.csv", columns)
    record = {
        "nominal_point": {name: float(getattr(NOMINAL, name)) for name in PARAMETERS},
        "units": {name: SYMBOLS[name][1] for name in PARAMETERS},
        "damping_method": result["damping_method"],
        "finite_difference_relative_step": RELATIVE_STEP,
    }
    for model in MODELS:
        table = result[model]["nominal"]
        record[model] = {
            "outputs": dict(zip(OUTPUTS, table["outputs"].tolist())),
            "jacobian_SI": _named(table["jacobian"]),
            "normalised_sensitivity": _named(table["normalised"]),
            "normalised_sensitivity_finite_difference": _named(table["normalised_fd"]),
            "max_abs_discrepancy_normalised": table["discrepancy"],
        }
    pendulum = result.get("two_pendulum")
    if pendulum is not None:
        _write_pendulum(out, record, pendulum)
    json_path = write_json(out / f"{NAME}.json", record)
    fig, axes = figure(1, 3 if pendulum is None else 4)
    e = result["restitution"]
    for ax, model in zip(axes[0, :2], MODELS):
        for j, name in enumerate(PARAMETERS):
            ax.plot(e, result[model]["sweep"][:, 0, j], "o-", ms=3, label=f"∂ln v_out/∂ln {SYMBOLS[name][0]}")
        ax.set(xlabel="e (desired)", ylabel="normalised sensitivity", title=model)
        ax.legend(fontsize=7)
    width = 0.38
    x = np.arange(len(PARAMETERS))
    for k, model in enumerate(MODELS):
        axes[0, 2].bar(x + (k - 0.5) * width, result[model]["nominal"]["normalised"][0], width, label=model)
    axes[0, 2].set_xticks(x, [SYMBOLS[n][0] for n in PARAMETERS])
    axes[0, 2].set(ylabel="∂ln v_out/∂ln p", title="nominal point (e = 0.3)")
    axes[0, 2].legend(fontsize=7)
    if pendulum is not None:
        _plot_pendulum(axes[0, 3], pendulum)
    png_path = save_figure(fig, out / f"{NAME}.png")
    return csv_path, json_path, png_path


def _write_pendulum(out, record, pendulum):
    """The ``two_pendulum`` entry of the JSON record and ``sensitivity-two-pendulum.csv``.

    CSV rows: θ̇₁⁺ (rad/s), θ̇₂⁺ (rad/s), v₀ (m/s), numbered 0, 1, 2 in ``output``.
    """
    record["two_pendulum"] = {
        "nominal_point": {name: float(getattr(PENDULUM_NOMINAL, name)) for name in PENDULUM_PARAMETERS},
        "units": {"stiffness": "N/m^1.5", "restitution": "-", "exponent": "-", "release_angle": "rad",
                  **PENDULUM_OUTPUT_UNITS},
        "outputs": dict(zip(PENDULUM_OUTPUTS, pendulum["outputs"].tolist())),
        "jacobian_SI": _named_pendulum(pendulum["jacobian"]),
        "normalised_sensitivity": _named_pendulum(pendulum["normalised"]),
        "normalised_sensitivity_finite_difference": _named_pendulum(pendulum["normalised_fd"]),
        "max_abs_discrepancy_normalised": pendulum["discrepancy"],
        "finite_difference_relative_step": PENDULUM_RELATIVE_STEP,
    }
    columns = {"output": np.arange(len(PENDULUM_OUTPUTS)), "value": pendulum["outputs"]}
    for j, name in enumerate(PENDULUM_PARAMETERS):
        symbol = "beta" if name == "release_angle" else SYMBOLS[name][0]
        columns[f"S_{symbol}"] = pendulum["normalised"][:, j]
        columns[f"S_{symbol}_fd"] = pendulum["normalised_fd"][:, j]
    write_csv(out / f"{NAME}-two-pendulum.csv", columns)


def _plot_pendulum(ax, pendulum):
    x = np.arange(len(PENDULUM_PARAMETERS))
    width = 0.27
    labels = {"theta1_dot_after": "θ̇1⁺", "theta2_dot_after": "θ̇2⁺", "approach_speed": "v0"}
    for i, output in enumerate(PENDULUM_OUTPUTS):
        ax.bar(x + (i - 1) * width, pendulum["normalised"][i], width, label=f"{labels[output]} (autodiff)")
        ax.plot(x + (i - 1) * width, pendulum["normalised_fd"][i], "k_", ms=10)
    ax.plot([], [], "k_", label="central differences")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xticks(x, [PENDULUM_SYMBOLS[n] for n in PENDULUM_PARAMETERS])
    ax.set(ylabel="∂ln y/∂ln p", title="two pendulums, first impact")
    ax.legend(fontsize=7)


def run(out_dir, quick=False, pendulum=True):
    """Compute the study (``pendulum``: with the two pendulums); write ``sensitivity.csv``,
    ``sensitivity-two-pendulum.csv``, ``sensitivity.json`` and ``sensitivity.png`` into ``out_dir``; return a text
    summary.

    About 2 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    result, checkpoints = study(quick, checkpoint_dir=out_dir, pendulum=pendulum)
    write_outputs(out_dir, result)
    for checkpoint in checkpoints:
        checkpoint.finish()
    lines = [f"c_opt method: {result['damping_method']}; sweep of e over {len(result['restitution'])} points"]
    header = "".join(f"{SYMBOLS[n][0]:>11s}" for n in PARAMETERS)
    for model in MODELS:
        table = result[model]["nominal"]
        lines.append(f"{model}: v_out = {table['outputs'][0]:.6g} m/s, e_out = {table['outputs'][1]:.6g}")
        lines.append(f"  ∂ln y/∂ln p   {header}")
        for output, row in zip(OUTPUTS, table["normalised"]):
            lines.append(f"  {output:<13s}" + "".join(f"{v:11.3e}" for v in row))
        lines.append(f"  max |S − S_central-difference| = {table['discrepancy']:.2e}")
    pendulum = result.get("two_pendulum")
    if pendulum is None:
        return "\n".join(lines)
    outputs = ", ".join(f"{o} = {v:.6g} {PENDULUM_OUTPUT_UNITS[o]}" for o, v in zip(PENDULUM_OUTPUTS, pendulum["outputs"]))
    lines.append(f"two pendulums, first impact (eq. (50), β = release angle of rod 2): {outputs}")
    lines.append("  ∂ln y/∂ln p      " + "".join(f"{PENDULUM_SYMBOLS[n]:>11s}" for n in PENDULUM_PARAMETERS))
    for output, row in zip(PENDULUM_OUTPUTS, pendulum["normalised"]):
        lines.append(f"  {output:<16s}" + "".join(f"{v:11.3e}" for v in row))
    lines.append(f"  max |S − S_central-difference| = {pendulum['discrepancy']:.2e}")
    return "\n".join(lines)
