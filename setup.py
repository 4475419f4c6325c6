"""Packaging that pyproject.toml cannot say: the top-level ``data/`` folder is installed as the
subpackage ``deepvm_core.bundled_data`` (bundled catalogs, measurements and the other files
listed in ``data/README.md``), in a wheel and in an editable install alike; the packages are
``deepvm_core`` and the Streamlit dashboard, ``dashboard``. Everything else is in
pyproject.toml."""

from setuptools import find_packages, setup

#: The package the bundled data files are read from (``deepvm_core.bundled``).
BUNDLED_PACKAGE = "deepvm_core.bundled_data"

setup(
    packages=[*find_packages(include=["deepvm_core", "deepvm_core.*", "dashboard",
                                      "dashboard.*"]), BUNDLED_PACKAGE],
    package_dir={BUNDLED_PACKAGE: "data"},
    # Every data file under data/ (any folder depth), never Python caches.
    # The exports' JSON Schemas (deepvm_core.io.schemas.load_schema reads them).
    package_data={BUNDLED_PACKAGE: ["*.md", "**/*.json", "**/*.csv", "**/*.md", "**/*.txt"],
                  "deepvm_core.io.schemas": ["*.json"],
                  # the page icon, served by Streamlit itself (no font CDN: the app works offline)
                  "dashboard": ["assets/*.png"]},
)
