"""Start the dashboard: ``python dashboard/serve.py [streamlit run options]`` (``make run``).

The same as ``streamlit run dashboard/app.py [options]``, except that the server imports the
libraries the pages need (numpy, pandas, plotly, deepvm_core) before it listens. Streamlit
imports a script's modules on the first session only, so without this the first visitor after
a start waits for them: about 0.3 s more before Recommend's card shows, 0.6 s more before the
whole page is drawn (``bench/bench_browser.py``, issue 9).

The server's upload limit is :data:`dashboard.uploads.TRANSPORT_MB` (derived from the core's
catalog limit), and it reads request heads up to :data:`MAX_REQUEST_HEAD_BYTES`, so that any
link a browser can open reaches the page, which then names the URL parameter it cannot use
(uvicorn's own limit answered a link over about 128 KB with a bare "Invalid HTTP request").

Only modules without Streamlit caches are imported here: the dashboard's own modules (whose
``st.cache_data`` must be created inside the Streamlit runtime) load with the first session.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"
PRELOAD = ("numpy", "pandas", "plotly.graph_objects", "deepvm_core.recommend.recommendation",
           "deepvm_core.io.export", "deepvm_core.recommend.narrative", "deepvm_core.catalog.store",
           "deepvm_core.job")
#: The longest request head the server reads, bytes: Chromium's longest URL (2 MiB) and room
#: for the headers.
MAX_REQUEST_HEAD_BYTES = 2 * 1024 * 1024 + 64 * 1024


def _read_long_links() -> None:
    """Give Streamlit's uvicorn server :data:`MAX_REQUEST_HEAD_BYTES` for a request head (its
    h11 parser's ``h11_max_incomplete_event_size``). Streamlit builds the server's options in
    one function; a Streamlit without it (another server) keeps its own limit."""
    try:
        from streamlit.web.server.starlette import starlette_server
    except ImportError:  # pragma: no cover - a Streamlit without its Starlette server
        return
    options = getattr(starlette_server, "_get_uvicorn_config_kwargs", None)
    if options is None:  # pragma: no cover - a Streamlit that builds them elsewhere
        return

    def with_long_links() -> dict[str, object]:
        return {**options(), "h11_max_incomplete_event_size": MAX_REQUEST_HEAD_BYTES}

    starlette_server._get_uvicorn_config_kwargs = with_long_links


def main(argv: list[str]) -> int:
    """Import :data:`PRELOAD`, then run Streamlit's ``run`` command on the app with ``argv``."""
    for name in PRELOAD:
        importlib.import_module(name)
    from streamlit.web import cli

    _read_long_links()
    from dashboard.uploads import TRANSPORT_MB

    sys.argv = ["streamlit", "run", str(APP), "--server.maxUploadSize", str(TRANSPORT_MB),
                *argv]
    cli.main()  # a click command: it exits with Streamlit's own status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
