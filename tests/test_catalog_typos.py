"""Issue 27, hostile finding 3: typo warnings that missed an extra zero.

eFLOPS 377 -> 3,770 passed silently (and Recommend switched to 15 x g4dn.xlarge); a spot
price divided by 9, network, vCPUs and memory were not checked. Each is now warned about,
naming the field, the value and the reference it was checked against: the accelerator table's
eFLOPS estimate, AWS's deepest spot discount (90 %), ``data/instance-network.csv``, the size
in the type's name, the type's peers' memory per vCPU. Warnings only: the catalog stays valid.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import bundled_catalog_paths, load_catalog
from deepvm_core.cli import main as cli_main
from deepvm_core.hardware.typos import typo_warnings

PAPER = "aws-us-east-1-2023-10"


def edited(catalog: Catalog, name: str, **changes: Any) -> Catalog:
    gpus = tuple(replace(g, **changes) if g.name == name else g for g in catalog.gpu_types)
    cpus = tuple(replace(c, **changes) if c.name == name else c for c in catalog.cpu_types)
    return replace(catalog, gpu_types=gpus, cpu_types=cpus)


def warned(catalog: Catalog, base: Catalog | None = None) -> dict[tuple[str, str], str]:
    return {(p.where, p.field): str(p) for p in typo_warnings(catalog, base)}


@pytest.fixture(scope="module")
def paper() -> Catalog:
    return load_catalog(PAPER)


@pytest.mark.parametrize("name", sorted(bundled_catalog_paths()))
def test_no_bundled_catalog_is_warned_about(name: str) -> None:
    assert typo_warnings(load_catalog(name)) == ()


def test_an_extra_zero_on_eflops(paper: Catalog) -> None:
    g4dn = next(g for g in paper.gpu_types if g.name == "g4dn.xlarge")
    assert (g4dn.eflops, g4dn.accelerator or "T4") == (377.0, "T4")
    for base in (None, paper):  # `catalog validate`, and the editor (against its source)
        found = warned(edited(paper, "g4dn.xlarge", eflops=3770.0), base)
        text = found[("g4dn.xlarge", "eflops")]
        # the table's estimate of one T4 is 375.6 (Method page); 3770 / 375.6 = 10.0
        assert text.startswith("g4dn.xlarge: eflops = 3770.0: is 10x the estimate 376 of "
                               "one T4 from the accelerator table")


def test_a_spot_price_divided_by_9(paper: Catalog) -> None:
    # 0.1578 / 9 = 0.01753, 3.3 % of the on-demand 0.526 USD/hour
    found = warned(edited(paper, "g4dn.xlarge", spot_usd_per_hour=0.1578 / 9))
    text = found[("g4dn.xlarge", "spot_usd_per_hour")]
    assert text.startswith("g4dn.xlarge: spot_usd_per_hour = 0.01753")
    assert "3.3% of the on-demand price 0.526 USD/hour" in text
    assert "90%" in text


@pytest.mark.parametrize(("name", "field", "value", "says"), [
    # data/instance-network.csv: g5.xlarge 10 Gbps
    ("g5.xlarge", "network_gbps", 100.0, "is 10x the 10 Gbps of g5.xlarge in "
                                         "data/instance-network.csv"),
    # "xlarge" is 4 vCPUs in AWS's names
    ("g4dn.xlarge", "vcpus", 40, "is 10x the 4 vCPUs of size xlarge in AWS's names"),
    # 160 GiB / 4 vCPUs = 40 GiB per vCPU; the others: 1.88 (c3, c4) to 8 (d3) GiB per vCPU
    ("g4dn.xlarge", "memory_gib", 160.0, "40 GiB per vCPU, far outside the other types' "
                                         "1.88..8"),
    ("c5.xlarge", "memory_gib", 0.8, "0.2 GiB per vCPU, far outside the other types' "
                                     "1.88..8"),
])
def test_implausible_shapes(paper: Catalog, name: str, field: str, value: float,
                            says: str) -> None:
    text = warned(edited(paper, name, **{field: value}))[(name, field)]
    assert text.startswith(f"{name}: {field} = {value!r}: ")
    assert says in text


def test_peers_in_the_family_are_the_reference_for_memory() -> None:
    catalog = load_catalog("aws-us-east-1-2025-h1")
    # g4dn.2xlarge 32 GiB -> 320: 40 GiB per vCPU against its family's 4
    text = warned(edited(catalog, "g4dn.2xlarge", memory_gib=320.0))[
        ("g4dn.2xlarge", "memory_gib")]
    assert "40 GiB per vCPU, far outside the g4dn types' 4..4" in text


def test_catalog_validate_prints_them(tmp_path, capsys, paper: Catalog) -> None:
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(catalog_to_dict(edited(paper, "g4dn.xlarge", eflops=3770.0))))
    assert cli_main(["catalog", "validate", str(path)]) == 0
    assert "warning: g4dn.xlarge: eflops = 3770.0: is 10x the estimate" in (
        capsys.readouterr().out)
