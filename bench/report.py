"""Markdown tables, targets with ✓/✗, and the facts of the run (date, machine, load)."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from engine_bench import percentile

Row = tuple[str, str, str]


@dataclass(frozen=True)
class Target:
    name: str
    value: float
    limit: float | None  # None: a figure to report, no target
    unit: str
    detail: str = ""  # the figures the value is made of, e.g. the baseline of a ratio

    def render(self) -> str:
        digits = {"×": 2, "answers": 0}.get(self.unit, 1)
        measured = f"{self.value:.{digits}f} {self.unit}"
        if self.limit is None:
            return f"| {self.name} | {measured} | – | – | {self.detail} |"
        mark = "✓" if self.value <= self.limit else "✗"
        limit = f"≤ {self.limit:g} {self.unit}"
        return f"| {self.name} | {measured} | {limit} | {mark} | {self.detail} |"


@dataclass
class Report:
    tables: list[tuple[str, list[Row]]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    def table(self, title: str, rows: list[Row]) -> None:
        self.tables.append((title, rows))
        print(render(title, rows), flush=True)

    def target(self, *args: object) -> None:
        self.targets.append(Target(*args))  # type: ignore[arg-type]

    def render_targets(self) -> str:
        lines = [
            "### Targets",
            "",
            "| target | measured | limit | | from |",
            "|---|---|---|---|---|",
        ]
        return "\n".join(lines + [t.render() for t in self.targets])


def render(title: str, rows: list[Row]) -> str:
    lines = [f"### {title}", "", "| measure | value | compared with |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {note} |" for name, value, note in rows]
    return "\n".join(lines) + "\n"


def p50_p99(values: list[float], unit: str = "ms") -> str:
    return f"{percentile(values, 50):.1f} / {percentile(values, 99):.1f} {unit}"


def load_average() -> tuple[float, float, float]:
    one, five, fifteen = os.getloadavg()
    return one, five, fifteen


def load_row(before: float) -> Row:
    return ("load average (1 min) before / after", f"{before:.2f} / {load_average()[0]:.2f}", "")


def wait_for_quiet(limit: float, max_minutes: float, poll_s: float = 30) -> tuple[float, float]:
    """Wait until the 1-minute load average is below `limit`, at most `max_minutes`; returns
    (the load when the run starts, minutes waited). Starts anyway when the time is up."""
    started = time.monotonic()
    while load_average()[0] >= limit and time.monotonic() - started < max_minutes * 60:
        print(f"load {load_average()[0]:.2f} ≥ {limit}: waiting", flush=True)
        time.sleep(poll_s)
    return load_average()[0], (time.monotonic() - started) / 60


def machine() -> str:
    """Date, CPU, cores, memory, Python and the commit measured."""
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    kib = int(Path("/proc/meminfo").read_text().split()[1])
    commit = subprocess.run(
        ["git", "-C", str(Path(__file__).parent), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(Path(__file__).parent), "status", "--porcelain"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores ({cpu}), "
        f"{kib / 2**20:.0f} GiB, {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}; commit {commit[:60]}{' (+ local changes)' if dirty else ''}"
    )
