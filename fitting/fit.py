"""Fit a pytree of physical parameters to data by minimising Σ ρ(z) with optax.

``fit(residual_fn, params0, spec, sigma=...)`` minimises Σᵢ ρ(zᵢ) over the
unconstrained vector θ of ``fitting.parameters.parametrise``, where
z = residual_fn(params(θ)) / σ and ρ is a loss of ``fitting.losses``.

One jitted function evaluates z and its Jacobian J = ∂z/∂θ (forward mode by
default: few parameters, many residuals). The loss gradient is Jᵀψ(z), so the
fit loop and the final uncertainty analysis share one compilation.

Compilation is cached across calls: the step is one module-level
``eqx.filter_jit`` function that receives the problem (residual function, σ,
parametrisation, loss, optimiser) as an argument. Fits of the same structure
(the same residual-function object, optimiser object, loss, transforms and
array shapes) reuse the compiled step whatever their data, σ, fixed values and
starting points. A fresh ``lambda`` per call closing over the data is a new
structure and recompiles; pass the data as array leaves instead,
``fit(eqx.Partial(residuals, data), ...)`` with ``residuals(data, params)``
defined once (``examples/fits/compile_cache.py`` measures the difference).

Uncertainty (Gauss–Newton, at the best θ):

    C_θ = s² (Jᵀ diag(w) J)⁻¹,   w = ρ'(z)/z  (1 for least squares),

where J already carries the weights 1/σ (so JᵀJ = Jᵣᵀ W Jᵣ with W = diag(σ⁻²)).
With ``absolute_sigma=True`` s² = 1: σ are the true standard uncertainties.
Otherwise (the default, as ``scipy.optimize.curve_fit``) s² = Σ w z² / (N − P),
the reduced χ², so the uncertainties scale with the observed scatter. The
covariance of the physical values x(θ) follows by the delta method,
C_x = D C_θ Dᵀ with D = ∂x/∂θ (diagonal: transforms act elementwise); standard
errors are sqrt(diag C_x) and the correlation matrix C_x / (se seᵀ) (±1, its
limit, between two parameters of one unseen direction).
A parameter whose bounded transform has run to an end of its range
(``FitResult.at_bound``: the data pull it out) is held there: its entries are
NaN and the others' are conditional on it. A direction J cannot see (a
singular value at round-off, or at most ``rank_rtol`` of the largest) has
infinite variance.

Residuals that are not finite stop the fit with a ``ValueError`` naming the
parameters where they are: at the first start before optimising (the initial
guess must be a point where ``residual_fn`` works), and at the result, where
the covariance is computed.
"""

import dataclasses
import functools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from diffimpact.io import write_json
from fitting.losses import irls_weights, loss_function, weighted_residuals
from fitting.parameters import parametrise

#: Consecutive steps the relative loss change must stay below ``ftol`` to stop.
CONVERGENCE_PATIENCE = 5
JACOBIAN_MODES = {"fwd": jax.jacfwd, "rev": jax.jacrev}


