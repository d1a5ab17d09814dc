"""Draw the curves of issue 33: reads the JSON line each size-sweeping benchmark kept in
docs/performance/results/<curve>.json and writes docs/performance/<curve>.png, each with its
goal drawn and the date, commit and machine load of the measurement in its title.

Run: .venv/bin/python tests/benchmarks/draw_curves.py
(matplotlib, a dev dependency). Curves with no results yet are skipped and named.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "performance"
RESULTS = OUT / "results"

Result = dict[str, Any]


def _title(ax: Axes, what: str, result: Result) -> None:
    quick = ", --quick" if result.get("quick") else ""
    ax.set_title(
        f"{what}\n{result['date']}, commit {result['commit']}, load {result['load_at_end']}{quick}",
        fontsize=10,
    )


def _xs(result: Result, key: str) -> list[float]:
    return [p[key] for p in result["points"]]


def _line(ax: Axes, result: Result, x: str, y: str, label: str, **style: Any) -> None:
    ax.plot(_xs(result, x), _xs(result, y), marker="o", label=label, **style)


def _goal(ax: Axes, value: float, label: str, color: str = "tab:red") -> None:
    ax.axhline(value, color=color, linestyle="--", linewidth=1, label=label)


def reader_records(ax: Axes, r: Result) -> None:
    _line(ax, r, "records", "p95_ms", "p95")
    _line(ax, r, "records", "p50_ms", "p50")
    _goal(ax, r["points"][0]["p95_ms"] * r["goal"], f"goal: {r['goal']}x the smallest's p95")
    ax.set_xscale("log")
    ax.set_xlabel("records stored in the plug-in (1% revised)")
    ax.set_ylabel("62-day read, ms")
    _title(ax, f"Reader's days vs records stored ({r['store']})", r)


def reader_plugins(ax: Axes, r: Result) -> None:
    _line(ax, r, "plugins", "p95_ms", "p95")
    _line(ax, r, "plugins", "p50_ms", "p50")
    first = r["points"][0]
    xs = _xs(r, "plugins")
    ax.plot(xs, [first["p95_ms"] * x / first["plugins"] for x in xs], color="grey",
            linestyle=":", label="linear from the first p95")  # fmt: skip
    _goal(ax, r["goal_ms"], f"goal at 50: under {r['goal_ms']:g} ms")
    ax.set_xlabel("plug-ins shown")
    ax.set_ylabel("62-day read, ms")
    ax.set_ylim(0, max(r["goal_ms"] * 1.2, max(_xs(r, "p95_ms")) * 1.1))
    _title(ax, f"Reader's days vs plug-ins shown ({r['store']})", r)


def store_listings(ax: Axes, r: Result) -> None:
    colors = {"store": "tab:blue", "search": "tab:orange", "page": "tab:green"}
    for key, label in (("store", "the store (first page of 50)"), ("search", "a search (1 found)"),
                       ("page", "a store page")):  # fmt: skip
        _line(ax, r, "listings", f"{key}_p95_ms", f"{label} p95", color=colors[key])
        _line(ax, r, "listings", f"{key}_p50_ms", f"{label} p50", color=colors[key],
              linestyle=":")  # fmt: skip
    if "before" in r:  # the same benchmark on the commit before the fix, drawn faint
        before = {**r, "points": r["before"]["points"]}
        for key in ("store", "search"):
            _line(ax, before, "listings", f"{key}_p95_ms", f"{key} p95 before "
                  f"({r['before']['commit']})", color=colors[key], alpha=0.35)  # fmt: skip
    _goal(ax, r["goal_ms"], f"goal at 10,000: under {r['goal_ms']:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("listings in the store")
    ax.set_ylabel("ms")
    _title(ax, f"The store vs listings ({r['store']})", r)


def store_write(ax: Axes, r: Result) -> None:
    _line(ax, r, "records", "first_ratio", "first run / COPY")
    _line(ax, r, "records", "unchanged_ratio", "unchanged rerun / COPY")
    _line(ax, r, "records", "revised_ratio", "1% revised / COPY", linestyle=":")
    goals = r["goals"]
    _goal(ax, goals["first"], f"goal first: {goals['first']}x", "tab:blue")
    _goal(ax, goals["unchanged"], f"goal unchanged: {goals['unchanged']}x", "tab:orange")
    ax.set_xscale("log")
    ax.set_xlabel("records in the batch")
    ax.set_ylabel("write time / plain COPY time")
    ax.set_ylim(0, max(2.5, max(_xs(r, "first_ratio")) * 1.1))
    _title(ax, "Store write vs batch size (PostgreSQL)", r)


def calendar_feed(ax: Axes, r: Result) -> None:
    _line(ax, r, "records", "drawn_p95_ms", "drawn p95, ms")
    _line(ax, r, "records", "kept_p95_ms", "kept (by ETag) p95, ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("records stored")
    ax.set_ylabel("ms")
    right = ax.twinx()
    right.plot(_xs(r, "records"), _xs(r, "not_modified_per_second"), marker="s",
               color="tab:green", label="304s a second, 4 connections")  # fmt: skip
    if "health_per_second" in r["points"][0]:
        right.plot(_xs(r, "records"), _xs(r, "health_per_second"), marker="^",
                   color="tab:olive", linestyle=":", label="/health a second")  # fmt: skip
    right.axhline(r["goal_304_per_second"], color="tab:red", linestyle="--", linewidth=1,
                  label="goal: 1,000 304s a second")  # fmt: skip
    right.set_ylabel("answers a second")
    right.set_ylim(0, None)
    right.legend(loc="lower right", fontsize=8)
    _title(ax, f"Calendar feed vs records ({r['store']})", r)


def records_as_of(ax: Axes, r: Result) -> None:
    _line(ax, r, "revisions", "first_p95_ms", "as_of the first run p95 (same answer)")
    _line(ax, r, "revisions", "now_p95_ms", "as_of now p95 (every revision)", linestyle=":")
    _goal(ax, r["points"][0]["first_p95_ms"] * r["goal"], f"goal: {r['goal']}x at 1 revision")
    ax.set_xscale("log")
    ax.set_xlabel("revisions per record")
    ax.set_ylabel("ms")
    _title(ax, f"Raw records as_of vs revisions ({r['store']})", r)


def sensor_tick(ax: Axes, r: Result) -> None:
    _line(ax, r, "plugins", "decision_ms", "due decision (every plug-in), ms", color="tab:blue")
    _line(ax, r, "plugins", "submission_ms_a_run", "submission a run, ms", color="tab:orange")
    code_server = [p["cpu_ms_a_run"]["code server"] for p in r["points"]]
    ax.plot(_xs(r, "plugins"), code_server, marker="o", linestyle=":", color="tab:orange",
            label="the code server's CPU a run, ms")  # fmt: skip
    decision, submission = r["decision_goal_ms"], r["submission_goal_ms"]
    _goal(ax, decision, f"goal decision at 10,000: under {decision:g} ms", "tab:blue")
    _goal(ax, submission, f"goal submission: under {submission:g} ms a run", "tab:orange")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("registered plug-ins, all due")
    ax.set_ylabel("ms")
    _title(ax, "The minute sensor's tick vs plug-ins (PostgreSQL, code server)", r)


def memory(ax: Axes, results: dict[str, Result]) -> None:
    """Resident memory of the API worker after each size's reads, and of the write's process."""
    shown = [
        ("reader_records_postgresql", "records", "api_rss_mb_end", "API, reader days (x records)"),
        ("calendar_feed_postgresql", "records", "api_rss_mb_end", "API, calendar feed (x records)"),
        ("store_listings_postgresql", "listings", "api_rss_mb", "API, store (x listings)"),
        ("store_write", "records", "peak_rss_mb", "run's write, peak (x records)"),
    ]
    for curve, x, y, label in shown:
        if curve in results:
            _line(ax, results[curve], x, y, label)
    ax.set_xscale("log")
    ax.set_xlabel("size (records or listings)")
    ax.set_ylabel("resident memory, MiB")
    any_result = next(iter(results.values()))
    _title(ax, "Resident memory at each size", any_result)


CURVES: dict[str, tuple[str, Callable[[Axes, Result], None]]] = {
    "reader_records": ("reader_records_postgresql", reader_records),
    "reader_records_sqlite": ("reader_records_sqlite", reader_records),
    "reader_plugins": ("reader_plugins_postgresql", reader_plugins),
    "store_listings": ("store_listings_postgresql", store_listings),
    "store_write": ("store_write", store_write),
    "calendar_feed": ("calendar_feed_postgresql", calendar_feed),
    "records_as_of": ("records_as_of_postgresql", records_as_of),
    "sensor_tick": ("sensor_tick_postgresql", sensor_tick),
}


def main() -> None:
    results = {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(RESULTS.glob("*.json"))}
    missing = []
    for name, (curve, draw) in CURVES.items():
        if curve not in results:
            missing.append(curve)
            continue
        figure, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
        draw(ax, results[curve])
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        figure.savefig(OUT / f"{name}.png", dpi=100)
        plt.close(figure)
        print(f"wrote {(OUT / f'{name}.png').relative_to(ROOT)}")
    if results:
        figure, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
        memory(ax, results)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        figure.savefig(OUT / "memory.png", dpi=100)
        plt.close(figure)
        print(f"wrote {(OUT / 'memory.png').relative_to(ROOT)}")
    if missing:
        print("no results yet (run their benchmarks): " + ", ".join(missing), file=sys.stderr)


if __name__ == "__main__":
    main()
