"""Factories for catalogs in tests: fill defaults, override what a test cares about; the
hypothesis strategies for random catalogs and scenarios; and the 7B transformer job the
workload tests work by hand (:func:`job7`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from deepvm_core.catalog import DEFAULT_SATURATION, Catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.model import Scenario
from deepvm_core.workload.transformer import TransformerJob


def gpu_row(name: str = "g1", **over: Any) -> dict[str, Any]:
    """A GPU type row in our catalog format; ``scaling`` may be given as an (a, b, c) tuple."""
    row = {"name": name, "family": "G", "on_demand_usd_per_hour": 1.0, "spot_usd_per_hour": 0.3,
           "vcpus": 4, "memory_gib": 16.0, "network_gbps": 10.0, "eflops": 100.0,
           "scaling": {"a": 0.1, "b": 15.0, "c": 10.0}}
    row.update(over)
    if isinstance(row["scaling"], tuple):
        row["scaling"] = dict(zip("abc", row["scaling"], strict=True))
    return row


def cpu_row(name: str = "c1", **over: Any) -> dict[str, Any]:
    """A CPU type row in our catalog format."""
    row = {"name": name, "family": "C", "on_demand_usd_per_hour": 0.2, "spot_usd_per_hour": 0.1,
           "vcpus": 4, "memory_gib": 8.0, "network_gbps": 10.0}
    row.update(over)
    return row


def saturation_rows(steps: list[tuple[float, int]]) -> list[dict[str, Any]]:
    """Saturation table rows from (bandwidth, n_sat) pairs."""
    return [{"bandwidth_gbps": bw, "max_gpu_vms": n} for bw, n in steps]


def catalog_dict(gpus: list[dict[str, Any]] | None = None,
                 cpus: list[dict[str, Any]] | None = None,
                 quotas: list[dict[str, Any]] | None = None,
                 saturation: list[dict[str, Any]] | None = None,
                 **meta: Any) -> dict[str, Any]:
    """A catalog document; the saturation table defaults to the catalog's default."""
    default = [(s.bandwidth_gbps, s.serves_fewer_than) for s in DEFAULT_SATURATION]
    data = {
        "schema_version": 1, "name": "test", "provider": "simulated", "region": "-",
        "prices_date": "2026-01-01", "source": "tests",
        "gpu_types": [gpu_row()] if gpus is None else gpus,
        "cpu_types": [cpu_row()] if cpus is None else cpus,
        "quotas": quotas or [],
        "network_saturation": saturation or saturation_rows(default),
    }
    data.update(meta)
    return data


def make_catalog(gpus: list[dict[str, Any]] | None = None,
                 cpus: list[dict[str, Any]] | None = None,
                 quotas: list[dict[str, Any]] | None = None,
                 saturation: list[dict[str, Any]] | None = None,
                 **meta: Any) -> Catalog:
    """A validated catalog (see :func:`catalog_dict`).

    ``gpus=[]`` builds a catalog without GPU types, which a catalog *file* may not be (the
    core's rule) but which code may build (a region without GPU offers, the solver's
    ``no_gpu_types`` explanation); the rows are validated all the same.
    """
    data = catalog_dict(gpus, cpus, quotas, saturation, **meta)
    return parse_catalog(data, require_gpu_types=gpus != [])


# ----------------------------------------------------------------------------- hypothesis

PRICES = st.one_of(st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 1.0]),
                   st.floats(0.02, 2.0, allow_nan=False, allow_infinity=False))
BANDWIDTHS = st.one_of(st.sampled_from([0.3, 1.0, 1.7, 5.0, 10.0, 25.0, 100.0]),
                       st.floats(0.1, 40.0, allow_nan=False, allow_infinity=False))
EFLOPS = st.one_of(st.sampled_from([50.0, 100.0, 200.0, 377.0]),
                   st.floats(1.0, 1000.0, allow_nan=False, allow_infinity=False))
