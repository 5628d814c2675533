"""``damping``: α(n), β(n) of the optimal damping ĉ = α(e^β − 1) ([Poursina 2020] §4.2.4), fitted with ``fitting.fit``.

Input: ĉ(n, e), the optimal damping of the unit system m = v = k = 1, as a
CSV with the columns of ``SCHEMA`` (``n``, ``e``, ``c_opt_unit``; others are
ignored). The default is the shipped ``data/damping_lambda.csv`` (the paper's
grid, n ∈ [1, 2] × e ∈ [0.45, 1]); ``run(..., data=FILE)`` takes a user's file,
validated by ``fitting.data.load_csv``. Rows with e = 1 (where ĉ = 0 for
every α, β) carry no information and are left out of the fits. Each n must
have at least 3 rows with e < 1, at two or more different e, not all with
ĉ = 0 (``PER_N_REQUIREMENT``: else α and β are not determined), and the file
more than 5 different n (for the quartic α(n)); ``load_data`` refuses a file
that falls short, naming the n.

For each n, eq. (45) ĉ = α(e^β − 1) is fitted by least squares with
``fitting.fit`` and ``optax.lbfgs`` (to |∂loss/∂θ| ≤ 1e-12; the tests check it
against SciPy's ``curve_fit``), with Gauss–Newton standard errors scaled by the residual scatter and the α–β
correlation (≈ 0.9995: the two are nearly degenerate, which is why the paper's
coefficients drift from ours). Then α(n) is fitted by a quartic (eq. (46),
linear least squares) and β(n) = a n^b + c (eq. (47)) with ``fitting.fit``.
The per-n fits are checkpointed (``damping.checkpoint.json`` in the output
directory), so an interrupted run resumes without refitting finished n.

Outputs: ``damping.csv`` (n, alpha, beta, alpha_se, beta_se, correlation,
alpha_paper, beta_paper), ``damping.json`` (the α(n), β(n) coefficients with
standard errors beside the paper's, and the absolute path of the data file) and ``damping.png`` (figs. 6–7).
A per-n fit that did not converge is flagged in the JSON and in a warning line of the summary. The grid itself is
made by ``diffimpact reproduce damping-lambda``.
"""

from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from diffimpact.impact import damping as od
from diffimpact.io import data_file, figure, save_figure, write_csv, write_json
from fitting.checkpoint import Checkpoint, file_digest
from fitting.data import Column, DataError, Schema, load_csv
from fitting.fit import convergence_warnings, fit
from fitting.parameters import Free

NAME = "damping"
DEFAULT_DATA = data_file("damping_lambda.csv")
SCHEMA = Schema(
    NAME,
    (
        Column("n", "-", "contact force exponent, f = c δ̇ + k δ^n", minimum=1.0, maximum=2.0),
        Column("e", "-", "coefficient of restitution", minimum=0.0, maximum=1.0, exclusive_minimum=True),
        Column("c_opt_unit", "N s/m", "optimal damping ĉ of the unit system m = 1 kg, v = 1 m/s, k = 1 N/m^n", minimum=0.0),
    ),
)
#: Exponents fitted with ``quick`` (evenly spread over the file's n values; ≥ 6 for the quartic).
QUICK_EXPONENTS = 7
QUARTIC_DEGREE = 4
#: What the rows of each n must hold for the two parameters of eq. (45).
PER_N_REQUIREMENT = "each n needs at least 3 rows with e < 1, at 2 or more different e, not all with ĉ = 0"
#: Exponents named in a refusal, at most.
LISTED_EXPONENTS = 5
#: L-BFGS stopping tolerances: the 2-parameter fits converge to rounding level.
GTOL = 1e-12
FTOL = 1e-14
MAX_STEPS = 500


class AlphaBeta(eqx.Module):
    """ĉ = α(e^β − 1), [Poursina 2020] eq. (45)."""

    alpha: jnp.ndarray
    beta: jnp.ndarray


class PowerCurve(eqx.Module):
    """β(n) = a n^b + c, [Poursina 2020] eq. (47)."""

    a: jnp.ndarray
    b: jnp.ndarray
    c: jnp.ndarray


#: One optimiser object and module-level residual functions with the data as arguments
#: (``eqx.Partial``), so the per-n fits share one compiled step (``fitting.fit``).
LBFGS = optax.lbfgs()


def _lbfgs_fit(residual_fn, params0):
    spec = {name: Free() for name in params0.__dataclass_fields__}
    return fit(residual_fn, params0, spec, optimizer=LBFGS, max_steps=MAX_STEPS, gtol=GTOL, ftol=FTOL, progress=False)


