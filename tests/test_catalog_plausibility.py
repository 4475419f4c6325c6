"""Issue 20 item 7, the core: valid catalog values that look like typos are warned about,
never refused; ``deepvm catalog validate`` prints them."""

from __future__ import annotations

import json
from dataclasses import replace

from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.plausibility import plausibility_warnings
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main as cli_main


def aws():
    return load_catalog("aws-us-east-1-2023-10")


def with_spot(catalog, name: str, spot: float):
    gpus = tuple(replace(g, spot_usd_per_hour=spot) if g.name == name else g
                 for g in catalog.gpu_types)
    return replace(catalog, gpu_types=gpus)


def test_a_spot_price_typed_as_45_instead_of_0_45() -> None:
    base = aws()
    g4dn = next(g for g in base.gpu_types if g.name == "g4dn.xlarge")
    assert (g4dn.on_demand_usd_per_hour, g4dn.spot_usd_per_hour) == (0.526, 0.1578)
    edited = with_spot(base, "g4dn.xlarge", 45.0)
    texts = [str(p) for p in plausibility_warnings(edited, base)]
    assert texts[0] == ("g4dn.xlarge: spot_usd_per_hour = 45.0: is above the on-demand price "
                        "0.526 USD/hour (spot is normally cheaper): a typo?")
    # 45 / 0.1578 = 285.17
    assert texts[1] == ("g4dn.xlarge: spot_usd_per_hour = 45.0: is 285x the 0.1578 USD/hour of "
                        "aws-us-east-1-2023-10: a typo?")
    assert texts[2].startswith("g4dn.xlarge: eflops = ")
    assert "far outside" in texts[2]
    assert len(texts) == 3


def test_a_plain_price_change_is_quiet() -> None:
    base = aws()
    assert plausibility_warnings(with_spot(base, "g4dn.xlarge", 0.3), base) == ()
    assert plausibility_warnings(base) == ()


def test_catalog_validate_prints_them(tmp_path, capsys) -> None:
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(catalog_to_dict(with_spot(aws(), "g4dn.xlarge", 45.0))))
    code = cli_main(["catalog", "validate", str(path)])
    assert code == 0
    assert ("warning: g4dn.xlarge: spot_usd_per_hour = 45.0: is above the on-demand price "
            "0.526 USD/hour (spot is normally cheaper): a typo?") in capsys.readouterr().out
