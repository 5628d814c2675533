"""Reproductions of [Poursina 2020]: the optimal damping of a Hertz contact with a linear damper.

Each ``run_*`` function computes one study, writes ``DIR/NAME.csv`` and
``DIR/NAME.png`` and returns a short text summary. The ``plot_*`` functions
draw one published figure each (used by the studies and by ``examples/``).
The α(n), β(n) fits of §4.2.4 to the λ(n, e) grid of ``run_lambda`` are a
parameter fit: ``fitting.damping`` (``diffimpact fit damping``).
"""

from pathlib import Path

import jax
import numpy as np

from diffimpact.impact import damping as od
from diffimpact.impact.kelvin_voigt import kelvin_voigt_restitution
from diffimpact.io import figure, map_chunks, save_figure, write_csv, write_json

#: Restitution of the scaling studies, [Poursina 2020] §4.2.1–4.2.3.
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


def exact_damping(mass, velocity, stiffness, exponent, restitution, desc="exact c_opt", progress=True):
    """Exact optimal damping over broadcast NumPy arrays, in fixed-size jitted chunks (a bar if ``progress``)."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (mass, velocity, stiffness, exponent, restitution)))
    return map_chunks(lambda *a: od.optimal_damping(*a, method="exact"), *arrays, chunk=1000, desc=desc,
                      progress=progress)


def restitution_out(damping, mass, velocity, stiffness, exponent, desc="e_out", progress=True):
    """e_out of the Hertz + linear-damper impact for each damping (forward solves; a progress bar if ``progress``)."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (damping, mass, velocity, stiffness, exponent)))
    return map_chunks(_restitution, *arrays, chunk=2000, desc=desc, progress=progress)


# --- 4.2.1–4.2.3: scaling of c_opt with m, v and k ---------------------------------


def scaling_study(quick=False, names=tuple(SCALING_SWEEPS), progress=True):
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
            system["mass"], system["velocity"], system["stiffness"], exponents[:, None], SCALING_RESTITUTION, desc=name,
            progress=progress,
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
    """Fig. 3, 4 or 5 of [Poursina 2020]: (a) ln c_opt vs ln x for a few n, (b) slope vs n."""
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


def run_scaling(out, quick=False, progress=True):
    """Write ``damping-scaling.csv`` (the fitted slopes beside eq. (35)) and ``damping-scaling.png``; return a summary.

    About 10 s on a 2-core machine, compiling included (``quick``: about 6 s).
    """
    study = scaling_study(quick, progress=progress)
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


def lambda_grid(quick=False, progress=True):
    """Exact ĉ(n, e) and λ(n, e) on the paper's grid (coarse with ``quick``)."""
    (n0, n1, nn), (e0, e1, ne) = LAMBDA_GRID["exponent"], LAMBDA_GRID["restitution"]
    n = np.linspace(n0, n1, 11 if quick else nn)
    e = np.linspace(e0, e1, 60 if quick else ne)
    N, E = np.meshgrid(n, e, indexing="ij")
    unit = exact_damping(1.0, 1.0, 1.0, N, E, desc="λ(n, e) grid", progress=progress)
    lam = np.asarray(od.lambda_from_unit_damping(N, unit, E))
    return {"n": N.ravel(), "e": E.ravel(), "lambda": lam.ravel(), "c_opt_unit": unit.ravel()}


def run_lambda(out, quick=False, progress=True):
    """Write the λ(n, e) grid (``damping_lambda.csv``) and ``damping-lambda.png``; return a summary.

    The grid is the input of ``diffimpact fit damping`` (the α(n), β(n) fits
    of eqs. (45)–(47)); the plot shows the exact ĉ(n, e) beside the paper's
    closed form ĉ = α(n)(e^β(n) − 1) of eqs. (45)–(47).

    About 10 s on a 2-core machine, compiling included (``quick``: about 5 s).
    """
    out = Path(out)
    grid = lambda_grid(quick, progress)
    write_csv(out / "damping_lambda.csv", grid)
    paper = np.asarray(od.optimal_damping(1.0, 1.0, 1.0, grid["n"], grid["e"], method="paper"))
    error = np.abs(paper - grid["c_opt_unit"])
    worst = np.argmax(error)
    fig, axes = figure(1, 1, 5.5, 4.0)
    ax = axes[0, 0]
    n_values = np.unique(grid["n"])
    for target in (1.0, 1.25, 1.5, 1.75, 2.0):
        n = n_values[np.argmin(np.abs(n_values - target))]
        row = grid["n"] == n
        (line,) = ax.plot(grid["e"][row], grid["c_opt_unit"][row], "-", label=f"n = {n:.2f}")
        ax.plot(grid["e"][row], paper[row], "--", color=line.get_color(), lw=0.8)
    ax.set(xlabel="e", ylabel="ĉ (m = v = k = 1)", title="ĉ(n, e): exact (—), eqs. (45)–(47) (– –)")
    ax.legend(fontsize=8)
    save_figure(fig, out / "damping-lambda.png")
    return "\n".join(
        [
            f"λ(n, e) grid: {n_values.size} exponents × {grid['e'].size // n_values.size} restitutions "
            f"-> {out / 'damping_lambda.csv'}",
            f"largest |ĉ_paper − ĉ_exact| of eqs. (45)–(47): {error[worst]:.2e} "
            f"(n = {grid['n'][worst]:.3f}, e = {grid['e'][worst]:.3f})",
            "fit α(n), β(n) to it with: diffimpact fit damping --data " + str(out / "damping_lambda.csv"),
        ]
    )


