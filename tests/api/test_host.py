"""The host routes (operators) over HTTP on the real app and PostgreSQL: registering real packs
of the examples (made by the tool) and folders, every refusal of the pack reader on a crafted
ZIP, the moves of the approved-plug-in table, Held, retention, purge, takedown and the shelf."""

from __future__ import annotations

import io
import json
import random
import shutil
import stat
import struct
import subprocess
import zipfile
import zlib
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text

from almanac.platform.contract.manifest import parse_manifest
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.store.models import Record, RunRequest
from almanac.platform.store.plugins import plugin_status
from almanac.platform.store.write import RunFacts, record_failed_run, write_run
from tests.api.conftest import assert_problem
from tests.conftest import REPO

EXAMPLES = REPO / "examples"
EXAMPLE_IDS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "plugin.json").is_file())
HOST = "/api/v1/host/plugins"
OP = "op@example.org"
UK = "uk-bank-holidays"

# Children before parents; plug-in rows point at their versions, so those links go first.
PLUGIN_TABLES = (
    "plugin_shadow_runs",
    "plugin_rollouts",
    "store_listings",
    "alerts_sent",
    "revisions",
    "records",
    "held_series",
    "run_sources",
    "runs",
    "run_requests",
    "plugin_moves",
    "version_files",
    "plugin_reader_people",
    "plugin_reader_organizations",
    "reader_shown_preferences",
    "reader_shown_changes",
    "organization_shown_defaults",
    "reports",
)


def empty_plugin_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        for table in PLUGIN_TABLES:
            conn.execute(text(f"DELETE FROM {table}"))
        conn.execute(
            text("UPDATE plugins SET current_version_id = NULL, approved_version_id = NULL")
        )
        conn.execute(text("DELETE FROM plugin_versions"))
        conn.execute(text("DELETE FROM plugins"))
        conn.execute(text("DELETE FROM code_blobs"))


@pytest.fixture
def host(api) -> Iterator[Any]:
    """An operator's client on an empty plug-in store (emptied again afterwards, since the
    account tables are emptied before the next test and plug-ins may name an organization)."""
    empty_plugin_tables(api.engine)
    try:
        yield api.signed_in(OP, operator=True)
    finally:
        empty_plugin_tables(api.engine)


