"""``deflection``: ball–ball restitution and friction from measured cut shots (Mathavan et al. 2009).

Data: ``data/mathavan2009_cut_shots.csv``, five cut shots measured by
Mathavan, Jackson & Parkin (*Am. J. Phys.* 77, 788 (2009), Table I): a
rolling cue ball at V0 hits a resting object ball at the cut angle θ; both
balls' speeds once they roll again. Or a user's file in the same columns
(``SCHEMA``). σ of the speeds is not known: the covariances are scaled by
the reduced χ².

Model: ``diffimpact.scenes.billiard.cut_shot`` on Mathavan et al.'s snooker
ball and table (``billiard.snooker``: the bed is cloth on slate): the cue
ball rolls from 2 cm before the contact; ball–ball Lankarani–Nikravesh with
restitution e_b and Alciatore's friction μ(v) = s (a + b e^(−c v)) (the
scale s of TP A.14's curve; a, b, c as published); ball–cloth Ambrósio with
μ_s = 0.212. The simulation runs to ``AFTER_SEPARATION`` past the balls'
separation; the speeds they roll at afterwards follow from the state then
(``billiard.rolling_velocity``: sliding on the cloth conserves each ball's
angular momentum about its contact point, so the rolling velocity is
5/7 ṙ + 2/7 R ω × ẑ whatever the cloth's friction). Forward-mode derivatives
through the contact events.

What the data can tell: for that reason the post-slip speeds do not depend
on the cloth's friction μ_s (only through the cloth's pull during the 0.2 ms
of the collision): it is not fitted, and ``run`` reports the sensitivity of
the speeds to it. The object ball's speed is about 5/7 (1 + e_b)/2 V0 cos θ,
so e_b is identified; the friction scale acts through the spins the
collision gives the balls.

Also: Alciatore's curve refitted to Marlow's three points
(``data/marlow_ball_ball_friction.csv``): three parameters, three points, no
degrees of freedom left, so the standard errors are those of an assumed
reading uncertainty of ±0.005 in μ (``MARLOW_SIGMA``, absolute).

Predictions of the fitted parameters (same model, rolling cue ball at
1.5 m/s): the cue ball's deflection at ball-hit fractions 1/8 … 7/8 beside
the 30° rule ([Gismeros Moreno 2022] eq. (4.1)) and the object ball's throw beside TP A.14.

Outputs: ``deflection.json``, ``deflection.csv`` (data beside the fit),
``deflection.png`` (fit over data, residuals, predictions, Marlow's points).
"""

import time
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from diffimpact.contact import Alciatore
from diffimpact.impulse import alciatore
from diffimpact.io import data_file, figure, save_figure, write_csv, write_json
from diffimpact.multibody import ForwardMode, ReverseMode
from diffimpact.scenes import billiard
from fitting.data import Column, Schema, load_csv
from fitting.fit import convergence_warnings, fit, levenberg_marquardt, linearise
from fitting.parameters import Bounded, LogBounded, Positive

NAME = "deflection"
SCHEMA = Schema(
    NAME,
    (
        Column("cue_speed_m_per_s", "m/s", "speed of the rolling cue ball before the impact", 0.0, 10.0,
               exclusive_minimum=True),
        Column("cut_angle_deg", "°", "cut angle (line of centres against the cue ball's path)", 0.0, 90.0,
               exclusive_maximum=True),
        Column("cue_post_slip_speed_m_per_s", "m/s", "cue ball speed once it rolls again", 0.0, 10.0),
        Column("object_post_slip_speed_m_per_s", "m/s", "object ball speed once it rolls again", 0.0, 10.0),
    ),
)
MARLOW_SCHEMA = Schema(
    "marlow",
    (Column("relative_sliding_speed_m_per_s", "m/s", "relative sliding speed", 0.0, 100.0),
     Column("friction_coefficient", "-", "ball–ball friction coefficient", 0.0, 1.0)),
)
#: Distance the rolling cue ball travels before the contact (m), and the time simulated after it (s): the
#: balls touch for about 0.2 ms.
APPROACH = 0.02
AFTER_SEPARATION = 0.005
#: Relative weights of the two speeds (m/s); the covariance is scaled by the reduced χ².
SPEED_SIGMA = 0.02
MARLOW_SIGMA = 0.005
MAX_STEPS = {False: 30, True: 8}
OPTIMIZER = levenberg_marquardt()
PREDICTION_SPEED = 1.5  # m/s
#: Mathavan et al.'s measured range of the ball–cloth sliding friction.
CLOTH_FRICTION_RANGE = (0.178, 0.245)
PREDICTION_FRACTIONS = np.array([0.125, 0.25, 0.5, 0.75, 0.875])


