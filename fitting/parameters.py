"""Parameter transforms, and the map between a physical pytree and a free vector.

A fit works on an *unconstrained* vector θ ∈ R^P; the model works on a
*physical* pytree (a contact law, or a small ``equinox.Module`` of physical
parameters). A spec names the leaves to fit and how each is constrained::

    spec = {"stiffness": Positive(reference=1e9), "restitution": UnitInterval()}
    theta0, space = parametrise(law, spec)
    law = space(theta)                  # physical pytree, rebuilt with eqx.tree_at

Names are attribute paths from the root, dotted for nested pytrees
(``"law.stiffness"``, ``"bodies.0.mass"``: integers index tuples/lists, keys
index dicts). Leaves not named in the spec, and those whose transform has
``fixed=True``, keep their value from the template pytree. Array leaves are
fitted element by element; their entries are labelled ``name[i]``.

Each transform maps θ to a physical value x elementwise:

* ``Free(scale)``: x = scale · θ.
* ``Positive("log", reference)``: x = reference · exp(θ);
  ``Positive("softplus", reference)``: x = reference · log(1 + exp(θ)).
* ``Bounded(low, high)``: x = low + (high − low) · sigmoid(θ) (θ = logit);
  ``UnitInterval()`` is ``Bounded(0, 1)``.
* ``LogBounded(low, high)``: x = low · (high/low)^sigmoid(θ), for a positive
  value known to within a few decades.

A ``reference`` or ``scale`` of the order of the expected value keeps θ of
order one, which the optimisers (and the conditioning of JᵀJ) need when
physical values span many decades (k ≈ 1e9 N/m^1.5 beside e ≈ 0.6).
"""

from abc import abstractmethod

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

TRANSFORM_KINDS = ("log", "softplus")


class Transform(eqx.Module):
    """Abstract elementwise map from an unconstrained value θ to a physical value x.

    ``fixed=True`` keeps the parameter at its template value (declared, not fitted).
    """

    fixed: bool = eqx.field(default=False, kw_only=True, static=True)

    @abstractmethod
    def to_physical(self, unconstrained):
        """x(θ)."""

    @abstractmethod
    def to_unconstrained(self, physical):
        """θ(x), the inverse of ``to_physical``."""

    @abstractmethod
    def in_domain(self, physical):
        """Whether each x lies strictly inside the transform's range (NumPy booleans)."""

    @abstractmethod
    def domain(self):
        """The allowed range of x, as text for error messages."""

    def at_bound(self, unconstrained):
        """Whether x(θ) has run to an end of a bounded range (NumPy booleans; never for unbounded ones)."""
        return np.zeros(np.shape(unconstrained), dtype=bool)


class Free(Transform):
    """Unconstrained parameter, x = scale · θ."""

    scale: float = eqx.field(default=1.0, static=True)

    def __check_init__(self):
        if not self.scale > 0:
            raise ValueError(f"Free scale must be > 0, got {self.scale!r}")

    def to_physical(self, unconstrained):
        return self.scale * unconstrained

    def to_unconstrained(self, physical):
        return physical / self.scale

    def in_domain(self, physical):
        return np.isfinite(physical)

    def domain(self):
        return "(-inf, inf)"


class Positive(Transform):
    """Positive parameter, x = reference · exp(θ) ("log") or reference · softplus(θ) ("softplus")."""

    transform: str = eqx.field(default="log", static=True)
    reference: float = eqx.field(default=1.0, static=True)

    def __check_init__(self):
        if self.transform not in TRANSFORM_KINDS:
            raise ValueError(f"Positive transform must be one of {TRANSFORM_KINDS}, got {self.transform!r}")
        if not self.reference > 0:
            raise ValueError(f"Positive reference must be > 0, got {self.reference!r}")

    def to_physical(self, unconstrained):
        if self.transform == "log":
            return self.reference * jnp.exp(unconstrained)
        return self.reference * jax.nn.softplus(unconstrained)

    def to_unconstrained(self, physical):
        ratio = physical / self.reference
        if self.transform == "log":
            return jnp.log(ratio)
        # softplus⁻¹(y) = log(e^y − 1) = y + log(1 − e^−y), stable for large y.
        return ratio + jnp.log(-jnp.expm1(-ratio))

    def in_domain(self, physical):
        return (physical > 0) & np.isfinite(physical)

    def domain(self):
        return "(0, inf)"


#: |θ| beyond which a ``Bounded`` or ``LogBounded`` parameter counts as at an end of its range: sigmoid(θ)
#: within 1e-3 of 0 or 1 (of the range, or of its decades), where x hardly moves with θ.
AT_BOUND = float(np.log(999.0))


class _SigmoidRange(Transform):
    """A parameter in the open interval (low, high) through sigmoid(θ): what ``Bounded`` and ``LogBounded`` share."""

    low: float = eqx.field(static=True)
    high: float = eqx.field(static=True)

    def in_domain(self, physical):
        return (physical > self.low) & (physical < self.high)

    def domain(self):
        return f"({self.low:g}, {self.high:g})"

    def at_bound(self, unconstrained):
        return np.abs(np.asarray(unconstrained)) > AT_BOUND


class Bounded(_SigmoidRange):
    """Parameter in the open interval (low, high), x = low + (high − low) · sigmoid(θ)."""

    def __check_init__(self):
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Bounded needs finite low < high, got low={self.low!r}, high={self.high!r}")

    def to_physical(self, unconstrained):
        return self.low + (self.high - self.low) * jax.nn.sigmoid(unconstrained)

    def to_unconstrained(self, physical):
        fraction = (physical - self.low) / (self.high - self.low)
        return jnp.log(fraction) - jnp.log1p(-fraction)


