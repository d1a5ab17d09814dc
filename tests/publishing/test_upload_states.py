"""An upload's life story in one table (`publishing/uploads/upload_states.py`): every move of
the spec's "Version in the portal" table and of the service's own states passes, any other is
refused; and no module but that one sets an upload's state or a check's status."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from almanac.platform.publishing.models import CheckStatus, PortalUpload, UploadCheck, UploadState
from almanac.platform.publishing.uploads.upload_states import MoveRefused, move, move_check

U = UploadState
C = CheckStatus

SPEC_MOVES = {
    # upload, checks: the static checks at once, then the locked room.
    (None, U.CHECKING),
    (U.CHECKING, U.CHECKED),
    # the publisher runs the checks again, or sends review information.
    (U.CHECKED, U.CHECKING),
    (U.CHANGES_REQUESTED, U.CHECKING),
    # submit: checks passed (and the rest of the gate); again after changes were requested.
    (U.CHECKED, U.IN_REVIEW),
    (U.CHANGES_REQUESTED, U.IN_REVIEW),
    # in review: the reviewer decides.
    (U.IN_REVIEW, U.APPROVED),
    (U.IN_REVIEW, U.CHANGES_REQUESTED),
    (U.IN_REVIEW, U.REJECTED),
    # approved: publish; the previous version is marked superseded.
    (U.APPROVED, U.PUBLISHED),
    (U.PUBLISHED, U.SUPERSEDED),
    # the publisher's roll back after a rollout's promotion publishes the superseded one again.
    (U.SUPERSEDED, U.PUBLISHED),
    # withdraw (publisher) from any state before publishing; a newer upload submitted in its
    # place; retiring the plug-in.
    (U.CHECKING, U.WITHDRAWN),
    (U.CHECKED, U.WITHDRAWN),
    (U.IN_REVIEW, U.WITHDRAWN),
    (U.APPROVED, U.WITHDRAWN),
    (U.CHANGES_REQUESTED, U.WITHDRAWN),
    (U.REJECTED, U.WITHDRAWN),
}

CHECK_MOVES = {
    (None, C.QUEUED),  # a room check queued
    (None, C.PASSED),  # a static check, judged at once
    (None, C.FAILED),
    (C.QUEUED, C.RUNNING),
    (C.RUNNING, C.PASSED),
    (C.RUNNING, C.FAILED),
    (C.RUNNING, C.COULD_NOT_RUN),  # the service's own network was down
    (C.COULD_NOT_RUN, C.QUEUED),  # the network is back
    (C.QUEUED, C.FAILED),  # its deadline, or its upload withdrawn
    (C.COULD_NOT_RUN, C.FAILED),  # its upload withdrawn
}


def _upload(state: UploadState | None) -> PortalUpload:
    row = PortalUpload(id=7)
    if state is not None:
        row.state = state
    return row


def _check(status: CheckStatus | None) -> UploadCheck:
    row = UploadCheck(name="sources")
    if status is not None:
        row.status = status
    return row


@pytest.mark.parametrize(("was", "to"), sorted(SPEC_MOVES, key=str))
def test_every_move_the_spec_allows_passes(was: UploadState | None, to: UploadState) -> None:
    upload = _upload(was)
    move(upload, to)
    assert upload.state == to


def test_every_other_move_is_refused_and_leaves_the_state() -> None:
    refused = 0
    for was in (None, *UploadState):
        for to in UploadState:
            if (was, to) in SPEC_MOVES:
                continue
            upload = _upload(was)
            with pytest.raises(MoveRefused) as raised:
                move(upload, to)
            assert raised.value.code == "STATE-CONFLICT"
            assert upload.state == was
            refused += 1
    assert refused == 10 * 9 - len(SPEC_MOVES)


def test_a_refusal_says_what_the_upload_is_and_where_the_move_comes_from() -> None:
    with pytest.raises(MoveRefused) as raised:
        move(_upload(U.PUBLISHED), U.WITHDRAWN)
    assert str(raised.value).startswith(
        "upload 7 is published; it cannot become withdrawn: an upload becomes withdrawn only "
        "from approved, changes_requested, checked, checking, in_review or rejected (withdraw "
        "(publisher)"
    )
    with pytest.raises(MoveRefused) as raised:
        move(_upload(U.CHECKED), U.APPROVED)
    assert str(raised.value) == (
        "upload 7 is checked; it cannot become approved: an upload becomes approved only "
        "from in_review (in review: the reviewer approves)"
    )


@pytest.mark.parametrize(("was", "to"), sorted(CHECK_MOVES, key=str))
def test_every_move_of_a_check_passes(was: CheckStatus | None, to: CheckStatus) -> None:
    check = _check(was)
    move_check(check, to)
    assert check.status == to


def test_every_other_move_of_a_check_is_refused() -> None:
    for was in (None, *CheckStatus):
        for to in CheckStatus:
            if (was, to) in CHECK_MOVES:
                continue
            check = _check(was)
            with pytest.raises(MoveRefused):
                move_check(check, to)
            assert check.status == was
    with pytest.raises(MoveRefused) as raised:
        move_check(_check(C.PASSED), C.QUEUED)
    assert str(raised.value) == (
        "the sources check is passed; it cannot become queued: a check becomes queued only "
        "from could_not_run or nothing (new)"
    )


# --- no module but upload_states.py sets the state --------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src" / "almanac"
THE_ONE = SRC / "platform" / "publishing" / "uploads" / "upload_states.py"
ROWS = {"PortalUpload", "UploadCheck"}
NAMES = ROWS | {"UploadState", "CheckStatus"}
FIELDS = {"state", "status"}


def _other_enum(value: ast.expr) -> bool:
    """`X.MEMBER` of an enum that is neither an upload's state nor a check's status."""
    return (
        isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id.endswith(("State", "Status"))
        and value.value.id not in NAMES
    )


def _row_of(call: ast.Call) -> bool:
    """`update(PortalUpload)…`, `insert(UploadCheck)…`: a statement on those rows."""
    node: ast.expr = call.func
    while True:
        if isinstance(node, ast.Call):
            inner = node.func
            if isinstance(inner, ast.Name) and inner.id in {"update", "insert"}:
                return any(isinstance(a, ast.Name) and a.id in ROWS for a in node.args)
            node = inner
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return False


def state_assignments(source: str) -> Iterator[int]:
    """The lines of `source` that set an upload's state or a check's status: an assignment to
    `.state`/`.status` in a module that knows those rows, a row made with `state=`/`status=`,
    `update(Row).values(state=…)`, or `setattr(row, "state", …)`."""
    tree = ast.parse(source)
    knows = any(isinstance(n, ast.Name) and n.id in NAMES for n in ast.walk(tree)) or any(
        isinstance(n, ast.alias) and n.name in NAMES for n in ast.walk(tree)
    )
    for node in ast.walk(tree):
        if knows and isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            if node.value is not None and _other_enum(node.value):
                continue
            if any(isinstance(t, ast.Attribute) and t.attr in FIELDS for t in flat):
                yield node.lineno
        elif isinstance(node, ast.Call) and _sets_a_field(node, knows):
            yield node.lineno


def _sets_a_field(call: ast.Call, knows: bool) -> bool:
    func = call.func
    named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if {k.arg for k in call.keywords} & FIELDS:
        return named in ROWS or (named == "values" and _row_of(call))
    return (
        knows
        and named == "setattr"
        and len(call.args) > 1
        and isinstance(call.args[1], ast.Constant)
        and call.args[1].value in FIELDS
    )


def test_the_scan_finds_every_way_of_setting_the_state() -> None:
    source = """
from almanac.platform.publishing.models import PortalUpload, UploadState
row.state = _AFTER[verdict]
a.b.status = status
row = PortalUpload(id=1, state=UploadState.CHECKED)
db.execute(update(PortalUpload).where(x).values(state="checked"))
setattr(row, "state", "checked")
claim.state = DomainState.VERIFIED
"""
    assert sorted(state_assignments(source)) == [3, 4, 5, 6, 7]
    assert list(state_assignments("app.state = 1\n")) == []


def test_no_module_but_upload_states_sets_an_upload_state_or_a_check_status() -> None:
    found = {
        f"{path.relative_to(SRC)}:{line}"
        for path in SRC.rglob("*.py")
        for line in state_assignments(path.read_text(encoding="utf-8"))
        if path != THE_ONE
    }
    assert found == set()
    assert len(list(state_assignments(THE_ONE.read_text(encoding="utf-8")))) == 2
