"""diffimpact: differentiable simulation of contact and impact on JAX.

Importing the package enables double precision in JAX (``jax_enable_x64``):
impact results (restitution to 1e-8, stiffnesses up to 1e10 N/m^n) need it.
On x86-64 it also caps XLA's CPU code at AVX (``XLA_FLAGS``
``--xla_cpu_max_isa=AVX``), unless the flags already name an ISA or JAX's
CPU backend has started: AVX has no fused multiply-add, which XLA otherwise
forms wherever an expression allows, so that two copies of a computation
(a contact and its mirror image, a row in a batch's vectorised part and one
in its remainder) round differently. Without FMA, and with the contact
forces summed exactly (``diffimpact._exact_sums``), a mirror-symmetric
break stays mirror-symmetric to the last bit (docs/design/mirror-symmetry.md, "Mirror
symmetry to the last bit", with what the change cost). ARM and GPUs still
fuse multiply-adds.
The subpackages and the functions exported here load on first use (PEP 562),
so that the command line (``diffimpact.cli``) starts without JAX and answers
a Ctrl-C with its one line from the start.
"""

import importlib
import importlib.metadata
import os
import platform
import sys

if "jax" in sys.modules:
    sys.modules["jax"].config.update("jax_enable_x64", True)
else:
    os.environ["JAX_ENABLE_X64"] = "1"  # JAX reads it when it is imported


def _cap_cpu_isa():
    """Add ``--xla_cpu_max_isa=AVX`` to ``XLA_FLAGS`` (module docstring), read when JAX's backends start."""
    if platform.machine().lower() not in ("x86_64", "amd64") or "xla_cpu_max_isa" in os.environ.get("XLA_FLAGS", ""):
        return
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is not None and getattr(bridge, "_backends", None):
        return  # too late: the flags were read
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX").strip()


_cap_cpu_isa()

#: The names exported here: a subpackage (None) or the subpackage that defines the function.
_EXPORTS = {"contact": None, "impact": None, "multibody": None, "central_impact": "impact",
            "optimal_damping": "impact", "damping_lambda": "impact"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name == "__version__":  # the installed distribution's, from pyproject.toml
        return importlib.metadata.version("diffimpact")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'diffimpact' has no attribute {name!r}")
    module = importlib.import_module(f"diffimpact.{_EXPORTS[name] or name}")
    return module if _EXPORTS[name] is None else getattr(module, name)
