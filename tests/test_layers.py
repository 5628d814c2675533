"""The package's layers run one way: no module of diffimpact imports from a layer above its own.

From the bottom: shared math and checks; contact laws; impacts resolved in time (``impact``) and in an instant
(``impulse``), side by side; the multibody model (bodies to contact families) and the rigid-sphere time stepper;
the multibody engine (``multibody.integrate``); its entry point (``multibody.simulate``, which the package
exports); the ready scenes; the studies, their files and the command line. A module may import its own part and
any layer below.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each top-level part of diffimpact and its layer (higher may import lower, not the other way); the multibody
#: package's engine and entry point are parts of their own above its model.
LAYERS = {
    "_validation": 0, "_broadcast": 0, "_exact_sums": 0, "_files": 0, "_math": 0, "rotations": 1, "io": 1, "cache": 1,
    "contact": 2,
    "impact": 3, "impulse": 3,
    "multibody": 4, "rigid_spheres": 4,
    "multibody.integrate": 5,
    "multibody.simulate": 6,
    "scenes": 7, "billiards": 7,
    "reproduce": 8,
    "cli": 9, "__main__": 10, "__init__": 10,
}
#: The modules of a part of its own inside a package (the package's ``__init__`` exports its entry point).
SUBPARTS = {("multibody", "integrate"): "multibody.integrate", ("multibody", "simulate"): "multibody.simulate",
            ("multibody", "__init__"): "multibody.simulate"}


def part(module):
    """The part of diffimpact that ``module`` (dotted) belongs to, or None for the package itself."""
    names = module.split(".")
    return SUBPARTS.get(tuple(names[1:3]), names[1]) if len(names) > 1 else None


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
    assert parts == {name.split(".")[0] for name in LAYERS}
    for package, name in SUBPARTS:
        assert (ROOT / "diffimpact" / package / f"{name}.py").exists() or (ROOT / "diffimpact" / package / name).is_dir()


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in sorted((ROOT / "diffimpact").rglob("*.py")):
        relative = path.relative_to(ROOT / "diffimpact").with_suffix("").parts
        own = SUBPARTS.get(relative[:2], relative[0])
        for module in imports(path):
            other = part(module)
            if other is None or other not in LAYERS:  # the package itself, or a name it exports
                continue
            if other != own and LAYERS[other] > LAYERS[own]:
                upward.append(f"{'/'.join(relative)} imports {module}")
    assert not upward, "\n".join(upward)


def test_the_engine_imports_only_public_names_of_its_modules():
    """The modules of ``multibody.integrate`` and the entry point import each other's public names only."""
    private = []
    for path in sorted([*(ROOT / "diffimpact" / "multibody" / "integrate").glob("*.py"),
                        ROOT / "diffimpact" / "multibody" / "simulate.py"]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("diffimpact.multibody.integrate"):
                private += [f"{path.name} imports {node.module}.{alias.name}" for alias in node.names
                            if alias.name.startswith("_") or "._" in node.module]
    assert not private, "\n".join(private)
