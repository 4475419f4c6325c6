"""Issue 20, items 8, 9 and 11 (AppTest): a refused URL value is echoed short, unknown and
repeated parameters are reported once and dropped from the rewritten URL, and a URL warning
goes once the user changes the value it is about."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import url_cleaning, url_pages, url_plan

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    return AppTest.from_file(str(APP), default_timeout=90)


def warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def test_a_long_bad_value_is_echoed_cut_to_40_characters(app: AppTest) -> None:
    app.query_params["pw"] = "x" * 5000
    app.run()
    shown = [w for w in warnings(app) if w.startswith("URL parameter pw=")]
    # 40 characters of the value, then how long it was.
    assert shown == ["URL parameter pw='" + "x" * 40 + "'… (5,000 characters) is not a number; "
                     "using the default 3."]


def test_unknown_parameters_are_reported_once_and_dropped(app: AppTest) -> None:
    app.query_params.update({"PW": "5", "foo": "", "pw": "2"})
    app.run()
    shown = warnings(app)
    assert shown.count("URL parameter 'PW' is not one this app reads; it was ignored and "
                       "removed.") == 1
    assert shown.count("URL parameter 'foo' is not one this app reads; it was ignored and "
                       "removed.") == 1
    assert "PW" not in app.query_params
    assert "foo" not in app.query_params
    assert app.query_params["pw"] == "2"


def test_a_repeated_parameter_keeps_one_usable_value(app: AppTest) -> None:
    app.query_params["pw"] = ["1", "abc", "5"]
    app.run()
    assert app.number_input(key="sb_pw").value == 5.0  # the last usable value
    assert app.query_params["pw"] == "5"  # one value left in the URL, not three
    shown = [w for w in warnings(app) if "pw" in w]
    assert shown == ["URL parameter pw is given 3 times ('abc' not usable); using '5' and "
                     "dropping '1', 'abc'."]


def test_a_url_warning_goes_when_the_value_is_fixed(app: AppTest) -> None:
    app.query_params.update({"buffer": "zero", "ckpt": "-1"})
    app.run()
    assert any(w.startswith("URL parameter buffer='zero'") for w in warnings(app))
    app.number_input(key="sb_buffer").set_value(0.5).run()
    shown = warnings(app)
    assert not any(w.startswith("URL parameter buffer=") for w in shown)
    # The other value was not touched: its warning stays until dismissed.
    assert any(w.startswith("URL parameter ckpt='-1'") for w in shown)


def test_single_values_report_each_problem_once() -> None:
    ok = {"pw": ["3"], "top": ["2", "2"]}
    single, notes = url_cleaning.single_values(ok, ())
    assert single == {"pw": "3", "top": "2"}
    assert [n.text for n in notes] == ["URL parameter top is given 2 times; using '2' and "
                                       "dropping '2'."]


@pytest.mark.parametrize(("app_url", "base", "expected"), [
    ("http://127.0.0.1:8501", "", None),
    ("http://127.0.0.1:8501/simulate", "", None),
    ("http://127.0.0.1:8501/nonexistent", "", "/nonexistent"),
    ("http://h/studio", "/studio", None),
    ("http://h/studio/foo", "studio", "/foo"),
    (None, "", None),
])
def test_unknown_path(app_url: str | None, base: str, expected: str | None) -> None:
    assert url_pages.unknown_path(app_url, base) == expected


# ----------------------------------------------------------------------------- item 5


def test_a_refused_restart_is_said_in_words_and_the_input_shows_the_value_in_use(
        app: AppTest) -> None:
    app.query_params.update({"page": "plan", "trials": "200"})
    app.run()
    restart = app.number_input(key="plan_restart_min")
    restart.set_value(525600.0).run()
    # The core's bound: MAX_RESTART_HOURS 24 h = 24 * 60 = 1440 min; the default 0.1 h = 6 min.
    assert app.number_input(key="plan_restart_min").value == 6.0
    said = [m.value for m in app.markdown if "was refused" in m.value]
    assert said == [":red[Restart R (min): 525600 min was refused (the most is 1440 min); 6 min is "
                    "in use.]"]
    assert not app.error  # the plan goes on with 6 min
    app.run()  # later reruns keep the value in use and the words
    assert app.number_input(key="plan_restart_min").value == 6.0
    app.number_input(key="plan_restart_min").set_value(10.0).run()
    assert not [m for m in app.markdown if "was refused" in m.value]


def test_a_refused_sidebar_number_is_said_in_words(app: AppTest) -> None:
    app.run()
    app.number_input(key="sb_pw").set_value(5000.0).run()
    assert app.number_input(key="sb_pw").value == 3.0  # the default, still in use
    assert any(m.value == ":red[PW: pricing willingness (USD/hour): 5000 was refused (the most "
                          "is 1000); 3 is in use.]" for m in app.markdown)


# ----------------------------------------------------------------------------- item 4


def test_mtbi_overrides_are_in_the_url(app: AppTest) -> None:
    # the paper's catalog, which has g3s.xlarge (issue 27: an MTBI of a type the link's
    # catalog lacks is dropped, and said)
    app.query_params.update({"page": "plan", "trials": "200", "catalog": "aws-us-east-1-2023-10",
                             "mtbi": "g4dn.xlarge:1e-09,g3s.xlarge:0.005,g5.xlarge:abc"})
    app.run()
    assert app.session_state["plan_mtbi"] == {"g3s.xlarge": 0.005, "g4dn.xlarge": 1e-9}
    assert app.query_params["mtbi"] == "g3s.xlarge:0.005,g4dn.xlarge:1e-09"
    assert ("URL parameter mtbi: MTBI of g5.xlarge: 'abc' is not a number of hours; using the "
            "default MTBI for it.") in warnings(app)
    table = next(d.value for d in app.dataframe if "Source" in d.value.columns)
    rows = table.set_index("GPU type")
    assert rows.loc["g4dn.xlarge", "MTBI (h, before the scale)"] == "1e-09"
    assert rows.loc["g4dn.xlarge", "Source"] == "user"


def test_mtbi_url_round_trips() -> None:
    overrides = {"g4dn.xlarge": 1e-9, "p3.2xlarge": 19.0, "g5.xlarge": 0.35}
    text = url_plan.format_mtbi(overrides)
    assert text == "g4dn.xlarge:1e-09,g5.xlarge:0.35,p3.2xlarge:19"
    assert url_plan.parse_mtbi(text) == (overrides, [])


def test_a_refused_sweep_step_is_said_in_words(app: AppTest) -> None:
    app.query_params["page"] = "simulate"
    app.run()
    app.number_input(key="sim_pw_step").set_value(50.0).run()
    assert app.number_input(key="sim_pw_step").value == 0.1  # FIG3_PW_GRID step, in use
    assert any(m.value == ":red[PW step (USD/hour): 50 USD/hour was refused (the most is 10 "
                          "USD/hour); 0.1 USD/hour is in use.]" for m in app.markdown)
