"""The real-data benchmark (benchmarks/real_data.py): specifications parse, declared levels cover the data,
and the quick path runs end to end.

Deliberately, no test compares the declared bounds with the data: bounds come from each data set's
documentation and from domain knowledge, and a test against the data's values would invite setting them from
the data.  Only their form is checked (lo < hi, a stated reason).
"""

from __future__ import annotations

import gzip
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import patsy
import pytest

from dpstats.errors import DPStatsError
from dpstats.methods.registry import available_methods

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

# the benchmark helpers are importable only after the sys.path line above
import real_data  # noqa: E402
import real_data_specs  # noqa: E402
from real_data_specs import SPECS, frame, read  # noqa: E402

SPEC_IDS = [s.name for s in SPECS]


def test_twenty_paper_sized_data_sets_and_a_few_larger() -> None:
    sizes = {s.name: len(frame(s)) for s in SPECS}
    assert sum(100 <= n <= 10_000 for n in sizes.values()) >= 20
    assert sum(n >= 20_000 for n in sizes.values()) >= 2
    assert len(set(SPEC_IDS)) == len(SPEC_IDS)


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_spec_parses_with_patsy_on_its_data(spec: real_data_specs.Spec) -> None:
    df = frame(spec)
    _, X = patsy.dmatrices(spec.formula, df, eval_env=patsy.EvalEnvironment.capture(0), NA_action="raise")
    assert spec.headline in X.design_info.column_names
    _, X1 = patsy.dmatrices(spec.one_predictor, df, eval_env=patsy.EvalEnvironment.capture(0), NA_action="raise")
    assert spec.headline in X1.design_info.column_names or X1.shape[1] == 2
    _, train, _ = real_data.prepared(spec.name)
    _, X_train = patsy.dmatrices(spec.formula, train, eval_env=patsy.EvalEnvironment.capture(0))
    assert np.linalg.matrix_rank(np.asarray(X_train)) == X.shape[1]  # the OLS reference is identified on the split
    for name, bound in spec.bounds.items():
        assert bound.lo < bound.hi and bound.reason.strip(), name
    assert spec.spec_source.strip()


@pytest.mark.parametrize("spec", [s for s in SPECS if s.levels], ids=[s.name for s in SPECS if s.levels])
def test_declared_levels_cover_the_data(spec: real_data_specs.Spec) -> None:
    raw = read(spec)
    for col, levels in spec.levels.items():
        assert len(set(levels)) == len(levels), col
        present = set(raw[col].dropna().tolist())
        assert present <= set(levels), f"{spec.name}.{col}: values outside the declared levels"
        assert col in spec.level_reasons, col
    df = frame(spec)
    for col in spec.levels:
        assert not df[col].isna().any(), col
        assert list(df[col].cat.categories) == list(spec.levels[col])  # reference level first


def test_configurations_follow_the_method_registry() -> None:
    cfgs = real_data.configs(None, peers=False)
    private = {n for n, s in available_methods().items() if s.private}
    assert {c.method for c in cfgs if c.bounds and c.model == "full"} == private | {"auto"}
    unbounded = {n for n in private if not available_methods()[n].needs_bounds}
    assert {c.method for c in cfgs if not c.bounds} == unbounded | {"auto"}
    assert any(c.method == "auto" and c.model == "one" for c in cfgs)


class _Raises:
    def conf_int(self) -> pd.DataFrame:
        raise AttributeError("standard errors are not available for this method")


class _Withheld:
    inference_withheld = "noise-to-signal ratio too large"

    def conf_int(self) -> pd.DataFrame:
        warnings.warn("inference withheld", UserWarning, stacklevel=2)
        return pd.DataFrame({0: [np.nan], 1: [np.nan]}, index=["x"])


class _Reported:
    def conf_int(self) -> pd.DataFrame:
        return pd.DataFrame({0: [0.5], 1: [1.5]}, index=["x"])


class _TypedRaise:
    def conf_int(self) -> pd.DataFrame:
        raise DPStatsError("no inference")


def test_interval_is_read_whether_the_results_raise_or_return_nan() -> None:
    assert real_data.headline_interval(_Raises(), "x")[0] is None
    assert real_data.headline_interval(_TypedRaise(), "x")[0] is None
    interval, note = real_data.headline_interval(_Withheld(), "x")
    assert interval is None and "noise-to-signal" in note
    assert real_data.headline_interval(_Reported(), "x") == ((0.5, 1.5), "reported")


def test_quick_path_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "rd"
    records = real_data.main(["--quick", "--datasets", "engel,faithful", "--methods", "auto,ssp", "--seeds", "1",
                              "--no-peers", "--out", str(out)])
    configs = {r["config"] for r in records}
    assert configs == {"auto", "ssp", "auto (no bounds)", "auto (1 predictor)"}
    assert {r["dataset"] for r in records} == {"engel", "faithful"} and len(records) == 8
    for r in records:
        assert r["epsilon"] == 1.0 and r["seed"] == real_data.SEED_BASE
        if r["refused"]:
            assert r["eps_spent"] >= 0.0
        else:
            assert np.isfinite(r["rel_err"]) and np.isfinite(r["r2_test"]) and r["method_used"]
            assert r["interval"] == ("ci_lo" in r)
    with gzip.open(out / "records.jsonl.gz", "rt") as fh:
        saved = [json.loads(line) for line in fh]
    assert len(saved) == len(records)
    text = (out / "summary.md").read_text()
    assert "| auto | 1 |" in text and "## `auto` with bounds, per data set" in text
    real_data.main(["--summarise", "--out", str(out)])  # the summary is rebuilt from the saved records alone
    assert (out / "summary.md").read_text() == text


def _record(config: str, dataset: str, seed: int, rel_err: float, width: float | None = None,
            method_used: str = "pgd") -> dict:
    rec = {"config": config, "dataset": dataset, "epsilon": 1.0, "seed": seed, "rel_err": rel_err,
           "sign_ok": rel_err < 1.0, "method_used": method_used, "interval": width is not None}
    if width is not None:
        rec["width_ratio"] = width
    return rec


def test_bounds_table_pairs_fits_and_names_the_data_sets_worse_with_bounds() -> None:
    records = [_record("pgd", "a", s, 0.1) for s in range(3)] + [_record("pgd (no bounds)", "a", s, 0.2)
                                                                   for s in range(3)]
    records += [_record("pgd", "b", s, 0.9) for s in range(3)] + [_record("pgd (no bounds)", "b", s, 0.3)
                                                                    for s in range(2)]  # seed 2 refused there
    text = real_data.bounds_table(records, [1.0])
    row = next(line for line in text.splitlines() if line.startswith("| pgd | 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "5"  # three pairs on a, two on b
    assert cells[7].startswith("1 of 2: b (0.90 vs 0.30)")


def test_baseline_width_table_compares_auto_with_ssp_on_the_same_fits() -> None:
    records = [_record("auto", "a", 0, 0.1, width=2.0), _record("ssp", "a", 0, 0.5, width=10.0),
               _record("auto", "a", 1, 0.1, width=30.0, method_used="theilsen"),
               _record("ssp", "a", 1, 0.5, width=10.0),
               _record("auto", "a", 2, 0.1, width=5.0), _record("ssp", "a", 2, 0.5)]  # ssp withheld: no pair
    text = real_data.baseline_width_table(records, [1.0])
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "2" and cells[3] == "50%"
    assert "pgd: 1, 0.20" in cells[4] and "theilsen: 1, 3.00" in cells[4]
