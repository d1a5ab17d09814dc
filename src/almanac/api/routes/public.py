"""Pages outside /api/v1: the problem catalog pages, the developers' tool, health."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from sqlalchemy import text

from almanac.api.deps import Context
from almanac.api.problems import ProblemError
from almanac.platform.contract.problems import CATALOG

router = APIRouter(tags=["public"])


@router.get("/docs/problems/{code}", response_class=HTMLResponse)
def problem_page(code: str) -> HTMLResponse:
    """The catalog entry of a code as a small page (the `type` and docs link of problems)."""
    entry = CATALOG.get(code)
    if entry is None:
        raise ProblemError(404, "NOT-FOUND", "the catalog has no such problem code")
    retired = "<p><strong>This code is retired.</strong></p>" if entry.retired else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(entry.code)} · Almanac</title></head>
<body><main>
<h1><code>{escape(entry.code)}</code></h1>
<p>{escape(entry.title)}</p>
<dl><dt>Severity</dt><dd>{escape(entry.severity)}</dd><dt>Area</dt><dd>{escape(entry.area)}</dd>
<dt>Fix</dt><dd>{escape(entry.fix)}</dd></dl>
{retired}
</main></body></html>
"""
    return HTMLResponse(page)


@router.get("/tool/almanac-plugin.mjs")
def tool(ctx: Context) -> FileResponse:
    """The developers' tool, one file for Node 24."""
    if not ctx.tool_file.is_file():
        raise ProblemError(404, "NOT-FOUND", "the tool is not installed on this server")
    return FileResponse(
        ctx.tool_file,
        media_type="text/javascript; charset=utf-8",
        filename="almanac-plugin.mjs",
        content_disposition_type="inline",
    )


@router.get("/health")
def health(ctx: Context) -> JSONResponse:
    """200 when the service answers and its database does, 503 otherwise."""
    try:
        with ctx.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        raise ProblemError(
            503, "INTERNAL-ERROR", f"the database does not answer ({type(exc).__name__})"
        ) from None
    return JSONResponse({"status": "ok", "database": "ok"})
