"""The package's layers run one way: no module of diffimpact imports from a layer above its own.

From the bottom: shared math and checks; contact laws; impacts resolved in time (``impact``) and in an instant
(``impulse``), side by side; the multibody engine and the rigid-sphere time stepper; the ready scenes; the studies,
their files and the command line. A module may import its own package and any layer below.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each top-level part of diffimpact and its layer (higher may import lower, not the other way).
LAYERS = {
    "_validation": 0, "_broadcast": 0, "_exact_sums": 0, "_files": 0, "_math": 0, "rotations": 1, "io": 1, "cache": 1,
    "contact": 2,
    "impact": 3, "impulse": 3,
    "multibody": 4, "rigid_spheres": 4,
    "scenes": 5, "billiards": 5,
    "reproduce": 6,
    "cli": 7, "__main__": 8, "__init__": 8,
}


def part(module):
    """The top-level part of diffimpact that ``module`` (dotted) belongs to, or None for the package itself."""
    names = module.split(".")
    return names[1] if len(names) > 1 else None


def imports(path):
    """The diffimpact modules that the file at ``path`` imports (dotted names)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "diffimpact":
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "diffimpact"}
    return found


def test_every_part_has_a_layer():
    parts = {path.stem if path.suffix == ".py" else path.name for path in (ROOT / "diffimpact").iterdir()
             if path.suffix == ".py" or (path / "__init__.py").exists()}
    assert parts == set(LAYERS)


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in sorted((ROOT / "diffimpact").rglob("*.py")):
        relative = path.relative_to(ROOT / "diffimpact").with_suffix("").parts
        own = relative[0]
        for module in imports(path):
            other = part(module)
            if other is None or other not in LAYERS:  # the package itself, or a name it exports
                continue
            if other != own and LAYERS[other] > LAYERS[own]:
                upward.append(f"{'/'.join(relative)} imports {module}")
    assert not upward, "\n".join(upward)
