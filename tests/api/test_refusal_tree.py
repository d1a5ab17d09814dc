"""One way to refuse (issue 32, item 1): every refusal of the code is a class of the tree in
`almanac.platform.errors`, whose kind the API answers with one status from one table, and the
pages draw with the same one. The scan reads every exception class in `src/almanac`; a class
outside the tree must be one of the failures listed here, each with why it is no refusal."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import almanac
from almanac.api.problems import REFUSAL_STATUS, status_of
from almanac.platform import errors
from almanac.platform.contract.pack import ArchiveTooLarge, CodeRefused
from almanac.platform.contract.problems import CATALOG, Problem

SRC = Path(almanac.__file__).resolve().parent

NOT_REFUSALS = {
    "almanac.platform.agents.device.DeviceGrantError": "RFC 8628's own error body, own handler",
    "almanac.api.problems.ProblemError": "the API's own answer for HTTP-level refusals",
    "almanac.api.pages.common.PageRefused": "a refusal drawn as a page, made from a Refusal",
    "almanac.api.pages.common.SignInNeeded": "a redirect to /signin, not a refusal",
    "almanac.platform.mail.MailError": "the mail server failed: the service's fault",
    "almanac.platform.reader.render.RenderRequestError": "a caller's bug: days checked first",
    "almanac.platform.publishing.identity.proof.TxtLookupFailed": (
        "DNS failed; the proof records it"
    ),
    "almanac.platform.publishing.identity.proof.FileFetchFailed": (
        "the well-known fetch failed; recorded"
    ),
    "almanac.platform.publishing.uploads.room_checks.SourceUnavailable": (
        "a check's download failed"
    ),
    "almanac.platform.store.write.WriteRefused": "a run's batch refused: a failed run",
    "almanac.orchestration.folders.FolderRefused": "the CLI's refused example folder",
    "almanac.orchestration.pipeline.NotRunnable": "a run that may not run: nothing recorded",
    "almanac.orchestration.pipeline.RunFailed": "a failed run",
    "almanac.sandbox.cli.Refused": "the room's command line",
    "almanac.sandbox.seccomp.SeccompUnavailable": "the machine lacks seccomp",
    "almanac.sandbox.tool_imports.ImportsUnchecked": "the Node check could not run",
    "almanac.sandbox.resolver.ResolveError": "DNS failed under a download",
    "almanac.sandbox.room.RoomRefused": "the locked room could not start",
    "almanac.sandbox.addresses.AddressRefused": "a download's address is not public",
    "almanac.sandbox.download.DownloadError": "a download failed",
    "almanac.sandbox.download.Refused": "inside the downloader",
    "almanac.sandbox.download.DeadlinePassed": "inside the downloader",
    "almanac.service._Stop": "the supervisor's stop signal",
    "almanac.backup.BackupError": "the backup CLI's failure",
    "almanac.settings.SettingsError": "bad settings at start-up",
}
"""Exception classes that are not refusals of a request, and why."""


def _exception_classes() -> list[str]:
    """Every class defined in src (migrations aside) that is an exception, by its full name."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.bases:
                kind = getattr(importlib.import_module(module), node.name, None)
                if isinstance(kind, type) and issubclass(kind, BaseException):
                    found.append(f"{module}.{node.name}")
    return found


def test_every_refusal_class_in_src_is_under_the_tree() -> None:
    classes = _exception_classes()
    assert len(classes) > 40
    outside = []
    for name in classes:
        module, _, attr = name.rpartition(".")
        kind = getattr(importlib.import_module(module), attr)
        if not issubclass(kind, errors.Refusal) and name not in NOT_REFUSALS:
            outside.append(name)
    assert outside == [], f"refusals outside almanac.platform.errors' tree: {outside}"
    stale = [name for name in NOT_REFUSALS if name not in classes]
    assert stale == [], f"listed as not refusals but gone: {stale}"


def test_every_refusal_has_a_catalog_code_and_a_kind_with_a_status() -> None:
    kinds = set(REFUSAL_STATUS)
    tree = {
        k for k in vars(errors).values() if isinstance(k, type) and issubclass(k, errors.Refusal)
    }
    assert kinds == tree - {errors.Refusal}, "a kind without a status, or a status of no kind"
    for name in _exception_classes():
        module, _, attr = name.rpartition(".")
        kind = getattr(importlib.import_module(module), attr)
        if issubclass(kind, errors.Refusal) and kind is not errors.Refusal:
            assert kind.code in CATALOG, f"{name}.code {kind.code} is not in the catalog"
            assert any(k in kinds for k in kind.__mro__), f"{name} is of no kind"


def test_a_refused_archive_is_413_only_when_it_is_over_the_size_limit() -> None:
    big = CodeRefused([Problem("PLG-ZIP-TOO-LARGE", "the archive is 9 MiB; at most 8 MiB")])
    other = CodeRefused([Problem("PLG-ZIP-FOLDER", "no plug-in folder")])
    assert isinstance(big, ArchiveTooLarge) and status_of(big) == 413
    assert not isinstance(other, ArchiveTooLarge) and status_of(other) == 422
    assert (big.code, big.detail, big.findings) == (
        "PLG-ZIP-TOO-LARGE",
        "the archive is 9 MiB; at most 8 MiB",
        (Problem("PLG-ZIP-TOO-LARGE", "the archive is 9 MiB; at most 8 MiB"),),
    )
