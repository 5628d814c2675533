"""``cushion``: ball–cushion parameters from measured rebounds (Mathavan et al. 2010), two models.

Data: ``data/mathavan2010_cushion_rebound.csv``, the head-on cushion impacts
of a rolling snooker ball measured by Mathavan, Jackson & Parkin (*Proc.
IMechE C* 224, 1863 (2010), Fig. 7; 19 shots, 0.26–3.4 m/s), or a user's file
in the same columns (``SCHEMA``; optional incidence and spins for oblique or
spinning shots, optional rebound angles). σ of the rebound speeds is not
known: the covariances are scaled by the reduced χ² (``fitting.fit``).

(a) **Rigid cushion** (``diffimpact.impulse.mathavan_2010``): the energetic
restitution e_e and the ball–cushion friction μ_w, with the ball–cloth
friction μ_s = 0.212 fixed, as the paper did by a grid search on its 8 slow
shots (e_e = 0.98, μ_w = 0.14). Here by Levenberg–Marquardt from
e_e = 0.9, μ_w = 0.3, on the same 8 shots and on all shots below 2.5 m/s
(where the paper says the rigid model holds), plus the paper's grid search
itself (RMS over e_e × μ_w).

What the data can tell: the model has no scale but V (its outputs are
proportional to V for a given spin ratio), so for head-on rolling shots the
rebound speed is r(e_e, μ_w) · V, one slope. The slow shots fix r and
nothing else: every (e_e, μ_w) on the curve r(e_e, μ_w) = r̂ fits them as
well as (0.98, 0.14), the two-parameter Jacobian has rank one, and the
standard errors along the curve are unbounded (the fit reports both
parameters as not identified: ``RANK_RTOL``). The two one-parameter fits (e_e with μ_w =
0.14; μ_w with e_e = 0.98) have finite standard errors. Oblique or spinning
shots separate the two (the recovery test uses them).

(b) **Compliant cushion** (``diffimpact.scenes.billiard.cushion_impact``,
nose at 7R/5, Lankarani–Nikravesh with Ambrósio friction, on the cloth
damped at the critical ratio, through the contact-event simulation with
forward-mode derivatives): the cushion's restitution e_c, friction μ_c and
rubber modulus E_c (which sets K of eq. (3.6)), on the shots below 2.5 m/s.
Both fits predict the faster shots, where the paper finds the rigid model
too lively.

What these data do to the compliant model (docs/results/fits.md has the run): the
measured slow rebounds (≈ 0.92 V) are livelier than the compliant nose
cushion gives with the paper's e = 0.98 (≈ 0.90 V, the bed and the cloth
taking their share), so the fit runs to the bounds, e_c → 1 and E_c → 1 MPa,
where the Jacobian loses rank: e_c, μ_c and E_c are not identified by
head-on rolling shots, and the standard errors at the bounds mean nothing.
That is a result about the model on these data, not a failure of the fit.

Outputs (``run``): ``cushion.json`` (fits, standard errors, correlations,
singular values of the weighted Jacobians), ``cushion.csv`` (data beside
every fit's prediction) and ``cushion.png`` (fits over the data, residuals,
the grid search's RMS map with the curve r = r̂).
"""

import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from diffimpact.impulse import mathavan_2010
from diffimpact.io import data_file, figure, save_figure, write_csv, write_json
from diffimpact.multibody import ForwardMode
from diffimpact.reproduce.billiards import cushion_parameters
from diffimpact.scenes import billiard
from fitting.data import Column, Schema, load_csv
from fitting.fit import convergence_warnings, fit, levenberg_marquardt, linearise
from fitting.parameters import Bounded, LogBounded

