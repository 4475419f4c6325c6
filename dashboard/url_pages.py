"""The dashboard's pages: slug, title, script and icon of each, and the default page. Pure (no
Streamlit).

A page's slug is both its URL path (``/simulate``) and the value of the ``page`` parameter
(``/?page=simulate``, which the root URL honours). The path wins: ``/simulate?page=plan``
shows Simulate, and the rewritten URL says ``page=simulate``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One page: slug (URL path), title, script (relative to ``dashboard/``) and icon."""

    slug: str
    title: str
    file: str
    icon: str


PAGES = (
    PageSpec("recommend", "Recommend", "views/recommend.py", ":material/recommend:"),
    PageSpec("plan", "Plan a job", "views/plan.py", ":material/schedule:"),
    PageSpec("instances", "Instances", "views/instances.py", ":material/memory:"),
    PageSpec("catalog", "Catalog editor", "views/catalog_editor.py", ":material/edit_note:"),
    PageSpec("simulate", "Simulate", "views/simulate.py", ":material/show_chart:"),
    PageSpec("live", "Live prices", "views/live_prices.py", ":material/cloud_download:"),
    PageSpec("regions", "Regions", "views/regions.py", ":material/public:"),
    PageSpec("method", "Method", "views/method.py", ":material/menu_book:"),
    # last: at 1280 px the top navigation folds its last links (Spot markets, Running jobs)
    # into a menu; the pages before stay visible links (tests/e2e/test_pages_browser.py)
    PageSpec("spot", "Spot markets", "views/spot_markets.py", ":material/ssid_chart:"),
    PageSpec("jobs", "Running jobs", "views/running_jobs.py", ":material/monitoring:"),
)
PAGE_BY_SLUG = {p.slug: p for p in PAGES}
PAGE_SLUGS = tuple(PAGE_BY_SLUG)
DEFAULT_PAGE = "recommend"


def unknown_path(app_url: str | None, base_path: str = "") -> str | None:
    """The path of ``app_url`` (``st.context.url`` of the root page) when it names no page,
    else ``None``: ``http://host/nonexistent`` -> ``/nonexistent``; the root URL (under the
    server's ``base_path``) and the pages' own paths are known."""
    if not app_url:
        return None
    path = "/" + app_url.split("://", 1)[-1].partition("/")[2].strip("/")
    base = "/" + base_path.strip("/")
    rest = path.removeprefix(base) if path == base or path.startswith(base.rstrip("/") + "/") \
        else path
    rest = rest.strip("/")
    return None if rest in ("", "root", *PAGE_BY_SLUG) else "/" + rest
