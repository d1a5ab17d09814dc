"""Every address the tool prints and every link the service's mails carry is a page that exists
(issue 30): the test follows a plug-in from sign-up to retirement on the live service (uvicorn
on loopback, real PostgreSQL) with the real tool, keeps what the tool printed and every mail
the service made, and opens each address under the service's `base_url` as the person it is
for (the mail's recipient, signed in), expecting an HTML page: never a 404 and never JSON.

Which addresses there are comes from the sources themselves: the tool's template literals that
put a path after the server's or base address, and the f-strings of `src/almanac/platform/`
that put a path after `base_url`. Each must be met by an address the journey printed, so a new
one cannot go unopened; and no mail text or tool output holds a relative address to the
service, which a person could not open."""

from __future__ import annotations

import ast
import io
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from almanac.platform.alerts.send import send_alerts, send_network_alert
from almanac.platform.lifecycle import RunTrigger
from almanac.platform.mail import OutboxMailer, OutboxMessage
from almanac.platform.publishing.uploads import check_queue as checks
from almanac.platform.publishing.uploads.check_queue import NetworkOutage
from almanac.platform.store import plugins as store_plugins
from almanac.platform.store.engine import writing
from almanac.platform.store.write import RunFacts, record_failed_run
from tests.agents.helpers import V1, approve
from tests.agents.test_agent_api import Bank
from tests.agents.tool_runner import TOOL, UK, Tool, finish, read_until_code
from tests.api.conftest import Api
from tests.conftest import REPO
from tests.publishing.test_submission import may_submit
from tests.publishing.test_uploads import room_checks_done

PLATFORM = REPO / "src" / "almanac" / "platform"
VERIFICATION_MAIL = REPO / "src" / "almanac" / "api" / "context.py"  # ApiContext.mail_verification
SERVICE_PATH = r"/(?:api/v1|portal|host|review|store|docs|calendar|reader|tool)\b"
RELATIVE = re.compile(r"(?<![\w.:/])" + SERVICE_PATH + r"[^\s)\"'<>]*")
ADDRESS = re.compile(r"https?://[^\s<>\"')]+")
PLACEHOLDER = r"[^/?#\s]+"
PAGE = {"accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"}


def tool_templates(source: str) -> set[str]:
    """The paths the tool writes after the server's or the base address, `${...}` parts as
    placeholders (`/portal/{}/plugins/{}`); comment lines left out."""
    found = set()
    path = r"(/(?:[^\s`\"'$\\]|\$\{[^{}]*\})*)"
    for line in source.splitlines():
        if line.lstrip().startswith(("//", "*", "/*")):
            continue
        for m in re.finditer(r"\$\{([^{}]*)\}" + path, line):
            if re.search(r"\b(server|base)\b", m.group(1)):
                found.add(re.sub(r"\$\{[^{}]*\}", "{}", m.group(2)))
    return found


def _joined(node: ast.JoinedStr) -> list[str | None]:
    """An f-string's parts: its text, None for each placeholder."""
    return [str(v.value) if isinstance(v, ast.Constant) else None for v in node.values]


def platform_templates(files: list[Path]) -> dict[str, Path]:
    """The paths the domain's f-strings put after `base_url` (`/portal/{}/uploads/{}`)."""
    found: dict[str, Path] = {}
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.JoinedStr):
                continue
            for index, value in enumerate(node.values[:-1]):
                after = node.values[index + 1]
                if (
                    isinstance(value, ast.FormattedValue)
                    and "base_url" in ast.unparse(value.value)
                    and isinstance(after, ast.Constant)
                    and str(after.value).startswith("/")
                ):
                    rest = _joined(node)[index + 1 :]
                    found["".join("{}" if part is None else part for part in rest)] = file
    return found


