"""Reproductions of seed 004: the optimal damping of a Hertz contact with a linear damper.

Each ``run_*`` function computes one study, writes ``DIR/NAME.csv`` and
``DIR/NAME.png`` and returns a short text summary. The ``plot_*`` functions
draw one published figure each (used by the studies and by ``examples/``).
"""

from pathlib import Path

import jax
import numpy as np

from diffimpact.impact import damping as od
from diffimpact.impact.kelvin_voigt import kelvin_voigt_restitution
from diffimpact.reproduce._io import figure, map_chunks, read_csv, save_figure, write_csv, write_json

#: Restitution of the scaling studies, seed 004 §4.2.1–4.2.3.
SCALING_RESTITUTION = 0.7
#: Swept ranges of §4.2.1–4.2.3 (linearly spaced, as in the paper).
SCALING_SWEEPS = {
    "mass": (1e-5, 50.0),
    "velocity": (0.01, 50.0),
    "stiffness": (1e5, 1e10),
}
#: Paper's grid of §4.2.4: n ∈ [1, 2] (100 values) × e ∈ [0.45, 1] (600 values).
LAMBDA_GRID = {"exponent": (1.0, 2.0, 100), "restitution": (0.45, 1.0, 600)}
#: Random system ranges of §5.1 (sampled log-uniformly; n uniformly).
VERIFICATION_RANGES = {"mass": (1e-5, 1e2), "stiffness": (1e5, 1e10), "velocity": (1e-3, 1e2), "exponent": (1.0, 2.0)}

_restitution = jax.jit(jax.vmap(od.restitution_of_damping))


def exact_damping(mass, velocity, stiffness, exponent, restitution, desc="exact c_opt"):
    """Exact optimal damping over broadcast NumPy arrays, in fixed-size jitted chunks."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (mass, velocity, stiffness, exponent, restitution)))
    return map_chunks(lambda *a: od.optimal_damping(*a, method="exact"), *arrays, chunk=1000, desc=desc)


def restitution_out(damping, mass, velocity, stiffness, exponent, desc="e_out"):
    """e_out of the Hertz + linear-damper impact for each damping (forward solves)."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (damping, mass, velocity, stiffness, exponent)))
    return map_chunks(_restitution, *arrays, chunk=2000, desc=desc)


# --- 4.2.1–4.2.3: scaling of c_opt with m, v and k ---------------------------------


def scaling_study(quick=False, names=tuple(SCALING_SWEEPS)):
    """Slopes of ln c_opt against ln m, ln v and/or ln k (``names``) for each n (figs. 3–5)."""
    exponents = np.linspace(1.0, 2.0, 6 if quick else 50)
    count = 20 if quick else 200
    study = {"exponent": exponents}
    base = {"mass": 1.0, "velocity": 1.0, "stiffness": 1.0}
    for name in names:
        low, high = SCALING_SWEEPS[name]
        values = np.linspace(low, high, count)
        system = {**base, name: values[None, :]}
        damping = exact_damping(
            system["mass"], system["velocity"], system["stiffness"], exponents[:, None], SCALING_RESTITUTION, desc=name
        )
        slopes = np.array([np.polyfit(np.log(values), np.log(row), 1)[0] for row in damping])
        study[name] = {"values": values, "damping": damping, "slope": slopes}
    return study


SCALING_THEORY = {
    "mass": lambda n: n / (n + 1),
    "velocity": lambda n: (n - 1) / (n + 1),
    "stiffness": lambda n: 1 / (n + 1),
}
_SCALING_LABEL = {"mass": ("m", "kg", 3), "velocity": ("v", "m/s", 4), "stiffness": ("k", "N/m^n", 5)}


def plot_scaling(study, name, axes):
    """Fig. 3, 4 or 5 of seed 004: (a) ln c_opt vs ln x for a few n, (b) slope vs n."""
    symbol, unit, fig_number = _SCALING_LABEL[name]
    data, exponents = study[name], study["exponent"]
    for i in np.unique(np.linspace(0, len(exponents) - 1, 4).astype(int)):
        axes[0].plot(np.log(data["values"]), np.log(data["damping"][i]), label=f"n = {exponents[i]:.2f}")
    axes[0].set(xlabel=f"ln {symbol} ({unit})", ylabel="ln c_opt", title=f"fig. {fig_number}(a), e = {SCALING_RESTITUTION}")
    axes[0].legend(fontsize=8)
    fine = np.linspace(1, 2, 200)
    axes[1].plot(exponents, data["slope"], "o", ms=4, label="fitted slope")
    axes[1].plot(fine, SCALING_THEORY[name](fine), "-", label="eq. (35)")
    axes[1].set(xlabel="n", ylabel=f"slope of ln c_opt vs ln {symbol}", title=f"fig. {fig_number}(b)")
    axes[1].legend(fontsize=8)