class LogBounded(_SigmoidRange):
    """Positive parameter in (low, high) on a log scale, x = low · (high/low)^sigmoid(θ).

    For a quantity known only to its order of magnitude (a rubber's modulus,
    1–100 MPa): the optimiser moves in decades and never leaves the range
    where the model is meant to work.
    """

    def __check_init__(self):
        if not (np.isfinite(self.high) and 0 < self.low < self.high):
            raise ValueError(f"LogBounded needs 0 < low < high < inf, got low={self.low!r}, high={self.high!r}")

    def to_physical(self, unconstrained):
        return self.low * jnp.exp(np.log(self.high / self.low) * jax.nn.sigmoid(unconstrained))

    def to_unconstrained(self, physical):
        fraction = jnp.log(physical / self.low) / np.log(self.high / self.low)
        return jnp.log(fraction) - jnp.log1p(-fraction)


def UnitInterval(*, fixed=False):  # noqa: N802 (reads as a transform class in a spec)
    """Parameter in (0, 1) by the logit transform: ``Bounded(0, 1)``."""
    return Bounded(0.0, 1.0, fixed=fixed)


def _get(tree, path):
    node = tree
    for part in path.split("."):
        if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        elif not isinstance(node, (list, tuple, dict)) and hasattr(node, part):
            node = getattr(node, part)
        else:
            raise ValueError(f"parameter {path!r}: no {part!r} in {type(node).__name__}")
    return node


def _replace(tree, paths, values):
    return eqx.tree_at(lambda t: tuple(_get(t, p) for p in paths), tree, replace=tuple(values))


class Parametrisation(eqx.Module):
    """The map θ ↦ physical pytree of ``parametrise``; call it on θ to rebuild the pytree.

    Attributes
    ----------
    template : the physical pytree that supplies the fixed leaves.
    names : paths of the free parameters, in the order of θ.
    transforms : their transforms.
    shapes : their array shapes.
    """

    template: object
    names: tuple = eqx.field(static=True)
    transforms: tuple
    shapes: tuple = eqx.field(static=True)

    @property
    def sizes(self):
        return tuple(int(np.prod(shape, dtype=int)) for shape in self.shapes)

    @property
    def size(self):
        """Number of free entries P (the length of θ)."""
        return sum(self.sizes)

    @property
    def labels(self):
        """One label per entry of θ: the name, or ``name[i]`` for array parameters."""
        labels = []
        for name, shape, size in zip(self.names, self.shapes, self.sizes):
            labels += [name] if shape == () else [f"{name}[{i}]" for i in range(size)]
        return tuple(labels)

    def _split(self, theta):
        pieces = jnp.split(jnp.asarray(theta, dtype=float), np.cumsum(self.sizes)[:-1])
        return [piece.reshape(shape) for piece, shape in zip(pieces, self.shapes)]

    def free_values(self, theta):
        """The physical values x(θ) of the free parameters, flattened in the order of θ."""
        pieces = self._split(theta)
        return jnp.concatenate([t.to_physical(p).ravel() for t, p in zip(self.transforms, pieces)])

    def __call__(self, theta):
        """The physical pytree with the free leaves set from θ."""
        values = self.free_values(theta)
        pieces = jnp.split(values, np.cumsum(self.sizes)[:-1])
        return _replace(self.template, self.names, [p.reshape(s) for p, s in zip(pieces, self.shapes)])

    def at_bound(self, theta):
        """Whether each free entry has run to an end of its transform's range, in the order of θ."""
        return np.concatenate([np.ravel(t.at_bound(p)) for t, p in zip(self.transforms, self._split(theta))])

    def unconstrained(self, params):
        """θ of a physical pytree shaped like the template; ``ValueError`` if a value is out of range."""
        pieces = []
        for name, transform, shape in zip(self.names, self.transforms, self.shapes):
            value = np.asarray(_get(params, name), dtype=float)
            if value.shape != shape:
                raise ValueError(f"parameter {name!r} has shape {value.shape}, expected {shape}")
            if not np.all(transform.in_domain(value)):
                raise ValueError(
                    f"parameter {name!r} must be in {transform.domain()} for {type(transform).__name__}, "
                    f"got {value.ravel()[:5].tolist()}"
                )
            pieces.append(jnp.ravel(transform.to_unconstrained(jnp.asarray(value))))
        return jnp.concatenate(pieces)


def parametrise(params, spec):
    """Free vector θ0 and the map θ ↦ physical pytree, for the leaves named in ``spec``.

    Parameters
    ----------
    params : equinox Module (or any pytree) of physical values, the initial guess.
    spec : dict {path: Transform}; leaves not named, and transforms with
        ``fixed=True``, stay at their values in ``params``.

    Returns
    -------
    theta0 : 1-D array of the unconstrained free values of ``params``.
    space : Parametrisation; ``space(theta)`` rebuilds the physical pytree.
    """
    if not isinstance(spec, dict) or not spec:
        raise ValueError(f"spec must be a non-empty dict {{path: Transform}}, got {spec!r}")
    names, transforms, shapes = [], [], []
    for name, transform in spec.items():
        if not isinstance(transform, Transform):
            raise ValueError(f"spec[{name!r}] must be a Transform (Free, Positive, Bounded, ...), got {transform!r}")
        leaf = _get(params, name)
        try:
            _replace(params, [name], [leaf])
        except (TypeError, ValueError) as error:
            raise ValueError(f"parameter {name!r} is not a leaf of the pytree (a property?)") from error
        if not transform.fixed:
            names.append(name)
            transforms.append(transform)
            shapes.append(np.shape(leaf))
    if not names:
        raise ValueError("spec must leave at least one parameter free (all are fixed)")
    space = Parametrisation(params, tuple(names), tuple(transforms), tuple(shapes))
    return space.unconstrained(params), space