class ShotParameters(eqx.Module):
    """Ball–ball restitution e_b, the scale s of Alciatore's μ(v), ball–cloth sliding friction μ_s (not fitted)."""

    ball_restitution: jnp.ndarray
    friction_scale: jnp.ndarray
    cloth_friction: jnp.ndarray


class FrictionCurve(eqx.Module):
    """μ(v) = a + b e^(−c v) of Alciatore's fit to Marlow's points."""

    offset: jnp.ndarray
    amplitude: jnp.ndarray
    decay: jnp.ndarray


#: Arrays, not Python floats: a float leaf is static to the compiled fit step, and ``cloth_sensitivity``'s other
#: μ_s would compile it again.
START = ShotParameters(*(jnp.asarray(x, dtype=float) for x in (0.93, 1.0, 0.212)))
SPEC = {"ball_restitution": Bounded(0.5, 1.0), "friction_scale": LogBounded(0.1, 10.0)}
PUBLISHED_CURVE = FrictionCurve(9.951e-3, 0.108, 1.088)


def load_data(path=None, drop_bad_rows=False):
    """Cut shots from ``path`` (``SCHEMA``; default the shipped measurements); returns (shots, LoadReport)."""
    path = data_file("mathavan2009_cut_shots.csv") if path is None else path
    columns, report = load_csv(path, SCHEMA, drop_bad_rows=drop_bad_rows)
    return {"speed": columns["cue_speed_m_per_s"], "cut": np.radians(columns["cut_angle_deg"]),
            "cue_final": columns["cue_post_slip_speed_m_per_s"],
            "object_final": columns["object_post_slip_speed_m_per_s"], "source": str(path)}, report


def shot_parameters(params):
    """The scene's ``billiard.Parameters`` and the ball–ball friction law for ``params``."""
    p = billiard.snooker(ball_restitution=params.ball_restitution, cloth_friction=params.cloth_friction)
    base = Alciatore()
    return p, Alciatore(base.offset * params.friction_scale, base.amplitude * params.friction_scale, base.decay)


def outcomes(params, speed, cut, derivatives=ReverseMode(), rtol=billiard.SHOT_RTOL):
    """``billiard.cut_shots`` of rolling cue balls at ``speed`` and ``cut`` (arrays) with ``params``."""
    p, friction = shot_parameters(params)
    return billiard.cut_shots(p, friction, speed, cut, -APPROACH - 2 * p.radius * jnp.cos(cut), jnp.zeros_like(speed),
                              APPROACH / speed + AFTER_SEPARATION, derivatives=derivatives, rtol=rtol)


def final_speeds(params, speed, cut, rtol=billiard.SHOT_RTOL):
    """Cue and object ball speeds once they roll again (m/s), each shaped like ``speed``."""
    outcome = outcomes(params, speed, cut, derivatives=ForwardMode(), rtol=rtol)
    return jnp.linalg.norm(outcome["cue_rolling"], axis=-1), jnp.linalg.norm(outcome["object_rolling"], axis=-1)


def _residuals(speed, cut, cue_final, object_final, rtol, params):
    cue, target = final_speeds(params, speed, cut, rtol)
    return jnp.concatenate([cue - cue_final, target - object_final])


def residual_function(shots, rtol=billiard.SHOT_RTOL):
    """Model − data on the cut ``shots``, as ``fit`` takes it (data and the solver's ``rtol`` as leaves)."""
    return eqx.Partial(_residuals, *(jnp.asarray(shots[k]) for k in ("speed", "cut", "cue_final", "object_final")),
                       jnp.asarray(rtol, dtype=float))


def fit_shots(shots, start=START, spec=SPEC, quick=False, progress=True):
    """Fit ``spec`` of ``ShotParameters`` to the cut ``shots``; returns the ``FitResult``."""
    return fit(residual_function(shots), start, spec, sigma=SPEED_SIGMA, optimizer=OPTIMIZER,
               ftol=billiard.SHOT_FTOL, max_steps=MAX_STEPS[quick], progress=progress)


def _curve_residuals(speed, mu, curve):
    return curve.offset + curve.amplitude * jnp.exp(-curve.decay * speed) - mu


def fit_marlow(progress=False):
    """Alciatore's μ(v) through Marlow's three points (absolute σ = ``MARLOW_SIGMA``); returns (FitResult, data)."""
    columns, _ = load_csv(data_file("marlow_ball_ball_friction.csv"), MARLOW_SCHEMA)
    speed, mu = columns["relative_sliding_speed_m_per_s"], columns["friction_coefficient"]
    spec = {"offset": Positive(reference=0.01), "amplitude": Positive(reference=0.1), "decay": Positive()}
    result = fit(eqx.Partial(_curve_residuals, jnp.asarray(speed), jnp.asarray(mu)), PUBLISHED_CURVE, spec,
                 sigma=MARLOW_SIGMA, absolute_sigma=True, optimizer=OPTIMIZER, max_steps=50, progress=progress)
    return result, (speed, mu)