@dataclasses.dataclass(frozen=True)
class FitResult:
    """Outcome of ``fit``: the best start's parameters and their uncertainties.

    Attributes
    ----------
    params : the fitted physical pytree.
    names : labels of the free parameters (``name`` or ``name[i]``).
    values : their fitted physical values.
    standard_errors : their standard errors (physical units, delta method).
    at_bound : whether each has run to an end of a bounded range (``Bounded``, ``LogBounded``), where the data
        pull it out of the range: it has no standard error (NaN), and the others' are those with it held there.
    covariance, correlation : P × P, of the physical values.
    unconstrained : the fitted θ; ``unconstrained_covariance`` its C_θ.
    loss : final Σ ρ(z); ``loss_history`` per step of the best start.
    gradient_norm : |∂loss/∂θ| at the result.
    residuals : residual_fn at the result (model − data), flattened; ``weighted_residuals`` z.
    jacobian : ∂z/∂θ at the result (N × P).
    residual_variance : s² = Σ w z² / (N − P), the reduced χ².
    covariance_scaling : "absolute" (s² = 1) or "reduced chi-square".
    converged, steps : whether the best start met a tolerance, and its step count.
    start_losses : final loss of every start (inf where the model failed).
    """

    params: object
    names: tuple
    values: np.ndarray
    standard_errors: np.ndarray
    at_bound: np.ndarray
    covariance: np.ndarray
    correlation: np.ndarray
    unconstrained: np.ndarray
    unconstrained_covariance: np.ndarray
    loss: float
    loss_history: np.ndarray
    gradient_norm: float
    residuals: np.ndarray
    weighted_residuals: np.ndarray
    jacobian: np.ndarray
    residual_variance: float
    covariance_scaling: str
    loss_name: str
    converged: bool
    steps: int
    start_losses: np.ndarray

    def value(self, name):
        """Fitted physical value and standard error of one free parameter label."""
        if name not in self.names:
            raise ValueError(f"name must be one of {self.names}, got {name!r}")
        index = self.names.index(name)
        return float(self.values[index]), float(self.standard_errors[index])

    def singular_values(self):
        """Singular values of the weighted Jacobian at the fit, largest first: a tiny one is a direction of the
        parameters that the data do not identify."""
        return np.linalg.svd(self.jacobian, compute_uv=False)

    def to_dict(self):
        """JSON-ready summary (no pytree, no Jacobian); ``to_json`` writes its non-finite numbers (a standard error
        of a parameter not identified, the loss of a failed start) as null."""
        return {
            "parameters": {
                name: {"value": float(v), "standard_error": float(se), "at_bound": bool(b)}
                for name, v, se, b in zip(self.names, self.values, self.standard_errors, self.at_bound)
            },
            "correlation": self.correlation.tolist(),
            "covariance": self.covariance.tolist(),
            "covariance_scaling": self.covariance_scaling,
            "residual_variance": self.residual_variance,
            "loss": self.loss,
            "loss_name": self.loss_name,
            "gradient_norm": self.gradient_norm,
            "converged": self.converged,
            "steps": self.steps,
            "start_losses": self.start_losses.tolist(),
            "loss_history": self.loss_history.tolist(),
            "residuals": self.residuals.tolist(),
        }

    def to_json(self, path):
        """Write ``to_dict()`` to ``path`` atomically; returns the path."""
        return write_json(path, self.to_dict())

    def summary(self):
        """One line per parameter: value ± standard error; or that it ran to an end of its range, or that the
        data do not identify it (no finite standard error: a direction the Jacobian does not see)."""
        def error(se, at_bound):
            if at_bound:
                return "(at an end of its range: the data pull it out, no standard error)"
            return f"± {se:.3g}" if np.isfinite(se) else "(not identified by these data)"

        return "\n".join(f"  {n:>16s} = {v:.6g} {error(se, b)}"
                         for n, v, se, b in zip(self.names, self.values, self.standard_errors, self.at_bound))


def convergence_warnings(converged):
    """One line for the terminal per fit that did not converge, from ``{label: converged}``."""
    return [f"warning: {label} did not converge (no tolerance met); its values and standard errors are not reliable"
            for label, flag in converged.items() if not flag]


def _initial_thetas(theta0, space, starts, start_spread, seed):
    if isinstance(starts, int) and not isinstance(starts, bool):
        if starts < 1:
            raise ValueError(f"starts must be >= 1, got {starts}")
        noise = jax.random.normal(jax.random.PRNGKey(seed), (starts - 1, theta0.size))
        return [theta0] + [theta0 + start_spread * n for n in noise]
    if not starts:
        raise ValueError("starts must be an int >= 1 or a non-empty list of parameter pytrees")
    return [space.unconstrained(p) for p in starts]


def _check_positive_number(name, value):
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")


class LevenbergMarquardtState(NamedTuple):
    """The damping λ of ``levenberg_marquardt`` (dimensionless, relative to diag JᵀJ) and the trials a step
    may make (``linearise`` makes none)."""

    damping: jnp.ndarray
    max_tries: jnp.ndarray


