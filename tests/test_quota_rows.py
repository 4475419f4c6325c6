"""Quotas for every family (issue 24, part 4): every family of every bundled catalog has a
quota row, and "quotas on" bounds every family, the P family included.

The quota numbers below are written by hand from ``data/README.md`` ("Quotas"), not read from
the catalogs, and every bound is derived by hand: vCPUs per type x VMs <= the family's quota.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from deepvm_core.bundled import bundled_catalog_names
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.model import Arch, Scenario
from deepvm_core.search.candidates import build_candidates

TODAY = "aws-us-east-1-2025-h1"
TODAY_CATALOGS = ("aws-eu-central-1-2025-h1", "aws-us-east-1-2025-h1", "aws-us-east-2-2025-h1",
                  "aws-us-west-2-2025-h1")

#: (on-demand vCPUs, spot vCPUs) per family of the 2025-h1 catalogs, as data/README.md states
#: them: G and the Standard families C, D, M, T the paper's (G 32 / 128, others 256 / 256), R
#: as the other Standard families, P room for one p5(en).48xlarge (192 vCPUs), Trn room for one
#: trn1.32xlarge (128 vCPUs).
TODAY_QUOTAS = {"G": (32, 128), "C": (256, 256), "D": (256, 256), "M": (256, 256),
                "T": (256, 256), "R": (256, 256), "P": (192, 192), "Trn": (128, 128)}
#: The paper's catalogs keep the paper's quotas (model.md, "Known results to reproduce").
PAPER_QUOTAS = {"G": (32, 128), "C": (256, 256), "D": (256, 256), "M": (256, 256),
                "T": (256, 256)}


def _quotas(name: str) -> dict[str, tuple[int, int]]:
    return {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in load_catalog(name).quotas}


@pytest.mark.parametrize("name", bundled_catalog_names())
def test_every_family_of_every_bundled_catalog_has_a_quota_row(name):
    catalog = load_catalog(name)
    families = {t.family for t in (*catalog.gpu_types, *catalog.cpu_types)}
    missing = sorted(f for f in families if catalog.quota(f) is None)
    assert not missing, f"{name}: no quota row (unlimited) for family {', '.join(missing)}"


def test_the_bundled_quota_numbers_are_the_documented_ones():
    assert set(bundled_catalog_names()) == {*TODAY_CATALOGS, "aws-us-east-1-2023-10",
                                            "paper-simulated"}
    for name in ("aws-us-east-1-2023-10", "paper-simulated"):
        assert _quotas(name) == PAPER_QUOTAS
    for name in TODAY_CATALOGS:
        quotas = _quotas(name)
        # every row the catalog has is the documented value; eu-central-1 has no Trn type
        assert quotas == {f: v for f, v in TODAY_QUOTAS.items() if f in quotas}, name
        assert set(TODAY_QUOTAS) - set(quotas) <= {"Trn"}, name


def _vcpus_used(config: dict, vcpus: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(on-demand, spot) vCPUs per family of one exported configuration."""
    catalog = load_catalog(TODAY)
    family = {t.name: t.family for t in (*catalog.gpu_types, *catalog.cpu_types)}
    on_demand: dict[str, int] = {}
    spot: dict[str, int] = {}
    gpu, cpu = config["gpu"], config["cpu"]
    on_demand[family[gpu["name"]]] = gpu["on_demand"] * vcpus[gpu["name"]]
    spot[family[gpu["name"]]] = gpu["spot"] * vcpus[gpu["name"]]
    if cpu is not None:
        f = family[cpu["name"]]
        on_demand[f] = on_demand.get(f, 0) + cpu["on_demand"] * vcpus[cpu["name"]]
    return on_demand, spot


def _within_quotas(config: dict) -> None:
    catalog = load_catalog(TODAY)
    vcpus = {t.name: t.vcpus for t in (*catalog.gpu_types, *catalog.cpu_types)}
    on_demand, spot = _vcpus_used(config, vcpus)
    for f, used in on_demand.items():
        assert used <= TODAY_QUOTAS[f][0], (config["summary"], f, used)
    for f, used in spot.items():
        assert used <= TODAY_QUOTAS[f][1], (config["summary"], f, used)