NAME = "cushion"
DATA = data_file("mathavan2010_cushion_rebound.csv")
#: Mathavan et al.: the rigid-cushion model holds below this normal speed (m/s).
RIGID_LIMIT = 2.5
#: Their fit used the shots below 1.5 m/s (``used_in_paper_fit``).
PAPER_LIMIT = 1.5
CLOTH_FRICTION = mathavan_2010.CLOTH_FRICTION
SCHEMA = Schema(
    NAME,
    (
        Column("incident_speed_m_per_s", "m/s", "ball speed before the impact", 0.0, 10.0, exclusive_minimum=True),
        Column("rebound_speed_m_per_s", "m/s", "ball speed right after the impact", 0.0, 10.0,
               exclusive_minimum=True),
        Column("incidence_deg", "°", "incidence from the cushion line (default 90: head-on)", 0.0, 90.0,
               exclusive_minimum=True, optional=True),
        Column("topspin_ratio", "-", "topspin ω_T R/V (default 1: rolling)", -5.0, 5.0, optional=True),
        Column("sidespin_ratio", "-", "side spin ω_S R/V (default 0)", -5.0, 5.0, optional=True),
        Column("rebound_angle_deg", "°", "rebound angle from the cushion line (fitted if given)", 0.0, 180.0,
               optional=True),
        Column("used_in_paper_fit", "-", "1 for the shots of the paper's own fit (default: V < 1.5 m/s)", 0.0, 1.0,
               optional=True),
    ),
)
#: Relative weights of the residuals (only their ratio matters: the covariance is scaled by χ²).
SPEED_SIGMA = 0.02  # m/s
ANGLE_SIGMA = np.radians(1.0)
MAX_STEPS = {False: 40, True: 12}
OPTIMIZER = levenberg_marquardt()


class RigidParameters(eqx.Module):
    """Mathavan et al.'s energetic restitution e_e and ball–cushion friction μ_w."""

    restitution: jnp.ndarray
    cushion_friction: jnp.ndarray


class CompliantParameters(eqx.Module):
    """The compliant cushion's restitution e_c, friction μ_c and rubber modulus E_c (Pa)."""

    restitution: jnp.ndarray
    cushion_friction: jnp.ndarray
    cushion_modulus: jnp.ndarray


RIGID_START = RigidParameters(0.9, 0.3)
RIGID_PAPER = RigidParameters(mathavan_2010.RESTITUTION, mathavan_2010.CUSHION_FRICTION)
#: Bounded ranges keep every trial of the optimiser inside the models' domains (e ∈ (0, 1], μ small
#: enough that the normal speed falls with the impulse, eq. (14b)), even where the data leave a direction free.
RESTITUTION = Bounded(0.5, 1.0)
FRICTION = Bounded(0.0, 1.0)
RIGID_SPEC = {"restitution": RESTITUTION, "cushion_friction": FRICTION}
COMPLIANT_START = CompliantParameters(0.98, 0.14, 5e6)
#: The rubber's modulus within 1–100 MPa: softer, a cushion at 3.4 m/s would take in a third of the ball.
MODULUS = LogBounded(1e6, 1e8)
COMPLIANT_SPEC = {"restitution": RESTITUTION, "cushion_friction": FRICTION, "cushion_modulus": MODULUS}


def load_data(path=DATA, drop_bad_rows=False):
    """Shots from ``path`` (``SCHEMA``) as a dict of arrays (angles in rad); returns (shots, LoadReport)."""
    columns, report = load_csv(path, SCHEMA, drop_bad_rows=drop_bad_rows)
    speed = columns["incident_speed_m_per_s"]
    shots = {
        "speed": speed,
        "rebound_speed": columns["rebound_speed_m_per_s"],
        "incidence": np.radians(columns.get("incidence_deg", np.full_like(speed, 90.0))),
        "topspin_ratio": columns.get("topspin_ratio", np.ones_like(speed)),
        "sidespin_ratio": columns.get("sidespin_ratio", np.zeros_like(speed)),
        "paper": columns.get("used_in_paper_fit", (speed < PAPER_LIMIT).astype(float)) > 0.5,
        "source": str(path),
    }
    if "rebound_angle_deg" in columns:
        shots["rebound_angle"] = np.radians(columns["rebound_angle_deg"])
    return shots, report


def subset(shots, chosen):
    """The shots where ``chosen`` is True (or those at the indices ``chosen``)."""
    return {k: (v[chosen] if isinstance(v, np.ndarray) else v) for k, v in shots.items()}


def _inputs(shots):
    return tuple(jnp.asarray(shots[k]) for k in ("speed", "incidence", "topspin_ratio", "sidespin_ratio"))