class LeastSquaresTransformation(optax.GradientTransformationExtraArgs):
    """An optax transformation whose ``update`` also takes ``residuals`` z and their ``jacobian`` ∂z/∂θ."""


def levenberg_marquardt(initial_damping=1e-3, increase=10.0, decrease=0.3, max_tries=12, max_step=3.0):
    """Levenberg–Marquardt steps as an optax transformation, for ``fit``'s least-squares problems.

    Each step solves (JᵀJ + λ diag JᵀJ) δ = −g with the Jacobian J = ∂z/∂θ and
    gradient g that ``fit`` passes in (Gauss–Newton with Marquardt's scaling)
    and evaluates the loss at θ + δ (a forward solve, no Jacobian); while the
    loss does not fall, λ ← λ·``increase`` and it tries again (at most
    ``max_tries`` times, else the update is 0). An accepted step sets
    λ ← λ·``decrease``. For the few-parameter, expensive-model fits of this
    package it needs tens of steps where Adam needs hundreds. With robust losses
    JᵀJ omits the IRLS weights (a Gauss–Newton approximation).

    Each entry of a step is clipped to ±``max_step`` (in θ, whose entries are
    of order one by the transforms' references): where the data leave a
    direction nearly free, the Gauss–Newton step along it is huge, and the
    model would be evaluated at absurd values (a stiffness of 1e28). Clipping
    the entries rather than shortening the whole step keeps the step's share
    along the directions the data do see (a shortened step crawls along the
    free direction until its parameter reaches a bound).
    """
    for name, value in (("initial_damping", initial_damping), ("increase - 1", increase - 1.0),
                        ("decrease", decrease), ("max_tries", max_tries), ("max_step", max_step)):
        _check_positive_number(name, value)
    if not decrease < 1:
        raise ValueError(f"decrease must be < 1, got {decrease!r}")

    def init(params):
        del params
        return LevenbergMarquardtState(jnp.asarray(initial_damping, dtype=float), jnp.asarray(max_tries, dtype=int))

    def update(updates, state, params, *, value, value_fn, jacobian, **extra):
        del extra
        normal = jacobian.T @ jacobian
        # Marquardt's scaling, floored: a parameter the residuals no longer see (a bounded one saturated
        # at its limit) has a zero column, and the damped system must stay solvable.
        curvature = jnp.diag(normal)
        scale = jnp.diag(jnp.maximum(curvature, 1e-12 * jnp.max(curvature)))

        def attempt(carry):
            damping, _, _, tries = carry
            damping = damping * increase
            step = -jnp.linalg.solve(normal + damping * scale, updates)
            # A near-singular system (parameters the data cannot separate) can give a non-finite step:
            # it is rejected without evaluating the model there, and the damping grows.
            finite = jnp.all(jnp.isfinite(step))
            step = jnp.where(finite, step, 0.0)
            step = jnp.clip(step, -max_step, max_step)
            trial = value_fn(params + step)
            return damping, step, finite & jnp.isfinite(trial) & (trial < value), tries + 1

        start = (state.damping / increase, jnp.zeros_like(updates), jnp.array(False), jnp.array(0))
        damping, step, accepted, _ = jax.lax.while_loop(
            lambda carry: ~carry[2] & (carry[3] < state.max_tries), attempt, start
        )
        return (
            jnp.where(accepted, step, jnp.zeros_like(step)),
            LevenbergMarquardtState(jnp.where(accepted, damping * decrease, damping), state.max_tries),
        )

    return LeastSquaresTransformation(init, update)


#: The default optimiser, one object so that fits without ``optimizer`` share compiled steps.
DEFAULT_OPTIMIZER = optax.with_extra_args_support(optax.adam(0.05))
#: One loss function object per (name, scale), for the same reason.
_cached_loss_function = functools.lru_cache(maxsize=None)(loss_function)