def _alpha_beta_residuals(data, p):
    e, c = data
    return p.alpha * (e**p.beta - 1.0) - c


def _beta_curve_residuals(data, p):
    n, beta = data
    return p.a * n**p.b + p.c - beta


def _alpha_beta_shortfall(e, c):
    """Why the rows (e, ĉ) of one n do not determine α and β (``PER_N_REQUIREMENT``), or None."""
    informative = e < 1.0
    count = np.count_nonzero(informative)
    if count < 3:
        return f"has {count} row(s) with e < 1"
    if np.unique(e[informative]).size < 2:
        return f"has e = {e[informative][0]:g} only"
    if not np.any(c[informative] != 0):
        return "has ĉ = 0 at every e < 1"
    return None


def fit_alpha_beta(restitution, unit_damping, exponent):
    """Least-squares α, β of ĉ = α(e^β − 1) for one n, started from the paper's eqs. (46)–(47).

    The rows must meet ``PER_N_REQUIREMENT`` (a ``ValueError`` says which part they miss). Returns the
    ``FitResult`` (names ("alpha", "beta")).
    """
    e = np.asarray(restitution, dtype=float)
    c = np.asarray(unit_damping, dtype=float)
    if e.shape != c.shape or e.ndim != 1:
        raise ValueError(f"restitution and unit_damping must be 1-D of equal length, got {e.shape}, {c.shape}")
    shortfall = _alpha_beta_shortfall(e, c)
    if shortfall is not None:
        raise ValueError(f"n = {exponent:g} {shortfall}; {PER_N_REQUIREMENT}")
    start = AlphaBeta(float(od.paper_alpha(exponent)), float(od.paper_beta(exponent)))
    return _lbfgs_fit(eqx.Partial(_alpha_beta_residuals, (e, c)), start)


def fit_beta_curve(exponents, beta):
    """β(n) = a n^b + c (eq. (47)) by ``fitting.fit``, started from the paper's coefficients."""
    n, beta = np.asarray(exponents, dtype=float), np.asarray(beta, dtype=float)
    return _lbfgs_fit(eqx.Partial(_beta_curve_residuals, (n, beta)), PowerCurve(*od.PAPER_BETA))


def fit_alpha_quartic(exponents, alpha):
    """α(n) quartic (eq. (46)), highest power first, with standard errors scaled by the residual scatter."""
    n, alpha = np.asarray(exponents, dtype=float), np.asarray(alpha, dtype=float)
    if n.size <= QUARTIC_DEGREE + 1:
        raise ValueError(f"the α(n) quartic needs more than {QUARTIC_DEGREE + 1} exponents, got {n.size}")
    coefficients, covariance = np.polyfit(n, alpha, QUARTIC_DEGREE, cov="unscaled")
    scatter = np.sum((np.polyval(coefficients, n) - alpha) ** 2) / (n.size - QUARTIC_DEGREE - 1)
    return coefficients, np.sqrt(np.diag(covariance) * scatter)


def load_data(data=None, drop_bad_rows=False):
    """ĉ(n, e) columns and the ``LoadReport`` from ``data`` (default: the shipped grid).

    A ``DataError`` names the n whose rows miss ``PER_N_REQUIREMENT`` (the first ``LISTED_EXPONENTS``), or the
    count of n when it is too small for the quartic α(n).
    """
    columns, report = load_csv(DEFAULT_DATA if data is None else data, SCHEMA, drop_bad_rows=drop_bad_rows)
    n_values = np.unique(columns["n"])
    short = []
    for n in n_values:
        rows = columns["n"] == n
        shortfall = _alpha_beta_shortfall(columns["e"][rows], columns["c_opt_unit"][rows])
        if shortfall is not None:
            short.append(f"n = {n:g} {shortfall}")
    if short:
        more = f"; and {len(short) - LISTED_EXPONENTS} more n" if len(short) > LISTED_EXPONENTS else ""
        raise DataError(f"{report.path}: {PER_N_REQUIREMENT}; " + "; ".join(short[:LISTED_EXPONENTS]) + more)
    if n_values.size <= QUARTIC_DEGREE + 1:
        raise DataError(f"{report.path}: the quartic α(n) needs more than {QUARTIC_DEGREE + 1} different n, "
                        f"got {n_values.size}")
    return columns, report


