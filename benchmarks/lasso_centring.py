"""DP-LASSO on centred designs: an upper bound on what private centring could do (issue 17 part 5, route b).

Run:  python benchmarks/lasso_centring.py [--datasets engel,cps] [--seeds 5] [--out FILE]

For each data set of benchmarks/real_data.py (full model, declared bounds, the training rows) and epsilon in
0.5 / 1 / 3, ``method="lasso"`` with ``sparsity=d`` is fitted on the design the lasso sees (the public
rescaling of the declared bounds to [-1, 1], then clipping) in these variants, with the noise seeds 1000,
1001, ... of ``benchmarks/real_data.py``:

* ``default``: the design as it is (the same fit as ``dp_ols(..., method="lasso")``);
* ``centred``: every column other than the intercept replaced by (x_j - m_j) / c'_j, m_j its **exact** mean
  (not private: an upper bound on what a released centre gives), c'_j = max(hi_j - m_j, m_j - lo_j) so that
  the centred column stays within [-1, 1] and every public fact of the fit (c_x, L_2s, the sensitivities) is
  unchanged; the fit is mapped back exactly (beta_j = gamma_j / c'_j, intercept gamma_0 - sum_j m_j beta_j);
  default step and N0 (both then follow the centred design);
* ``centred, N0 of default``: the same, with N0 fixed to the ``default`` fit's N0 at the same seed;
* ``centred, N0 and step of default``: also the ``default`` fit's step size;
* ``2 x N0``: the design as it is, with twice the ``default`` fit's N0 (more iterations alone);
* ``private centres``: the centring a private release would give, where a public rule allows it: the column
  sums of the free columns released by the Laplace mechanism (L1 sensitivity sum_j (hi_j - lo_j)) at
  CENTRING_SHARE of epsilon, m_j = clip(noisy sum / n, lo_j, hi_j), then the default fit at the rest of epsilon
  on the rows centred as above; only where the noise sd of every released mean, sqrt(2) sum_j (hi_j - lo_j) /
  (n CENTRING_SHARE epsilon), is at most CENTRING_NOISE times the column's half-width (else the ``default``
  fit).  The whole is (epsilon, delta)-DP (sequential composition).

Each cell is the median over the seeds of the relative error |b - b_OLS| / |b_OLS| of the headline coefficient
(b mapped back to the user's units, b_OLS the statsmodels reference of ``benchmarks/real_data.py``), beside
adassp's with the same seeds; a star marks a median above 1.5 times adassp's (the criterion of issue 17).
The summary gives, per variant, the number of such cells and, per epsilon, the median over all fits and the
share of fits with the headline's sign right.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import patsy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's dpstats, not an installed one
import real_data as rd  # noqa: E402
from real_data_specs import SPECS  # noqa: E402

import dpstats  # noqa: E402
from dpstats.bounds import DataBounds  # noqa: E402
from dpstats.formula import build_design  # noqa: E402
from dpstats.methods import lasso  # noqa: E402
from dpstats.methods.spec import MethodFit  # noqa: E402
from dpstats.privacy.ledger import PrivacyLedger  # noqa: E402
from dpstats.privacy.mechanisms import laplace_mechanism  # noqa: E402
from dpstats.scaling import PublicScaling  # noqa: E402

VARIANTS = ("default", "centred", "centred, N0 of default", "centred, N0 and step of default", "2 x N0",
            "private centres")
#: the share of epsilon of the private centres, and the largest noise sd of a released mean (in half-widths)
CENTRING_SHARE = 0.05
CENTRING_NOISE = 0.1


@dataclass(frozen=True)
class Design:
    """The rows the lasso sees and what maps its coefficients back to the user's units."""

    X: np.ndarray
    y: np.ndarray
    bounds: DataBounds
    intercept: int
    scaling: PublicScaling
    headline: int  # the headline's column
    ols: float  # the reference OLS headline (user's units)