class _Problem(eqx.Module):
    """Everything a fit step depends on, passed to the jitted ``_step`` as an argument.

    ``eqx.filter_jit`` traces the array leaves and keys its cache on the rest
    (the functions by identity, transforms and shapes by value). Two fits with
    the same residual function object, optimiser, loss, transforms and array
    shapes therefore share one compilation, whatever their data, σ, fixed
    values or starting points: pass the data inside the residual function as
    array leaves (``eqx.Partial(f, data)`` or an ``eqx.Module`` with a
    ``__call__``) rather than closing over them in a fresh lambda.
    """

    residual_fn: object
    space: object
    sigma: jnp.ndarray
    rho: object
    optimizer: object
    jacobian: str = eqx.field(static=True)


def _residuals(problem, theta):
    return problem.residual_fn(problem.space(theta))


def _whitened(problem, theta):
    return jnp.ravel(weighted_residuals(_residuals(problem, theta), problem.sigma))


def _linearise(problem, theta):
    def whitened_twice(theta):
        # The second copy rides along as ``aux``: the Jacobian and z from one evaluation.
        z = _whitened(problem, theta)
        return z, z

    jac, z = JACOBIAN_MODES[problem.jacobian](whitened_twice, has_aux=True)(theta)
    return jnp.sum(problem.rho(z)), jac.T @ jax.vmap(jax.grad(problem.rho))(z), z, jac


@eqx.filter_jit
def _step(problem, theta, state):
    """One optimiser step; returns (θ_new, state_new, loss, |∂loss/∂θ|, z, J) at θ."""

    @jax.custom_vjp
    def objective(theta):
        return jnp.sum(problem.rho(_whitened(problem, theta)))

    def objective_fwd(theta):
        value, grad, _, _ = _linearise(problem, theta)
        return value, grad

    objective.defvjp(objective_fwd, lambda grad, cotangent: (cotangent * grad,))
    value, grad, z, jac = _linearise(problem, theta)
    # z and J ride along for least-squares transformations (``levenberg_marquardt``).
    least_squares = dict(residuals=z, jacobian=jac) if isinstance(problem.optimizer, LeastSquaresTransformation) else {}
    updates, state = problem.optimizer.update(
        grad, state, theta, value=value, grad=grad, value_fn=objective, **least_squares
    )
    return optax.apply_updates(theta, updates), state, value, jnp.linalg.norm(grad), z, jac


def _problem(residual_fn, params0, spec, sigma, loss, loss_scale, optimizer, jacobian):
    """The ``_Problem`` of a fit and the unconstrained θ0 of ``params0``."""
    if jacobian not in JACOBIAN_MODES:
        raise ValueError(f"jacobian must be one of {tuple(JACOBIAN_MODES)}, got {jacobian!r}")
    rho = _cached_loss_function(loss, loss_scale)
    sigma = jnp.asarray(sigma, dtype=float)
    if not bool(jnp.all(sigma > 0)):
        raise ValueError("sigma must be > 0 everywhere")
    theta0, space = parametrise(params0, spec)
    # The template's free leaves become arrays (their values are never used), so a new
    # initial guess does not change the static part of the problem and the cache key.
    space = eqx.tree_at(lambda s: s.template, space, space(theta0))
    optimizer = DEFAULT_OPTIMIZER if optimizer is None else optax.with_extra_args_support(optimizer)
    return _Problem(residual_fn, space, sigma, rho, optimizer, jacobian), theta0