def rigid_rebound(params, speed, incidence, topspin_ratio, sidespin_ratio, p=None):
    """Rebound (speed, angle) of the rigid-cushion model for ``params`` (``RigidParameters``)."""
    p = billiard.snooker() if p is None else p
    rebound = mathavan_2010.cushion_rebound(
        speed, incidence, topspin_ratio * speed / p.radius, sidespin_ratio * speed / p.radius, mass=p.mass,
        radius=p.radius, restitution=params.restitution, cushion_friction=params.cushion_friction,
        cloth_friction=CLOTH_FRICTION)
    return rebound.speed, rebound.angle


def compliant_parameters(params):
    """The nose-height cushion study's ``billiard.Parameters`` (``cushion_parameters``) with ``params``."""
    return cushion_parameters("nose", cushion_restitution=params.restitution,
                              cushion_friction=params.cushion_friction, cushion_modulus=params.cushion_modulus)


def compliant_rebound(params, speed, incidence, topspin_ratio, sidespin_ratio, rtol=billiard.SHOT_RTOL):
    """Rebound (speed, angle) of the compliant nose-height cushion (forward-mode differentiable)."""
    velocity = billiard.cushion_rebounds(compliant_parameters(params), speed, incidence, topspin_ratio,
                                         sidespin_ratio, nose=True, derivatives=ForwardMode(), rtol=rtol)
    return jnp.hypot(velocity[..., 0], velocity[..., 1]), jnp.arctan2(-velocity[..., 1], velocity[..., 0])


MODELS = {"rigid": rigid_rebound, "compliant": compliant_rebound}
#: ``fit``'s ``rank_rtol``: the rigid model's Jacobian comes through 5,000 Euler steps, and on head-on rolling shots
#: its second singular value, zero in exact arithmetic (the rebound is r(e_e, μ_w) V), is their round-off, about
#: 1e-12 of the first; 1e-9 reports that direction as not identified. The compliant model's: NumPy's rule.
RANK_RTOL = {"rigid": 1e-9, "compliant": None}


def _residuals(model, inputs, rebound_speed, rebound_angle, rtol, params):
    options = {} if model == "rigid" else {"rtol": rtol}
    speed, angle = MODELS[model](params, *inputs, **options)
    residuals = [speed - rebound_speed]
    if rebound_angle is not None:
        residuals.append(angle - rebound_angle)
    return jnp.concatenate(residuals)


def _sigma(shots):
    sigma = [np.full(shots["speed"].size, SPEED_SIGMA)]
    if "rebound_angle" in shots:
        sigma.append(np.full(shots["speed"].size, ANGLE_SIGMA))
    return np.concatenate(sigma)


def residual_function(model, shots, rtol=billiard.SHOT_RTOL):
    """Model − data of ``model`` ("rigid" or "compliant") on ``shots``, as ``fit`` takes it.

    The data and the compliant solver's ``rtol`` are leaves: changing them compiles nothing.
    """
    angle = shots.get("rebound_angle")
    return eqx.Partial(_residuals, model, _inputs(shots), jnp.asarray(shots["rebound_speed"]),
                       None if angle is None else jnp.asarray(angle), jnp.asarray(rtol, dtype=float))


def fit_model(model, shots, start, spec, quick=False, progress=True):
    """Fit ``model`` ("rigid" or "compliant") to ``shots``; returns the ``FitResult``."""
    return fit(residual_function(model, shots), start, spec, sigma=_sigma(shots), optimizer=OPTIMIZER,
               ftol=billiard.SHOT_FTOL, max_steps=MAX_STEPS[quick], rank_rtol=RANK_RTOL[model], progress=progress)


@eqx.filter_jit
def _grid_rms(restitution, friction, inputs, rebound_speed):
    def rms(e, mu):
        speed, _ = rigid_rebound(RigidParameters(e, mu), *inputs)
        return jnp.sqrt(jnp.mean((speed - rebound_speed) ** 2))

    return jax.vmap(jax.vmap(rms, (None, 0)), (0, None))(restitution, friction)


def grid_search(shots, restitution, friction):
    """RMS (m/s) of the rigid model's rebound speeds over ``restitution`` × ``friction`` (the paper's search)."""
    return np.asarray(_grid_rms(jnp.asarray(restitution), jnp.asarray(friction), _inputs(shots),
                                jnp.asarray(shots["rebound_speed"])))


