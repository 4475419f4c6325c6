from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_fakes
import fleet_fakes
import pytest
import spot_advisor_fake

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog

REPO = Path(__file__).resolve().parent.parent
#: The research artifact's JSON files (copied verbatim from the shared reference).
SHARED_DATA = REPO / "tests" / "fixtures" / "artifact"
#: An excerpt of the AWS Spot Instance Advisor's data (see its README).
SPOT_ADVISOR_EXCERPT = spot_advisor_fake.SPOT_ADVISOR_EXCERPT

# The loopback fakes of AWS, for every test that names them: one server each per session (one
# per xdist worker), reset for each test by the per-test fixtures (aws_env, fleet_env,
# spot_advisor).
moto_url = aws_fakes.moto_url
fake_aws = aws_fakes.fake_aws
aws_env = aws_fakes.aws_env
ec2_front = fleet_fakes.ec2_front
fleet_env = fleet_fakes.fleet_env
fake_spot_advisor = spot_advisor_fake.fake_spot_advisor
spot_advisor = spot_advisor_fake.spot_advisor


@pytest.fixture(scope="session")
def aws_catalog() -> Catalog:
    return load_catalog("aws-us-east-1-2023-10")


@pytest.fixture(scope="session")
def sim_catalog() -> Catalog:
    return load_catalog("paper-simulated")


@pytest.fixture(autouse=True, scope="session")
def _isolated_deepvm_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The whole session's per-user folder (``DEEPVM_HOME``) is a temporary one: no test, and
    no process a test starts, writes into the user's real home."""
    with pytest.MonkeyPatch.context() as patch:
        home = tmp_path_factory.mktemp("deepvm_home")
        patch.setenv("DEEPVM_HOME", str(home))
        yield home


@pytest.fixture(autouse=True)
def _isolated_catalog_dirs(tmp_path_factory: pytest.TempPathFactory,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Never let a test write into the repository's user, fetched or upload catalog folders."""
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path_factory.mktemp("user")))
    monkeypatch.setenv("DEEPVM_FETCHED_CATALOG_DIR", str(tmp_path_factory.mktemp("fetched")))
    monkeypatch.setenv("DEEPVM_UPLOAD_CATALOG_DIR", str(tmp_path_factory.mktemp("uploads")))


#: The browser tests (tests/e2e): their files are handed out first under xdist.
BROWSER_TESTS = "tests/e2e/"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``make test``), the browser test files early but on at most half
    the workers at a time (rounded up).

    Each test file goes to one worker as a whole (its module fixtures run once). The browser
    test files are the longest (a few seconds per test) but spend much of it waiting on a
    dashboard and a browser, while the other files (AppTest pages, solvers, property tests)
    keep a core busy: so a worker asking for work gets a browser file first only while fewer
    than half the workers run one, else the largest file left of the others. The browser
    files still go out early, and the cores are not all waiting at once. Each worker that runs
    browser tests starts one dashboard and one Chromium (session fixtures) for all of them.
    Any other ``--dist`` is xdist's own.
    """
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    def browser_left(work: dict[str, dict[str, bool]]) -> bool:
        return any(scope.startswith(BROWSER_TESTS) and not all(done.values())
                   for scope, done in work.items())

    class BrowserTestsSpread(LoadFileScheduling):
        def _assign_work_unit(self, node: Any) -> None:
            others = sum(browser_left(work) for n, work in self.assigned_work.items()
                         if n is not node)
            browser = others < (len(self.nodes) + 1) // 2 or browser_left(
                self.assigned_work.get(node, {}))
            first = next((s for s in self.workqueue
                          if s.startswith(BROWSER_TESTS) == browser), None)
            if first is not None:
                self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return BrowserTestsSpread(config, log)


def read_json(path: Path) -> object:
    return json.loads(path.read_text())