@eqx.filter_jit
def _outcomes(params, speed, cut):
    return outcomes(params, speed, cut)


def predictions(params):
    """``outcomes`` (arrays, angles in rad) of rolling cue balls at ``PREDICTION_SPEED`` for ``PREDICTION_FRACTIONS``."""
    cut = alciatore.cut_angle(PREDICTION_FRACTIONS)
    return {k: np.asarray(v) for k, v in _outcomes(params, jnp.full(cut.shape, PREDICTION_SPEED), cut).items()}


def cloth_sensitivity(params, shots):
    """Largest change (m/s) of the post-slip speeds of ``shots`` as μ_s spans its measured 0.178–0.245.

    Through the fit's own compiled step (``linearise``): z σ + data are the speeds, so nothing compiles again.
    """
    with_mu = [eqx.tree_at(lambda x: x.cloth_friction, params, jnp.asarray(mu, dtype=float)) for mu in CLOTH_FRICTION_RANGE]
    speeds = [linearise(residual_function(shots), each, SPEC, sigma=SPEED_SIGMA, optimizer=OPTIMIZER)[0]
              for each in with_mu]
    return float(np.max(np.abs(speeds[1] - speeds[0]))) * SPEED_SIGMA


def run(out, quick=False, data=None, drop_bad_rows=False, progress=True):
    """Fit the shipped cut shots (or the CSV ``data``); write ``deflection.json``, ``deflection.csv`` and
    ``deflection.png`` into ``out``; return a summary.

    About 2 min on a 2-core machine, compiling included (``quick``: about 1 min).
    """
    start = time.perf_counter()
    out = Path(out)
    shots, report = load_data(data, drop_bad_rows)
    if shots["speed"].size * 2 <= len(SPEC):
        raise ValueError(f"{shots['source']}: {len(SPEC)} parameters need at least 2 shots")
    result = fit_shots(shots, quick=quick, progress=progress)
    marlow, (marlow_speed, marlow_mu) = fit_marlow()
    # the fitted speeds: the residuals (model − data) at the fit plus the data
    cue_fit, object_fit = np.split(result.residuals + np.concatenate([shots["cue_final"], shots["object_final"]]), 2)
    predicted = predictions(result.params)
    cloth = cloth_sensitivity(result.params, shots)
    write_csv(out / f"{NAME}.csv", {
        "cue_speed_m_per_s": shots["speed"], "cut_angle_deg": np.degrees(shots["cut"]),
        "cue_post_slip_speed_m_per_s": shots["cue_final"], "cue_post_slip_speed_fit_m_per_s": cue_fit,
        "object_post_slip_speed_m_per_s": shots["object_final"], "object_post_slip_speed_fit_m_per_s": object_fit,
    })
    singular = result.singular_values()
    record = {
        "data": report.file,
        "load_report": report.to_dict(),
        "fit": {**result.to_dict(), "jacobian_singular_values": singular.tolist()},
        "cloth_friction": {"value": float(result.params.cloth_friction), "fitted": False,
                           "largest_speed_change_m_per_s_over_measured_range": cloth,
                           "measured_range": list(CLOTH_FRICTION_RANGE)},
        "marlow_refit": marlow.to_dict(),
        "predictions_rolling_cue_ball": {
            "speed_m_per_s": PREDICTION_SPEED, "fraction": PREDICTION_FRACTIONS.tolist(),
            "cut_angle_deg": np.degrees(predicted["cut"]).tolist(),
            "deflection_deg": np.degrees(predicted["deflection_rolling"]).tolist(),
            "deflection_eq41_deg": np.degrees(np.asarray(alciatore.deflection_angle(predicted["cut"]))).tolist(),
            "throw_deg": np.degrees(predicted["throw"]).tolist(),
            "throw_tpa14_deg": np.degrees(predicted["throw_tpa14"]).tolist(),
        },
    }
    write_json(out / f"{NAME}.json", record)
    save_figure(_plot(shots, cue_fit, object_fit, result, predicted, marlow, marlow_speed, marlow_mu),
                out / f"{NAME}.png")
    lines = [report.summary(), f"{NAME}: {shots['speed'].size} cut shots, rolling cue ball; loss {result.loss:.4g}, "
             f"{result.steps} steps, s² = {result.residual_variance:.3g}, "
             f"Jacobian singular values {', '.join(f'{s:.3g}' for s in singular)}"]
    lines.append(result.summary())
    lines.append("  correlation " + np.array2string(result.correlation, precision=3).replace("\n", " "))
    lines.append(f"  cloth friction μ_s = {float(result.params.cloth_friction):g}, not fitted: over its measured range "
                 f"{CLOTH_FRICTION_RANGE[0]}–{CLOTH_FRICTION_RANGE[1]} the post-slip speeds change by at most "
                 f"{cloth:.1e} m/s")
    lines.append("Marlow's points, μ(v) = a + b exp(−c v), σ = 0.005 absolute: " + ", ".join(
        f"{n} = {v:.4g} ± {e:.2g}" for n, v, e in zip(marlow.names, marlow.values, marlow.standard_errors)))
    lines.append(f"predictions, rolling cue ball at {PREDICTION_SPEED} m/s: f, deflection (eq. 4.1), throw (TP A.14) °")
    eq41 = np.degrees(np.asarray(alciatore.deflection_angle(predicted["cut"])))
    for k, f in enumerate(PREDICTION_FRACTIONS):
        lines.append(f"  {f:5.3f}  {np.degrees(predicted['deflection_rolling'][k]):6.2f} ({eq41[k]:6.2f})  "
                     f"{np.degrees(predicted['throw'][k]):5.2f} ({np.degrees(predicted['throw_tpa14'][k]):5.2f})")
    lines += convergence_warnings({"the fit to the cut shots": result.converged,
                                   "the refit of Marlow's points": marlow.converged})
    lines.append(f"done in {time.perf_counter() - start:.1f} s")
    return "\n".join(lines)


