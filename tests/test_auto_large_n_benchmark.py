"""The large-n AdaSSP-against-pgd benchmark (benchmarks/auto_large_n.py) on a tiny simulated run: one record per
(cell, epsilon, seed, method), both methods on the same seeds, the jsonl written as the records are made, and the
summary's table. Deterministic (fixed data and noise seeds)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

pytest.importorskip("statsmodels", reason="the benchmark's least-squares reference")
import auto_large_n  # noqa: E402  (importable only after the sys.path line above)


def test_tiny_run_writes_one_record_per_fit(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    recs = auto_large_n.main(["--sim", "--ns", "3000", "--ds", "2", "--epsilons", "1", "--seeds", "1",
                              "--out", str(out)])
    assert [json.loads(line) for line in out.read_text().splitlines()] == recs
    assert len(recs) == 4 * 2  # tight/loose x factor or not, each by adassp and pgd
    assert {r["method"] for r in recs} == set(auto_large_n.METHODS)
    for r in recs:
        assert r["n"] == 3000 and r["eps"] == 1.0 and r["seed"] == auto_large_n.SEED0
        assert r["cpu"] >= 0 and r["ols_cpu"] >= 0
        if "refused" not in r:
            assert r["chose"] == r["method"]
            assert r["rel_err"] >= 0 and r["rel_err_numeric"] >= 0 and r["rel_err_headline"] >= 0
            assert (r["covers"] is None) == (not r["reported"])
    assert {r["set"] for r in recs} == {"sim n=3000 d=2 tight", "sim n=3000 d=2 tight rare factor",
                                        "sim n=3000 d=2 loose", "sim n=3000 d=2 loose rare factor"}
    page = tmp_path / "page.md"
    assert auto_large_n.main(["--out", str(out), "--report", str(page), "--command", "the run"]) == recs
    text = page.read_text()
    assert "the run" in text and "## Simulations" in text and "### Pooled by bounds (simulations)" in text
    assert text.count("| sim n=3000 d=2 ") == 4  # one row per cell at the one epsilon


def test_simulated_bounds_hold_the_data_and_loose_is_ten_times_wider() -> None:
    _, tight, _, tight_bounds, levels = auto_large_n.simulated(5000, 3, True, False, 7)
    _, _, _, loose_bounds, _ = auto_large_n.simulated(5000, 3, True, True, 7)
    for col, (lo, hi) in tight_bounds.items():
        assert lo <= tight[col].min() and tight[col].max() <= hi
        loose_lo, loose_hi = loose_bounds[col]
        assert loose_hi - loose_lo == pytest.approx(10 * (hi - lo))
    assert levels == {"g": auto_large_n.FACTOR_LEVELS}
    assert set(tight["g"]) <= set(auto_large_n.FACTOR_LEVELS)


def test_summary_has_a_row_per_cell_and_epsilon() -> None:
    recs = [dict(set="s", n=10, d=2, eps=1.0, method=m, rel_err=0.1, rel_err_numeric=0.1, rel_err_headline=0.1,
                 reported=m == "pgd", covers=True if m == "pgd" else None, share_covered=1.0 if m == "pgd" else None,
                 cpu=0.5, ols_cpu=0.1) for m in auto_large_n.METHODS]
    table = auto_large_n.summary(recs).splitlines()
    assert len(table) == 3 and table[2].startswith("| s | 10 | 2 | 1 |") and "| 0/1 | 0/0 | 1/1 | 1/1 |" in table[2]
