"""diffimpact: differentiable simulation of contact and impact on JAX.

Importing the package enables double precision in JAX (``jax_enable_x64``):
impact results (restitution to 1e-8, stiffnesses up to 1e10 N/m^n) need it.
The subpackages and the functions exported here load on first use (PEP 562),
so that the command line (``diffimpact.cli``) starts without JAX and answers
a Ctrl-C with its one line from the start.
"""

import importlib
import os
import sys

if "jax" in sys.modules:
    sys.modules["jax"].config.update("jax_enable_x64", True)
else:
    os.environ["JAX_ENABLE_X64"] = "1"  # JAX reads it when it is imported

#: The names exported here: a subpackage (None) or the subpackage that defines the function.
_EXPORTS = {"contact": None, "impact": None, "multibody": None, "central_impact": "impact",
            "optimal_damping": "impact", "damping_lambda": "impact"}
__all__ = list(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'diffimpact' has no attribute {name!r}")
    module = importlib.import_module(f"diffimpact.{_EXPORTS[name] or name}")
    return module if _EXPORTS[name] is None else getattr(module, name)
