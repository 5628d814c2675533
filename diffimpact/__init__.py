"""diffimpact: differentiable simulation of contact and impact on JAX.

Importing the package changes nothing in the process: call ``diffimpact.configure()`` once, before the first
computation, as the command line and the tests do. It sets the two things the library's results rely on:

* double precision in JAX (``jax_enable_x64``): impact results (restitution to 1e-8, stiffnesses up to
  1e10 N/m^n) need it, and the simulators refuse to run without it;
* on x86-64, XLA's CPU code capped at AVX (``--xla_cpu_max_isa=AVX`` in ``XLA_FLAGS``), unless the flags already
  name an ISA. AVX has no fused multiply-add, which XLA otherwise forms wherever an expression allows, so that
  two copies of a computation (a contact and its mirror image, a row in a batch's vectorised part and one in its
  remainder) round differently. Without FMA, and with the contact forces summed exactly
  (``diffimpact._exact_sums``), a mirror-symmetric break stays mirror-symmetric to the last bit
  (docs/design/mirror-symmetry.md, "Mirror symmetry to the last bit", with what the change cost). ARM and GPUs
  still fuse multiply-adds. XLA reads the flags when JAX's CPU backend starts, so the cap applies only if
  ``configure`` runs before the first JAX computation; otherwise it warns and changes only the precision.

The subpackages and the functions exported here load on first use (PEP 562), so that the command line
(``diffimpact.cli``) starts without JAX and answers a Ctrl-C with its one line from the start.
"""

import importlib
import importlib.metadata
import os
import platform
import sys
import warnings

#: What ``configure`` adds to ``XLA_FLAGS`` on x86-64 (module docstring).
CPU_ISA_FLAG = "--xla_cpu_max_isa=AVX"


def configure():
    """Set JAX up for diffimpact in this process: double precision, and on x86-64 XLA's CPU code capped at AVX.

    Call it once, before the first JAX computation (module docstring). Calling it again does nothing more.
    Setting ``JAX_ENABLE_X64=1`` and ``XLA_FLAGS=--xla_cpu_max_isa=AVX`` in the environment before Python starts
    does the same.
    """
    if platform.machine().lower() in ("x86_64", "amd64") and "xla_cpu_max_isa" not in os.environ.get("XLA_FLAGS", ""):
        bridge = sys.modules.get("jax._src.xla_bridge")
        if bridge is not None and getattr(bridge, "_backends", None):
            warnings.warn(
                "diffimpact.configure() was called after JAX's CPU backend started, so XLA's CPU code is not capped "
                f"at AVX ({CPU_ISA_FLAG}): results keep their precision, but mirror-image computations may round "
                "differently in the last bit. Call it before the first JAX computation.", stacklevel=2)
        else:
            os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + CPU_ISA_FLAG).strip()
    import jax

    jax.config.update("jax_enable_x64", True)


#: The names exported here: a subpackage (None) or the subpackage that defines the function.
_EXPORTS = {"contact": None, "impact": None, "multibody": None, "central_impact": "impact",
            "optimal_damping": "impact", "damping_lambda": "impact"}
__all__ = ["configure", *_EXPORTS]


def __getattr__(name):
    if name == "__version__":  # the installed distribution's, from pyproject.toml
        return importlib.metadata.version("diffimpact")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'diffimpact' has no attribute {name!r}")
    module = importlib.import_module(f"diffimpact.{_EXPORTS[name] or name}")
    return module if _EXPORTS[name] is None else getattr(module, name)
