"""The pack reader and the folder checks without a server: digest parity with the folder walk,
inflating that stops at its cap, and the limits a folder on the server is held to."""

from __future__ import annotations

import io
import shutil
import zipfile
import zlib
from pathlib import Path

import pytest

from almanac.platform.contract import pack
from almanac.platform.contract.digest import files_digest, folder_digest
from almanac.platform.contract.pack import CodeRefused, check_folder, folder_files, read_pack
from tests.conftest import REPO

EXAMPLES = sorted(p for p in (REPO / "examples").iterdir() if (p / "plugin.json").is_file())


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_the_digest_of_files_equals_the_digest_of_the_folder(folder: Path) -> None:
    walked = folder_digest(folder)
    given = files_digest(folder_files(folder))
    assert (given.digest, given.files, given.code_bytes) == (
        walked.digest,
        walked.files,
        walked.code_bytes,
    )
    assert check_folder(folder).digest == walked.digest


def _bomb(zeros: int, declared: int) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = b"".join(squeeze.compress(bytes(1 << 20)) for _ in range(zeros >> 20))
    body += squeeze.flush()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("demo-plugin/fetch.mjs")
        info.compress_type = zipfile.ZIP_STORED
        archive.writestr(info, body)
    data = bytearray(buffer.getvalue())
    # Re-label the stored entry as deflated, declaring `declared` bytes unpacked.
    for signature, method_at, size_at in ((b"PK\x03\x04", 8, 22), (b"PK\x01\x02", 10, 24)):
        at = data.find(signature)
        data[at + method_at : at + method_at + 2] = (8).to_bytes(2, "little")
        data[at + size_at : at + size_at + 4] = declared.to_bytes(4, "little")
    return bytes(data)


def test_inflating_stops_as_soon_as_the_cap_is_passed(monkeypatch) -> None:
    produced = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, *args: int) -> None:
            self.inner = real(*args)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            out = self.inner.decompress(data, max_length)
            produced.append(len(out))
            return out

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(self.inner, name)

    monkeypatch.setattr(pack.zlib, "decompressobj", Counting)
    archive = _bomb(300 << 20, declared=1000)
    compressed = len(archive)
    with pytest.raises(CodeRefused) as refused:
        read_pack(archive)
    assert refused.value.code == "PLG-ZIP-UNCOMPRESSED-TOO-LARGE"
    assert "inflating stopped" in str(refused.value)
    assert sum(produced) <= pack.MAX_RATIO * compressed + 1


def test_an_entry_is_never_inflated_past_the_size_it_declares() -> None:
    # 1 MiB of zeros deflate to about 1 KB, so 1,000 bytes is within the ratio: only the
    # declared size stops the inflating, one step past it.
    with pytest.raises(CodeRefused) as refused:
        read_pack(_bomb(1 << 20, declared=1000))
    assert refused.value.code == "PLG-ZIP-UNCOMPRESSED-TOO-LARGE"
    assert "inflates beyond 1000 bytes (the 1000 it declares" in str(refused.value)
    assert "inflating stopped there" in str(refused.value)


def test_a_folder_on_the_server_is_held_to_the_upload_limits(tmp_path: Path) -> None:
    with pytest.raises(CodeRefused) as refused:
        folder_files(tmp_path / "Not_An_Id")
    assert refused.value.code == "PLG-FOLDER-ID"

    many = tmp_path / "many-files"
    (many / "fixtures").mkdir(parents=True)
    for n in range(pack.MAX_ENTRIES + 1):
        (many / "fixtures" / f"{n}.txt").write_bytes(b"x")
    with pytest.raises(CodeRefused) as refused:
        folder_files(many)
    assert refused.value.code == "PLG-ZIP-TOO-MANY-ENTRIES"

    deep = tmp_path / "deep-folder"
    (deep / "/".join("abcdefghi")).mkdir(parents=True)
    with pytest.raises(CodeRefused) as refused:
        folder_files(deep)
    assert refused.value.code == "PLG-ZIP-TOO-DEEP"

    copy = tmp_path / "uk-bank-holidays"
    shutil.copytree(REPO / "examples" / "uk-bank-holidays", copy)
    (copy / ".git").mkdir()
    (copy / ".git" / "config").write_bytes(b"[core]\n")
    (copy / ".DS_Store").write_bytes(b"\0")
    assert ".git/config" not in folder_files(copy) and ".DS_Store" not in folder_files(copy)
    assert check_folder(copy).digest == folder_digest(REPO / "examples" / "uk-bank-holidays").digest


def test_links_never_packed_are_passed_over_by_the_one_walk(tmp_path: Path) -> None:
    """`pack` and the digest walk a folder the same way (as the tool does): a link named
    `.DS_Store`, or `.git` or `node_modules` at the top, is passed over, not reported."""
    copy = tmp_path / "uk-bank-holidays"
    shutil.copytree(REPO / "examples" / "uk-bank-holidays", copy)
    for name in (".DS_Store", ".git", "node_modules"):
        (copy / name).symlink_to(tmp_path)
    walked = folder_digest(copy)
    assert walked.problems == []
    assert walked.digest == folder_digest(REPO / "examples" / "uk-bank-holidays").digest
    assert check_folder(copy).digest == walked.digest