# --- 5.1: random systems -------------------------------------------------------------


def verification_study(quick=False, seed=0, progress=True):
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
            damping = exact_damping(*system, e[None, :], desc="exact c_opt", progress=progress)
        else:
            damping = np.asarray(od.optimal_damping(*system, e[None, :], method=method))
        e_out = restitution_out(damping, *system, desc=f"e_out ({method})", progress=progress)
        result[method] = np.max(np.abs(e_out - e[None, :]), axis=0)
    return result


def plot_verification(study, axes):
    """Fig. 8 of [Poursina 2020]: the worst absolute restitution error against e."""
    for method, style in (("paper", "o-"), ("improved", "s-"), ("exact", "^-")):
        axes.loglog(study["e"], np.maximum(study[method], 1e-17), style, ms=3, label=method)
    axes.set(xlabel="e", ylabel="max |e_out − e|", title=f"fig. 8: {len(study['systems']['mass'])} random systems")
    axes.legend(fontsize=8)


def run_verification(out, quick=False, progress=True):
    """Write ``damping-verification.csv`` (the worst |e_out − e| per e and method) and ``damping-verification.png``;
    return a summary.

    About 25 s on a 2-core machine, compiling included (``quick``: about 20 s).
    """
    study = verification_study(quick, progress=progress)
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


def kelvin_voigt_study(quick=False, progress=True):
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
            "e_ode": restitution_out(damping, 1.0, 1.0, 1.0, 1.0, desc=f"Kelvin–Voigt ({method})",
                                     progress=progress),
        }
    return result


def plot_kelvin_voigt(study, axes):
    """Fig. 9 of [Poursina 2020]: (a) e_exact vs e for eq. (57), (b) |e_exact − e|."""
    e = study["e"]
    axes[0].plot(e, e, "k:", lw=1, label="e_exact = e")
    axes[0].plot(e, study["paper"]["e_exact"], "-", label="eq. (57)")
    axes[0].set(xlabel="e", ylabel="e_exact, eq. (55)", title="fig. 9(a), n = 1")
    axes[1].loglog(e, np.abs(study["paper"]["e_exact"] - e), "-", label="eq. (57)")
    axes[1].loglog(e, np.maximum(np.abs(study["improved"]["e_exact"] - e), 1e-17), "-", label="improved")
    axes[1].set(xlabel="e", ylabel="|e_exact − e|", title="fig. 9(b)")
    for ax in axes:
        ax.legend(fontsize=8)


def run_kelvin_voigt(out, quick=False, progress=True):
    """Write ``damping-kelvin-voigt.csv`` and ``damping-kelvin-voigt.png``; return a summary.

    About 30 s on a 2-core machine, compiling included (``quick``: about 10 s).
    """
    study = kelvin_voigt_study(quick, progress)
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


def improved_fit(quick=False, progress=True):
    """Least-squares Chebyshev coefficients of ln(ĉ/x) on an exact (n, e) grid, e ∈ [1e-4, 1)."""
    n = np.linspace(1.0, 2.0, 11 if quick else 41)
    e = np.logspace(-4, 0, 31 if quick else 121)[:-1]
    N, E = np.meshgrid(n, e, indexing="ij")
    unit = exact_damping(1.0, 1.0, 1.0, N, E, desc="fit grid", progress=progress)
    degree_n, degree_s = np.shape(od.IMPROVED_COEFFICIENTS)
    n_hat, s_hat = (np.asarray(f).ravel() for f in od.improved_features(N, E))
    design = np.polynomial.chebyshev.chebvander2d(n_hat, s_hat, [degree_n - 1, degree_s - 1])
    target = np.log(unit.ravel() / -np.log(E.ravel()))
    coefficients, *_ = np.linalg.lstsq(design, target, rcond=None)
    return coefficients.reshape(degree_n, degree_s)


def improved_comparison(quick=False, progress=True):
    """Worst |e_out − e| of the paper's eq. (49) and the improved form, on one evaluation grid."""
    n = np.linspace(1.0, 2.0, 6 if quick else 26)
    e = np.logspace(-4, 0, 25 if quick else 161)
    N, E = np.meshgrid(n, e, indexing="ij")
    result = {"n": n, "e": e}
    for method in ("paper", "improved"):
        damping = np.asarray(od.optimal_damping(1.0, 1.0, 1.0, N, E, method=method))
        e_out = restitution_out(damping, 1.0, 1.0, 1.0, N, desc=f"e_out ({method})", progress=progress)
        result[method] = np.abs(e_out - E)
    return result


def run_improved(out, quick=False, progress=True):
    """Write ``damping-improved-coefficients.json`` (the refitted coefficients beside those in use),
    ``damping-improved.csv`` and ``damping-improved.png``; return a summary.

    About 15 s on a 2-core machine, compiling included (``quick``: about 15 s, mostly compiling).
    """
    out = Path(out)
    coefficients = improved_fit(quick, progress)
    write_json(
        out / "damping-improved-coefficients.json",
        {"IMPROVED_COEFFICIENTS": coefficients.tolist(), "in_use": np.asarray(od.IMPROVED_COEFFICIENTS).tolist()},
    )
    study = improved_comparison(quick, progress)
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
