"""An MCP client publishes an example through the tool's MCP server alone (issue 35): the
official MCP Python SDK starts `node tool/almanac-plugin.mjs mcp` over stdio and drives the
whole path against the live app (uvicorn on loopback, real PostgreSQL): check (a broken copy's
findings are a result, not an error of the protocol), pack, upload, status waiting for the
checks, review with the attestations, submit, a reviewer's approval, publish, an update
published with a shadow period and stopped, another promoted early and rolled back, unpublish,
relist; retire is refused. A person only approves the login, with the exact command the login tool
gives, and the reviewer decides.

The locked-room checks are stood in for by `room_checks_done`, as in test_tool_publishing.py;
the protocol's edges are tests/tool/mcp.test.mjs."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.agents.helpers import approve, approve_as_reviewer
from tests.agents.test_agent_api import Bank
from tests.agents.tool_runner import TOOL, UK, Run, Tool, user_code
from tests.publishing.test_review_and_store import approved, reviewer
from tests.publishing.test_submission import files_with, may_submit
from tests.publishing.test_uploads import room_checks_done

TOOLS = {
    "init",
    "check",
    "preview",
    "digest",
    "pack",
    "probe",
    "login",
    "upload",
    "status",
    "review",
    "submit",
    "publish",
    "promote",
    "stop",
    "rollback",
    "unpublish",
    "relist",
    "retire",
}


NOTES = {"en": "A new version."}
MOVED = {"stop": "stopped", "promote": "promoted", "rollback": "rolled_back"}
"""The state a rollout is in after each move."""


def login_as_told(tool: Tool, bank: Bank, command: str) -> Run:
    """Run the login command the login tool gave, word for word; the bank's admin approves
    the code it prints, allowing publishing."""
    running = subprocess.Popen(
        shlex.split(command),
        cwd=tool.home,
        env=tool.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    approved = approve(bank.admin, user_code(running), bank.org, may_publish=True)
    assert approved.status_code == 200, approved.text
    stdout, stderr = running.communicate(timeout=60)
    return Run(running.returncode, stdout, stderr)


class Agent:
    """The MCP client's calls, each giving the tool's answer: its structured content."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
        result = await self.client.call_tool(tool, arguments)
        answer = result.structured_content
        assert isinstance(answer, dict), result
        assert json.loads(result.content[0].text) == answer  # type: ignore[union-attr]
        return bool(result.is_error), answer

    async def done(self, tool: str, **arguments: Any) -> dict[str, Any]:
        refused, answer = await self.call(tool, **arguments)
        assert not refused and answer["ok"] is True, (tool, answer)
        return answer


def test_an_mcp_client_publishes_an_example_through_the_server_alone(
    tool: Tool, bank: Bank, folder: Path, node: Path
) -> None:
    broken = folder.parent / "broken" / UK
    shutil.copytree(folder, broken)
    (broken / "fetch.mjs").write_text("process.exit(3);\n")
    server = StdioServerParameters(
        command=str(node), args=[str(TOOL), "mcp"], env=tool.environment(), cwd=folder.parent
    )

    async def journey() -> None:
        async with Client(server) as client:
            assert client.protocol_version == "2026-07-28"
            listed = (await client.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            assert all(t.description and t.input_schema["type"] == "object" for t in listed)
            agent = Agent(client)

            # A broken plug-in: the findings are the answer, not an error of the protocol.
            refused, checked = await agent.call("check", folder="broken/" + UK)
            assert not refused and checked["ok"] is False
            assert [f["code"] for f in checked["findings"]] == ["PLG-RUN-FAILED"]
            assert (await agent.done("check", folder=UK))["summary"].startswith("passes")
            packed = await agent.done("pack", folder=UK, out="uk.zip")
            assert Path(packed["file"]) == folder.parent / "uk.zip"

            # Not logged in: the login tool gives the command a person's approval completes.
            refused, told = await agent.call("login", server=bank.api.base_url, name="Claude")
            assert refused and told["error"]["code"] == "AUTH-REQUIRED"
            assert told["command"].endswith(f"login --server {bank.api.base_url} --name Claude")
            logged = login_as_told(tool, bank, told["command"])
            assert logged.code == 0, logged.stderr
            assert (await agent.done("login", server=bank.api.base_url))["may_publish"] is True

            upload = (await agent.done("upload", folder=UK))["upload"]
            version = upload["id"]
            assert (upload["plugin_id"], upload["agent_name"]) == (UK, "Claude")
            _, checking = await agent.call("status", version=version)
            assert (checking["ok"], checking["checks"]) == (False, "checking")
            # Waiting: the checks end while the call is in flight.
            async with anyio.create_task_group() as group:
                waited: dict[str, Any] = {}

                async def wait_for_checks() -> None:
                    answer = await agent.done("status", version=version, wait=True, timeout=60)
                    waited.update(answer)

                group.start_soon(wait_for_checks)
                await anyio.sleep(1.5)
                room_checks_done(bank.pub)
            assert waited["checks"] == "passed" and f"submit {version}" in waited["next"]

            review = f"{UK}/review.json"
            sent = await agent.done("review", version=version, file=review, attest=True)
            assert len(sent["attestations"]) == 5
            room_checks_done(bank.pub)
            await agent.done("status", version=version, wait=True, timeout=30)
            refused, early = await agent.call("submit", version=version)
            assert refused and early["error"]["code"] == "SUBMIT-REFUSED"
            assert early["error"]["next"] and early["error"]["docs"].endswith("SUBMIT-REFUSED")
            may_submit(bank.pub)
            submitted = await agent.done("submit", version=version)
            assert submitted["upload"]["state"] == "in_review"

            approve_as_reviewer(bank.api, version)
            decided = await agent.done("status", version=version)
            assert decided["decision"]["decision"] == "approve"
            assert decided["next"].endswith(f"publish {version}")
            published = await agent.done("publish", version=version)
            assert published["upload"]["state"] == "published"
            for move, listed_now in (("unpublish", False), ("relist", True)):
                moved = await agent.done(move, plugin=UK)
                assert (moved["listing"]["listed"], moved["changed"]) == (listed_now, True)

            # Updates the reviewer approved: one published with a shadow period and stopped,
            # one promoted early and rolled back, each move kept with the agent's name.
            rev = reviewer(bank.api, "desk@service.example")
            for update, moves in (("1.1.0", ("stop",)), ("1.2.0", ("promote", "rollback"))):
                upload_id = approved(bank.pub, rev, files_with(version=update, releaseNotes=NOTES))
                shadowed = await agent.done("publish", version=upload_id, shadow=2)
                shown = shadowed["rollout"]
                assert (shown["version"], shown["state"], shown["shadow_runs"]) == (
                    update,
                    "shadowing",
                    2,
                )
                for move in moves:
                    rollout = (await agent.done(move, plugin=UK, reason=f"{move} it"))["rollout"]
                    assert rollout["state"] == MOVED[move] and "Claude" in rollout["ended_by"]
                    assert rollout["reason"] == f"{move} it"
            refused, again = await agent.call("rollback", plugin=UK, reason="twice")
            assert refused and again["error"]["code"] == "STATE-CONFLICT"
            refused, retire = await agent.call("retire", plugin=UK)
            assert refused and retire["error"]["code"] == "AGENT_FORBIDDEN"
            assert f"/portal/{bank.org}/plugins/{UK}" in retire["error"]["portal"]

    anyio.run(journey)
    shown = bank.pub.owner.get(f"{bank.portal}/plugins/{UK}").json()
    assert shown["listed"] is True, shown
