"""The package's import layers (docs/architecture.md, "Import layers"): every
module imports only from lower layers, so no two folders import each other."""

import ast
import re
from pathlib import Path
from typing import Dict, List, Tuple

from .util import REPO

PACKAGE = REPO / "spacy_attn"
EXEMPT = ("__init__.py", "__main__.py")


def documented_layers() -> Dict[str, int]:
    """unit (folder or top-level module of spacy_attn) -> its layer."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf8")
    section = text.split("## Import layers", 1)[1].split("\n## ", 1)[0]
    layers: Dict[str, int] = {}
    for m in re.finditer(r"^\| (\d+) \| ([^|]+) \|", section, re.M):
        for name in m.group(2).split(","):
            layers[name.strip()] = int(m.group(1))
    return layers


def unit(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else parts[0][: -len(".py")]


def imported_units(path: Path, package: Path = PACKAGE) -> List[Tuple[int, str]]:
    """(line, unit of spacy_attn) of every import in the file, which lies
    in ``package`` (a folder named spacy_attn)."""
    pkg = ["spacy_attn", *path.relative_to(package).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        modules: List[List[str]] = []
        if isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            if module == ["spacy_attn"]:
                modules = [["spacy_attn", a.name] for a in node.names]
            else:
                modules = [module]
        elif isinstance(node, ast.Import):
            modules = [a.name.split(".") for a in node.names]
        for module in modules:
            if len(module) >= 2 and module[0] == "spacy_attn":
                found.append((node.lineno, module[1]))
    return found


def test_every_unit_has_a_layer():
    layers = documented_layers()
    units = {unit(p) for p in PACKAGE.rglob("*.py") if p.name not in EXEMPT}
    units |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert units - set(layers) == set(), "give these a layer in docs/architecture.md"
    assert set(layers) - units == set(), "these layers name no module"


def test_imports_point_down():
    layers = documented_layers()
    up = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in EXEMPT and len(path.relative_to(PACKAGE).parts) == 1:
            continue
        if path.name == "__main__.py":
            continue
        here = unit(path)
        for line, there in imported_units(path):
            if there != here and layers.get(there, 99) >= layers.get(here, -1):
                rel = path.relative_to(REPO)
                up.append(f"{rel}:{line} ({here}, {layers.get(here)}) imports {there}")
    assert not up, "imports that do not point down:\n" + "\n".join(up)


def test_the_check_sees_an_upward_import(tmp_path):
    """The check itself: relative and absolute imports of a higher layer,
    at the top or inside a function, are found."""
    package = tmp_path / "spacy_attn"
    path = package / "readers" / "x.py"
    path.parent.mkdir(parents=True)
    path.write_text(
        "from ..pipeline import base\n"
        "def f():\n"
        "    import spacy_attn.cli.app\n"
        "    from spacy_attn import qa\n"
        "from . import columns\n"
    )
    found = sorted(imported_units(path, package))
    assert found == [(1, "pipeline"), (3, "cli"), (4, "qa"), (5, "readers")]
    layers = documented_layers()
    assert all(layers[u] > layers["readers"] for _, u in found[:3])