@dataclass(frozen=True)
class Centring:
    """z_j = (x_j - m_j x_k) / a_j for the free columns (k the intercept), and its exact inverse on coefficients."""

    centre: np.ndarray  # m_j (0 for the intercept and fixed columns)
    width: np.ndarray  # a_j = max(hi_j - m_j, m_j - lo_j) (1 for the intercept and fixed columns)
    intercept: int

    @classmethod
    def exact(cls, design: Design) -> Centring:
        lo, hi = design.bounds.column_lo, design.bounds.column_hi
        free = (hi > lo) & (np.arange(lo.size) != design.intercept)
        m = np.where(free, design.X.mean(axis=0), 0.0)
        return cls(m, np.where(free, np.maximum(hi - m, m - lo), 1.0), design.intercept)

    @classmethod
    def private(cls, design: Design, eps: float, rng: np.random.Generator) -> Centring | None:
        """The centring from released column sums (module docstring), or None where the rule says no."""
        lo, hi = design.bounds.column_lo, design.bounds.column_hi
        cols = np.flatnonzero((hi > lo) & (np.arange(lo.size) != design.intercept))
        n, width = design.y.size, hi[cols] - lo[cols]
        sens = float(np.sum(width))
        if math.sqrt(2.0) * sens / (n * CENTRING_SHARE * eps) > CENTRING_NOISE * float(np.min(width)) / 2.0:
            return None
        noisy = laplace_mechanism(design.X[:, cols].sum(axis=0), l1_sensitivity=sens, epsilon=CENTRING_SHARE * eps,
                                  rng=rng, ledger=PrivacyLedger(CENTRING_SHARE * eps, 0.0), name="column sums")
        m = np.zeros(lo.size)
        m[cols] = np.clip(np.asarray(noisy, dtype=float) / n, lo[cols], hi[cols])
        free = np.isin(np.arange(lo.size), cols)
        return cls(m, np.where(free, np.maximum(hi - m, m - lo), 1.0), design.intercept)

    def rows(self, X: np.ndarray) -> np.ndarray:
        return (X - np.outer(X[:, self.intercept], self.centre)) / self.width

    def bounds(self, b: DataBounds) -> DataBounds:
        return DataBounds((b.column_lo - self.centre) / self.width, (b.column_hi - self.centre) / self.width,
                          b.y_lo, b.y_hi)

    def back(self, gamma: np.ndarray) -> np.ndarray:
        beta = gamma / self.width
        slopes = np.arange(beta.size) != self.intercept
        beta[self.intercept] = gamma[self.intercept] - float(np.sum((self.centre * beta)[slopes]))
        return beta


def design(name: str) -> Design:
    """The rescaled, clipped training design of a data set's full model (as ``lasso_iterations.spectrum``)."""
    spec, train, _ = rd.prepared(name)
    built = build_design(spec.formula, train, eval_env=patsy.EvalEnvironment.capture(0),
                         bounds=spec.bound_pairs())
    k = built.column_names.index("Intercept")
    scaling = PublicScaling.from_bounds(built.data_bounds(), k)
    bounds = scaling.transform_bounds(built.data_bounds())
    X, y = scaling.transform(built.X, built.y)
    X, y = bounds.clip(X, y)
    ref = rd.reference(name, "full")
    j = rd.headline_index(spec, ref)
    return Design(X, y, bounds, k, scaling, list(built.column_names).index(ref.names[j]), float(ref.params[j]))


def lasso_fit(X: np.ndarray, y: np.ndarray, bounds: DataBounds, k: int, eps: float, seed: int | np.random.Generator,
              **options: Any) -> MethodFit:
    """One default lasso fit with ``sparsity=d`` on the given rows (the rng of ``dp_ols(random_state=seed)``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lasso.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(eps, rd.DELTA), rng=np.random.default_rng(seed),
                                     bounds=bounds, intercept_index=k, sparsity=X.shape[1], **options)


def private_fit(des: Design, eps: float, seed: int) -> np.ndarray:
    """The ``private centres`` variant (module docstring): the coefficients in the lasso's units."""
    rng = np.random.default_rng(seed)
    cen = Centring.private(des, eps, rng)
    if cen is None:
        return np.asarray(lasso_fit(des.X, des.y, des.bounds, des.intercept, eps, rng).params, dtype=float)
    fit = lasso_fit(cen.rows(des.X), des.y, cen.bounds(des.bounds), des.intercept, (1 - CENTRING_SHARE) * eps, rng)
    return cen.back(np.asarray(fit.params, dtype=float))


