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


#: The xdist work unit of the browser tests (tests/e2e): one worker runs them all.
BROWSER_TESTS = "tests/e2e"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``make test``), with the browser tests counted as one file.

    Each test file goes to one worker as a whole (its module fixtures run once), and one
    worker runs every test of tests/e2e, starting with them: one dashboard and one Chromium
    (session fixtures), whose caches every browser test shares, next to the workers that run
    the rest. (xdist_group marks cannot say this: pytest-xdist 3.8's loadgroup no longer
    groups under pytest 9.2, pytest-xdist#1386.) Any other ``--dist`` is xdist's own.
    """
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserTestsFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return BROWSER_TESTS if path.startswith(f"{BROWSER_TESTS}/") else path

        def _assign_work_unit(self, node: Any) -> None:
            # The longest unit first: the other workers share everything else meanwhile.
            if BROWSER_TESTS in self.workqueue:
                self.workqueue.move_to_end(BROWSER_TESTS, last=False)
            super()._assign_work_unit(node)

    return BrowserTestsFirst(config, log)


def read_json(path: Path) -> object:
    return json.loads(path.read_text())
