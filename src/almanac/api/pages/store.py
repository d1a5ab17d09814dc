"""The store's pages at /store: search by words and category, a plug-in's page (listing texts in
the reader's language, publisher domain and verified mark, sources and licences, the example
days drawn in the calendar's own rows, cadence, last successful run) and install or uninstall,
each over the same `storefront` functions the `/api/v1/store` routes call."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from almanac.api.deps import Db, Now
from almanac.api.pages.common import Form, PageAccount, redirect, refusals, render
from almanac.platform.contract.listing import CATEGORIES
from almanac.platform.publishing.publication import storefront

router = APIRouter(prefix="/store", include_in_schema=False)

CATEGORY_WORDS = {c: c.replace("-", " ").capitalize() for c in CATEGORIES}


@router.get("")
def search(
    request: Request,
    account: PageAccount,
    db: Db,
    q: str = "",
    category: str = "",
    lang: str = "en",
    after: str = "",
) -> Response:
    """The plug-ins in the store, narrowed by words and a category, a page at a time."""
    with refusals():
        found = storefront.search_store(
            db, account, words=q or None, category=category or None, language=lang,
            after=after or None,
        )  # fmt: skip
    following = None
    if found.next_after is not None:
        following = str(request.url.include_query_params(after=found.next_after))
    context = {
        "title": "Store",
        "q": q,
        "category": category,
        "categories": CATEGORY_WORDS,
        "found": found.entries,
        "following": following,
        "first": str(request.url.remove_query_params("after")) if after else None,
        "lang": lang,
    }
    return render(request, "store_list.html", context, account=account)


@router.get("/{plugin_id}")
def page(
    request: Request,
    plugin_id: str,
    account: PageAccount,
    db: Db,
    lang: str = "en",
    done: str = "",
) -> Response:
    """A plug-in's store page, with install or uninstall."""
    with refusals():
        found = storefront.store_page(db, account, plugin_id, lang)
    context = {
        "title": f"{found.entry.name} · Store",
        "page": found,
        "lang": lang,
        "chart_src": f"/api/v1/store/plugins/{quote(plugin_id)}?{urlencode({'language': lang})}",
        "categories": CATEGORY_WORDS,
        "done": {"install": "Installed: it is on your calendar.", "uninstall": "Uninstalled."}.get(
            done
        ),
    }
    return render(request, "store_page.html", context, account=account)


@router.post("/{plugin_id}/install")
def install(plugin_id: str, form: Form, account: PageAccount, db: Db, now: Now) -> Response:
    with refusals():
        storefront.install(db, account, plugin_id, now)
    db.commit()
    return redirect(f"/store/{quote(plugin_id)}?done=install")


@router.post("/{plugin_id}/uninstall")
def uninstall(plugin_id: str, form: Form, account: PageAccount, db: Db, now: Now) -> Response:
    with refusals():
        storefront.uninstall(db, account, plugin_id, now)
    db.commit()
    return redirect(f"/store/{quote(plugin_id)}?done=uninstall")
