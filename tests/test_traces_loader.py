"""Trace files and pool statistics (``traces.md``, "Traces" and "Statistics"): every bad input
the contract lists is a clear error naming the file, and statistics worked by hand."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.catalog.store import load_catalog
from deepvm_core.market.pools import check_pools, make_pool, split_pool_name
from deepvm_core.market.trace import MAX_TICKS, TraceError, load_trace, parse_trace
from deepvm_core.market.trace_stats import pool_statistics


def doc(data: object, gap: object = 600) -> str:
    return json.dumps({"metadata": {"gap_seconds": gap}, "data": data})


def test_reads_the_public_format(tmp_path):
    path = tmp_path / "z.json"
    path.write_text(doc([0, 1, 4, 4.0], gap=32))
    t = load_trace(path)
    assert t.gap_seconds == 32.0
    assert t.counts.tolist() == [0, 1, 4, 4]
    assert t.max_count == 4
    assert not t.counts.flags.writeable


@pytest.mark.parametrize(("text", "match"), [
    (json.dumps({"data": [1]}), "gap_seconds' is missing"),
    (doc([1], gap=0), "gap_seconds = 0: must be a number > 0"),
    (doc([1], gap=-30), "gap_seconds = -30"),
    (doc([1], gap="300"), "gap_seconds = '300'"),
    (doc([1], gap=True), "gap_seconds = True"),
    (doc([]), "'data' is empty"),
    (doc({"a": 1}), "'data' must be a list"),
    (json.dumps({"metadata": {"gap_seconds": 1}}), "'data' is missing"),
    (doc([1, 2, -1]), r"data\[2\] = -1: a count must not be negative"),
    (doc([1, 2.5]), r"data\[1\] = 2.5: a count must be a whole number"),
    (doc([1, "2"]), r"data\[1\] = '2': a count must be a number"),
    (doc([1, None]), r"data\[1\] = None: a count must be a number"),
    (doc([1, True]), r"data\[1\] = True: a count must be a number"),
    ("[1, 2]", "a trace must be a JSON object"),
    ("{not json", "malformed JSON"),
], ids=["no-gap", "gap-0", "gap-negative", "gap-text", "gap-bool", "empty", "not-list",
        "no-data", "negative", "fractional", "text-count", "null-count", "bool-count",
        "not-object", "malformed"])
def test_bad_traces_are_clear_errors_naming_the_file(tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceError, match=match) as info:
        load_trace(path)
    assert str(info.value).startswith(str(path))


def test_binary_missing_and_over_limit_files(tmp_path):
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(TraceError, match=r"binary|not text"):
        load_trace(binary)
    with pytest.raises(TraceError, match="no such file"):
        load_trace(tmp_path / "missing.json")
    big = tmp_path / "big.json"
    big.write_text(doc([1] * (MAX_CATALOG_BYTES // 3 + 10)))
    with pytest.raises(TraceError, match="at most"):
        load_trace(big)


def test_more_than_the_tick_limit_is_refused():
    from deepvm_core.market.trace import _counts

    with pytest.raises(TraceError, match="10,000,000"):
        _counts("x", [0] * (MAX_TICKS + 1))


def test_statistics_by_hand():
    # ticks of 600 s = 1/6 h: [0,1,1,0,0,1,1,1,0]
    t = parse_trace(doc([0, 1, 1, 0, 0, 1, 1, 1, 0]), "t")
    s = pool_statistics(t, 1)
    assert s.availability == pytest.approx(5 / 9)
    assert s.interruptions == 2  # k = 3 and k = 8
    assert s.mtbi_hours == pytest.approx((5 / 6) / 2)  # 5 up ticks, 2 events
    assert s.mean_wait_hours == pytest.approx((4 / 3) / 6)  # down runs 1, 2, 1 ticks
    assert s.days == pytest.approx(9 * 600 / 86_400)


def test_statistics_of_a_count_trace_depend_on_n():
    t = parse_trace(doc([4, 2, 4, 0, 3]), "t")
    assert pool_statistics(t, 2).availability == pytest.approx(4 / 5)
    assert pool_statistics(t, 4).availability == pytest.approx(2 / 5)
    assert pool_statistics(t, 4).interruptions == 2  # k = 1 and k = 3
    with pytest.raises(TraceError, match="larger than the trace's largest count"):
        pool_statistics(t, 5)


def test_no_interruption_and_no_down_tick():
    s = pool_statistics(parse_trace(doc([1, 1, 1]), "t"), 7)  # a state trace: any n
    assert math.isinf(s.mtbi_hours)
    assert s.mean_wait_hours == 0.0
    assert s.availability == 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=60))
def test_statistics_invariants(data):
    s = pool_statistics(parse_trace(doc(data), "t"), 1)
    ups = sum(data)
    assert s.availability == pytest.approx(ups / len(data))
    # plain loop: events and down runs
    events = sum(1 for k in range(1, len(data)) if data[k - 1] and not data[k])
    runs, k = [], 0
    while k < len(data):
        if data[k] == 0:
            j = k
            while j < len(data) and data[j] == 0:
                j += 1
            runs.append(j - k)
            k = j
        else:
            k += 1
    assert s.interruptions == events
    assert s.mean_wait_hours == pytest.approx(np.mean(runs) / 6 if runs else 0.0)


def test_pools_names_types_and_duplicates():
    catalog = load_catalog("aws-us-east-1-2023-10")
    t = parse_trace(doc([1, 0]), "t")
    gpu = catalog.gpu_types[0]
    pool = make_pool(catalog, f"{gpu.name}@us-east-1a", t)
    assert pool.spot_usd_per_hour == pytest.approx(
        (gpu.spot_by_zone_usd_per_hour or {}).get("us-east-1a", gpu.spot_usd_per_hour))
    with pytest.raises(TraceError, match="is not TYPE@ZONE"):
        split_pool_name("g4dn.xlarge")
    with pytest.raises(TraceError, match=re.escape("no GPU type 'p3.2xlarge'")):
        make_pool(catalog, "p3.2xlarge@us-east-1a", t)
    with pytest.raises(TraceError, match="given twice"):
        check_pools([pool, pool])
    other = make_pool(catalog, f"{gpu.name}@us-east-1b", parse_trace(doc([1, 0, 1]), "u"))
    with pytest.raises(TraceError, match="same length"):
        check_pools([pool, other])
