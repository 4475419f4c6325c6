"""Start the dashboard: ``python dashboard/serve.py [streamlit run options]`` (``make run``).

The same as ``streamlit run dashboard/app.py [options]``, except that the server imports the
libraries the pages need (numpy, pandas, plotly, deepvm_core) before it listens. Streamlit
imports a script's modules on the first session only, so without this the first visitor after
a start waits for them: about 0.3 s more before Recommend's card shows, 0.6 s more before the
whole page is drawn (``bench/bench_browser.py``, issue 9).

The server's upload limit is :data:`dashboard.uploads.TRANSPORT_MB` (derived from the core's
catalog limit).

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


def main(argv: list[str]) -> int:
    """Import :data:`PRELOAD`, then run Streamlit's ``run`` command on the app with ``argv``."""
    for name in PRELOAD:
        importlib.import_module(name)
    from streamlit.web import cli

    from dashboard.uploads import TRANSPORT_MB

    sys.argv = ["streamlit", "run", str(APP), "--server.maxUploadSize", str(TRANSPORT_MB),
                *argv]
    cli.main()  # a click command: it exits with Streamlit's own status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