def run_scaling(out, quick=False):
    study = scaling_study(quick)
    n = study["exponent"]
    columns = {"n": n}
    for name in SCALING_SWEEPS:
        columns[f"slope_{name}"] = study[name]["slope"]
        columns[f"slope_{name}_theory"] = SCALING_THEORY[name](n)
    write_csv(Path(out) / "damping-scaling.csv", columns)
    fig, axes = figure(2, 3)
    for j, name in enumerate(SCALING_SWEEPS):
        plot_scaling(study, name, axes[:, j])
    save_figure(fig, Path(out) / "damping-scaling.png")
    worst = {name: np.max(np.abs(study[name]["slope"] - SCALING_THEORY[name](n))) for name in SCALING_SWEEPS}
    return "worst |slope − theory|: " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items())


# --- 4.2.4: λ(n, e) grid and the α(n), β(n) fits ------------------------------------


def lambda_grid(quick=False):
    """Exact ĉ(n, e) and λ(n, e) on the paper's grid (coarse with ``quick``)."""
    (n0, n1, nn), (e0, e1, ne) = LAMBDA_GRID["exponent"], LAMBDA_GRID["restitution"]
    n = np.linspace(n0, n1, 11 if quick else nn)
    e = np.linspace(e0, e1, 60 if quick else ne)
    N, E = np.meshgrid(n, e, indexing="ij")
    unit = exact_damping(1.0, 1.0, 1.0, N, E, desc="λ(n, e) grid")
    lam = np.asarray(od.lambda_from_unit_damping(N, unit, E))
    return {"n": N.ravel(), "e": E.ravel(), "lambda": lam.ravel(), "c_opt_unit": unit.ravel()}


def _fit_alpha_beta(e, damping):
    """Least-squares α, β of ĉ = α(e^β − 1) (eq. (45)) by Gauss–Newton, with its conditioning."""
    beta = -0.3
    for _ in range(100):
        basis = e**beta - 1.0
        alpha = basis @ damping / (basis @ basis)
        jac = np.column_stack([basis, alpha * np.log(e) * e**beta])
        residual = damping - alpha * basis
        step = np.linalg.lstsq(jac, residual, rcond=None)[0]
        beta += step[1]
        if abs(step[1]) < 1e-14:
            break
    basis = e**beta - 1.0
    alpha = basis @ damping / (basis @ basis)
    jac = np.column_stack([basis, alpha * np.log(e) * e**beta])
    covariance = np.linalg.inv(jac.T @ jac)
    correlation = covariance[0, 1] / np.sqrt(covariance[0, 0] * covariance[1, 1])
    # Scale-free conditioning: the condition number of the correlation matrix.
    condition = (1.0 + abs(correlation)) / (1.0 - abs(correlation))
    rms = np.sqrt(np.mean((damping - alpha * basis) ** 2))
    return alpha, beta, correlation, condition, rms


def _fit_beta_curve(n, beta):
    """β(n) = a n^b + c (eq. (47)): linear least squares in (a, c) for each b, b by golden search."""

    def solve(b):
        design = np.column_stack([n**b, np.ones_like(n)])
        coef, *_ = np.linalg.lstsq(design, beta, rcond=None)
        return coef, np.sum((design @ coef - beta) ** 2)

    lo, hi = 0.01, 3.0
    golden = (np.sqrt(5) - 1) / 2
    for _ in range(200):
        m1, m2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if solve(m1)[1] < solve(m2)[1]:
            hi = m2
        else:
            lo = m1
    b = 0.5 * (lo + hi)
    (a, c), _ = solve(b)
    return a, b, c


def alpha_beta_study(grid):
    """Per-n fits of eq. (45) on a λ grid, then α(n) quartic (46) and β(n) = a n^b + c (47)."""
    n_values = np.unique(grid["n"])
    fits = []
    for n in n_values:
        row = (grid["n"] == n) & (grid["e"] < 1.0)
        fits.append(_fit_alpha_beta(grid["e"][row], grid["c_opt_unit"][row]))
    alpha, beta, correlation, condition, rms = map(np.array, zip(*fits))
    alpha_poly = np.polyfit(n_values, alpha, 4)
    beta_curve = _fit_beta_curve(n_values, beta)
    return {
        "n": n_values,
        "alpha": alpha,
        "beta": beta,
        "correlation": correlation,
        "condition": condition,
        "rms": rms,
        "alpha_poly": alpha_poly,
        "beta_curve": beta_curve,
    }