def study(shots, quick=False, progress=True):
    """Every fit of the module docstring on ``shots``; returns a dict of ``FitResult``s and the grid search."""
    slow = subset(shots, shots["speed"] < RIGID_LIMIT)
    fits = {
        "rigid_paper_shots": fit_model("rigid", subset(shots, shots["paper"]), RIGID_START, RIGID_SPEC, quick, progress),
        "rigid_below_2.5": fit_model("rigid", slow, RIGID_START, RIGID_SPEC, quick, progress),
        "rigid_restitution_only": fit_model(
            "rigid", slow, RIGID_PAPER, {"restitution": RESTITUTION}, quick, progress),
        "rigid_friction_only": fit_model(
            "rigid", slow, RIGID_PAPER, {"cushion_friction": FRICTION}, quick, progress),
        "compliant_below_2.5": fit_model("compliant", slow, COMPLIANT_START, COMPLIANT_SPEC, quick, progress),
    }
    # the paper's grid: steps of 0.01 (quick: 0.02); linspace keeps the ends exact (e ≤ 1)
    points = 26 if quick else 51
    restitution, friction = np.linspace(0.5, 1.0, points), np.linspace(0.0, 0.5, points)
    grid = grid_search(subset(shots, shots["paper"]), restitution, friction)
    return fits, (restitution, friction, grid)


def _prediction(name, result, shots, size):
    """Rebound speeds (m/s) of fit ``name`` on every shot of ``shots``.

    The compliant cushion's come in batches of ``size``, the count of shots it was fitted to, through the fit's
    own compiled step (``linearise`` with zero data: z σ is the model), so that no other shape compiles.
    """
    if not name.startswith("compliant"):
        return np.asarray(rigid_rebound(result.params, *_inputs(shots))[0])
    count = shots["speed"].size
    speeds = []
    for first in range(0, count, size):
        rows = np.arange(first, first + size) % count  # the last batch filled up with the first shots
        batch = subset(shots, rows)
        batch["rebound_speed"] = np.zeros(size)
        if "rebound_angle" in batch:
            batch["rebound_angle"] = np.zeros(size)
        z, _ = linearise(residual_function("compliant", batch), result.params, COMPLIANT_SPEC, sigma=_sigma(batch),
                         optimizer=OPTIMIZER)
        speeds.append(z[:size] * SPEED_SIGMA)
    return np.concatenate(speeds)[:count]


def run(out, quick=False, data=None, drop_bad_rows=False, progress=True):
    """Fit the shipped measurements (or the CSV ``data``); write ``cushion.json``, ``cushion.csv`` and ``cushion.png``
    into ``out``; return a summary.

    About 2 min on a 2-core machine, compiling included (``quick``: about 80 s).
    """
    start = time.perf_counter()
    out = Path(out)
    shots, report = load_data(DATA if data is None else data, drop_bad_rows)
    fitted = np.count_nonzero(shots["speed"] < RIGID_LIMIT)
    if fitted < 4:
        raise ValueError(f"{shots['source']}: the fits need at least 4 shots below {RIGID_LIMIT} m/s")
    fits, (restitution, friction, grid) = study(shots, quick, progress)
    columns = {"incident_speed_m_per_s": shots["speed"], "incidence_deg": np.degrees(shots["incidence"]),
               "topspin_ratio": shots["topspin_ratio"], "rebound_speed_m_per_s": shots["rebound_speed"]}
    for name, result in fits.items():
        columns[f"rebound_speed_m_per_s_{name}"] = _prediction(name, result, shots, fitted)
    paper_speed, _ = rigid_rebound(RIGID_PAPER, *_inputs(shots))
    columns["rebound_speed_m_per_s_paper_values"] = np.asarray(paper_speed)
    write_csv(out / f"{NAME}.csv", columns)
    best = np.unravel_index(np.argmin(grid), grid.shape)
    record = {
        "data": report.file,
        "load_report": report.to_dict(),
        "cloth_friction": CLOTH_FRICTION,
        "grid_search_paper_shots": {"restitution": float(restitution[best[0]]), "cushion_friction": float(friction[best[1]]),
                                    "rms_m_per_s": float(grid[best])},
        "fits": {name: {**result.to_dict(), "jacobian_singular_values": result.singular_values().tolist()}
                 for name, result in fits.items()},
    }
    write_json(out / f"{NAME}.json", record)
    save_figure(_plot(shots, columns, fits, (restitution, friction, grid)), out / f"{NAME}.png")
    return _summary(shots, report, fits, restitution[best[0]], friction[best[1]], grid[best], time.perf_counter() - start)