def linearise(residual_fn, params0, spec, theta=None, *, sigma=1.0, loss="squared", loss_scale=1.0, optimizer=None,
              jacobian="fwd"):
    """Weighted residuals z and their Jacobian J = ∂z/∂θ at θ, as ``fit`` sees them.

    The arguments are ``fit``'s, ``theta`` the unconstrained point (default:
    that of ``params0``). It runs ``fit``'s compiled step, so after a fit of the
    same problem it compiles nothing: checks of J against finite differences
    of z, or model outputs from z σ with zero data, come at no compile cost.
    """
    problem, theta0 = _problem(residual_fn, params0, spec, sigma, loss, loss_scale, optimizer, jacobian)
    theta = theta0 if theta is None else jnp.asarray(theta, dtype=float)
    state = jax.tree.map(lambda leaf: jnp.array(leaf, dtype=jnp.result_type(leaf)), problem.optimizer.init(theta))
    if isinstance(state, LevenbergMarquardtState):  # z and J at θ: no trial steps
        state = state._replace(max_tries=jnp.zeros_like(state.max_tries))
    *_, z, jac = _step(problem, theta, state)
    return np.asarray(z), np.asarray(jac)


def fit(
    residual_fn,
    params0,
    spec,
    *,
    sigma=1.0,
    loss="squared",
    loss_scale=1.0,
    absolute_sigma=False,
    optimizer=None,
    max_steps=1000,
    gtol=1e-8,
    ftol=1e-10,
    starts=1,
    start_spread=0.5,
    seed=0,
    jacobian="fwd",
    rank_rtol=None,
    progress=True,
):
    """Fit the parameters named in ``spec`` so that ``residual_fn`` is small.

    Parameters
    ----------
    residual_fn : params ↦ array of model − data (any shape), a JAX function.
    params0 : physical pytree, the initial guess (and the fixed values).
    spec : {path: Transform}, see ``fitting.parameters``.
    sigma : per-point standard uncertainty, broadcast against the residuals.
    loss : "squared" (weighted least squares), "huber" or "cauchy".
    loss_scale : robust-loss scale in units of σ.
    absolute_sigma : True: covariance (JᵀWJ)⁻¹; False: times the reduced χ².
    optimizer : an optax transformation (default ``DEFAULT_OPTIMIZER``, ``optax.adam(0.05)``);
        ``optax.lbfgs()`` works (its line search receives the loss as ``value_fn``);
        ``levenberg_marquardt()`` uses the residuals and Jacobian as well.
        Pass the same object to repeated fits to reuse their compilation.
    max_steps : optimiser steps per start.
    gtol : stop when |∂loss/∂θ| ≤ gtol.
    ftol : stop when |Δloss| ≤ ftol·|loss| for ``CONVERGENCE_PATIENCE`` steps in a row (or when a step
        does not move θ: no lower loss was found near it).
    starts : number of starts (the first is ``params0``, the others perturb θ0
        by ``start_spread`` · N(0, 1), seeded by ``seed``) or a list of physical
        pytrees to start from. The lowest final loss wins.
    jacobian : "fwd" (``jax.jacfwd``; diffrax solves need ``adjoint=diffrax.ForwardMode()``, ``simulate``
        ``derivatives=ForwardMode()``)
        or "rev" (``jax.jacrev``).
    rank_rtol : in (0, 1); singular values of the weighted Jacobian at or below ``rank_rtol`` times the largest are
        directions the data do not identify (infinite variance, reported "not identified"). ``None``
        (default): NumPy's ``matrix_rank`` rule, max(N, P)·ε, for a Jacobian exact to round-off. A Jacobian
        computed through a long chain of operations or a solver is only as exact as that: a direction that is
        unseen in theory then keeps a singular value of its round-off and a finite but meaningless standard
        error. Pass the Jacobian's relative accuracy (a margin above it) for such models.
    progress : show a tqdm bar per start.

    Returns
    -------
    FitResult
    """
    for name, value in (("max_steps", max_steps), ("gtol", gtol), ("ftol", ftol), ("start_spread", start_spread)):
        _check_positive_number(name, value)
    if rank_rtol is not None and not 0 < rank_rtol < 1:
        raise ValueError(f"rank_rtol must be in (0, 1) or None, got {rank_rtol!r}")
    problem, theta0 = _problem(residual_fn, params0, spec, sigma, loss, loss_scale, optimizer, jacobian)
    space, rho = problem.space, problem.rho

    residual_shape = eqx.filter_eval_shape(_residuals, problem, theta0).shape
    point_sigma = _sigma_per_point(sigma, residual_shape)
    count = point_sigma.size
    if not absolute_sigma and count <= space.size:
        raise ValueError(
            f"absolute_sigma=False scales the covariance by χ²/(N − P), which needs more residuals "
            f"(N = {count}) than free parameters (P = {space.size}); pass absolute_sigma=True"
        )
    step = functools.partial(_step, problem)

    thetas = _initial_thetas(theta0, space, starts, start_spread, seed)
    runs = []
    for index, theta in enumerate(thetas):
        # Strong types: a weakly typed initial state would make step compile twice.
        state = jax.tree.map(lambda leaf: jnp.array(leaf, dtype=jnp.result_type(leaf)), problem.optimizer.init(theta))
        run = _minimise(step, state, theta, max_steps, gtol, ftol, progress, index, len(thetas))
        if index == 0 and not np.isfinite(run["history"][0]):  # stopped at its first point, where it started
            _check_finite("at the start", space, run)
        runs.append(run)
    best = min(runs, key=lambda run: run["loss"])
    return _result(best, runs, space, rho, loss, absolute_sigma, point_sigma, rank_rtol)