def plot_c_opt_vs_e(grid, fits, axes, exponents=(1.2, 1.8)):
    """Fig. 6 of seed 004: ĉ vs e with the fitted α(e^β − 1) for n = 1.2 and 1.8."""
    for target, style in zip(exponents, ("-", "--")):
        n = fits["n"][np.argmin(np.abs(fits["n"] - target))]
        i = np.argmin(np.abs(fits["n"] - target))
        row = grid["n"] == n
        e = grid["e"][row]
        axes.plot(e, grid["c_opt_unit"][row], "k.", ms=2)
        a, b = fits["alpha"][i], fits["beta"][i]
        axes.plot(e, a * (e**b - 1), style, label=f"n = {n:.2f}: {a:.2f}(e^{b:.4f} − 1)")
    axes.set(xlabel="e", ylabel="c_opt (m = v = k = 1)", title="fig. 6")
    axes.legend(fontsize=8)


def plot_alpha_beta(fits, axes):
    """Fig. 7 of seed 004: α(n), β(n) from the per-n fits, our curves and eqs. (46)–(47)."""
    n, fine = fits["n"], np.linspace(1, 2, 200)
    axes[0].plot(n, fits["alpha"], "o", ms=3, label="per-n fit")
    axes[0].plot(fine, np.polyval(fits["alpha_poly"], fine), "-", label="quartic fit")
    axes[0].plot(fine, np.asarray(od.paper_alpha(fine)), "--", label="eq. (46)")
    axes[0].set(xlabel="n", ylabel="α", title="fig. 7: α(n)")
    a, b, c = fits["beta_curve"]
    axes[1].plot(n, fits["beta"], "o", ms=3, label="per-n fit")
    axes[1].plot(fine, a * fine**b + c, "-", label="a n^b + c fit")
    axes[1].plot(fine, np.asarray(od.paper_beta(fine)), "--", label="eq. (47)")
    axes[1].set(xlabel="n", ylabel="β", title="fig. 7: β(n)")
    for ax in axes:
        ax.legend(fontsize=8)


def run_alpha_beta(out, quick=False, lambda_data=None):
    out = Path(out)
    if lambda_data is None:
        grid = lambda_grid(quick)
        write_csv(out / "damping_lambda.csv", grid)
    else:
        grid = read_csv(lambda_data)
    fits = alpha_beta_study(grid)
    n = fits["n"]
    write_csv(
        out / "damping-alpha-beta.csv",
        {
            "n": n,
            "alpha": fits["alpha"],
            "beta": fits["beta"],
            "alpha_paper": np.asarray(od.paper_alpha(n)),
            "beta_paper": np.asarray(od.paper_beta(n)),
        },
    )
    a, b, c = fits["beta_curve"]
    summary = {
        "alpha_quartic": {"ours": fits["alpha_poly"].tolist(), "paper_eq_46": list(od.PAPER_ALPHA)},
        "beta_power": {"ours": [a, b, c], "paper_eq_47": list(od.PAPER_BETA)},
        "alpha_beta_correlation": {"min": float(fits["correlation"].min()), "max": float(fits["correlation"].max())},
        "correlation_matrix_condition": {"min": float(fits["condition"].min()), "max": float(fits["condition"].max())},
        "fit_rms_c_opt_unit": {"max": float(fits["rms"].max())},
    }
    write_json(out / "damping-alpha-beta-fit.json", summary)
    fig, axes = figure(1, 3)
    plot_c_opt_vs_e(grid, fits, axes[0, 0])
    plot_alpha_beta(fits, axes[0, 1:])
    save_figure(fig, out / "damping-alpha-beta.png")
    fmt = lambda xs: " ".join(f"{x:+.4f}" for x in xs)  # noqa: E731
    return "\n".join(
        [
            f"α(n) quartic, highest power first   ours: {fmt(fits['alpha_poly'])}",
            f"                              paper (46): {fmt(od.PAPER_ALPHA)}",
            f"β(n) = a n^b + c, (a, b, c)          ours: {fmt((a, b, c))}",
            f"                              paper (47): {fmt(od.PAPER_BETA)}",
            f"correlation of (α, β) in the per-n fits: {fits['correlation'].min():.6f} … {fits['correlation'].max():.6f}",
            f"condition number of their correlation matrix: {fits['condition'].min():.3g} … {fits['condition'].max():.3g}",
        ]
    )


# --- 5.1: random systems -------------------------------------------------------------