def _plot(shots, cue_fit, object_fit, result, predicted, marlow, marlow_speed, marlow_mu):
    fig, axes = figure(2, 2, width=4.6)
    cut = np.degrees(shots["cut"])
    ax = axes[0, 0]
    ax.plot(cut, shots["cue_final"], "s", mfc="none", color="tab:blue", label="cue ball, measured")
    ax.plot(cut, cue_fit, "o", color="tab:blue", ms=4, label="cue ball, fit")
    ax.plot(cut, shots["object_final"], "s", mfc="none", color="tab:red", label="object ball, measured")
    ax.plot(cut, object_fit, "o", color="tab:red", ms=4, label="object ball, fit")
    ax.set(xlabel="cut angle (°)", ylabel="speed once rolling again (m/s)",
           title="Mathavan et al. 2009, Table I: fit over the data")
    ax.legend(fontsize=6)
    ax = axes[0, 1]
    ax.plot(cut, cue_fit - shots["cue_final"], "o", color="tab:blue", label="cue ball")
    ax.plot(cut, object_fit - shots["object_final"], "s", color="tab:red", label="object ball")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set(xlabel="cut angle (°)", ylabel="fit − measured (m/s)", title="residuals")
    ax.legend(fontsize=6)
    ax = axes[1, 0]
    fine = np.linspace(0.02, 0.98, 97)
    ax.plot(fine, np.degrees(np.asarray(alciatore.deflection_angle(alciatore.cut_angle(fine)))), "k-", lw=2.5,
            alpha=0.35, label="30° rule, eq. (4.1)")
    ax.plot(PREDICTION_FRACTIONS, np.degrees(predicted["deflection_rolling"]), "o-", color="tab:blue",
            label="cue ball deflection, fitted model")
    ax.plot(PREDICTION_FRACTIONS, np.degrees(predicted["throw"]) * 10, "s-", color="tab:red",
            label="object ball throw × 10, fitted model")
    ax.plot(PREDICTION_FRACTIONS, np.degrees(predicted["throw_tpa14"]) * 10, ":", color="k", lw=2,
            label="throw × 10, TP A.14")
    ax.set(xlabel="ball-hit fraction f", ylabel="angle (°)",
           title=f"predictions: rolling cue ball at {PREDICTION_SPEED} m/s")
    ax.legend(fontsize=6)
    ax = axes[1, 1]
    speed = np.geomspace(0.03, 10.0, 200)
    for curve, style, label in ((PUBLISHED_CURVE, "k-", "Alciatore (TP A.14)"),
                                (marlow.params, "r--", "refitted here")):
        ax.semilogx(speed, curve.offset + curve.amplitude * np.exp(-curve.decay * speed), style, label=label)
    ax.semilogx(marlow_speed, marlow_mu, "s", mfc="none", color="tab:green", label="Marlow (1995), Table 10")
    scale = float(result.params.friction_scale)
    base = Alciatore()
    ax.semilogx(speed, scale * (base.offset + base.amplitude * np.exp(-base.decay * speed)), "b:",
                label=f"fitted to the cut shots (scale {scale:.2f})")
    ax.set(xlabel="relative sliding speed (m/s)", ylabel="ball–ball friction μ", title="μ(v)")
    ax.legend(fontsize=6)
    return fig
