"""Pages outside /api/v1: the problem catalog pages, the developers' tool, health."""

from __future__ import annotations

import json
import re
from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sqlalchemy import text

from almanac.api.deps import Context
from almanac.api.problems import ProblemError
from almanac.platform.contract.problems import CATALOG, PAGES, Example
from almanac.supervisor import RUNNING, read_parts

router = APIRouter(tags=["public"])


_CODE_SPAN = re.compile(r"`([^`]+)`")
_PAGE_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafaf8}"
    "main{max-width:46rem;margin:2rem auto;padding:0 1rem}"
    "pre{background:#f0f0ec;padding:.75rem 1rem;border-radius:6px;overflow-x:auto}"
    ".fails,.passes{padding-left:.75rem;margin:1rem 0}h3{font-size:1rem;margin:0 0 .4rem}"
    ".fails{border-left:4px solid #c0392b}.passes{border-left:4px solid #2e7d32}"
    "dt{font-weight:600}h2{font-size:1.1rem;margin-top:1.6rem}"
)


def _prose(text: str) -> str:
    """Page text with its `code spans` set as code, everything else escaped."""
    return _CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", escape(text, quote=False))


def _example(kind: str, label: str, example: Example) -> str:
    return (
        f'<section class="{kind}"><h3>{label}: {escape(example.where)}</h3>'
        f"<pre><code>{escape(example.text)}</code></pre></section>"
    )


@router.get("/docs/problems/{code}", response_class=HTMLResponse)
def problem_page(code: str) -> HTMLResponse:
    """The catalog page of a code (the `type` and docs link of problems): its title, severity,
    the rule, why it exists, an example that fails and one that passes, and the fix."""
    entry = CATALOG.get(code)
    if entry is None:
        raise ProblemError(404, "NOT-FOUND", "the catalog has no such problem code")
    page = PAGES[code]
    retired = "<p><strong>This code is retired.</strong></p>" if entry.retired else ""
    bad, good = ("Warned", "Not warned") if entry.severity == "warning" else ("Fails", "Passes")
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(entry.code)} · Almanac</title><style>{_PAGE_STYLE}</style></head>
<body><main>
<h1><code>{escape(entry.code)}</code></h1>
<p>{escape(entry.title)}</p>
<dl><dt>Severity</dt><dd>{escape(entry.severity)}</dd><dt>Area</dt><dd>{escape(entry.area)}</dd></dl>
{retired}
<h2>The rule</h2>
<p class="rule">{_prose(page.rule)}</p>
<h2>Why</h2>
<p class="why">{_prose(page.why)}</p>
<h2>Examples</h2>
<p>Each example shows only the part it is about.</p>
{_example("fails", bad, page.failing)}
{_example("passes", good, page.passing)}
<h2>Fix</h2>
<p class="fix">{escape(entry.fix)}</p>
</main></body></html>
"""
    return HTMLResponse(html)


# The tool's own default address, replaced in the copy served here by this service's public
# address, so a downloaded tool links to the docs of the service it came from.
_TOOL_DEFAULT = re.compile(r'^export const DEFAULT_BASE_URL = "[^"\n]*";$', re.MULTILINE)


def served_tool(text: str, base_url: str) -> str:
    """The tool's text with `DEFAULT_BASE_URL` set to `base_url`; ValueError when the tool has
    no such line (the served copy would silently keep another service's address)."""
    stamped, count = _TOOL_DEFAULT.subn(
        f"export const DEFAULT_BASE_URL = {json.dumps(base_url.rstrip('/'))};", text, count=1
    )
    if count != 1:
        raise ValueError("the tool has no DEFAULT_BASE_URL line to set")
    return stamped


@router.get("/tool/almanac-plugin.mjs")
def tool(ctx: Context) -> Response:
    """The developers' tool, one file for Node 24, whose default address is this service's."""
    if not ctx.tool_file.is_file():
        raise ProblemError(404, "NOT-FOUND", "the tool is not installed on this server")
    text = served_tool(ctx.tool_file.read_text(encoding="utf-8"), ctx.settings.base_url)
    return Response(
        text.encode("utf-8"),
        media_type="text/javascript; charset=utf-8",
        headers={"Content-Disposition": 'inline; filename="almanac-plugin.mjs"'},
    )


@router.get("/health")
def health(ctx: Context) -> JSONResponse:
    """200 when the service answers and its database does, 503 otherwise. Under `almanac up`,
    each of its parts too (`almanac.supervisor`): a part being restarted makes the status
    "degraded" and names it in `down`, still 200, as the API itself answers (a load balancer
    keeps sending readers here while the scheduler restarts)."""
    try:
        with ctx.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        raise ProblemError(
            503, "INTERNAL-ERROR", f"the database does not answer ({type(exc).__name__})"
        ) from None
    answer: dict[str, object] = {"status": "ok", "database": "ok"}
    parts = read_parts(ctx.settings.home)
    if parts is not None:
        down = sorted(name for name, state in parts.items() if state != RUNNING)
        answer.update(parts=parts, down=down, status="degraded" if down else "ok")
    return JSONResponse(answer)
