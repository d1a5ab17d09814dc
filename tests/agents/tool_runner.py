"""The real tool (node tool/almanac-plugin.mjs) run as a program against the live service, its
own files in a folder of the test's, and loopback HTTP servers that record what reaches them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.accounts.conftest import T0
from tests.agents.helpers import approve
from tests.conftest import REPO

if TYPE_CHECKING:
    from tests.agents.test_agent_api import Bank

TOOL = REPO / "tool" / "almanac-plugin.mjs"
UK = "uk-bank-holidays"
CODE_LINE = re.compile(r"enter the code ([A-Z]{4}-[A-Z]{4})")


class MovingClock:
    """The service's clock in the tool tests: T0 plus the real time since the test began, plus
    what the test adds. The tool waits real seconds between polls; the moments it is judged by
    move with them, and a test still jumps past a code's 10 minutes."""

    def __init__(self, start: datetime = T0) -> None:
        self.start = start
        self.began = time.monotonic()
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=time.monotonic() - self.began) + self.offset

    def advance(self, delta: timedelta) -> datetime:
        self.offset += delta
        return self()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class Tool:
    """The tool with HOME and XDG_CONFIG_HOME of its own: its files land in `config`."""

    node: Path
    home: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def config(self) -> Path:
        return self.home / "xdg" / "almanac"

    def environment(self) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / "xdg"),
            **self.env,
        }

    def run(self, *args: str, cwd: Path | None = None, timeout: float = 120) -> Run:
        done = subprocess.run(
            [str(self.node), str(TOOL), *args],
            cwd=cwd or self.home,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(self.node), str(TOOL), *args],
            cwd=cwd or self.home,
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def token_file(self) -> dict[str, Any]:
        return dict(json.loads((self.config / "plugin-token.json").read_text()))


def read_until_code(process: subprocess.Popen[str], *, stream: str = "stdout") -> tuple[str, str]:
    """Read the tool's lines until it prints the code to enter: (the code, the lines read)."""
    pipe = process.stdout if stream == "stdout" else process.stderr
    assert pipe is not None
    seen = []
    for line in pipe:
        seen.append(line)
        found = CODE_LINE.search(line)
        if found:
            return found.group(1), "".join(seen)
    raise AssertionError(f"the tool printed no code: {''.join(seen)}")


def user_code(process: subprocess.Popen[str], *, stream: str = "stdout") -> str:
    return read_until_code(process, stream=stream)[0]


def finish(process: subprocess.Popen[str], timeout: float = 60) -> Run:
    stdout, stderr = process.communicate(timeout=timeout)
    return Run(process.returncode, stdout, stderr)


def login(tool: Tool, bank: Bank, *, may_publish: bool = False, json_out: bool = False) -> Run:
    """The tool's login, approved by the bank's admin as soon as it prints its code."""
    extra = ["--json"] if json_out else []
    running = tool.start("login", "--server", bank.api.base_url, "--name", "Claude", *extra)
    code = user_code(running, stream="stderr" if json_out else "stdout")
    approved = approve(bank.admin, code, bank.org, may_publish=may_publish)
    assert approved.status_code == 200, approved.text
    return finish(running)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]


class Recorder:
    """A loopback HTTP server that keeps every request it gets; `redirect_to` makes it answer
    each with 307 to that address instead of 404."""

    def __init__(self, redirect_to: str | None = None) -> None:
        self.seen: list[Seen] = []
        self.redirect_to = redirect_to
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                recorder.seen.append(Seen(self.command, self.path, dict(self.headers.items())))
                if recorder.redirect_to is not None:
                    self.send_response(307)
                    self.send_header("location", f"{recorder.redirect_to}{self.path}")
                else:
                    self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[Recorder]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(5)