def test_quotas_on_at_pw_60_bound_the_p_family(capsys):
    """Before the P row: Cost-First 110 x p3.2xlarge (1 on-demand + 109 spot), 872 spot vCPUs.
    With P spot 192 vCPUs and 8 vCPUs per p3.2xlarge: at most 192 / 8 = 24 spot VMs, so a Single
    Anchor cluster has at most 25 of them."""
    assert main(["recommend", "--catalog", TODAY, "--pw", "60", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"]["use_quotas"] is True
    shown = [*doc["deepvm"], doc["deepvm_noscale"], doc["cost_first"], doc["performance_first"],
             *doc["best_per_architecture"].values()]
    shown = [c for c in shown if c is not None]
    assert len(shown) >= 5
    for config in shown:
        _within_quotas(config)
        if config["gpu"]["name"] == "p3.2xlarge":
            assert config["gpu"]["spot"] <= 24
    cost_first = doc["cost_first"]["gpu"]
    assert (cost_first["name"], cost_first["spot"]) != ("p3.2xlarge", 109)


def test_quotas_on_bound_plan_with_pw_off(capsys):
    """Before the P row: 256 x p5en.48xlarge spot (49,152 vCPUs) and 9 x r6i.32xlarge. With P
    spot 192 vCPUs and 192 vCPUs per p5en.48xlarge: at most one spot p5en.48xlarge; R on-demand
    256 vCPUs allows at most 2 r6i.32xlarge (128 vCPUs each)."""
    assert main(["plan", "--catalog", TODAY, "--pw", "none", "--goal", "fastest", "--trials",
                 "0", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chosen"] is not None
    for config in (*doc["best"], *doc["frontier"], doc["chosen"]):
        _within_quotas(config)
        if config["gpu"]["name"] == "p5en.48xlarge":
            assert config["gpu"]["spot"] <= 1
    assert doc["chosen"]["gpu"]["spot"] < 256


def test_every_candidate_of_today_is_within_every_family_quota():
    """The whole search space with quotas on and no PW: per configuration, GPU VMs x vCPUs and
    memory nodes x vCPUs within their family's quota (on-demand: the anchor and the memory
    nodes; spot: the other GPU VMs). The largest counts, by hand: p3.2xlarge (8 vCPUs) 24 spot,
    so Tiering 24 and Single Anchor 25; p5en.48xlarge (192) Tiering 1, Single Anchor 2;
    g4dn.xlarge (4 vCPUs, G 32 / 128) Tiering 32, Single Anchor 33."""
    catalog = load_catalog(TODAY)
    table = build_candidates(catalog, Scenario(0.0), memory_node_choices=None)
    gpus, cpus = table.domain.gpus, table.domain.cpus
    single = table.architecture == Arch.SINGLE_ANCHOR
    gpu_vcpus = np.array([gpus[i].vcpus for i in table.gpu])
    gpu_family = np.array([gpus[i].family for i in table.gpu])
    spot_vms = np.where(single, table.n - 1, table.n)
    anchor_vms = np.where(single, 1, 0)
    for family, (on_demand_quota, spot_quota) in TODAY_QUOTAS.items():
        mine = gpu_family == family
        assert np.all(spot_vms[mine] * gpu_vcpus[mine] <= spot_quota), family
        assert np.all(anchor_vms[mine] * gpu_vcpus[mine] <= on_demand_quota), family
    tiering = np.flatnonzero(~single)
    cpu_vcpus = np.array([cpus[i].vcpus for i in table.cpu[tiering]])
    cpu_family = np.array([cpus[i].family for i in table.cpu[tiering]])
    for family, (on_demand_quota, _) in TODAY_QUOTAS.items():
        mine = cpu_family == family
        assert np.all(table.m[tiering][mine] * cpu_vcpus[mine] <= on_demand_quota), family

    def largest(name: str, arch: Arch) -> int:
        index = next(i for i, g in enumerate(gpus) if g.name == name)
        return int(table.n[(table.gpu == index) & (table.architecture == arch)].max())

    assert (largest("p3.2xlarge", Arch.TIERING), largest("p3.2xlarge", Arch.SINGLE_ANCHOR)) == (
        24, 25)
    assert (largest("p5en.48xlarge", Arch.TIERING),
            largest("p5en.48xlarge", Arch.SINGLE_ANCHOR)) == (1, 2)
    assert (largest("g4dn.xlarge", Arch.TIERING), largest("g4dn.xlarge", Arch.SINGLE_ANCHOR)) == (
        32, 33)
    memory = {cpus[i].name: int(table.m[table.cpu == i].max()) for i in set(table.cpu[tiering])}
    assert memory.get("r6i.32xlarge", 0) <= 2
