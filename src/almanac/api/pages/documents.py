"""Texts kept as Markdown (the Developer Agreement's versions) drawn as page HTML."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

# CommonMark without raw HTML: a posted text's tags are shown as text, never run or styled,
# and link addresses such as `javascript:` are refused by markdown-it's own link check.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def document_html(text: str, *, top_level: int = 2) -> Markup:
    """The Markdown `text` as HTML whose first heading level is `top_level`: the page's own
    title is its one h1, so the document's `#` becomes h2, `##` h3, and so on (at most h6)."""
    tokens = _MARKDOWN.parse(text)
    shift = top_level - 1
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            level = min(int(token.tag[1]) + shift, 6)
            token.tag = f"h{level}"
    html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {})
    # Trusted as markup: markdown-it escapes the text itself and raw HTML is off.
    return Markup(html)
