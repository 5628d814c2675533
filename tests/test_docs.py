"""The documentation site: every package has its API page, and ``mkdocs build --strict`` passes."""

import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: API page -> the package it documents, one ``::: package.module`` block per public module.
API_PAGES = {
    "contact": "diffimpact.contact",
    "impact": "diffimpact.impact",
    "impulse": "diffimpact.impulse",
    "multibody": "diffimpact.multibody",
    "scenes": "diffimpact.scenes",
    "reproduce": "diffimpact.reproduce",
    "io": "diffimpact.io",
    "fitting": "fitting",
}


@pytest.mark.parametrize("page, package", API_PAGES.items())
def test_api_page_lists_every_public_module(page, package):
    blocks = re.findall(r"^::: (\S+)$", (ROOT / "docs" / "api" / f"{page}.md").read_text(), flags=re.M)
    modules = {info.name for info in pkgutil.iter_modules([str(ROOT / package.replace(".", "/"))])}
    assert blocks[0] == package
    assert sorted(blocks[1:]) == sorted(f"{package}.{name}" for name in modules if not name.startswith("_"))


def test_griffe_extension_reads_name_colon_text_as_a_description():
    pytest.importorskip("griffe", reason="the docs extra is not installed (pip install -e '.[docs]')")
    spec = importlib.util.spec_from_file_location("griffe_descriptions", ROOT / "docs" / "griffe_descriptions.py")
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    text = "Summary.\n\nParameters\n----------\nmass : m (kg), > 0.\nq, v : coordinates and\n    velocities.\n"
    text += "ratio : array_like\n    ζ.\n\nReturns\n-------\nx : the result.\n"
    expected = "Summary.\n\nParameters\n----------\nmass\n    m (kg), > 0.\nq, v\n    coordinates and\n"
    expected += "    velocities.\nratio : array_like\n    ζ.\n\nReturns\n-------\nx : the result.\n"
    assert extension.rewrite(text) == expected


def test_mkdocs_build_strict(tmp_path):
    """The whole site, API reference included, builds without a warning (about 3 s)."""
    for name in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(name, reason="the docs extra is not installed (pip install -e '.[docs]')")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr[-5000:]
    simulate = (tmp_path / "api" / "multibody" / "index.html").read_text()
    assert 'id="diffimpact.multibody.simulate.simulate"' in simulate
    assert (tmp_path / "tutorial" / "index.html").exists()