def _summary(shots, report, fits, grid_e, grid_mu, grid_rms, elapsed):
    lines = [report.summary(), f"{NAME}: {shots['speed'].size} shots; μ_s = {CLOTH_FRICTION} fixed"]
    lines.append(f"grid search on the paper's shots (as the paper): e_e = {grid_e:.2f}, μ_w = {grid_mu:.2f}, "
                 f"RMS {grid_rms:.4f} m/s")
    for name, result in fits.items():
        singular = result.singular_values()
        lines.append(f"{name}: loss {result.loss:.4g}, {result.steps} steps, s² = {result.residual_variance:.3g}, "
                     f"Jacobian singular values {', '.join(f'{s:.3g}' for s in singular)}")
        lines.append(result.summary())
        if len(result.names) > 1:
            lines.append("  correlation " + np.array2string(result.correlation, precision=3).replace("\n", " "))
    lines += convergence_warnings({f"the fit {name}": result.converged for name, result in fits.items()})
    lines.append(f"done in {elapsed:.1f} s")
    return "\n".join(lines)


def _plot(shots, columns, fits, search):
    fig, axes = figure(2, 2, width=4.8)
    speed, measured = shots["speed"], shots["rebound_speed"]
    order = np.argsort(speed)
    styles = {"rigid_paper_shots": ("k", "-"), "rigid_below_2.5": ("tab:blue", "--"),
              "compliant_below_2.5": ("tab:red", "-")}
    labels = {"rigid_paper_shots": "rigid (Mathavan), fit to the paper's shots",
              "rigid_below_2.5": "rigid (Mathavan), fit below 2.5 m/s",
              "compliant_below_2.5": "compliant nose cushion, fit below 2.5 m/s"}
    ax = axes[0, 0]
    ax.plot(speed, measured / speed, "s", mfc="none", color="tab:green", label="measured (Mathavan et al. 2010)")
    for name, (colour, style) in styles.items():
        ax.plot(speed[order], columns[f"rebound_speed_m_per_s_{name}"][order] / speed[order], style, color=colour,
                label=labels[name])
    ax.axvline(RIGID_LIMIT, color="gray", lw=0.6, ls=":")
    ax.set(xlabel="incident speed V (m/s)", ylabel="rebound speed / V", title="fits over the data (rebound ratio)")
    ax.legend(fontsize=6)
    ax = axes[0, 1]
    for name, (colour, style) in styles.items():
        ax.plot(speed[order], (columns[f"rebound_speed_m_per_s_{name}"] - measured)[order], style + "o", ms=3,
                color=colour, label=labels[name])
    ax.axhline(0.0, color="k", lw=0.5)
    ax.axvline(RIGID_LIMIT, color="gray", lw=0.6, ls=":")
    ax.set(xlabel="incident speed V (m/s)", ylabel="model − measured (m/s)", title="residuals (fits use V < 2.5 m/s)")
    ax.legend(fontsize=6)
    restitution, friction, grid = search
    ax = axes[1, 0]
    mesh = ax.pcolormesh(friction, restitution, grid, shading="nearest", cmap="viridis")
    fig.colorbar(mesh, ax=ax, label="RMS (m/s)")
    for name, marker in (("rigid_paper_shots", "o"), ("rigid_below_2.5", "s")):
        e, mu = (float(v) for v in fits[name].values)
        ax.plot(mu, e, marker, color="w", mec="k", label=f"LM fit: {labels[name].split(', ')[1]}")
    ax.plot(mathavan_2010.CUSHION_FRICTION, mathavan_2010.RESTITUTION, "*", color="r", ms=10,
            label="paper: e_e = 0.98, μ_w = 0.14")
    ax.set(xlabel="cushion friction μ_w", ylabel="restitution e_e", title="grid search on the paper's 8 shots")
    ax.legend(fontsize=6)
    ax = axes[1, 1]
    for name, (colour, _) in styles.items():
        ax.semilogy(fits[name].loss_history, color=colour, label=labels[name])
    ax.set(xlabel="Levenberg–Marquardt step", ylabel="loss Σ z²", title="loss history")
    ax.legend(fontsize=6)
    return fig
