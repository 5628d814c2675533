"""The Python examples of README.md and of the user guide's pages, run in order as a reader would paste them, page
by page, and the claims their comments make."""

import re
from pathlib import Path

import equinox as eqx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _optimal_damping(ns):
    # The eq. (50) law with the optimal damping c gives the restitution asked for.
    assert float(ns["result"].restitution) == pytest.approx(0.3, abs=1e-6)


def _sliding_ball(ns):
    # The ball slides into rolling at 5 v0 / 7: the friction's impulse conserves its angular momentum about the
    # contact point.
    assert float(ns["run"].v[-1, 0]) == pytest.approx(5.0 / 7.0, rel=1e-3)


def _ball_pairs(ns):
    # 120 pairs; the racked balls' closest gap is the rack's spacing α (Table 3).
    assert ns["pairs"].count == 120
    q = ns["billiard"].table_model(ns["p"]).split(ns["billiard"].break_state(ns["p"]).q)
    assert float(ns["pairs"].penetration(q).max()) == pytest.approx(-ns["p"].spacing, rel=1e-9)


def _two_discs(ns):
    # The force's impulse is the momentum the second disc leaves with.
    impulse = np.trapezoid(ns["contact"].normal_force[:, 0], ns["run"].t)
    assert impulse == pytest.approx(0.5 * float(ns["run"].v[-1, 3]), rel=1e-4)


def _user_impulse_model(ns):
    # u⁺_n = −e u⁻_n = 1 m/s from u⁻_n = −2 m/s at e = 0.5, the tangential velocity kept; ∂u⁺_n/∂e = −u⁻_n = 2.
    np.testing.assert_allclose(np.asarray(ns["after"]), [1.0, 0.3, 0.0], rtol=1e-15)
    assert float(ns["slope"]) == pytest.approx(2.0, rel=1e-15)


#: A block that ends in ``# EquinoxRuntimeError: ... message`` must raise that message.
ERROR = "error"
#: A page -> its checks: a line of one of its blocks -> the check of what that block's comments claim (``ERROR``:
#: the page has a block that must raise). Every page's blocks run, in one namespace per page.
PAGES = {
    "README.md": {"result = di.central_impact": _optimal_damping},
    "docs/getting-started.md": {},
    "docs/concepts.md": {"result = di.central_impact": _optimal_damping,
                         "run = simulate(model, state, jnp.linspace(0.0, 0.3": _sliding_ball,
                         "pairs = billiard.ball_pair": _ball_pairs, "contact = run.contact_history[0]": _two_discs,
                         "model = Restitution(": _user_impulse_model},
    "docs/bad-input.md": {ERROR: None},
}


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_examples_run_and_say_what_they_claim(page, tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), flags=re.S)
    monkeypatch.chdir(tmp_path)  # the two discs' run writes two-discs.npz
    namespace, checked = {}, set()
    for block in blocks:
        expected = re.search(r"^# EquinoxRuntimeError: \.\.\. (.+)$", block, flags=re.M)
        if expected:
            with pytest.raises(eqx.EquinoxRuntimeError, match=re.escape(expected.group(1))):
                exec(block, namespace)
            checked.add(ERROR)
            continue
        exec(block, namespace)
        for line, check in PAGES[page].items():
            if line != ERROR and line in block:
                check(namespace)
                checked.add(line)
    assert blocks and checked == set(PAGES[page])  # every check found its block
