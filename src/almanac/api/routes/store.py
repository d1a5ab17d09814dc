"""The store (DECISIONS 10, `store` area), for signed-in readers: published, listed, public
plug-ins by words and category, each plug-in's page and icon, install and uninstall."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from almanac.api.deps import CurrentAccount, Db, Now
from almanac.api.schemas.reader import Language
from almanac.api.schemas.store import StoreEntryOut, StorePageOut
from almanac.platform.contract.listing import CATEGORIES
from almanac.platform.publishing.publication import storefront

router = APIRouter(prefix="/store", tags=["store"])

Words = Annotated[str | None, Query(max_length=200, description="words to find, all of them")]
Category = Annotated[str | None, Query(max_length=32, description=", ".join(CATEGORIES))]
After = Annotated[
    str | None, Query(max_length=64, description="the last id of the page before this one")
]
Limit = Annotated[
    int | None,
    Query(description=f"listings in the page, 1 to {storefront.STORE_PAGE_MOST} "
          f"({storefront.STORE_PAGE_SIZE} unless named)"),
]  # fmt: skip


@router.get("/categories", response_model=list[str])
def categories() -> list[str]:
    """The store's categories; a listing names exactly one."""
    return list(CATEGORIES)


@router.get("/plugins", response_model=list[StoreEntryOut])
def search(
    request: Request,
    response: Response,
    account: CurrentAccount,
    db: Db,
    q: Words = None,
    category: Category = None,
    language: Language = "en",
    after: After = None,
    limit: Limit = None,
) -> list[StoreEntryOut]:
    """The plug-ins in the store, by id, a page at a time: every word of `q` found in the
    plug-in's id, names, tagline, description, keywords, category or publisher domain;
    `category` one of the store's categories (422 REQUEST-INVALID otherwise). When more
    follow, a `Link` header names the next page (`rel="next"`, RFC 8288)."""
    found = storefront.search_store(
        db, account, words=q, category=category, language=language, after=after, limit=limit
    )
    if found.next_after is not None:
        following = request.url.include_query_params(after=found.next_after)
        response.headers["Link"] = f'<{following}>; rel="next"'
    return [StoreEntryOut.of(e) for e in found.entries]


@router.get("/plugins/{plugin_id}", response_model=StorePageOut)
def page(
    plugin_id: str, account: CurrentAccount, db: Db, language: Language = "en"
) -> StorePageOut:
    """A plug-in's store page: listing texts in the reader's language, publisher domain and
    verified mark, sources and licences, example days drawn as the reader's days are,
    cadence, last successful run, and whether the reader installed it. An installed plug-in
    no longer in the store is still shown to its reader, with its listing state."""
    return StorePageOut.of(storefront.store_page(db, account, plugin_id, language))


@router.get(
    "/plugins/{plugin_id}/icon.png",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}}},
)
def icon(plugin_id: str, account: CurrentAccount, db: Db) -> Response:
    """The listing's icon, 256x256 PNG."""
    return Response(storefront.store_icon(db, account, plugin_id), media_type="image/png")


@router.post("/plugins/{plugin_id}/install", response_model=StorePageOut)
def install(
    plugin_id: str, account: CurrentAccount, db: Db, now: Now, language: Language = "en"
) -> StorePageOut:
    """Install the plug-in (not a version): it is shown on the reader's days. 409
    STORE-NOT-LISTED for one no longer in the store that the reader has not installed."""
    page = storefront.install(db, account, plugin_id, now, language)
    db.commit()
    return StorePageOut.of(page)


@router.post("/plugins/{plugin_id}/uninstall", status_code=status.HTTP_204_NO_CONTENT)
def uninstall(plugin_id: str, account: CurrentAccount, db: Db, now: Now) -> Response:
    """Uninstall: the plug-in is no longer shown on the reader's days."""
    storefront.uninstall(db, account, plugin_id, now)
    db.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
