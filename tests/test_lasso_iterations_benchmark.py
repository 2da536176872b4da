"""The N0 benchmark on the real designs (benchmarks/lasso_iterations.py): its diagnostics are what they say.

* The design spectrum is that of the rows the lasso sees: the public rescaling of the declared bounds, then
  clipping (checked against a direct computation on engel, one numeric column and the intercept).
* Its "rule" column is the method's default rule (``lasso._estimated_iterations``) at the same step, residual
  bound and Peeling budget, so the exact-curvature columns beside it differ from the rule only by the
  curvature terms.

Deterministic: no noise is drawn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from dpstats.bounds import DataBounds
from dpstats.methods import lasso

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
# the benchmark helpers are importable only after the sys.path line above
import lasso_iterations  # noqa: E402
import real_data  # noqa: E402


def test_spectrum_is_that_of_the_rescaled_clipped_design():
    spec, train, _ = real_data.prepared("engel")  # foodexp ~ income
    lo, hi = spec.bound_pairs()["income"]
    u = np.clip(train["income"].to_numpy(dtype=float), lo, hi)
    X = np.column_stack([np.ones(u.size), (u - (lo + hi) / 2) / ((hi - lo) / 2)])  # [lo, hi] -> [-1, 1]
    eig = np.linalg.eigvalsh(X.T @ X / u.size)
    got = lasso_iterations.spectrum("engel")
    assert got[:2] == pytest.approx((eig[0], eig[-1]), rel=1e-9)
    assert got[2] == pytest.approx(u.size * eig[0] / 2, rel=1e-9)  # sum_j c_j^2 = 2 after the rescaling


@pytest.mark.parametrize("n, d, eps, eta, R", [(188, 2, 0.5, 0.5, 0.02), (440, 61, 1.0, 1 / 61, 0.2),
                                               (12794, 10, 3.0, 0.22, 0.58), (1761, 6, 1.0, 0.23, 0.65)])
def test_rule_column_is_the_methods_default_rule(n, d, eps, eta, R):
    bounds = DataBounds(-np.ones(d), np.ones(d), -1.0, 1.0)
    public = lasso.replace(lasso._public(n, d, bounds, lasso.LassoOptions(sparsity=d)), residual_bound=R)
    expected = lasso._estimated_iterations(public, eta, 0.85 * eps, real_data.DELTA)
    fit = {"step_size": eta, "residual_bound": R}
    rule, both, weakest = lasso_iterations.model_iterations(n, d, eps, 1e-2, fit)
    assert rule == expected
    assert 1 <= both <= n and 1 <= weakest <= n
