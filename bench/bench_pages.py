"""Every dashboard page at the catalog size limit: AppTest run time of each page, in seconds.

Saves a synthetic catalog of 1,000 GPU and 1,000 CPU types (the limit of
``deepvm_core.catalog.types``) as a user catalog in a temporary folder, then runs each page on
it with Streamlit's AppTest twice: first run (cold caches) and a rerun (what a user waits for
after a click). Prints the figures.

    .venv/bin/python bench/bench_pages.py [--gpus 1000] [--cpus 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO)]

from synthetic import synthetic_catalog

PAGES = ("recommend", "plan", "instances", "catalog", "simulate", "regions", "method")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=1000)
    parser.add_argument("--cpus", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deepvm-pages-") as folder:
        os.environ["DEEPVM_HOME"] = folder
        os.environ["DEEPVM_USER_CATALOG_DIR"] = folder
        from streamlit.testing.v1 import AppTest

        from deepvm_core.catalog.store import save_catalog

        catalog = synthetic_catalog(args.gpus, args.cpus)
        save_catalog(catalog, Path(folder) / f"{catalog.name}.json")
        print(f"catalog {catalog.name}: {len(catalog.gpu_types)} GPU x "
              f"{len(catalog.cpu_types)} CPU types")
        for slug in PAGES:
            at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=300)
            at.query_params.update({"page": slug, "catalog": f"user:{catalog.name}",
                                    "pw": "10", "quotas": "off"})
            start = time.perf_counter()
            at.run()
            first = time.perf_counter() - start
            start = time.perf_counter()
            at.run()
            rerun = time.perf_counter() - start
            problems = [e.value for e in at.exception]
            print(f"{slug:<10} first run {first:6.2f} s   rerun {rerun:6.2f} s"
                  + (f"   EXCEPTION {problems[0][:80]}" if problems else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