def _exponents(columns, quick):
    n_values = np.unique(columns["n"])
    if quick and n_values.size > QUICK_EXPONENTS:
        n_values = n_values[np.round(np.linspace(0, n_values.size - 1, QUICK_EXPONENTS)).astype(int)]
    return n_values


def study(columns, quick=False, checkpoint=None, progress=True):
    """Per-n fits of eq. (45), then α(n) (46) and β(n) (47).

    ``checkpoint`` (a ``fitting.checkpoint.Checkpoint``) skips the n already
    fitted and records each new one. Returns a dict with the per-n arrays
    (n, alpha, beta, alpha_se, beta_se, correlation, rms) and the curves
    (alpha_poly, alpha_poly_se, beta_fit: FitResult) and ``beta_curve``, the
    (a, b, c) tuple the plots read.
    """
    n_values = _exponents(columns, quick)
    rows = []
    for n in tqdm(n_values, desc="α, β per n", disable=not progress, leave=False):
        key = f"{n:.17g}"
        if checkpoint is None or key not in checkpoint:
            select = (columns["n"] == n) & (columns["e"] < 1.0)
            result = fit_alpha_beta(columns["e"][select], columns["c_opt_unit"][select], n)
            (alpha, beta), (alpha_se, beta_se) = result.values, result.standard_errors
            record = {
                "alpha": float(alpha),
                "beta": float(beta),
                "alpha_se": float(alpha_se),
                "beta_se": float(beta_se),
                "correlation": float(result.correlation[0, 1]),
                "rms": float(np.sqrt(np.mean(result.residuals**2))),
                "converged": bool(result.converged),
                "points": int(select.sum()),
            }
            if checkpoint is not None:
                checkpoint.save(key, record)
        else:
            record = checkpoint[key]
        rows.append(record)
    fits = {"n": n_values}
    for name in ("alpha", "beta", "alpha_se", "beta_se", "correlation", "rms"):
        # a resumed record has null (None) for a standard error that was not finite: NaN again
        fits[name] = np.array([r[name] for r in rows], dtype=float)
    for name in ("converged", "points"):
        fits[name] = np.array([r[name] for r in rows])
    fits["alpha_poly"], fits["alpha_poly_se"] = fit_alpha_quartic(n_values, fits["alpha"])
    fits["beta_fit"] = fit_beta_curve(n_values, fits["beta"])
    fits["beta_curve"] = tuple(float(v) for v in fits["beta_fit"].values)
    return fits


def plot_c_opt_vs_e(columns, fits, axes, exponents=(1.2, 1.8)):
    """Fig. 6 of [Poursina 2020]: ĉ vs e with the fitted α(e^β − 1), for the fitted n nearest ``exponents``."""
    for target, style in zip(exponents, ("-", "--")):
        i = np.argmin(np.abs(fits["n"] - target))
        n, a, b = fits["n"][i], fits["alpha"][i], fits["beta"][i]
        row = columns["n"] == n
        e = columns["e"][row]
        axes.plot(e, columns["c_opt_unit"][row], "k.", ms=2)
        axes.plot(e, a * (e**b - 1), style, label=f"n = {n:.2f}: {a:.2f}(e^{b:.4f} − 1)")
    axes.set(xlabel="e", ylabel="ĉ (m = v = k = 1)", title="fig. 6: exact ĉ (·) and fits")
    axes.legend(fontsize=8)


def plot_alpha_beta(fits, axes):
    """Fig. 7 of [Poursina 2020]: the per-n α, β, our α(n) quartic and β(n) power law, and eqs. (46)–(47)."""
    n, fine = fits["n"], np.linspace(1, 2, 200)
    axes[0].errorbar(n, fits["alpha"], fits["alpha_se"], fmt="o", ms=2, label="per-n fit ± SE")
    axes[0].plot(fine, np.polyval(fits["alpha_poly"], fine), "-", lw=1, zorder=3, label="quartic fit")
    axes[0].plot(fine, np.asarray(od.paper_alpha(fine)), "--", label="eq. (46)")
    axes[0].set(xlabel="n", ylabel="α", title="fig. 7: α(n)")
    a, b, c = fits["beta_curve"]
    axes[1].errorbar(n, fits["beta"], fits["beta_se"], fmt="o", ms=2, label="per-n fit ± SE")
    axes[1].plot(fine, a * fine**b + c, "-", lw=1, zorder=3, label="a n^b + c fit")
    axes[1].plot(fine, np.asarray(od.paper_beta(fine)), "--", label="eq. (47)")
    axes[1].set(xlabel="n", ylabel="β", title="fig. 7: β(n)")
    for ax in axes:
        ax.legend(fontsize=8)


