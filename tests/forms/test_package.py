"""The forms package as a whole: its public names, its layer, the shape of its modules."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import mcp_elicit.forms as forms

PACKAGE = Path(forms.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))
ALLOWED_THIRD_PARTY = {"pydantic", "pydantic_core"}
ALLOWED_OWN = {"mcp_elicit.errors", "mcp_elicit.forms"}


def test_all_is_sorted_small_and_real() -> None:
    assert forms.__all__ == sorted(forms.__all__)
    assert len(forms.__all__) <= 20
    for name in forms.__all__:
        assert hasattr(forms, name), name


def imported(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_layer_rule(module: Path) -> None:
    for name in imported(module):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top == "__future__" or top in ALLOWED_THIRD_PARTY:
            assert top not in {"asyncio", "socket", "http", "urllib", "subprocess", "threading"}, name
            continue
        assert any(name == own or name.startswith(own + ".") for own in ALLOWED_OWN), (
            f"{module.name} imports {name}"
        )


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_module_shape(module: Path) -> None:
    text = module.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert ast.get_docstring(tree), f"{module.name} needs a docstring naming its concept and rules"
    assert "from __future__ import annotations" in text
    assert len(text.splitlines()) < 500


def test_pydantic_is_not_imported_by_forms() -> None:
    for module in MODULES:
        top_level = [
            n
            for n in ast.parse(module.read_text(encoding="utf-8")).body
            if isinstance(n, ast.Import | ast.ImportFrom)
        ]
        for node in top_level:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n.startswith("pydantic") for n in names), f"{module.name} imports pydantic eagerly"