SCALING = st.one_of(st.none(), st.tuples(st.floats(0.05, 2.0), st.floats(0.0, 30.0),
                                         st.floats(0.5, 20.0)))
NAMES = ["delta", "alpha", "echo", "bravo", "charlie", "foxtrot"]


@st.composite
def catalogs(draw: st.DrawFn, *, min_gpus: int = 1, min_cpus: int = 0,
             spot_may_equal_on_demand: bool = True) -> Catalog:
    """Random small catalogs: 1-4 GPU types (some without eFLOPS), 0-4 CPU types, names in a
    random catalog order, shared quota families, sometimes a small saturation table so that
    saturation binds at small node counts.

    ``spot_may_equal_on_demand``: draw spot prices equal to on-demand ones, where the paper's Z of
    Single Anchor and Tiering are equal on paper but may differ in the last bit.
    """
    names = draw(st.permutations(NAMES))
    gpus = []
    for i in range(draw(st.integers(min_gpus, 4))):
        od = draw(PRICES)
        equal = [st.just(od)] if spot_may_equal_on_demand else []
        spot = draw(st.one_of(st.just(od * 0.3), *equal,
                              st.floats(0.005, od, exclude_max=not spot_may_equal_on_demand)))
        gpus.append(gpu_row(
            f"g-{names[i]}", family=draw(st.sampled_from(["G", "P", "X"])),
            on_demand_usd_per_hour=od, spot_usd_per_hour=spot,
            vcpus=draw(st.sampled_from([1, 2, 4, 8])), network_gbps=draw(BANDWIDTHS),
            eflops=None if draw(st.integers(0, 5)) == 0 else draw(EFLOPS),
            scaling=draw(SCALING)))
    cpus = [cpu_row(f"c-{names[i]}", family=draw(st.sampled_from(["C", "G", "M", "X"])),
                    on_demand_usd_per_hour=draw(PRICES), vcpus=draw(st.sampled_from([1, 2, 4])),
                    memory_gib=draw(st.sampled_from([0.25, 0.5, 1.0, 4.0, 16.0])),
                    network_gbps=draw(BANDWIDTHS))
            for i in range(draw(st.integers(min_cpus, 4)))]
    quotas = [  # "X" is never listed: unlimited
        {"family": family, "on_demand_vcpus": draw(st.integers(0, 40)),
         "spot_vcpus": draw(st.integers(0, 60))}
        for family in ("G", "P", "C", "M") if draw(st.booleans())
    ]
    saturation = None
    if draw(st.booleans()):
        keys = sorted(draw(st.sets(st.sampled_from([0.3, 1.0, 2.0, 5.0, 12.0]), min_size=1)))
        saturation = saturation_rows([(bw, draw(st.integers(1, 6))) for bw in keys])
    return make_catalog(gpus, cpus, quotas, saturation)


def scenarios(pw_max: float = 5.0, nodes_max: int = 40) -> st.SearchStrategy[Scenario]:
    """Random scenarios: PW up to ``pw_max`` (some round values), node cap 1 to ``nodes_max``,
    both objectives, quotas on and off."""
    return st.builds(
        Scenario,
        pw_usd_per_hour=st.one_of(st.floats(0.0, pw_max), st.sampled_from([1.0, 2.0, 2.5])),
        checkpoint_gb=st.sampled_from([0.1, 0.3, 1.0, 5.0]),
        buffer_checkpoints=st.sampled_from([1.0, 2.0, 3.0]),
        objective=st.sampled_from(["paper", "performance"]),
        use_quotas=st.booleans(),
        max_nodes=st.integers(1, nodes_max),
    )


def job7(**changes: object) -> TransformerJob:
    """A 7B-parameter job on 2B tokens with its shape given (h 4096, 32 layers), the
    worked-by-hand example of the memory and throughput tests; ``changes`` override fields."""
    fields: dict[str, object] = {"params_b": 7, "tokens_b": 2, "hidden_size": 4096,
                                 "layers": 32}
    fields.update(changes)
    return TransformerJob(**fields)  # type: ignore[arg-type]
