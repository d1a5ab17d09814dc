"""review.json ("Review information"): its shape (PLG-REVIEW-INVALID) and its example days in
what the fixtures produce (PLG-REVIEW-EXAMPLE), judged alike by the server and the tool's
`check` (tests/conformance/reviews/), and the labelled fields the review desk shows of it.
Paths are JSON paths inside review.json."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from almanac.platform.contract.manifest import Manifest
from almanac.platform.contract.problems import Problem

REVIEW_FILE = "review.json"
CODE = "PLG-REVIEW-INVALID"
MAX_EXAMPLES = 5
REVIEW_KEYS = ("examples", "negatives", "sources", "releaseNotes", "notes")
EXAMPLE_KEYS = ("date", "series", "expect", "note")
NEGATIVE_FIELDS = {
    "no-record": ("date", "series"),
    "in-force": ("date", "from", "series"),
    "source-fails": ("case",),
}
SOURCE_KEYS = ("source", "holder", "terms", "basis", "evidence")
MAX_TEXT = 2000
INCOMPLETE = "PLG-REVIEW-INCOMPLETE"
BASIS = ("open-licence", "public-domain", "official-publication", "permission")
"""Allowed `basis` values of a source ("Review information" shows only open-licence):
open-licence (a published licence that allows reuse; evidence links it), public-domain (no
copyright, such as a government work; evidence says why), official-publication (an official
body's own publication of facts it announces, such as rates or dates; evidence links it),
permission (the holder's written permission; evidence names it)."""
LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_TEXT


def _day(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


class _Shape:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        where = f"{REVIEW_FILE} {path}" if path else REVIEW_FILE
        self.problems.append(Problem(CODE, f"{where}: {message}", path=path or None))

    def keys(self, found: Mapping[str, Any], allowed: tuple[str, ...], at: str) -> None:
        for key in found:
            if key not in allowed:
                self.add(f"{at}{key}" if at else key, f"is not a key here ({', '.join(allowed)})")


def _examples(shape: _Shape, value: Any, series: set[str]) -> None:
    if not isinstance(value, list):
        shape.add("examples", "must be an array of example days")
        return
    if len(value) > MAX_EXAMPLES:
        shape.add("examples", f"has {len(value)} entries; at most {MAX_EXAMPLES}")
    for index, example in enumerate(value):
        at = f"examples[{index}]"
        if not isinstance(example, Mapping):
            shape.add(at, "must be an object with date, series and expect")
            continue
        shape.keys(example, EXAMPLE_KEYS, f"{at}.")
        if not _day(example.get("date")):
            shape.add(f"{at}.date", "must be a day YYYY-MM-DD")
        if example.get("series") not in series:
            shape.add(f"{at}.series", f"{example.get('series')!r} is not a series of the manifest")
        expect = example.get("expect")
        if not isinstance(expect, Mapping) or not expect:
            shape.add(f"{at}.expect", "must be an object: figures by field, or state and title")
        if "note" in example and not _text(example["note"]):
            shape.add(f"{at}.note", f"must be text of 1 to {MAX_TEXT} characters")


def _negatives(shape: _Shape, value: Any, series: set[str]) -> None:
    if not isinstance(value, list) or not value:
        shape.add("negatives", "must be an array of at least one case that must fail")
        return
    for index, negative in enumerate(value):
        at = f"negatives[{index}]"
        if not isinstance(negative, Mapping):
            shape.add(at, "must be an object with kind and why")
            continue
        kind = negative.get("kind")
        needed = NEGATIVE_FIELDS.get(kind) if isinstance(kind, str) else None
        if needed is None:
            shape.add(f"{at}.kind", f"{kind!r} is not one of {', '.join(NEGATIVE_FIELDS)}")
            continue
        shape.keys(negative, ("kind", "why", *needed), f"{at}.")
        if not _text(negative.get("why")):
            shape.add(f"{at}.why", "must say why the case fails")
        for name in needed:
            found = negative.get(name)
            if name in ("date", "from") and not _day(found):
                shape.add(f"{at}.{name}", "must be a day YYYY-MM-DD")
            elif name == "series" and found not in series:
                shape.add(f"{at}.series", f"{found!r} is not a series of the manifest")
            elif name == "case" and not (isinstance(found, str) and found and "/" not in found):
                shape.add(f"{at}.case", "must name a folder of fixtures/runs/")


def _sources(shape: _Shape, value: Any, sources: set[str]) -> None:
    if not isinstance(value, list):
        shape.add("sources", "must be an array with an entry per source")
        return
    for index, entry in enumerate(value):
        at = f"sources[{index}]"
        if not isinstance(entry, Mapping):
            shape.add(at, f"must be an object with {', '.join(SOURCE_KEYS)}")
            continue
        shape.keys(entry, SOURCE_KEYS, f"{at}.")
        if entry.get("source") not in sources:
            shape.add(f"{at}.source", f"{entry.get('source')!r} is not a source of the manifest")
        for name in SOURCE_KEYS[1:]:
            if not _text(entry.get(name)):
                shape.add(f"{at}.{name}", f"must be text of 1 to {MAX_TEXT} characters")


def review_problems(raw: bytes, manifest: Manifest) -> list[Problem]:
    """Every way review.json (its bytes) breaks its shape for this manifest; `[]` when it
    holds. The five examples and the attestations are required at submit, not here."""
    shape = _Shape()
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        shape.add("", f"is not JSON ({error})")
        return shape.problems
    if not isinstance(doc, Mapping):
        shape.add("", "must be one JSON object")
        return shape.problems
    shape.keys(doc, REVIEW_KEYS, "")
    series = {s.key for s in manifest.series}
    if "examples" in doc:
        _examples(shape, doc["examples"], series)
    if "negatives" in doc:
        _negatives(shape, doc["negatives"], series)
    if "sources" in doc:
        _sources(shape, doc["sources"], {s.name for s in manifest.sources})
    notes = doc.get("releaseNotes")
    if "releaseNotes" in doc and (
        not isinstance(notes, Mapping)
        or not notes
        or not all(LANGUAGE.fullmatch(k) and _text(v) for k, v in notes.items())
    ):
        shape.add("releaseNotes", "must be an object of texts by language code (en, pt-BR)")
    if "notes" in doc and not _text(doc["notes"]):
        shape.add("notes", f"must be text of 1 to {MAX_TEXT} characters")
    return shape.problems


def _incomplete(path: str, message: str) -> Problem:
    return Problem(INCOMPLETE, f"review information {path}: {message}", path=path)


def review_completeness(raw: bytes | None, manifest: Manifest, *, update: bool) -> list[Problem]:
    """Why the review information (review.json's bytes, or those sent separately; None when
    there is none) is not complete for submitting, or `[]`: its shape first (PLG-REVIEW-INVALID,
    via `review_problems`), then PLG-REVIEW-INCOMPLETE for each part missing: five example
    days, at least one negative case, an entry for each source of the manifest with a `basis`
    among BASIS, and release notes in English for an update (`update`: the plug-in has an
    approved version)."""
    if raw is None:
        return [
            Problem(
                INCOMPLETE,
                "no review information: put review.json in the upload or send it separately",
            )
        ]
    shape = review_problems(raw, manifest)
    if shape:
        return shape
    doc = json.loads(raw)
    problems: list[Problem] = []
    examples = doc.get("examples") or []
    if len(examples) != MAX_EXAMPLES:
        problems.append(
            _incomplete("examples", f"has {len(examples)} example days; five are needed")
        )
    if not doc.get("negatives"):
        problems.append(_incomplete("negatives", "needs at least one case that must fail"))
    entries = doc.get("sources") or []
    named = [entry.get("source") for entry in entries]
    for source in manifest.sources:
        if named.count(source.name) != 1:
            problems.append(
                _incomplete(
                    "sources",
                    f"needs exactly one entry for the source {source.name!r} "
                    "(holder, terms, basis, evidence)",
                )
            )
    for index, entry in enumerate(entries):
        if entry.get("basis") not in BASIS:
            problems.append(
                _incomplete(
                    f"sources[{index}].basis",
                    f"{entry.get('basis')!r} is not one of {', '.join(BASIS)}",
                )
            )
    notes = doc.get("releaseNotes") or {}
    if update and "en" not in notes:
        problems.append(
            _incomplete("releaseNotes", "an update needs release notes in English (en)")
        )
    return problems


def _matches(record: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    """A value's figures by field; an event's state and title; an item's title."""
    if record.get("kind") == "value":
        fields = record.get("fields") or {}
        return all(k in fields and fields[k] == v for k, v in expect.items())
    return all(k in record and record[k] == v for k, v in expect.items())


def _shown(record: Mapping[str, Any]) -> str:
    if record.get("kind") == "value":
        return json.dumps(record.get("fields") or {}, ensure_ascii=False, sort_keys=True)
    keys = ("state", "title") if record.get("kind") == "event" else ("title",)
    return json.dumps({k: record.get(k) for k in keys}, ensure_ascii=False, sort_keys=True)


def review_example_problems(review: Any, records: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """Each example day of review.json (its parsed object) whose expected figures, state or
    title are not on that day in that series of `records` (what the fixtures produce):
    PLG-REVIEW-EXAMPLE at `examples[i]`. Examples of the wrong shape are the shape check's."""
    if not isinstance(review, Mapping) or not isinstance(review.get("examples"), list):
        return []
    by_day: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for record in records:
        by_day.setdefault((record.get("series"), record.get("date")), []).append(record)
    problems: list[Problem] = []
    for index, example in enumerate(review["examples"]):
        if not isinstance(example, Mapping):
            continue
        expect = example.get("expect")
        if not isinstance(expect, Mapping) or not expect:
            continue
        found = by_day.get((example.get("series"), example.get("date")), [])
        if any(_matches(r, expect) for r in found):
            continue
        given = "; ".join(_shown(r) for r in found[:3]) if found else "no record"
        problems.append(
            Problem(
                "PLG-REVIEW-EXAMPLE",
                f"review.json examples[{index}]: on {example.get('date')} series "
                f"{example.get('series')} the fixtures give {given}, not "
                f"{json.dumps(expect, ensure_ascii=False, sort_keys=True)}",
                path=f"examples[{index}]",
            )
        )
    return problems


@dataclass(frozen=True, slots=True)
class SourceBasis:
    """One `sources` entry of the review information: why the service may publish a source."""

    source: str
    holder: str
    terms: str
    basis: str
    evidence: str


@dataclass(frozen=True, slots=True)
class ExampleShown:
    """One example day: the day, the series and what the publisher expects on it, in words."""

    date: str
    series: str
    expected: str
    note: str


@dataclass(frozen=True, slots=True)
class NegativeShown:
    """One case that must fail: its kind, where (`detail`, in words) and why."""

    kind: str
    detail: str
    why: str


@dataclass(frozen=True, slots=True)
class ReviewSheet:
    """The review information as labelled fields a reviewer reads, never as JSON: release
    notes by language, notes, the sources' basis, the example days and the negative cases;
    `other` holds, as text, any part not of review.json's shape."""

    release_notes: tuple[tuple[str, str], ...]
    notes: str
    sources: tuple[SourceBasis, ...]
    examples: tuple[ExampleShown, ...]
    negatives: tuple[NegativeShown, ...]
    other: tuple[tuple[str, str], ...]


def _said(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _entries(value: Any) -> list[Mapping[str, Any]] | None:
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return list(value)
    return None


def review_sheet(doc: Any) -> ReviewSheet | None:
    """Review information (review.json's object) as the labelled fields of `ReviewSheet`;
    None when there is none."""
    if doc is None:
        return None
    if not isinstance(doc, Mapping):
        return ReviewSheet((), "", (), (), (), (("review information", _said(doc)),))
    other: list[tuple[str, str]] = [(k, _said(v)) for k, v in doc.items() if k not in REVIEW_KEYS]
    notes_by_language = doc.get("releaseNotes")
    release_notes: tuple[tuple[str, str], ...] = ()
    if isinstance(notes_by_language, Mapping):
        release_notes = tuple((str(k), _said(v)) for k, v in notes_by_language.items())
    elif notes_by_language is not None:
        other.append(("releaseNotes", _said(notes_by_language)))
    parts: dict[str, list[Mapping[str, Any]]] = {}
    for key in ("sources", "examples", "negatives"):
        found = _entries(doc.get(key, []))
        if found is None:
            other.append((key, _said(doc[key])))
        parts[key] = found or []
    sources = tuple(
        SourceBasis(*(_said(entry.get(name)) for name in SOURCE_KEYS)) for entry in parts["sources"]
    )
    examples = []
    for example in parts["examples"]:
        expect = example.get("expect")
        expected = (
            "; ".join(f"{k}: {_said(v)}" for k, v in expect.items())
            if isinstance(expect, Mapping)
            else _said(expect)
        )
        examples.append(
            ExampleShown(
                _said(example.get("date")),
                _said(example.get("series")),
                expected,
                _said(example.get("note")),
            )
        )
    negatives = tuple(
        NegativeShown(
            _said(negative.get("kind")),
            ", ".join(f"{k} {_said(v)}" for k, v in negative.items() if k not in ("kind", "why")),
            _said(negative.get("why")),
        )
        for negative in parts["negatives"]
    )
    return ReviewSheet(
        release_notes=release_notes,
        notes=_said(doc.get("notes")),
        sources=sources,
        examples=tuple(examples),
        negatives=negatives,
        other=tuple(other),
    )
