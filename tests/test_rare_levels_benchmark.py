"""The rare-factor-level benchmark (benchmarks/rare_levels.py) on a tiny simulated run: one record per fit with
every coefficient grouped (numeric, common level, rare level), the jsonl written (plain and gzip read back alike),
and the summary's table.  Deterministic (fixed data and noise seeds)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

pytest.importorskip("statsmodels", reason="the benchmark's least-squares reference")
import rare_levels  # noqa: E402  (importable only after the sys.path line above)


def test_tiny_run_writes_one_record_per_fit_and_summarises(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    rare_levels.main(["--ns", "2000", "--ds", "2", "--epsilons", "1", "--seeds", "2", "--jsonl", str(out)])
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 2 and {r["seed"] for r in recs} == {0, 1}
    for r in recs:
        groups = {c["name"]: c["group"] for c in r["coefs"]}
        assert groups["x0"] == "numeric" and groups["C(g)[T.b]"] == "common level"
        assert groups["C(g)[T.c]"] == "rare level" and groups["Intercept"] == "intercept"
        assert all(c["err"] >= 0 and (c["covers"] is None) == (not c["reported"]) for c in r["coefs"])
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(out.read_bytes()))
    assert rare_levels.records(str(packed)) == recs
    table = rare_levels.summarise([str(out), str(packed)]).splitlines()
    assert table[0] == "| n | d | epsilon | fits | numeric | common level | rare level |"
    assert table[2].startswith("| 2000 | 2 | 1 | 2 | ") and table[2].count(" ; ") == 3


def test_a_two_valued_column_under_the_rare_share_is_a_rare_level() -> None:
    exog = np.column_stack([np.ones(100), np.r_[np.ones(4), np.zeros(96)], np.r_[np.ones(30), np.zeros(70)],
                            np.linspace(0, 1, 100)])
    assert rare_levels.column_groups(exog, ["Intercept", "a", "b", "x"]) == {
        "Intercept": "intercept", "a": "rare level", "b": "two-valued", "x": "numeric"}