def relative_addresses(file: Path) -> list[str]:
    """Texts of a module (its docstrings aside) holding a relative address to the service: a
    path not written after `base_url`."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    skipped = {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
            texts.append(
                "".join(
                    str(v.value)
                    if isinstance(v, ast.Constant)
                    else "BASE"
                    if isinstance(v, ast.FormattedValue) and "base_url" in ast.unparse(v.value)
                    else "{}"
                    for v in node.values
                )
            )
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skipped
        ):
            texts.append(node.value)
    return [t for t in texts if RELATIVE.search(t)]


def mail_modules() -> list[Path]:
    """The modules that write mail: every one making a MailMessage or a portal notice."""
    return sorted(
        f
        for f in [*PLATFORM.rglob("*.py"), VERIFICATION_MAIL]
        if "MailMessage(" in (text := f.read_text(encoding="utf-8")) or "tell_managers(" in text
    )


def pattern(base: str, template: str) -> re.Pattern[str]:
    parts = template.split("{}")
    return re.compile(re.escape(base) + PLACEHOLDER.join(re.escape(p) for p in parts))


@dataclass
class Journey:
    """What the tool printed and the mails held, with who opens each address."""

    api: Api
    texts: list[str] = field(default_factory=list)
    opened_by: dict[str, httpx.Client] = field(default_factory=dict)

    def printed(self, *outputs: str, reader: httpx.Client) -> None:
        for text in outputs:
            self.texts.append(text)
            for found in ADDRESS.findall(text):
                url = found.rstrip(".,;:")
                if url.startswith(self.api.base_url):
                    self.opened_by.setdefault(url, reader)


def outbox(api: Api) -> Iterator[OutboxMessage]:
    with Session(api.engine) as db:
        yield from db.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()


def test_the_sources_name_their_addresses_under_the_base_address() -> None:
    """The templates the journey must meet, and no relative address in a mail's text."""
    assert tool_templates(TOOL.read_text(encoding="utf-8")) >= {
        "/docs/problems/{}",
        "/portal/{}/plugins/{}",
        "/portal/{}/uploads/{}",
    }
    assert set(platform_templates(sorted(PLATFORM.rglob("*.py")))) >= {
        "/api/v1/auth/verify?token={}",
        "/docs/problems/{}",
        "/host/plugins/{}",
        "/portal",
        "/portal/{}/uploads/{}",
    }
    modules = mail_modules()
    check_queue = PLATFORM / "publishing" / "uploads" / "check_queue.py"
    assert check_queue in modules and VERIFICATION_MAIL in modules
    for module in modules:
        assert relative_addresses(module) == [], module


