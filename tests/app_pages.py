"""The dashboard in Streamlit's AppTest, one home for what its page tests share: a fresh app
with user catalogs in a temporary folder, and the readers of a drawn page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


def new_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
            timeout_s: float = 90) -> AppTest:
    """The dashboard, not yet run, with user catalogs in ``tmp_path / "user"``."""
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    return AppTest.from_file(str(APP), default_timeout=timeout_s)


def no_errors(at: AppTest) -> None:
    """The run raised nothing."""
    assert not at.exception, [e.value for e in at.exception]


def headline(at: AppTest) -> str:
    """The recommended configuration's headline on the card (``### ...``), or ``""``."""
    heads = [m.value for m in at.main.markdown if m.value.startswith("### ")]
    return heads[0] if heads else ""


def table(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with ``column`` (AppTest keeps no key for st.dataframe)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def opened(at: AppTest, **query: str) -> AppTest:
    """``at`` run with ``query`` added to its URL's query parameters, without errors."""
    at.query_params.update(query)
    at.run()
    no_errors(at)
    return at