@pytest.fixture(scope="session")
def packs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, str]]:
    """Each example packed by the real tool: id -> (archive bytes, digest the tool printed)."""
    out = tmp_path_factory.mktemp("packs")
    made = {}
    for plugin_id in EXAMPLE_IDS:
        target = out / f"{plugin_id}.zip"
        done = subprocess.run(
            [
                str(REPO / ".venv" / "bin" / "node"),
                str(REPO / "tool" / "almanac-plugin.mjs"),
                "pack",
                str(EXAMPLES / plugin_id),
                "--out",
                str(target),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        digest = done.stdout.split("digest ")[1].strip()
        made[plugin_id] = (target.read_bytes(), digest)
    return made


def folder_files(plugin_id: str) -> dict[str, bytes]:
    root = EXAMPLES / plugin_id
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def zip_of(files: dict[str, bytes], top: str = UK, *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A ZIP as DECISIONS 5 describes (entries `<top>/<path>`, 1980 times, no extras)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(f"{top}/{path}" if top else path, (1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            archive.writestr(info, data)
    return buffer.getvalue()


def uk_zip(**changes: Any) -> bytes:
    """The UK example zipped with its manifest changed by `changes` (top-level keys)."""
    files = folder_files(UK)
    manifest = json.loads(files["plugin.json"])
    manifest.update(changes)
    files["plugin.json"] = json.dumps(manifest, indent=2).encode()
    return zip_of(files)


def post_zip(client, data: bytes, **params: Any):
    return client.post(
        f"{HOST}/pack", content=data, headers={"content-type": "application/zip"}, params=params
    )


def register(client, packs, plugin_id: str = UK) -> dict:
    made = post_zip(client, packs[plugin_id][0])
    assert made.status_code == 201, made.text
    return made.json()


def stored_count(engine: Engine, model) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(model.__table__)).scalar_one()


def write(api, plugin_id: str, batch: list[dict], today: date) -> None:
    """A successful run of the approved version, as the run pipeline writes it."""
    with api.engine.connect() as conn:
        status = plugin_status(conn, plugin_id)
        version = conn.execute(
            text("SELECT manifest FROM plugin_versions WHERE id = :id"),
            {"id": status.approved_version_id},
        ).scalar_one()
    manifest = parse_manifest(version if isinstance(version, dict) else json.loads(version))
    now = api.clock()
    write_run(
        api.engine,
        plugin_id=plugin_id,
        version_id=status.approved_version_id,
        digest=status.approved_digest,
        manifest=manifest.manifest,
        run=RunFacts(today=today, trigger=RunTrigger.SCHEDULE, started_at=now, now=now),
        batch=batch,
    )


def fixture_records(plugin_id: str) -> list[dict]:
    lines = (EXAMPLES / plugin_id / "fixtures" / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# Registration -----------------------------------------------------------------------------


def test_real_packs_of_every_example_are_registered(api, host, packs):
    for plugin_id in EXAMPLE_IDS:
        archive, digest = packs[plugin_id]
        made = post_zip(host, archive)
        assert made.status_code == 201, made.text
        body = made.json()
        assert (body["plugin_id"], body["digest"], body["state"]) == (plugin_id, digest, "pending")
        assert body["warnings"] == []
    listed = host.get(HOST).json()
    assert [p["id"] for p in listed] == EXAMPLE_IDS
    assert {p["state"] for p in listed} == {"pending"}

    again = post_zip(host, packs[UK][0]).json()
    first = next(p for p in listed if p["id"] == UK)
    assert again["digest"] == first["current_digest"]
    page = host.get(f"{HOST}/{UK}").json()
    assert len(page["versions"]) == 1
    assert [(m["action"], m["by"]) for m in page["moves"]] == [("code-changed", OP)]
    assert page["moves"][0]["at"] == api.clock().isoformat().replace("+00:00", "Z")


def test_the_version_page_shows_digest_manifest_files_and_checks(host, packs):
    made = register(host, packs)
    version = host.get(f"{HOST}/{UK}/versions/{made['version_id']}")
    assert version.status_code == 200
    body = version.json()
    assert body["digest"] == packs[UK][1] and body["current"] and not body["approved"]
    assert body["manifest"] == json.loads((EXAMPLES / UK / "plugin.json").read_bytes())
    on_disk = folder_files(UK)
    assert [f["path"] for f in body["files"]] == ["fetch.mjs", "holidays.mjs", "plugin.json"]
    for listed in body["files"]:
        assert listed["size"] == len(on_disk[listed["path"]])
        assert listed["sha256"] == __import__("hashlib").sha256(on_disk[listed["path"]]).hexdigest()
    room = body["checks"].pop("room")
    assert body["checks"] == {"manifest": [], "update": [], "against_version_id": None}
    # The locked-room checks wait for the checks job (tests/publishing/test_upload_checks.py).
    assert [(c["name"], c["status"]) for c in room] == [
        (name, "queued") for name in ("fixtures", "cases", "examples", "sources", "links")
    ]
    assert_problem(host.get(f"{HOST}/{UK}/versions/999999"), 404, "NOT-FOUND")


def test_register_from_a_folder_on_the_server(host, tmp_path):
    made = host.post(f"{HOST}/folder", json={"path": str(EXAMPLES / UK)})
    assert made.status_code == 201, made.text
    page = host.get(f"{HOST}/{UK}").json()
    assert page["versions"][0]["origin"] == "folder" and page["versions"][0]["origin_by"] == OP
    assert_problem(host.post(f"{HOST}/folder", json={"path": "examples/x"}), 422, "REQUEST-INVALID")
    empty = tmp_path / "not-a-plugin"
    empty.mkdir()
    refused = host.post(f"{HOST}/folder", json={"path": str(empty)})
    body = assert_problem(refused, 422, "PLG-MANIFEST-INVALID-JSON")
    assert {f["code"] for f in body["findings"]} >= {"PLG-FETCH-MISSING"}
    linked = tmp_path / UK
    shutil.copytree(EXAMPLES / UK, linked)
    (linked / "extra.mjs").symlink_to("/etc/passwd")
    refused = host.post(f"{HOST}/folder", json={"path": str(linked)})
    assert_problem(refused, 422, "PLG-CODE-SYMLINK")


def test_publisher_organization_is_set_at_registration(host, packs):
    org = host.post("/api/v1/organizations", json={"name": "Gov", "domain": "gov.example"})
    other = host.post("/api/v1/organizations", json={"name": "Other", "domain": "other.example"})
    org_id, other_id = org.json()["id"], other.json()["id"]
    made = post_zip(host, packs[UK][0], publisher_organization_id=org_id)
    assert made.status_code == 201, made.text
    page = host.get(f"{HOST}/{UK}").json()
    assert page["publisher_organization_id"] == org_id
    assert "publisher" in [m["action"] for m in page["moves"]]
    taken = post_zip(host, packs[UK][0], publisher_organization_id=other_id)
    assert_problem(taken, 409, "PLG-ID-TAKEN")
    unknown = post_zip(host, packs[UK][0], publisher_organization_id=987654)
    assert_problem(unknown, 422, "REQUEST-INVALID")


# The pack reader's refusals ---------------------------------------------------------------


def _patch(data: bytes, signature: bytes, offset: int, fmt: str, value: int) -> bytes:
    """Every header with `signature` gets `value` at `offset` (struct `fmt`)."""
    out = bytearray(data)
    at = out.find(signature)
    while at != -1:
        struct.pack_into(fmt, out, at + offset, value)
        at = out.find(signature, at + 4)
    return bytes(out)


def _raw_zip(name: str, body: bytes, *, method: int, crc: int, size: int) -> bytes:
    """One entry written by hand, declaring whatever size and CRC it is told."""
    raw = name.encode()
    local = struct.pack(
        "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 33, crc, len(body), size, len(raw), 0
    )
    central = struct.pack(
        "<4sHHHHHHIIIHHHHHII",
        b"PK\x01\x02",
        20,
        20,
        0,
        method,
        0,
        33,
        crc,
        len(body),
        size,
        len(raw),
        0,
        0,
        0,
        0,
        0,
        0,
    )
    cd_offset = len(local) + len(raw) + len(body)
    cd = central + raw
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(cd), cd_offset, 0)
    return local + raw + body + cd + end


def _deflated(data_chunks: Iterator[bytes]) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    out = [squeeze.compress(chunk) for chunk in data_chunks]
    out.append(squeeze.flush())
    return b"".join(out)


def _link_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in folder_files(UK).items():
            archive.writestr(f"{UK}/{path}", data)
        info = zipfile.ZipInfo(f"{UK}/passwd.mjs")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def _zip64() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in folder_files(UK).items():
            with archive.open(f"{UK}/{path}", "w", force_zip64=True) as entry:
                entry.write(data)
    return buffer.getvalue()


def _many() -> bytes:
    files = folder_files(UK)
    files.update({f"fixtures/extra/{n}.txt": b"x" for n in range(500)})
    return zip_of(files)


def _lying_bomb() -> bytes:
    # 200 MB of zeros deflate to ~200 KB, while the entry says it holds 1,000 bytes.
    body = _deflated(bytes(1 << 20) for _ in range(200))
    return _raw_zip(f"{UK}/fetch.mjs", body, method=8, crc=0, size=1000)


def _declared_too_large() -> bytes:
    body = _deflated([bytes(range(256)) * 2000])
    return _raw_zip(f"{UK}/fetch.mjs", body, method=8, crc=0, size=33 * 1024 * 1024)


def _damaged() -> bytes:
    good = zip_of(folder_files(UK))
    return _patch(good, b"PK\x01\x02", 16, "<I", 0x12345678)


def _with(**extra: bytes) -> bytes:
    files = folder_files(UK)
    files.update(extra)
    return zip_of(files)


def _without(*paths: str) -> bytes:
    return zip_of({k: v for k, v in folder_files(UK).items() if k not in paths})


def _good() -> bytes:
    return zip_of(folder_files(UK))


REFUSED_ZIPS = {
    "PLG-ZIP-NOT-ZIP": lambda: b"this is not an archive at all",
    "PLG-ZIP-PREPENDED": lambda: b"#!/bin/sh\nexit 0\n" + _good(),
    "PLG-ZIP-MULTI-DISK": lambda: _patch(
        _patch(_good(), b"PK\x05\x06", 4, "<H", 1), b"PK\x05\x06", 6, "<H", 1
    ),
    "PLG-ZIP-ZIP64": _zip64,
    "PLG-ZIP-ENCRYPTED": lambda: _patch(
        _patch(_good(), b"PK\x03\x04", 6, "<H", 1), b"PK\x01\x02", 8, "<H", 1
    ),
    "PLG-ZIP-METHOD": lambda: zip_of(folder_files(UK), method=zipfile.ZIP_BZIP2),
    "PLG-ZIP-TOO-MANY-ENTRIES": _many,
    "PLG-ZIP-UNCOMPRESSED-TOO-LARGE": _lying_bomb,
    "PLG-ZIP-DAMAGED": _damaged,
    "PLG-ZIP-LINK": _link_zip,
    "PLG-ZIP-PATH": lambda: _with(**{"fixtures/../../escape.txt": b"x"}),
    "PLG-ZIP-TOO-DEEP": lambda: _with(**{"/".join("abcdefghi") + "/deep.mjs": b""}),
    "PLG-ZIP-CASE": lambda: _with(**{"Fetch.mjs": b""}),
    "PLG-ZIP-FOLDER": lambda: zip_of({"a/plugin.json": b"{}", "b/fetch.mjs": b""}, ""),
    "PLG-ZIP-PACK-JSON": lambda: _with(**{".pack.json": b'{"id": "uk-bank-holidays"}'}),
    "PLG-CODE-FILE-TYPE": lambda: _with(**{"helper.py": b"print(1)\n"}),
    "PLG-FETCH-MISSING": lambda: _without("fetch.mjs"),
    "PLG-FIXTURE-SOURCE-MISSING": lambda: _without("fixtures/sources/bank-holidays-json"),
    "PLG-FIXTURE-RECORDS-MISSING": lambda: _without("fixtures/records.jsonl"),
    "PLG-FOLDER-ID": lambda: zip_of(folder_files(UK), "uk-holidays"),
    "PLG-MANIFEST-TIMEZONE": lambda: uk_zip(timezone="+01:00"),
}


@pytest.mark.parametrize("code", sorted(REFUSED_ZIPS))
def test_a_refused_archive_is_a_problem_and_stores_nothing(api, host, code):
    refused = post_zip(host, REFUSED_ZIPS[code]())
    body = assert_problem(refused, 422, code)
    assert code in {f["code"] for f in body["findings"]}
    assert all(f["docs"].endswith(f"/docs/problems/{f['code']}") for f in body["findings"])
    assert host.get(HOST).json() == []


def test_more_paths_the_archive_may_not_hold(host):
    for bad in (f"/{UK}/abs.mjs", f"{UK}/a\\b.mjs", f"{UK}/tab\there.mjs", f"{UK}/./x.mjs"):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for path, data in folder_files(UK).items():
                out.writestr(f"{UK}/{path}", data)
            info = zipfile.ZipInfo("placeholder")
            info.filename = bad
            out.writestr(info, b"")
        assert_problem(post_zip(host, buffer.getvalue()), 422, "PLG-ZIP-PATH")
    unflagged = _raw_zip(f"{UK}/caf\u00e9.mjs", b"", method=0, crc=0, size=0)
    assert_problem(post_zip(host, unflagged), 422, "PLG-ZIP-PATH")
    twice = io.BytesIO()
    with zipfile.ZipFile(twice, "w") as out:
        for path, data in folder_files(UK).items():
            out.writestr(f"{UK}/{path}", data)
        with pytest.warns(UserWarning, match="Duplicate"):
            out.writestr(f"{UK}/fetch.mjs", b"")
    assert_problem(post_zip(host, twice.getvalue()), 422, "PLG-ZIP-PATH")
    declared = post_zip(host, _declared_too_large())
    assert_problem(declared, 422, "PLG-ZIP-UNCOMPRESSED-TOO-LARGE")
    noise = random.Random(7).randbytes(530_000).hex().encode()  # compresses about 2 to 1
    big_code = _with(**{"big.mjs": b"// " + noise + b"\n"})
    body = assert_problem(post_zip(host, big_code), 422, "PLG-ZIP-UNCOMPRESSED-TOO-LARGE")
    assert "digest-covered code" in body["detail"]
    ratio = _with(**{"fixtures/zeros.txt": bytes(1_000_000)})
    assert_problem(post_zip(host, ratio), 422, "PLG-ZIP-UNCOMPRESSED-TOO-LARGE")


def test_an_archive_above_8_mib_is_413(host):
    too_big = b"PK\x03\x04" + bytes(8 * 1024 * 1024 - 3)
    body = assert_problem(post_zip(host, too_big), 413, "PLG-ZIP-TOO-LARGE")
    assert "8 MiB" in body["detail"]
    far_too_big = bytes(17 * 1024 * 1024)
    assert_problem(post_zip(host, far_too_big), 413, "REQUEST-TOO-LARGE")
    assert host.get(HOST).json() == []


def test_the_update_rules_refuse_or_warn_against_the_approved_version(api, host, packs):
    first = register(host, packs)
    approve = host.post(f"{HOST}/{UK}/approve", json={"digest": first["digest"]})
    assert approve.status_code == 200, approve.text

    refused = post_zip(host, uk_zip(version="1.1.0", timezone="Europe/Dublin"))
    assert_problem(refused, 422, "PLG-UPDATE-TIMEZONE")
    assert len(host.get(f"{HOST}/{UK}").json()["versions"]) == 1

    manifest = json.loads((EXAMPLES / UK / "plugin.json").read_bytes())
    series = [s for s in manifest["series"] if s["key"] != "scotland"]
    warned = post_zip(host, uk_zip(version="1.1.0", series=series))
    assert warned.status_code == 201, warned.text
    assert [w["code"] for w in warned.json()["warnings"]] == ["PLG-UPDATE-SERIES-REMOVED"]
    assert warned.json()["state"] == "pending"
    version = host.get(f"{HOST}/{UK}/versions/{warned.json()['version_id']}").json()
    assert [w["code"] for w in version["checks"]["update"]] == ["PLG-UPDATE-SERIES-REMOVED"]
    assert version["checks"]["update"][0]["severity"] == "warning"
    assert version["checks"]["against_version_id"] == first["version_id"]


def test_a_version_number_names_one_code_and_must_grow(host, packs):
    first = register(host, packs)
    version = json.loads(folder_files(UK)["plugin.json"])["version"]
    assert post_zip(host, packs[UK][0]).json()["version_id"] == first["version_id"]

    files = folder_files(UK)
    files["fetch.mjs"] += b"\n// a changed line\n"
    reused = post_zip(host, zip_of(files))
    body = assert_problem(reused, 409, "PLG-VERSION-REUSED")
    assert version in body["detail"]

    major, minor, patch = (int(n) for n in version.split("."))
    later = f"{major}.{minor}.{patch + 1}"
    assert post_zip(host, uk_zip(version=later)).status_code == 201
    lower = post_zip(host, uk_zip(version=f"{major}.{minor}.{patch}", name={"en": "Other"}))
    assert_problem(lower, 409, "PLG-VERSION-REUSED")
    older = f"{major}.{minor - 1}.9" if minor else f"{major - 1}.9.9"
    not_greater = post_zip(host, uk_zip(version=older))
    body = assert_problem(not_greater, 409, "PLG-VERSION-NOT-GREATER")
    assert later in body["detail"]
    assert len(host.get(f"{HOST}/{UK}").json()["versions"]) == 2


# Moves ------------------------------------------------------------------------------------


def test_approve_pause_resume_remove_restore(api, host, packs):
    made = register(host, packs)
    digest = made["digest"]
    wrong = "sha256:" + "0" * 64
    never = host.post(f"{HOST}/{UK}/approve", json={"digest": wrong})
    assert_problem(never, 409, "DIGEST-NOT-CURRENT")
    assert_problem(host.post(f"{HOST}/{UK}/approve", json={"digest": "x"}), 422, "REQUEST-INVALID")
    pause = host.post(f"{HOST}/{UK}/pause")
    body = assert_problem(pause, 409, "STATE-CONFLICT")
    assert "earlier version was approved" in body["detail"]

    approved = host.post(f"{HOST}/{UK}/approve", json={"digest": digest})
    assert approved.status_code == 200
    assert (approved.json()["state"], approved.json()["approved_digest"]) == ("approved", digest)
    assert stored_count(api.engine, RunRequest) == 1  # the run starts at once
    assert_problem(
        host.post(f"{HOST}/{UK}/approve", json={"digest": digest}), 409, "STATE-CONFLICT"
    )

    assert host.post(f"{HOST}/{UK}/pause").json()["state"] == "paused"
    assert_problem(host.post(f"{HOST}/{UK}/pause"), 409, "STATE-CONFLICT")
    assert host.post(f"{HOST}/{UK}/resume").json()["state"] == "approved"
    assert_problem(host.post(f"{HOST}/{UK}/resume"), 409, "STATE-CONFLICT")
    assert host.post(f"{HOST}/{UK}/remove").json()["state"] == "removed"
    assert_problem(host.post(f"{HOST}/{UK}/remove"), 409, "STATE-CONFLICT")
    assert_problem(
        host.post(f"{HOST}/{UK}/approve", json={"digest": digest}), 409, "STATE-CONFLICT"
    )
    never = host.post(f"{HOST}/{UK}/restore", json={"digest": wrong})
    assert_problem(never, 409, "DIGEST-NOT-CURRENT")
    restored = host.post(f"{HOST}/{UK}/restore", json={"digest": digest})
    assert restored.json()["state"] == "approved"
    assert_problem(
        host.post(f"{HOST}/{UK}/restore", json={"digest": digest}), 409, "STATE-CONFLICT"
    )

    moves = restored.json()["moves"]
    assert [(m["action"], m["from_state"], m["to_state"]) for m in moves] == [
        ("code-changed", None, "pending"),
        ("approve", "pending", "approved"),
        ("pause", "approved", "paused"),
        ("resume", "paused", "approved"),
        ("remove", "approved", "removed"),
        ("approve", "removed", "approved"),
    ]
    assert {m["by"] for m in moves} == {OP}


def test_approving_a_digest_that_changed_since_the_page_is_refused(host, packs):
    shown = register(host, packs)["digest"]
    current = post_zip(host, uk_zip(version="1.0.1")).json()["digest"]
    refused = host.post(f"{HOST}/{UK}/approve", json={"digest": shown})
    body = assert_problem(refused, 409, "DIGEST-CHANGED")
    assert "changed" in body["detail"]
    assert shown in body["detail"] and current in body["detail"]
    assert host.get(f"{HOST}/{UK}").json()["state"] == "pending"


def test_approving_a_digest_never_the_plugins_names_both_digests(host, packs):
    current = register(host, packs)["digest"]
    other = packs["ecb-reference-rates"][1]  # a real digest, of another plug-in's code
    refused = host.post(f"{HOST}/{UK}/approve", json={"digest": other})
    body = assert_problem(refused, 409, "DIGEST-NOT-CURRENT")
    assert body["title"] == "The digest is not the current version's"
    assert other in body["detail"] and current in body["detail"]
    assert "not the current version's" in body["detail"]
    assert "changed since the page" not in body["detail"]
    assert host.get(f"{HOST}/{UK}").json()["state"] == "pending"


def test_a_local_version_is_refused_at_registration_and_changes_nothing(host, packs, tmp_path):
    first = post_zip(host, uk_zip(audience="local"))
    body = assert_problem(first, 422, "PLG-LOCAL-NOT-APPROVED")
    assert "local" in body["detail"]
    assert host.get(HOST).json() == []

    public = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": public["digest"]})
    before = host.get(f"{HOST}/{UK}").json()
    local = post_zip(host, uk_zip(version="1.1.0", audience="local"))
    assert_problem(local, 422, "PLG-LOCAL-NOT-APPROVED")
    after = host.get(f"{HOST}/{UK}").json()
    assert (after["state"], after["current_digest"], after["approved_digest"]) == (
        "approved",
        public["digest"],
        public["digest"],
    )
    assert after["versions"] == before["versions"] and after["moves"] == before["moves"]
    local_folder = tmp_path / UK
    shutil.copytree(EXAMPLES / UK, local_folder)
    manifest = json.loads((local_folder / "plugin.json").read_text())
    manifest.update(version="1.2.0", audience="local")
    (local_folder / "plugin.json").write_text(json.dumps(manifest, indent=2))
    folder = host.post(f"{HOST}/folder", json={"path": str(local_folder)})
    assert_problem(folder, 422, "PLG-LOCAL-NOT-APPROVED")
    assert host.get(f"{HOST}/{UK}").json()["versions"] == before["versions"]


def test_registering_an_older_kept_version_again_is_refused(api, host, packs):
    v1 = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": v1["digest"]})
    v2 = post_zip(host, uk_zip(version="1.1.0")).json()
    host.post(f"{HOST}/{UK}/approve", json={"digest": v2["digest"]})
    before = host.get(f"{HOST}/{UK}").json()

    again = post_zip(host, packs[UK][0])  # the unchanged pack of 1.0.0
    body = assert_problem(again, 409, "PLG-VERSION-KEPT")
    assert "1.0.0" in body["detail"] and "1.1.0" in body["detail"]
    assert "roll back" in body["detail"]
    after = host.get(f"{HOST}/{UK}").json()
    assert (after["state"], after["current_digest"], after["approved_digest"]) == (
        "approved",
        v2["digest"],
        v2["digest"],
    )
    assert after["moves"] == before["moves"]
    # The current version's own code again is still the same version: nothing changes.
    same = post_zip(host, uk_zip(version="1.1.0"))
    assert same.status_code == 201 and same.json()["version_id"] == v2["version_id"]
    assert host.get(f"{HOST}/{UK}").json()["moves"] == before["moves"]


def test_roll_back_to_an_earlier_approved_version(api, host, packs):
    from almanac.orchestration.catalog import load_catalog
    from almanac.orchestration.due import plan_runs

    v1 = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": v1["digest"]})
    post_zip(host, uk_zip(version="1.0.5"))  # never approved
    v2 = post_zip(host, uk_zip(version="1.1.0")).json()
    host.post(f"{HOST}/{UK}/approve", json={"digest": v2["digest"]})
    v3 = post_zip(host, uk_zip(version="1.2.0")).json()  # pending, never approved
    requests_before = stored_count(api.engine, RunRequest)

    rollback = f"{HOST}/{UK}/rollback"
    reason = "1.1.0 drops Scottish holidays"
    for never in ("1.0.5", "1.2.0"):
        refused = host.post(rollback, json={"version": never, "reason": reason})
        assert never in assert_problem(refused, 409, "ROLLBACK-NOT-APPROVED")["detail"]
    unknown = host.post(rollback, json={"version": "0.9.0", "reason": reason})
    assert_problem(unknown, 404, "NOT-FOUND")
    assert_problem(host.post(rollback, json={"version": "1.0.0"}), 422, "REQUEST-INVALID")
    blank = host.post(rollback, json={"version": "1.0.0", "reason": "  "})
    assert_problem(blank, 422, "REQUEST-INVALID")
    assert stored_count(api.engine, RunRequest) == requests_before

    done = host.post(rollback, json={"version": "1.0.0", "reason": reason})
    assert done.status_code == 200, done.text
    page = done.json()
    assert (page["state"], page["current_version"], page["approved_version"]) == (
        "approved",
        "1.0.0",
        "1.0.0",
    )
    assert page["current_digest"] == page["approved_digest"] == v1["digest"]
    last = page["moves"][-1]
    assert (last["action"], last["from_state"], last["to_state"], last["by"]) == (
        "roll-back",
        "pending",
        "approved",
        OP,
    )
    assert last["version_id"] == v1["version_id"]
    assert last["at"] == api.clock().isoformat().replace("+00:00", "Z")
    assert last["detail"] == {
        "reason": reason,
        "from_version": "1.2.0",
        "from_digest": v3["digest"],
        "to_version": "1.0.0",
        "digest": v1["digest"],
    }
    # It runs at once, the rolled-back version (the run pipeline runs the approved code).
    with api.engine.connect() as conn:
        latest = (
            conn.execute(select(RunRequest.__table__).order_by(RunRequest.__table__.c.id.desc()))
            .mappings()
            .first()
        )
        entry = next(e for e in load_catalog(conn) if e.id == UK)
        plan = plan_runs(conn, api.clock())
        request_versions = dict(conn.execute(select(RunRequest.id, RunRequest.version_id)).all())
    assert stored_count(api.engine, RunRequest) == requests_before + 1
    assert (latest["version_id"], latest["trigger"]) == (v1["version_id"], "first")
    assert (entry.version, entry.digest, entry.approved_version_id) == (
        "1.0.0",
        v1["digest"],
        v1["version_id"],
    )
    # The due-run planner starts one run of 1.0.0; 1.1.0's approval request is stale now.
    (order,) = [o for o in plan.orders if o.plugin_id == UK]
    assert request_versions[order.request_id] == v1["version_id"]
    assert {request_versions[r] for r in plan.dropped} == {v1["version_id"], v2["version_id"]}
    version = host.get(f"{HOST}/{UK}/versions/{v1['version_id']}").json()
    assert version["current"] and version["approved"]

    again = host.post(rollback, json={"version": "1.0.0", "reason": reason})
    assert_problem(again, 409, "STATE-CONFLICT")
    # 1.1.0 was approved before too: the host may go to it again the same way.
    forward = host.post(rollback, json={"version": "1.1.0", "reason": "the fix was wrong"})
    assert forward.json()["current_version"] == "1.1.0"
    # A newer upload still has to exceed every kept version and waits for approval.
    assert_problem(post_zip(host, uk_zip(version="1.1.5")), 409, "PLG-VERSION-NOT-GREATER")


def test_roll_back_keeps_a_paused_plugin_paused_and_refuses_removed(api, host, packs):
    v1 = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": v1["digest"]})
    v2 = post_zip(host, uk_zip(version="1.1.0")).json()
    host.post(f"{HOST}/{UK}/approve", json={"digest": v2["digest"]})
    host.post(f"{HOST}/{UK}/pause")
    requests_before = stored_count(api.engine, RunRequest)
    body = {"version": "1.0.0", "reason": "back to the known good one"}
    paused = host.post(f"{HOST}/{UK}/rollback", json=body).json()
    assert (paused["state"], paused["approved_version"]) == ("paused", "1.0.0")
    assert stored_count(api.engine, RunRequest) == requests_before
    resumed = host.post(f"{HOST}/{UK}/resume").json()
    assert (resumed["state"], resumed["approved_digest"]) == ("approved", v1["digest"])
    host.post(f"{HOST}/{UK}/remove")
    removed = host.post(f"{HOST}/{UK}/rollback", json={**body, "version": "1.1.0"})
    assert "restore" in assert_problem(removed, 409, "STATE-CONFLICT")["detail"]


def test_the_pack_route_takes_only_application_zip(host, packs):
    archive = packs[UK][0]
    for headers in (
        {},
        {"content-type": "application/octet-stream"},
        {"content-type": "text/plain"},
    ):
        refused = host.post(f"{HOST}/pack", content=archive, headers=headers)
        body = assert_problem(refused, 415, "REQUEST-MEDIA-TYPE")
        assert "application/zip" in body["detail"]
    form = host.post(f"{HOST}/pack", files={"file": ("pack.zip", archive, "application/zip")})
    assert_problem(form, 415, "REQUEST-MEDIA-TYPE")
    assert host.get(HOST).json() == []
    with_parameter = post_zip_as(host, archive, "Application/ZIP; charset=binary")
    assert with_parameter.status_code == 201, with_parameter.text


def post_zip_as(client, data: bytes, content_type: str):
    return client.post(f"{HOST}/pack", content=data, headers={"content-type": content_type})


def test_last_five_runs_with_reasons(api, host, packs):
    made = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": made["digest"]})
    assert host.get(f"{HOST}/{UK}/runs").json() == []
    with api.engine.connect() as conn:
        version_id = plugin_status(conn, UK).approved_version_id
    for n in range(6):
        now = api.clock()
        record_failed_run(
            api.engine,
            plugin_id=UK,
            version_id=version_id,
            digest=made["digest"],
            run=RunFacts(date(2026, 11, 2), RunTrigger.SCHEDULE, now, now),
            reason=f"could not download bank-holidays-json: attempt {n}",
        )
    runs = host.get(f"{HOST}/{UK}/runs").json()
    assert [r["reason"] for r in runs] == [
        f"could not download bank-holidays-json: attempt {n}" for n in (5, 4, 3, 2, 1)
    ]
    assert {r["outcome"] for r in runs} == {"failure"}
    page = host.get(f"{HOST}/{UK}").json()
    assert page["state"] == "failing" and page["last_runs"] == runs


# Held, retention, purge -------------------------------------------------------------------


def test_held_shows_first_missing_dates_then_accept_or_keep(api, host, packs):
    made = register(host, packs)
    host.post(f"{HOST}/{UK}/approve", json={"digest": made["digest"]})
    decide = {"decision": "keep-them"}
    assert_problem(host.post(f"{HOST}/{UK}/held", json=decide), 409, "NOTHING-HELD")
    today = date(2022, 11, 4)
    write(api, UK, fixture_records(UK), today)
    for _ in range(3):
        write(api, UK, [], today)  # the real records go missing three times in a row
    page = host.get(f"{HOST}/{UK}").json()
    assert page["held"] is True
    held = {h["series"]: h for h in page["held_series"]}
    assert set(held) == {"england-and-wales", "northern-ireland", "scotland"}
    first = held["england-and-wales"]
    assert first["count"] > 10 and first["first_dates"][0] == "2021-12-27"
    kept = host.post(f"{HOST}/{UK}/held", json=decide)
    assert kept.status_code == 200 and kept.json()["withdrawn"] == 0
    assert kept.json()["plugin"]["held"] is False
    for _ in range(3):
        write(api, UK, [], today)
    accepted = host.post(f"{HOST}/{UK}/held", json={"decision": "accept-removals"})
    assert accepted.json()["withdrawn"] == sum(h["count"] for h in held.values())
    actions = [m["action"] for m in accepted.json()["plugin"]["moves"]]
    assert actions[-2:] == ["keep-them", "accept-removals"]
    bad = host.post(f"{HOST}/{UK}/held", json={"decision": "maybe"})
    assert_problem(bad, 422, "REQUEST-INVALID")


def test_retention_answer_needs_the_terms_read_and_rules_purge(api, host, packs):
    made = register(host, packs)
    page = host.get(f"{HOST}/{UK}").json()
    terms = json.loads((EXAMPLES / UK / "plugin.json").read_bytes())["licence"]["terms"]
    assert page["retention"]["licence"]["terms"] == terms
    assert (page["retention"]["answer"], page["retention"]["purge_offered"]) == ("yes", False)

    assert_problem(host.get(f"{HOST}/{UK}/purge"), 409, "PURGE-NOT-OFFERED")
    unread = host.post(f"{HOST}/{UK}/retention", json={"answer": "no", "terms_read": False})
    assert_problem(unread, 422, "REQUEST-INVALID")
    assert_problem(
        host.post(f"{HOST}/{UK}/retention", json={"answer": "no"}), 422, "REQUEST-INVALID"
    )
    answered = host.post(f"{HOST}/{UK}/retention", json={"answer": "no", "terms_read": True})
    retention = answered.json()["retention"]
    assert (retention["answer"], retention["registered"], retention["recorded_by"]) == (
        "no",
        "yes",
        OP,
    )
    assert retention["purge_offered"] is True

    host.post(f"{HOST}/{UK}/approve", json={"digest": made["digest"]})
    records = fixture_records(UK)
    write(api, UK, records, date(2022, 11, 4))
    dry = host.get(f"{HOST}/{UK}/purge")
    assert dry.json() == {"records": len(records), "revisions": 0, "removed": False}
    assert stored_count(api.engine, Record) == len(records)
    unconfirmed = host.post(f"{HOST}/{UK}/purge", json={})
    assert_problem(unconfirmed, 422, "PLG-PURGE-CONFIRM")
    wrong = host.post(f"{HOST}/{UK}/purge", json={"typed_id": "ecb-reference-rates"})
    assert_problem(wrong, 422, "PLG-PURGE-CONFIRM")
    assert stored_count(api.engine, Record) == len(records)
    done = host.post(f"{HOST}/{UK}/purge", json={"typed_id": UK})
    assert done.json() == {"records": len(records), "revisions": 0, "removed": True}
    assert stored_count(api.engine, Record) == 0
    page = host.get(f"{HOST}/{UK}").json()
    assert len(page["last_runs"]) == 1  # run history stays
    assert [m["action"] for m in page["moves"]][-1] == "purge"


# Takedown and shelf -----------------------------------------------------------------------


def test_takedown_with_a_public_message_restorable_for_the_same_digest(host, packs):
    digest = register(host, packs)["digest"]
    takedown = {"reason": "impersonation", "note": "seen in report 12", "message": "m" * 281}
    assert_problem(host.post(f"{HOST}/{UK}/takedown", json=takedown), 422, "REQUEST-INVALID")
    takedown["message"] = "This plug-in is taken down while we check its source. " * 5
    takedown["message"] = takedown["message"][:280]
    down = host.post(f"{HOST}/{UK}/takedown", json=takedown)
    assert down.status_code == 200, down.text
    assert down.json()["taken_down"] is True
    assert down.json()["takedown"] == {
        "reason": "impersonation",
        "note": "seen in report 12",
        "message": takedown["message"],
        "digest": digest,
    }
    assert_problem(host.post(f"{HOST}/{UK}/takedown", json=takedown), 409, "STATE-CONFLICT")
    other = {"digest": "sha256:" + "1" * 64}
    assert_problem(host.post(f"{HOST}/{UK}/takedown/restore", json=other), 409, "TAKEDOWN-DIGEST")
    restored = host.post(f"{HOST}/{UK}/takedown/restore", json={"digest": digest})
    assert restored.json()["taken_down"] is False and restored.json()["takedown"] is None
    again = host.post(f"{HOST}/{UK}/takedown/restore", json={"digest": digest})
    assert_problem(again, 409, "STATE-CONFLICT")

    host.post(f"{HOST}/{UK}/takedown", json=takedown)
    post_zip(host, uk_zip(version="1.0.1"))  # the code changes after the takedown
    stale = host.post(f"{HOST}/{UK}/takedown/restore", json={"digest": digest})
    assert_problem(stale, 409, "TAKEDOWN-DIGEST")
    actions = [m["action"] for m in host.get(f"{HOST}/{UK}").json()["moves"]]
    assert actions.count("takedown") == 2 and actions.count("restore") == 1


def test_take_off_the_shelf_and_back(host, packs):
    register(host, packs)
    off = host.post(f"{HOST}/{UK}/take-off-shelf")
    assert off.json()["shelved"] is True
    again = host.post(f"{HOST}/{UK}/take-off-shelf")
    assert [m["action"] for m in again.json()["moves"]].count("shelve") == 1
    back = host.post(f"{HOST}/{UK}/put-on-shelf")
    assert back.json()["shelved"] is False
    assert [m["action"] for m in back.json()["moves"]][-1] == "unshelve"


# Who may ----------------------------------------------------------------------------------

PLUGIN_ROUTES = [
    ("get", ""),
    ("get", "/versions/1"),
    ("get", "/runs"),
    ("post", "/approve"),
    ("post", "/restore"),
    ("post", "/rollback"),
    ("post", "/pause"),
    ("post", "/resume"),
    ("post", "/remove"),
    ("post", "/held"),
    ("post", "/retention"),
    ("get", "/purge"),
    ("post", "/purge"),
    ("post", "/takedown"),
    ("post", "/takedown/restore"),
    ("post", "/take-off-shelf"),
    ("post", "/put-on-shelf"),
]
BODIES = {
    "/approve": {"digest": "sha256:" + "0" * 64},
    "/restore": {"digest": "sha256:" + "0" * 64},
    "/takedown/restore": {"digest": "sha256:" + "0" * 64},
    "/rollback": {"version": "1.0.0", "reason": "r"},
    "/held": {"decision": "keep-them"},
    "/retention": {"answer": "no", "terms_read": True},
    "/purge": {"typed_id": "nope"},
    "/takedown": {"reason": "r", "note": "n", "message": "m"},
}


def _call(client, method: str, path: str, suffix: str):
    if method == "get":
        return client.get(path)
    return client.post(path, json=BODIES.get(suffix, {}))


def test_only_operators_reach_the_host(api, host, packs):
    register(host, packs)
    member = api.signed_in("reader@example.org")
    anonymous = api.client()
    collection = [("get", HOST, ""), ("post", f"{HOST}/folder", "")]
    routes = collection + [(m, f"{HOST}/{UK}{s}", s) for m, s in PLUGIN_ROUTES]
    for method, path, suffix in routes:
        assert_problem(_call(anonymous, method, path, suffix), 401, "AUTH-REQUIRED")
        assert_problem(_call(member, method, path, suffix), 403, "FORBIDDEN")
    assert_problem(post_zip(anonymous, packs[UK][0]), 401, "AUTH-REQUIRED")
    assert_problem(post_zip(member, packs[UK][0]), 403, "FORBIDDEN")
    assert [m["action"] for m in host.get(f"{HOST}/{UK}").json()["moves"]] == ["code-changed"]


def test_an_unknown_plugin_is_404(host):
    for method, suffix in PLUGIN_ROUTES:
        answer = _call(host, method, f"{HOST}/no-such-plugin{suffix}", suffix)
        assert_problem(answer, 404, "NOT-FOUND")
