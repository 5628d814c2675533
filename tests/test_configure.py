"""``diffimpact.configure()``: importing the package leaves the process as it was; the call sets float64 and the
CPU cap; a simulation in single precision is refused with a message that names the call."""

import ast
import json
import os
import subprocess
import sys

import pytest

#: A fresh interpreter's environment without the settings under test.
CLEAN = {name: value for name, value in os.environ.items() if name not in ("JAX_ENABLE_X64", "XLA_FLAGS")}


def _run(code):
    """Run ``code`` in a fresh interpreter with ``CLEAN``'s environment; its stdout's last line."""
    result = subprocess.run([sys.executable, "-c", code], env=CLEAN, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_import_changes_nothing_and_configure_sets_both():
    code = (
        "import os, platform, jax, diffimpact\n"
        "before = (jax.config.read('jax_enable_x64'), os.environ.get('XLA_FLAGS', ''))\n"
        "diffimpact.configure()\n"
        "import jax.numpy as jnp\n"
        "after = (jax.config.read('jax_enable_x64'), os.environ.get('XLA_FLAGS', ''), str(jnp.ones(1).dtype))\n"
        "print(repr((before, after, platform.machine().lower() in ('x86_64', 'amd64'))))"
    )
    before, after, x86 = ast.literal_eval(_run(code))
    assert before == (False, "")
    assert after[0] is True and after[2] == "float64"
    assert after[1] == ("--xla_cpu_max_isa=AVX" if x86 else "")


def test_an_isa_already_chosen_is_kept():
    code = ("import os; os.environ['XLA_FLAGS'] = '--xla_cpu_max_isa=SSE4_2'\n"
            "import diffimpact; diffimpact.configure(); print(os.environ['XLA_FLAGS'])")
    assert _run(code) == "--xla_cpu_max_isa=SSE4_2"


def test_configure_after_the_backend_started_warns_and_sets_float64():
    code = (
        "import json, platform, warnings, jax, jax.numpy as jnp, diffimpact\n"
        "jnp.ones(1).block_until_ready()\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    diffimpact.configure()\n"
        "x86 = platform.machine().lower() in ('x86_64', 'amd64')\n"
        "print(json.dumps([jax.config.read('jax_enable_x64'), [str(w.message) for w in caught], x86]))"
    )
    enabled, messages, x86 = json.loads(_run(code))
    assert enabled
    assert any("after JAX's CPU backend started" in message for message in messages) == x86


@pytest.mark.parametrize("call", [
    "diffimpact.optimal_damping(0.2, 3.0, 1e8, 1.5, 0.3)",
    "diffimpact.central_impact(HertzLinearDamper(1e8, 1.5, 1e3), 0.2, 3.0)",
])
def test_single_precision_is_refused_by_name(call):
    code = (
        "import diffimpact\n"
        "from diffimpact.contact import HertzLinearDamper\n"
        "try:\n"
        f"    {call}\n"
        "except RuntimeError as error:\n"
        "    print(error)\n"
    )
    message = _run(code)
    name = call.split("(")[0].replace("diffimpact.", "diffimpact.impact.")
    assert message.startswith(f"{name} computes in double precision")
    assert "call diffimpact.configure()" in message