def write_outputs(out_dir, columns, fits, report):
    """``damping.csv``, ``damping.json`` and ``damping.png`` in ``out_dir``; returns their paths."""
    out = Path(out_dir)
    n = fits["n"]
    csv_path = write_csv(
        out / f"{NAME}.csv",
        {
            "n": n,
            "alpha": fits["alpha"],
            "beta": fits["beta"],
            "alpha_se": fits["alpha_se"],
            "beta_se": fits["beta_se"],
            "correlation": fits["correlation"],
            "alpha_paper": np.asarray(od.paper_alpha(n)),
            "beta_paper": np.asarray(od.paper_beta(n)),
        },
    )
    beta_fit = fits["beta_fit"]
    json_path = write_json(
        out / f"{NAME}.json",
        {
            "data": report.to_dict(),
            "exponents_fitted": int(n.size),
            "alpha_quartic_highest_power_first": {
                "ours": fits["alpha_poly"].tolist(),
                "standard_error": fits["alpha_poly_se"].tolist(),
                "paper_eq_46": list(od.PAPER_ALPHA),
            },
            "beta_power_a_b_c": {
                "ours": beta_fit.values.tolist(),
                "standard_error": beta_fit.standard_errors.tolist(),
                "correlation": beta_fit.correlation.tolist(),
                "paper_eq_47": list(od.PAPER_BETA),
            },
            "per_n_alpha_beta_correlation": {"min": float(fits["correlation"].min()), "max": float(fits["correlation"].max())},
            "per_n_fit_rms_c_opt_unit": {"max": float(fits["rms"].max())},
            "per_n_fits_converged": bool(np.all(fits["converged"])),
            "max_abs_deviation_from_paper": {
                "alpha": float(np.max(np.abs(fits["alpha"] - np.asarray(od.paper_alpha(n))))),
                "beta": float(np.max(np.abs(fits["beta"] - np.asarray(od.paper_beta(n))))),
            },
        },
    )
    fig, axes = figure(1, 3)
    plot_c_opt_vs_e(columns, fits, axes[0, 0])
    plot_alpha_beta(fits, axes[0, 1:])
    png_path = save_figure(fig, out / f"{NAME}.png")
    return csv_path, json_path, png_path


def run(out_dir, quick=False, data=None, drop_bad_rows=False, progress=True):
    """Fit α(n), β(n) to ``data`` (default: the shipped grid); write ``damping.csv``, ``damping.json`` and
    ``damping.png`` into ``out_dir``; return a summary.

    About 10 s on a 2-core machine, compiling included (``quick``: about 10 s).
    """
    out = Path(out_dir)
    columns, report = load_data(data, drop_bad_rows)
    meta = {"data_sha256": file_digest(report.path), "drop_bad_rows": drop_bad_rows, "gtol": GTOL, "ftol": FTOL}
    checkpoint = Checkpoint(out / f"{NAME}.checkpoint.json", meta)
    fits = study(columns, quick, checkpoint, progress)
    write_outputs(out, columns, fits, report)
    checkpoint.finish()
    fmt = lambda xs: " ".join(f"{x:+.4f}" for x in xs)  # noqa: E731
    beta_fit = fits["beta_fit"]
    lines = [
        report.summary(),
        f"fitted {fits['n'].size} exponents" + (f" ({checkpoint.resumed} resumed from the checkpoint)" if checkpoint.resumed else ""),
        f"α(n) quartic, highest power first   ours: {fmt(fits['alpha_poly'])}",
        f"                       standard errors: {fmt(fits['alpha_poly_se'])}",
        f"                              paper (46): {fmt(od.PAPER_ALPHA)}",
        f"β(n) = a n^b + c, (a, b, c)          ours: {fmt(beta_fit.values)}",
        f"                       standard errors: {fmt(beta_fit.standard_errors)}",
        f"                              paper (47): {fmt(od.PAPER_BETA)}",
        f"per-n α–β correlation: {fits['correlation'].min():.6f} … {fits['correlation'].max():.6f}; "
        f"max rms of ĉ − α(e^β − 1): {fits['rms'].max():.2e}",
    ]
    flags = {f"the α, β fit at n = {n:g}": converged for n, converged in zip(fits["n"], fits["converged"])}
    flags["the β(n) = a n^b + c fit"] = beta_fit.converged
    return "\n".join(lines + convergence_warnings(flags))