def variant_fits(des: Design, eps: float, seed: int) -> dict[str, np.ndarray]:
    """The coefficients (the lasso's units) of every variant at one seed."""
    base = lasso_fit(des.X, des.y, des.bounds, des.intercept, eps, seed)
    n0, eta = base.diagnostics["iterations"], base.diagnostics["step_size"]
    cen = Centring.exact(des)
    Z, zb = cen.rows(des.X), cen.bounds(des.bounds)
    centred: Callable[..., np.ndarray] = lambda **o: cen.back(  # noqa: E731
        np.asarray(lasso_fit(Z, des.y, zb, des.intercept, eps, seed, **o).params, dtype=float))
    return {"default": np.asarray(base.params, dtype=float), "centred": centred(),
            "centred, N0 of default": centred(iterations=n0),
            "centred, N0 and step of default": centred(iterations=n0, step_size=eta),
            "2 x N0": np.asarray(lasso_fit(des.X, des.y, des.bounds, des.intercept, eps, seed,
                                           iterations=min(des.y.size, 2 * n0)).params, dtype=float),
            "private centres": private_fit(des, eps, seed)}


def adassp_errors(name: str, eps: float, seeds: int, ols: float, j_name: str) -> list[tuple[float, bool]]:
    """adassp's (relative error, sign right) of the headline at the same seeds, through ``dp_ols``."""
    spec, train, _ = rd.prepared(name)
    out = []
    for seed in range(rd.SEED_BASE, rd.SEED_BASE + seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols(spec.formula, train, eps, rd.DELTA, method="adassp", bounds=spec.bound_pairs(),
                                 random_state=seed)
        b = float(res.params[j_name])
        out.append((abs(b - ols) / abs(ols), bool(np.sign(b) == np.sign(ols))))
    return out


def cell_errors(name: str, eps: float, seeds: int) -> dict[str, list[tuple[float, bool]]]:
    """Per variant (and adassp), the (relative error, sign right) of the headline at each seed."""
    des = design(name)
    ref = rd.reference(name, "full")
    out: dict[str, list[tuple[float, bool]]] = {v: [] for v in VARIANTS}
    for seed in range(rd.SEED_BASE, rd.SEED_BASE + seeds):
        for v, params in variant_fits(des, eps, seed).items():
            b = float(des.scaling.params_back(params)[des.headline])
            out[v].append((abs(b - des.ols) / abs(des.ols), bool(np.sign(b) == np.sign(des.ols))))
    out["adassp"] = adassp_errors(name, eps, seeds, des.ols, ref.names[rd.headline_index(rd.prepared(name)[0], ref)])
    return out


def report(results: dict[tuple[str, float], dict[str, list[tuple[float, bool]]]]) -> list[str]:
    """The markdown tables: per cell, then the summary per variant."""
    lines = ["| data set | epsilon | adassp | " + " | ".join(VARIANTS) + " |",
             "|---|---:|---:|" + "---:|" * len(VARIANTS)]
    above = dict.fromkeys(VARIANTS, 0)
    for (name, eps), errs in results.items():
        ada = float(np.median([e for e, _ in errs["adassp"]]))
        cells = []
        for v in VARIANTS:
            med = float(np.median([e for e, _ in errs[v]]))
            star = med > 1.5 * ada
            above[v] += star
            cells.append(f"{med:.2f}{' *' if star else ''}")
        lines.append(f"| {name} | {eps:g} | {ada:.2f} | " + " | ".join(cells) + " |")
    epsilons = sorted({eps for _, eps in results})
    lines += ["", "| variant | cells above 1.5 x adassp | "
              + " | ".join(f"eps {e:g}: median, sign right" for e in epsilons) + " |",
              "|---|---:|" + "---|" * len(epsilons)]
    for v in ("adassp", *VARIANTS):
        pooled = []
        for eps in epsilons:
            fits = [f for (_, e), errs in results.items() if e == eps for f in errs[v]]
            pooled.append(f"{np.median([e for e, _ in fits]):.3f}, {np.mean([s for _, s in fits]):.0%}")
        lines.append(f"| {v} | {above.get(v, '')} | " + " | ".join(pooled) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="", help="comma-separated names (default: all)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", help="also write the markdown tables here")
    args = parser.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else [s.name for s in SPECS]
    results = {}
    for name in names:
        for eps in rd.EPSILONS:
            results[(name, eps)] = cell_errors(name, eps, args.seeds)
            print(name, eps, flush=True)
    lines = report(results)
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