def test_every_address_the_tool_prints_and_every_mailed_link_is_a_page(
    tool: Tool, bank: Bank, folder: Path
) -> None:
    api = bank.api
    owner, admin = bank.pub.owner, bank.admin
    operator = api.signed_in("ops@service.example", operator=True)
    journey = Journey(api)

    # A new account's verification mail.
    newcomer = api.client()
    signed_up = newcomer.post(
        f"{V1}/auth/signup", json={"email": "new@bank.example", "password": "a long passphrase"}
    )
    assert signed_up.status_code == 201, signed_up.text

    # The invitation mail, as an operator invites a domain that asked.
    asked = api.client().post(
        f"{V1}/developers/invitations",
        json={
            "email": "asker@other.example",
            "organization": "Other",
            "domain": "other.example",
            "note": "holidays",
        },
    )
    assert asked.status_code == 202, asked.text
    [request] = operator.get(f"{V1}/staff/invitations").json()
    invited = operator.post(f"{V1}/staff/invitations/{request['id']}/invite")
    assert invited.status_code == 200, invited.text

    # The agent's login prints the approval page; a failing check prints docs links.
    running = tool.start("login", "--server", api.base_url, "--name", "Claude")
    code, said = read_until_code(running)
    assert running.stdout is not None
    said += running.stdout.readline()  # "(or open <the address with the code>)", same write
    assert approve(admin, code, bank.org).status_code == 200
    logged = finish(running)
    assert logged.code == 0, logged.stderr
    journey.printed(said, logged.stdout, reader=admin)
    broken = folder.parent.parent / "broken" / UK
    shutil.copytree(folder, broken)
    (broken / "fetch.mjs").write_text("process.exit(3);\n")
    failing = tool.run("check", str(broken))
    assert failing.code == 1
    journey.printed(failing.stdout, failing.stderr, reader=owner)

    # Checks failing past their deadline: the mail, and status's findings and next step.
    first = tool.run("upload", "--json", cwd=folder)
    assert first.code == 0, first.stderr
    with Session(api.engine) as db:
        failed_mails = checks.expire_overdue(db, api.clock() + timedelta(minutes=16), api.base_url)
        db.commit()
    assert failed_mails
    journey.printed(*(m.body for m in failed_mails), reader=owner)
    failed = tool.run("status", cwd=folder)
    assert failed.code == 1
    journey.printed(failed.stdout, failed.stderr, reader=owner)

    # A version submitted and approved: status names the page where an owner publishes it.
    manifest = (folder / "plugin.json").read_text().replace('"1.0.0"', '"1.0.1"', 1)
    (folder / "plugin.json").write_text(manifest)
    second = tool.run("upload", "--json", cwd=folder)
    assert second.code == 0, second.stderr
    upload_id = second.json()["upload"]["id"]
    room_checks_done(bank.pub)
    assert tool.run("review", "--file", str(folder / "review.json"), "--attest").code == 0
    room_checks_done(bank.pub)
    may_submit(bank.pub)
    submitted = tool.run("submit", cwd=folder)
    assert submitted.code == 0, submitted.stderr
    journey.printed(submitted.stdout, reader=owner)
    desk = api.signed_in("reviewer@service.example")
    assert operator.post(
        f"{V1}/staff/roles", json={"email": "reviewer@service.example", "role": "reviewer"}
    ).is_success
    reviewed = desk.get(f"{V1}/review/uploads/{upload_id}").json()["reviewed"]
    decided = desk.post(
        f"{V1}/review/uploads/{upload_id}/decision",
        json={"decision": "approve", "reason": "meets the rules", "reviewed": reviewed},
    )
    assert decided.status_code == 200, decided.text
    approved = tool.run("status", cwd=folder)
    assert approved.code == 0, approved.stderr
    journey.printed(approved.stdout, reader=owner)
    published = owner.post(f"{bank.portal}/uploads/{upload_id}/publish")
    assert published.status_code == 200, published.text

    # Its run fails: the operators' alert links the host's page of the plug-in.
    with api.engine.connect() as conn:
        running = store_plugins.plugin_status(conn, UK)
    assert running.approved_version_id is not None and running.approved_digest is not None
    at = api.clock()
    record_failed_run(
        api.engine,
        plugin_id=UK,
        version_id=running.approved_version_id,
        digest=running.approved_digest,
        run=RunFacts(
            today=at.date(),
            trigger=RunTrigger.SCHEDULE,
            started_at=at,
            now=at + timedelta(seconds=3),
        ),
        reason="could not download bank-holidays-json: HTTP 503",
    )
    sessions = sessionmaker(writing(api.engine), expire_on_commit=False)
    mailer = OutboxMailer(api.engine, console=io.StringIO())
    assert send_alerts(sessions, mailer, at + timedelta(minutes=1), base_url=api.base_url)
    # The service's own network went down while checks ran: the operators' alert links /host.
    outage = NetworkOutage(
        checks=1, since=at, last_at=at, last_message="could not resolve www.gov.uk"
    )
    assert send_network_alert(sessions, mailer, at, outage, None, base_url=api.base_url)

    # retire names the page where a person retires it; a person then does.
    retire = tool.run("retire", cwd=folder)
    assert retire.code == 1
    journey.printed(retire.stderr, reader=owner)
    retired = owner.post(f"{bank.portal}/plugins/{UK}/retire", json={"confirm": UK})
    assert retired.status_code == 200, retired.text

    mailed = list(outbox(api))
    subjects = {m.subject for m in mailed}
    assert {
        "Verify your e-mail address for Almanac",
        "You are invited to publish plug-ins on Almanac for other.example",
        f"Review of {UK} 1.0.1: approved",
        f"Almanac: plug-in {UK} is Failing",
        f"Retired: {UK}",
    } <= subjects, subjects
    for message in mailed:
        to_operator = message.to_address == "ops@service.example"
        reader = operator if to_operator else newcomer if "new@" in message.to_address else owner
        journey.printed(message.body, reader=reader)

    # Mailed when an endpoint is disabled after five days of failures, which this journey does
    # not reach (tests/webhooks/test_delivery_netns.py sends that mail): the page it links,
    # opened by its reader.
    journey.printed(f"{api.base_url}/account/webhooks", reader=owner)

    # No relative address to the service, in any mail or anything the tool printed.
    for text in journey.texts:
        assert RELATIVE.findall(text) == [], text

    # Every template of the sources is met by an address the journey printed.
    urls = set(journey.opened_by)
    templates = {
        **{t: TOOL for t in tool_templates(TOOL.read_text(encoding="utf-8"))},
        **platform_templates(sorted(PLATFORM.rglob("*.py"))),
    }
    for template, source in templates.items():
        # A fragment names a place in a page the browser already has: the page is the address.
        matcher = pattern(api.base_url, template.split("#")[0])
        assert any(matcher.fullmatch(url) for url in urls), (template, source, sorted(urls))

    # Each opens as a page for the person it is for (following a redirect, as a browser does:
    # the bare address sends a signed-in reader on to the calendar).
    for url, reader in sorted(journey.opened_by.items()):
        answer = reader.get(url, headers=PAGE, follow_redirects=True)
        assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith("text/html"), (url, answer.headers)
        assert answer.url.path != "/signin", url
