"""The code stays lint-clean and type-checks: run as part of the suite so CI enforces it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "src", "tests", "bench", "eval")
    assert done.returncode == 0, done.stdout + done.stderr
    formatted = _run("ruff", "format", "--check", "src", "tests", "bench", "eval")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_mypy_finds_nothing() -> None:
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout


PACKAGE = ROOT / "src" / "trilium_recall"
MAX_MODULE_LINES = 400


def _imports() -> dict[str, set[str]]:
    """Each module of the package (dotted, below trilium_recall) → package modules it imports."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        package = list(parts[:-1])
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
            elif (node.module or "").startswith("trilium_recall"):
                base = []
            else:
                continue
            module = (node.module or "").removeprefix("trilium_recall").lstrip(".")
            target = [*base, *module.split(".")] if module else base
            imported.add(".".join(target))
            imported |= {".".join([*target, alias.name]) for alias in node.names}
        found[name] = imported
    return {
        name: {m for m in imported if m in found and m != name} for name, imported in found.items()
    }


def test_imports_flow_one_way() -> None:
    graph = _imports()
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", "import cycle: " + " → ".join((*trail, module))
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            visit(imported, (*trail, module))
        state[module] = "done"
        order.append(module)

    for module in sorted(graph):
        visit(module, ())
    assert len(order) == len(graph) and "index.store" in order and "search.recall" in order


def test_only_the_demo_uses_the_trilium_stand_in() -> None:
    users = {
        module
        for module, imported in _imports().items()
        if not module.startswith("demo.standin")
        and any(m.startswith("demo.standin") for m in imported)
    }
    assert users == {"demo.mode"}


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
