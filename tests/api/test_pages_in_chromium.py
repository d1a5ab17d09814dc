"""The pages a person opens, drawn by a real headless Chromium: a problem's catalog page served by
the live app, and the tool's `preview --html` day list, whose drawn rows are the rows of
`preview --json` for the same days."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from almanac.node import node_binary
from tests.conftest import REPO

TOOL = REPO / "tool" / "almanac-plugin.mjs"
EXAMPLE = REPO / "examples" / "uk-bank-holidays"
DAYS = "2022-12-20..2023-01-03"


def chromium(*args: str, tmp_path: Path) -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("Chromium is not installed: scripts/test.sh installs it (Debian chromium)")
    done = subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


class DayList(HTMLParser):
    """The drawn page as a reader sees it: per drawn day (its `data-date`), its row texts with
    the words spoken only to screen readers left out."""

    def __init__(self) -> None:
        super().__init__()
        self.days: dict[str, list[str]] = {}
        self._day: str | None = None
        self._in_row = False
        self._hidden = 0
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "li" and "agenda-day" in classes:
            self._day = found.get("data-date")
            assert self._day is not None
            self.days[self._day] = []
        elif tag == "li" and "row" in classes:
            self._in_row, self._text = True, []
        elif tag == "span" and "sr-only" in classes:
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._hidden:
            self._hidden -= 1
        elif tag == "li" and self._in_row:
            self._in_row = False
            assert self._day is not None
            self.days[self._day].append(" ".join("".join(self._text).split()))

    def handle_data(self, data: str) -> None:
        if self._in_row and not self._hidden:
            self._text.append(data)


def test_a_problem_page_is_drawn_by_a_browser(api, tmp_path: Path) -> None:
    url = f"{api.base_url}/docs/problems/PLG-RECORD-LINK"
    dom = chromium("--dump-dom", url, tmp_path=tmp_path)
    assert "<h1><code>PLG-RECORD-LINK</code></h1>" in dom
    assert "Fix" in dom and "error" in dom
    shot = tmp_path / "problem.png"
    chromium(f"--screenshot={shot}", "--window-size=800,600", url, tmp_path=tmp_path)
    assert png_size(shot) == (800, 600)


def test_the_preview_page_draws_the_rows_of_the_preview_json(tmp_path: Path) -> None:
    page = tmp_path / "preview.html"
    node = str(node_binary())
    drawn = subprocess.run(
        [node, str(TOOL), "preview", str(EXAMPLE), "--days", DAYS, "--html", str(page)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert drawn.returncode == 0, drawn.stderr
    as_json = subprocess.run(
        [node, str(TOOL), "preview", str(EXAMPLE), "--days", DAYS, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert as_json.returncode == 0, as_json.stderr
    preview = json.loads(as_json.stdout)
    # Days with nothing stay out of the page, as in the web calendar's agenda; today is drawn.
    expected = {
        day["date"]: [row["label"] for section in day["sections"] for row in section["rows"]]
        for day in preview["days"]
        if day["sections"] or day["date"] == preview["today"]
    }
    assert any(expected.values()), "the chosen days hold rows"

    reader = DayList()
    reader.feed(chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path))
    assert list(reader.days) == list(expected)
    for day, labels in expected.items():
        assert len(reader.days[day]) == len(labels), day
        for text, label in zip(reader.days[day], labels, strict=True):
            assert label in text, (day, text, label)
    shot = tmp_path / "preview.png"
    chromium(f"--screenshot={shot}", "--window-size=640,900", page.as_uri(), tmp_path=tmp_path)
    assert png_size(shot) == (640, 900)