def verification_study(quick=False, seed=0):
    """Worst |e_out − e| over random systems for each e (fig. 8), for each method."""
    rng = np.random.default_rng(seed)
    count = 30 if quick else 300
    sample = {}
    for name, (low, high) in VERIFICATION_RANGES.items():
        if name == "exponent":
            sample[name] = rng.uniform(low, high, count)
        else:
            sample[name] = np.exp(rng.uniform(np.log(low), np.log(high), count))
    e = np.logspace(-4, 0, 17 if quick else 41)
    system = [sample[k][:, None] for k in ("mass", "velocity", "stiffness", "exponent")]
    result = {"e": e, "systems": sample}
    for method in ("paper", "improved", "exact"):
        if method == "exact":
            damping = exact_damping(*system, e[None, :], desc="exact c_opt")
        else:
            damping = np.asarray(od.optimal_damping(*system, e[None, :], method=method))
        e_out = restitution_out(damping, *system, desc=f"e_out ({method})")
        result[method] = np.max(np.abs(e_out - e[None, :]), axis=0)
    return result


def plot_verification(study, axes):
    """Fig. 8 of seed 004: the worst absolute restitution error against e."""
    for method, style in (("paper", "o-"), ("improved", "s-"), ("exact", "^-")):
        axes.loglog(study["e"], np.maximum(study[method], 1e-17), style, ms=3, label=method)
    axes.set(xlabel="e", ylabel="max |e_out − e|", title=f"fig. 8: {len(study['systems']['mass'])} random systems")
    axes.legend(fontsize=8)


def run_verification(out, quick=False):
    study = verification_study(quick)
    write_csv(
        Path(out) / "damping-verification.csv",
        {
            "e": study["e"],
            "max_abs_error_paper": study["paper"],
            "max_abs_error_improved": study["improved"],
            "max_abs_error_exact": study["exact"],
        },
    )
    fig, axes = figure(1, 1, 5.5, 4.0)
    plot_verification(study, axes[0, 0])
    save_figure(fig, Path(out) / "damping-verification.png")
    worst = {m: study[m].max() for m in ("paper", "improved", "exact")}
    return "worst |e_out − e|: " + ", ".join(f"{m} {v:.3e}" for m, v in worst.items())


# --- 5.2: n = 1 against the exact Kelvin–Voigt result ----------------------------------


def kelvin_voigt_study(quick=False):
    """Eq. (57) against the exact Kelvin–Voigt restitution (55), and the ODE solve (fig. 9)."""
    e = np.logspace(-4, 0, 40 if quick else 400)
    result = {"e": e}
    for method in ("paper", "improved"):
        damping = np.asarray(od.optimal_damping(1.0, 1.0, 1.0, 1.0, e, method=method))
        ratio = damping / 2.0  # eq. (56) with k = m = 1
        result[method] = {
            "damping": damping,
            "damping_ratio": ratio,
            "e_exact": np.asarray(kelvin_voigt_restitution(ratio)),
            "e_ode": restitution_out(damping, 1.0, 1.0, 1.0, 1.0, desc=f"Kelvin–Voigt ({method})"),
        }
    return result


def plot_kelvin_voigt(study, axes):
    """Fig. 9 of seed 004: (a) e_exact vs e for eq. (57), (b) |e_exact − e|."""
    e = study["e"]
    axes[0].plot(e, e, "k:", lw=1, label="e_exact = e")
    axes[0].plot(e, study["paper"]["e_exact"], "-", label="eq. (57)")
    axes[0].set(xlabel="e", ylabel="e_exact, eq. (55)", title="fig. 9(a), n = 1")
    axes[1].loglog(e, np.abs(study["paper"]["e_exact"] - e), "-", label="eq. (57)")
    axes[1].loglog(e, np.maximum(np.abs(study["improved"]["e_exact"] - e), 1e-17), "-", label="improved")
    axes[1].set(xlabel="e", ylabel="|e_exact − e|", title="fig. 9(b)")
    for ax in axes:
        ax.legend(fontsize=8)


