"""Layers you can see (STYLE.md): leaf ← math ← certify ← tools (properties, adapters, audit) ← cli/report. Nothing imports upward.

Parses every module's imports (static, top-level and nested) and checks that a module in a lower
layer never imports from a higher one.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "verifier"

LEAF = {"_types", "errors", "_validation", "_directed", "_fast", "_files", "_budget", "_version"}
MATH = {"pairs", "pld", "rdp", "analytic", "montecarlo", "reference", "hockey", "schemes", "matrix", "shuffle"}
CERTIFY = {"certify"}
TOOLS = {"properties", "strategies", "adapters", "audit"}  # accountants under test, read through certify
TOP = {"cli", "report", "api", "_console", "__main__", "__init__"}


def layer_of(top: str) -> int:
    for rank, names in enumerate((LEAF, MATH, CERTIFY, TOOLS, TOP)):
        if top in names:
            return rank
    raise AssertionError(f"module verifier.{top} is in no layer; add it to tests/unit/test_layers.py")


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield path, parts[0]


def imported_tops(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verifier"):
            names = node.module.split(".")
            yield names[1] if len(names) > 1 else "__init__"  # `from verifier import X`: the package root
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "verifier" and len(names) > 1:
                    yield names[1]


def _existing_tops() -> set[str]:
    """Top-level names of verifier that exist: modules, packages, and the compiled-kernel folder."""
    return {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}


def check_layer_lists(layers, existing: set[str]) -> None:
    """Every name listed in a layer is a real module (the old lists named ``matrix`` and
    ``properties`` before they existed: a layer rule about nothing), and no name is in two layers."""
    listed = [name for names in layers for name in names]
    missing = sorted(set(listed) - existing - {"__main__", "__init__"})
    assert not missing, f"layers list modules that do not exist: {missing}"
    assert len(listed) == len(set(listed)), "a module is listed in two layers"


def test_layer_lists_name_existing_modules():
    check_layer_lists((LEAF, MATH, CERTIFY, TOOLS, TOP), _existing_tops())
    with pytest.raises(AssertionError, match="ghost"):  # the mutant: a layer naming a module that is not there
        check_layer_lists((LEAF | {"ghost"}, MATH, CERTIFY, TOOLS, TOP), _existing_tops())


@pytest.mark.parametrize("path, top", list(modules()), ids=lambda x: str(x).split("verifier/")[-1] if isinstance(x, Path) else x)
def test_no_upward_imports(path, top):
    if path.name == "__init__.py" and path.parent == PACKAGE:
        return  # the package root re-exports public names from every layer
    own = layer_of(top)
    for imported in imported_tops(path):
        if imported == top:
            continue
        assert layer_of(imported) <= own, f"{path.relative_to(PACKAGE)} (layer {own}) imports verifier.{imported} (layer {layer_of(imported)})"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("verifier", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _import_graph() -> dict[str, set[str]]:
    """Module → the verifier modules it imports, top-level or inside a function (``from a.b import
    c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``)."""
    names = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verifier"):
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in names}
        graph[name] = found - {name}
    return graph


def test_no_two_modules_import_each_other():
    """Within a layer too, imports run one way: no module imports one that imports it back, not even
    through a function-local import. Catches: rdp/accountant.py and rdp/classes.py importing each
    other (the class curves need the run's curve; it is now passed in)."""
    graph = _import_graph()
    assert "verifier.rdp.classes" in graph["verifier.rdp.accountant"]
    mutual = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph.get(b, ())})
    assert not mutual, f"modules that import each other: {mutual}"
