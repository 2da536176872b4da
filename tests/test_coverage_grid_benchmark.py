"""The coverage grid's Monte Carlo sd (benchmarks/coverage_grid.py): clusters by fit, never below the binomial sd,
and the summary counts settings beyond two of them on either side of 0.95."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import coverage_grid  # noqa: E402  (importable only after the sys.path line above)


def test_fits_that_cover_alike_count_as_clusters() -> None:
    # 40 fits of 10 coefficients: half the fits cover every coefficient, half none (coverage 0.5).  Treated as
    # 400 independent coefficients the sd would be sqrt(0.25 / 400) = 0.025; with the fits as clusters it is the
    # sd of 40 shares of 0 or 1 over sqrt(40), about 0.08.
    covered = np.repeat(np.arange(40)[:, None] % 2 == 0, 10, axis=1)
    sd = coverage_grid.cluster_mc_sd(covered)
    assert math.isclose(sd, float(np.std(covered.mean(axis=1), ddof=1)) / math.sqrt(40))
    assert sd > 3 * math.sqrt(0.25 / 400)


def test_a_setting_that_covers_everything_keeps_the_binomial_sd() -> None:
    covered = np.ones((30, 2), dtype=bool)
    assert math.isclose(coverage_grid.cluster_mc_sd(covered), math.sqrt(0.95 * 0.05 / 60))


def _row(coverage: float, mc_sd: float | None, d: int = 2) -> dict:
    row = {"method": "pgd", "n": 1000, "d": d, "design": "correlated", "bounds": "tight", "epsilon": 1.0,
           "reps": 30, "refused": 0.0, "withheld": 0.0, "reported": 1.0, "coverage": coverage, "worst_coef": coverage,
           "coverage_ls": coverage, "width": 2.0, "privacy_ratio": 1.0}
    return row if mc_sd is None else row | {"coverage_mc_sd": mc_sd}


def test_summary_counts_settings_beyond_two_sds_on_each_side() -> None:
    rows = [_row(1.0, 0.01), _row(1.0, 0.03), _row(0.98, None, d=20), _row(0.85, 0.02), _row(0.92, 0.02)]
    frame = pd.DataFrame(rows)
    line = next(li for li in coverage_grid.summary_table(frame).splitlines() if li.startswith("| pgd |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    head = next(li for li in coverage_grid.summary_table(frame).splitlines() if li.startswith("| method |"))
    names = [c.strip() for c in head.strip("|").split("|")]
    value = dict(zip(names, cells, strict=True))
    assert value["above"] == "3" and value["below"] == "2"
    # above: 1.0 with sd 0.01 is beyond 0.95 + 0.02; 1.0 with sd 0.03 is not; 0.98 at d = 20 falls back to the
    # binomial sd of 600 coefficients (0.0089), so 0.98 > 0.968 is beyond.  Below: only 0.85 (0.92 > 0.91).
    assert value["above by > 2 MC sd"] == "2"
    assert value["below by > 2 MC sd"] == "1"