def _sigma_per_point(sigma, residual_shape):
    """``sigma`` broadcast to the residuals' shape and flattened; a ``ValueError`` naming both shapes if it does not
    broadcast to it."""
    sigma = np.asarray(sigma, dtype=float)
    try:
        return np.ravel(np.broadcast_to(sigma, residual_shape))
    except ValueError:
        raise ValueError(f"sigma must broadcast to the shape of the residuals: sigma has shape {sigma.shape}, "
                         f"the residuals {residual_shape}") from None


def _check_finite(where, space, run):
    """A ``ValueError`` naming the parameters if the residuals z or their Jacobian at ``run``'s θ are not finite."""
    z, jac = run["z"], run["jacobian"]
    if np.all(np.isfinite(z)) and np.all(np.isfinite(jac)):
        return
    what = "the residuals" if not np.all(np.isfinite(z)) else "the Jacobian of the residuals"
    values = np.asarray(space.free_values(run["theta"]))
    at = ", ".join(f"{name} = {value:.6g}" for name, value in zip(space.labels, values))
    raise ValueError(f"residual_fn: {what} are not finite {where} ({at}); the model must give finite residuals "
                     f"for these parameters")


def _minimise(step, state, theta, max_steps, gtol, ftol, progress, index, total):
    """One start: optimiser steps until a tolerance is met; returns the last evaluated point."""
    history = []
    quiet_steps = 0
    converged = False
    bar = tqdm(total=max_steps, desc=f"fit start {index + 1}/{total}", disable=not progress, leave=False)
    for _ in range(max_steps):
        new_theta, new_state, value, gradient_norm, z, jac = step(theta, state)
        value, gradient_norm = float(value), float(gradient_norm)
        history.append(value)
        bar.update()
        bar.set_postfix(loss=f"{value:.6g}", grad=f"{gradient_norm:.2g}", refresh=False)
        if not np.isfinite(value):
            break
        change = abs(history[-2] - value) if len(history) > 1 else np.inf
        quiet_steps = quiet_steps + 1 if change <= ftol * abs(value) else 0
        # No move: the optimiser found no lower loss near θ (Levenberg–Marquardt rejects every trial there).
        stalled = bool(jnp.all(new_theta == theta))
        if gradient_norm <= gtol or quiet_steps >= CONVERGENCE_PATIENCE or stalled:
            converged = True
            break
        theta, state = new_theta, new_state
    else:
        # Evaluate the last update, which the loop has not looked at.
        _, _, value, gradient_norm, z, jac = step(theta, state)
        value, gradient_norm = float(value), float(gradient_norm)
        history.append(value)
    bar.close()
    return {
        "theta": theta,
        "loss": value if np.isfinite(value) else np.inf,
        "gradient_norm": gradient_norm,
        "z": np.asarray(z),
        "jacobian": np.asarray(jac),
        "history": np.asarray(history),
        "converged": converged,
    }