def run_kelvin_voigt(out, quick=False):
    study = kelvin_voigt_study(quick)
    paper, improved = study["paper"], study["improved"]
    write_csv(
        Path(out) / "damping-kelvin-voigt.csv",
        {
            "e": study["e"],
            "c_paper_N_s_per_m": paper["damping"],
            "damping_ratio_paper": paper["damping_ratio"],
            "e_exact_paper": paper["e_exact"],
            "e_ode_paper": paper["e_ode"],
            "c_improved_N_s_per_m": improved["damping"],
            "e_exact_improved": improved["e_exact"],
        },
    )
    fig, axes = figure(1, 2)
    plot_kelvin_voigt(study, axes[0])
    save_figure(fig, Path(out) / "damping-kelvin-voigt.png")
    under = paper["damping_ratio"] < 1
    gap = np.abs(paper["e_ode"] - paper["e_exact"])
    return "\n".join(
        [
            f"max |e_exact − e|: eq. (57) {np.abs(paper['e_exact'] - study['e']).max():.3e}, "
            f"improved {np.abs(improved['e_exact'] - study['e']).max():.3e}",
            f"closed form (55) vs ODE solve: under-damped max {gap[under].max():.2e} ({under.sum()} pts), "
            f"over-damped max {gap[~under].max() if (~under).any() else float('nan'):.2e} ({(~under).sum()} pts)",
        ]
    )


# --- beyond the paper: the improved closed form --------------------------------------


def improved_fit(quick=False):
    """Least-squares Chebyshev coefficients of ln(ĉ/x) on an exact (n, e) grid, e ∈ [1e-4, 1)."""
    n = np.linspace(1.0, 2.0, 11 if quick else 41)
    e = np.logspace(-4, 0, 31 if quick else 121)[:-1]
    N, E = np.meshgrid(n, e, indexing="ij")
    unit = exact_damping(1.0, 1.0, 1.0, N, E, desc="fit grid")
    degree_n, degree_s = np.shape(od.IMPROVED_COEFFICIENTS)
    n_hat, s_hat = (np.asarray(f).ravel() for f in od.improved_features(N, E))
    design = np.polynomial.chebyshev.chebvander2d(n_hat, s_hat, [degree_n - 1, degree_s - 1])
    target = np.log(unit.ravel() / -np.log(E.ravel()))
    coefficients, *_ = np.linalg.lstsq(design, target, rcond=None)
    return coefficients.reshape(degree_n, degree_s)


def improved_comparison(quick=False):
    """Worst |e_out − e| of the paper's eq. (49) and the improved form, on one evaluation grid."""
    n = np.linspace(1.0, 2.0, 6 if quick else 26)
    e = np.logspace(-4, 0, 25 if quick else 161)
    N, E = np.meshgrid(n, e, indexing="ij")
    result = {"n": n, "e": e}
    for method in ("paper", "improved"):
        damping = np.asarray(od.optimal_damping(1.0, 1.0, 1.0, N, E, method=method))
        e_out = restitution_out(damping, 1.0, 1.0, 1.0, N, desc=f"e_out ({method})")
        result[method] = np.abs(e_out - E)
    return result


def run_improved(out, quick=False):
    out = Path(out)
    coefficients = improved_fit(quick)
    write_json(
        out / "damping-improved-coefficients.json",
        {"IMPROVED_COEFFICIENTS": coefficients.tolist(), "in_use": np.asarray(od.IMPROVED_COEFFICIENTS).tolist()},
    )
    study = improved_comparison(quick)
    paper, improved = study["paper"], study["improved"]
    write_csv(
        out / "damping-improved.csv",
        {
            "e": study["e"],
            "max_abs_error_paper": paper.max(axis=0),
            "max_abs_error_improved": improved.max(axis=0),
            "max_rel_error_paper": (paper / study["e"]).max(axis=0),
            "max_rel_error_improved": (improved / study["e"]).max(axis=0),
        },
    )
    fig, axes = figure(1, 1, 5.5, 4.0)
    ax = axes[0, 0]
    ax.loglog(study["e"], paper.max(axis=0), "o-", ms=3, label="paper, eq. (49)")
    ax.loglog(study["e"], np.maximum(improved.max(axis=0), 1e-17), "s-", ms=3, label="improved")
    ax.set(xlabel="e", ylabel="max over n of |e_out − e|", title="worst restitution error, n ∈ [1, 2]")
    ax.legend(fontsize=8)
    save_figure(fig, out / "damping-improved.png")
    drift = np.max(np.abs(coefficients - np.asarray(od.IMPROVED_COEFFICIENTS)))
    return "\n".join(
        [
            f"worst |e_out − e| over n ∈ [1, 2], e ∈ [1e-4, 1]: paper {paper.max():.3e}, "
            f"improved {improved.max():.3e}, ratio {paper.max() / improved.max():.1f}",
            f"worst |e_out − e|/e: paper {(paper / study['e']).max():.3e}, improved {(improved / study['e']).max():.3e}",
            f"refitted coefficients differ from those in use by at most {drift:.2e}",
        ]
    )
