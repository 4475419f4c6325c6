"""Where DeepVM Studio writes the user's files: the one home of these paths.

Nothing is ever written into the package or the source tree (bundled files are read-only,
:mod:`deepvm_core.bundled`). Everything the user creates lives under one per-user folder,
:func:`data_home`:

* ``$DEEPVM_HOME`` (:data:`HOME_VARIABLE`) when set, else
* the platform's per-user data folder for :data:`APP_NAME` (``platformdirs``):
  ``$XDG_DATA_HOME/deepvm-studio``, by default ``~/.local/share/deepvm-studio`` on Linux,
  ``~/Library/Application Support/deepvm-studio`` on macOS,
  ``%LOCALAPPDATA%\\deepvm-studio`` on Windows.

Inside it (each folder overridable on its own by the variable in :data:`CATALOG_DIRS`, which
takes precedence over ``DEEPVM_HOME``):

=========== ============================= ================================
kind        folder                        variable
=========== ============================= ================================
``user``    ``<home>/catalogs/user``      ``DEEPVM_USER_CATALOG_DIR``
``fetched`` ``<home>/catalogs/fetched``   ``DEEPVM_FETCHED_CATALOG_DIR``
``uploads`` ``<home>/catalogs/uploads``   ``DEEPVM_UPLOAD_CATALOG_DIR``
=========== ============================= ================================

The folders are created when something is first written, never when a path is asked for.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs

#: The environment variable that moves every per-user folder.
HOME_VARIABLE = "DEEPVM_HOME"
#: The application's folder name in the platform's per-user data folder.
APP_NAME = "deepvm-studio"

CatalogDir = Literal["user", "fetched", "uploads"]
#: Per kind of stored catalog: (folder under ``<home>/catalogs``, the variable that overrides it).
CATALOG_DIRS: dict[CatalogDir, tuple[str, str]] = {
    "user": ("user", "DEEPVM_USER_CATALOG_DIR"),
    "fetched": ("fetched", "DEEPVM_FETCHED_CATALOG_DIR"),
    "uploads": ("uploads", "DEEPVM_UPLOAD_CATALOG_DIR"),
}


def data_home() -> Path:
    """The per-user folder of DeepVM Studio: ``$DEEPVM_HOME``, else the platform's per-user
    data folder for :data:`APP_NAME`. Read from the environment on every call."""
    override = os.environ.get(HOME_VARIABLE)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def catalog_dir(kind: CatalogDir) -> Path:
    """The folder of the user's catalogs of ``kind``: its own variable
    (:data:`CATALOG_DIRS`) when set, else ``<data_home()>/catalogs/<kind>``."""
    folder, variable = CATALOG_DIRS[kind]
    override = os.environ.get(variable)
    if override:
        return Path(override).expanduser()
    return data_home() / "catalogs" / folder


def describe_catalog_dir(kind: CatalogDir) -> str:
    """How :func:`catalog_dir` is chosen, for help texts: ``$DEEPVM_FETCHED_CATALOG_DIR, else
    $DEEPVM_HOME/catalogs/fetched, else <per-user data folder>/catalogs/fetched``."""
    folder, variable = CATALOG_DIRS[kind]
    return (f"${variable}, else ${HOME_VARIABLE}/catalogs/{folder}, else "
            f"{platformdirs.user_data_path(APP_NAME, appauthor=False)}/catalogs/{folder}")


#: The variable that moves the spot traces folder (:func:`spot_traces_dir`).
SPOT_TRACES_VARIABLE = "DEEPVM_SPOT_TRACES_DIR"


def spot_traces_dir() -> Path:
    """The folder of the user's spot traces (``traces.md``): ``$DEEPVM_SPOT_TRACES_DIR``,
    else ``<data_home()>/spot-traces``. ``deepvm traces fetch`` writes there by default;
    the dashboard's Spot markets page reads every ``*.json`` under it and keeps its uploads in
    its ``uploads`` folder."""
    override = os.environ.get(SPOT_TRACES_VARIABLE)
    if override:
        return Path(override).expanduser()
    return data_home() / "spot-traces"