def gauss_newton_covariance(jacobian, weights, rank_rtol=None):
    """(Jᵀ diag(w) J)⁻¹ by the SVD of diag(√w) J; a direction J cannot see gets infinite variance.

    Unseen: a singular value sₖ ≤ s_max · ``rank_rtol``, by default at round-off, s_max · max(N, P) · ε (NumPy's
    ``matrix_rank`` rule). The seen
    directions give Σₖ vₖ vₖᵀ / sₖ²; an unseen one makes an entry infinite where both parameters have a share in
    it above round-off (|vₖᵢ| > √ε of the unit vector), so that a parameter outside it keeps its finite variance;
    entries that mix infinities of both signs are NaN.
    """
    _, singular, right = np.linalg.svd(np.sqrt(weights)[:, None] * jacobian, full_matrices=False)
    eps = np.finfo(float).eps
    seen = singular > singular.max(initial=0.0) * (max(jacobian.shape) * eps if rank_rtol is None else rank_rtol)
    covariance = (right[seen].T / singular[seen] ** 2) @ right[seen]
    unseen = np.where(np.abs(right[~seen]) > np.sqrt(eps), right[~seen], 0.0)
    shares = unseen[:, :, None] * unseen[:, None, :]
    with np.errstate(invalid="ignore"):
        return covariance + np.sum(np.where(shares == 0.0, 0.0, np.copysign(np.inf, shares)), axis=0)


def _result(best, runs, space, rho, loss_name, absolute_sigma, point_sigma, rank_rtol):
    _check_finite("at the end of the fit", space, best)
    count = point_sigma.size
    theta, z, jac = best["theta"], best["z"], best["jacobian"]
    weights = np.asarray(irls_weights(rho, jnp.asarray(z)))
    residual_variance = float(np.sum(weights * z**2) / (count - space.size)) if count > space.size else np.nan
    # Parameters run to an end of their range are held there (NaN rows and columns); the others' covariance is
    # conditional on them.
    at_bound = space.at_bound(theta)
    inside = np.flatnonzero(~at_bound)
    unconstrained_covariance = np.full((space.size, space.size), np.nan)
    unconstrained_covariance[np.ix_(inside, inside)] = gauss_newton_covariance(jac[:, inside], weights, rank_rtol)
    if not absolute_sigma:
        unconstrained_covariance = residual_variance * unconstrained_covariance
    derivative = np.asarray(jax.jacfwd(space.free_values)(theta))  # diagonal: the transforms act elementwise
    with np.errstate(invalid="ignore"):  # ∞ · 0 (an unseen direction) and ∞/∞ are NaN
        covariance = np.outer(np.diag(derivative), np.diag(derivative)) * unconstrained_covariance
        standard_errors = np.sqrt(np.diag(covariance))
        # two parameters in one unseen direction (covariance ±∞): the correlation's limit as its singular
        # value goes to zero, ±1
        correlation = np.where(np.isinf(covariance), np.sign(covariance),
                               covariance / np.outer(standard_errors, standard_errors))
    params = space(theta)
    return FitResult(
        params=params,
        names=space.labels,
        values=np.asarray(space.free_values(theta)),
        standard_errors=standard_errors,
        at_bound=at_bound,
        covariance=covariance,
        correlation=correlation,
        unconstrained=np.asarray(theta),
        unconstrained_covariance=unconstrained_covariance,
        loss=best["loss"],
        loss_history=best["history"],
        gradient_norm=best["gradient_norm"],
        residuals=z * point_sigma,
        weighted_residuals=z,
        jacobian=jac,
        residual_variance=residual_variance,
        covariance_scaling="absolute" if absolute_sigma else "reduced chi-square",
        loss_name=loss_name,
        converged=best["converged"],
        steps=len(best["history"]),
        start_losses=np.array([run["loss"] for run in runs]),
    )
