"""Real published regressions at the sizes papers use: every private method, ``auto`` and peers against OLS.

The yardstick for accuracy changes.  Each data set in :mod:`real_data_specs` is a published or textbook
regression with public bounds (from documentation or domain knowledge, with reasons) and public factor levels.
Each is split once into a public 80/20 train/test split (a fixed seed per data set); every fit, private or
not, uses the training rows, and the reference is statsmodels OLS on the same training rows.

Fits, per data set, epsilon in ``--epsilons`` (delta = 1e-6) and noise seed in ``range(--seeds)``:

* every registered private method (``dpstats.available_methods()``, so new methods are picked up) and
  ``method="auto"``, with the declared bounds;
* ``auto`` and the methods that need no bounds, without bounds (levels stay declared: they are public);
* ``auto`` on the one-predictor version (response on the headline variable alone), with bounds;
* peers, when installed (``benchmarks/requirements-peers.txt``): IBM diffprivlib's ``LinearRegression`` on the
  full and one-predictor models and OpenDP's private Theil-Sen on the one-predictor model, with the same
  bounds.  Both are pure epsilon-DP (delta = 0); OpenDP takes a noise scale, calibrated by its own
  ``binary_search_param`` so that the measurement's privacy map at symmetric distance 2 (one replaced row)
  is at most epsilon.

Metrics of one fit (released fits; refusals are counted separately):

* ``rel_err``: |b_dp - b_ols| / |b_ols| of the headline coefficient;
* ``std_err``: the scale-free error of all slopes, ||s * (b_dp - b_ols)|| / ||s * b_ols|| over the
  non-intercept columns, s_j the standard deviation of design column j on the training rows (the norm of the
  error of the standardised coefficients relative to the norm of the standardised OLS coefficients);
* ``coef_rel_err``: |b_dp,j - b_ols,j| / |b_ols,j| of every coefficient (raw records);
* ``sign_ok``: sign(b_dp) == sign(b_ols) for the headline;
* ``r2_gap``: test R^2 of the private fit minus test R^2 of OLS, both on the 20% test rows;
* refusals: any ``DPStatsError`` from the fit; ``eps_spent`` is its ``privacy_spent`` (0 when refused before
  touching the data);
* intervals: whether a finite 95% interval was reported for the headline (``conf_int()``; today it raises
  for some methods and returns NaN with a warning for others, both count as "not reported"), whether it
  covers the OLS estimate, and ``width_ratio``, its width over the width of the OLS 95% interval
  (2 t_0.975 se_OLS), i.e. 1 means as wide as the classical interval;
* ``seconds``: wall time of the fit call;
* ``pred_privacy``: the error block's predicted privacy error of the headline
  (``res.error_bounds.coefficients.privacy``, in the coefficient's units: the root mean square of the
  released coefficient minus least squares on the same clipped data), ``pred_released`` whether it came from
  the fit's released values (else from public facts and a rate).  The theory check compares, per data set,
  method and epsilon, the root mean square of the predictions over the noise seeds with the measured privacy
  error, the root mean square of b_dp - b_ols of the headline over the same seeds (issue 18's target: within
  a factor of 3).

Run (from the repository root; about an hour for everything at 5 seeds on 2 cores)::

    python -m pip install -r benchmarks/requirements-peers.txt      # optional peers
    python benchmarks/real_data.py --seeds 5 --jobs 1
    python benchmarks/assemble_report.py

``--quick`` runs a subset in a couple of minutes; ``--summarise`` rebuilds the summary from saved records.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib
import json
import math
import os
import platform
import sys
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import patsy
import statsmodels.formula.api as smf
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
from real_data_specs import SPECS, Spec, frame, spec_by_name

import dpstats
from dpstats.errors import DPStatsError
from dpstats.formula import build_design
from dpstats.privacy.calibration import gaussian_mu
from dpstats.theory import error_bounds, with_coefficients

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "real_data"
DELTA = 1e-6
EPSILONS = (0.5, 1.0, 3.0)
TRAIN_SHARE = 0.8
SEED_BASE = 1000
QUICK_DATASETS = ("engel", "faithful", "penguins", "hitters", "card", "titanic")
PEERS = ("diffprivlib", "opendp")


# -- configurations -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    """One way of fitting: a dpstats method (or auto) or a peer, with or without bounds, full or one-predictor."""

    method: str
    library: str = "dpstats"
    bounds: bool = True
    model: str = "full"

    @property
    def label(self) -> str:
        base = self.method if self.library == "dpstats" else f"{self.library} {self.method} [peer]"
        tags = [] if self.bounds else ["no bounds"]
        if self.model == "one":
            tags.append("1 predictor")
        return base + (f" ({', '.join(tags)})" if tags else "")


def private_methods() -> dict[str, Any]:
    """The registered private methods, by name."""
    return {name: spec for name, spec in sorted(dpstats.available_methods().items()) if spec.private}


def peer_available(name: str) -> bool:
    """True when the peer library imports."""
    try:
        if name == "diffprivlib":
            import diffprivlib.models  # noqa: F401
        else:
            import opendp.prelude  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means the optional peer is absent
        return False
    return True


def configs(methods: Sequence[str] | None, peers: bool) -> list[Config]:
    """Every configuration to run, filtered by ``methods`` (dpstats names, 'auto', 'diffprivlib', 'opendp')."""
    registered = private_methods()
    out = [Config(m) for m in [*registered, "auto"]]
    out += [Config(m, bounds=False) for m in [*[n for n, s in registered.items() if not s.needs_bounds], "auto"]]
    out.append(Config("auto", model="one"))
    out += [Config(m, model="one") for m, s in registered.items() if s.max_columns == 2]  # one-predictor methods
    if peers and peer_available("diffprivlib"):
        out += [Config("LinearRegression", "diffprivlib"), Config("LinearRegression", "diffprivlib", model="one")]
    if peers and peer_available("opendp"):
        out.append(Config("Theil-Sen", "opendp", model="one"))
    if methods:
        keep = set(methods)
        out = [c for c in out if c.method in keep or c.library in keep]
    return out


# -- data, split and the OLS reference ------------------------------------------------------------------------------

@dataclass
class Reference:
    """OLS on the training rows and the public test design of one model of one data set."""

    names: list[str]
    params: np.ndarray
    bse: np.ndarray
    df_resid: float
    design_info: Any
    scale: np.ndarray          # standard deviation of each design column on the training rows (0 for the intercept)
    X_test: np.ndarray
    y_test: np.ndarray
    r2_test: float


def split(spec: Spec, df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixed public 80/20 split of a data set (seed from its name)."""
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    order = rng.permutation(len(df))
    cut = round(TRAIN_SHARE * len(df))
    return df.iloc[np.sort(order[:cut])].reset_index(drop=True), df.iloc[np.sort(order[cut:])].reset_index(drop=True)


@cache
def prepared(name: str) -> tuple[Spec, pd.DataFrame, pd.DataFrame]:
    """The spec, training rows and test rows of a data set (cached per process)."""
    spec = spec_by_name(name)
    train, test = split(spec, frame(spec))
    return spec, train, test


def r2(y: np.ndarray, yhat: np.ndarray) -> float:
    """R^2 of predictions on held-out rows (1 - SSE / SST around their own mean)."""
    return 1.0 - float(np.sum((y - yhat) ** 2)) / float(np.sum((y - y.mean()) ** 2))


def model_formula(spec: Spec, model: str) -> str:
    """The full formula or the one-predictor version."""
    return spec.formula if model == "full" else spec.one_predictor


@cache
def reference(name: str, model: str) -> Reference:
    """statsmodels OLS on the training rows, and the test design built by the training design_info."""
    spec, train, test = prepared(name)
    formula = model_formula(spec, model)
    env = patsy.EvalEnvironment.capture(0)
    y_dm, X_dm = patsy.dmatrices(formula, train, eval_env=env)
    fit = smf.ols(formula, train).fit()
    names = list(X_dm.design_info.column_names)
    if list(fit.params.index) != names:
        raise RuntimeError(f"{name}: statsmodels and patsy disagree on the design columns")
    scale = np.asarray(X_dm).std(axis=0, ddof=1)
    scale[[i for i, c in enumerate(names) if c == "Intercept"]] = 0.0
    y_test_dm, X_test_dm = patsy.build_design_matrices([y_dm.design_info, X_dm.design_info], test)
    X_test, y_test = np.asarray(X_test_dm), np.asarray(y_test_dm).ravel()
    params = fit.params.to_numpy()
    return Reference(names, params, fit.bse.to_numpy(), float(fit.df_resid), X_dm.design_info, scale,
                     X_test, y_test, r2(y_test, X_test @ params))


# -- fitting --------------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What one fit released (or why it did not)."""

    status: str
    params: np.ndarray | None = None
    eps_spent: float = float("nan")
    method_used: str = ""
    interval: tuple[float, float] | None = None
    interval_note: str = ""
    seconds: float = 0.0
    pred_privacy: float | None = None
    pred_released: bool = False


def headline_index(spec: Spec, ref: Reference) -> int:
    """Where the headline coefficient is in a model's design (the one-predictor model of a factor keeps its
    dummy columns; a numeric headline is the only slope)."""
    return ref.names.index(spec.headline) if spec.headline in ref.names else len(ref.names) - 1


def method_options(method: str, d: int, extra: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Options a method needs to run at all: the sparse method releases all d coefficients (no sparsity
    assumed), every other method runs with its defaults; ``extra`` (from ``--option``) adds options by method."""
    added = dict((extra or {}).get(method, {}))
    if method == "auto":
        return added
    spec = dpstats.methods.registry.get_method(method)
    return ({"sparsity": d} if "sparsity" in spec.option_names else {}) | added


def headline_interval(res: Any, name: str) -> tuple[tuple[float, float] | None, str]:
    """The 95% interval of one coefficient and a note; None when not reported (raised, NaN or withheld)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ci = res.conf_int()
        except (AttributeError, DPStatsError, NotImplementedError, ValueError) as exc:
            return None, f"unavailable ({type(exc).__name__}): {str(exc)[:160]}"
    lo, hi = (float(v) for v in ci.loc[name])
    if math.isfinite(lo) and math.isfinite(hi):
        return (lo, hi), "reported"
    reason = getattr(res, "inference_reason", "") or getattr(res, "inference_withheld", "")
    if not reason and caught:
        reason = str(caught[0].message)
    return None, f"withheld: {str(reason)[:160]}"


def fit_dpstats(cfg: Config, spec: Spec, train: pd.DataFrame, ref: Reference, eps: float, seed: int,
                extra: Mapping[str, Mapping[str, Any]] | None = None) -> Outcome:
    """One dp_ols fit; refusals become an Outcome with the spend the exception reports."""
    bounds = spec.bound_pairs() if cfg.bounds else None
    options = method_options(cfg.method, len(ref.names), extra)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols(model_formula(spec, cfg.model), train, eps, DELTA, method=cfg.method, bounds=bounds,
                                 random_state=seed, **options)
    except DPStatsError as exc:
        spent = getattr(exc, "privacy_spent", (0.0, 0.0))
        return Outcome(type(exc).__name__, eps_spent=float(spent[0]), seconds=time.perf_counter() - start,
                       interval_note=str(exc)[:200])
    seconds = time.perf_counter() - start
    params = res.params.reindex(ref.names).to_numpy()
    name = ref.names[headline_index(spec, ref)]
    interval, note = headline_interval(res, name)
    pred, released = predicted_privacy(res, name)
    return Outcome("ok", params, float(res.privacy.epsilon_spent), res.method, interval, note, seconds, pred, released)


def predicted_privacy(res: Any, name: str) -> tuple[float | None, bool]:
    """The error block's predicted privacy error of one coefficient (its units) and whether it came from the
    fit's released values; (None, False) when the block has none."""
    errors = res.error_bounds.coefficients
    if errors is None or name not in errors.names:
        return None, False
    value = float(errors.privacy[list(errors.names).index(name)])
    return (value if math.isfinite(value) else None), bool(errors.released)


def peer_design(spec: Spec, train: pd.DataFrame, model: str) -> tuple[np.ndarray, np.ndarray, list, tuple]:
    """The public design of a peer fit: X without the intercept, y, and their declared ranges."""
    design = build_design(model_formula(spec, model), train, eval_env=patsy.EvalEnvironment.capture(0),
                          bounds=spec.bound_pairs())
    keep = [i for i, c in enumerate(design.column_names) if c != "Intercept"]
    ranges = [(design.column_intervals[i].lo, design.column_intervals[i].hi) for i in keep]
    y_range = (design.response_interval.lo, design.response_interval.hi)
    return design.X[:, keep], design.y, ranges, y_range


def fit_diffprivlib(spec: Spec, train: pd.DataFrame, model: str, eps: float, seed: int) -> np.ndarray:
    """diffprivlib's LinearRegression with the same public bounds; returns [intercept, slopes]."""
    from diffprivlib.models import LinearRegression

    X, y, ranges, y_range = peer_design(spec, train, model)
    lo, hi = np.array([r[0] for r in ranges]), np.array([r[1] for r in ranges])
    est = LinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=y_range, random_state=seed)
    est.fit(X, y)
    return np.r_[est.intercept_, est.coef_]


@cache
def opendp_measurement(x_range: tuple[float, float], y_range: tuple[float, float], eps: float) -> Any:
    """OpenDP's private Theil-Sen with its noise scale calibrated to epsilon at symmetric distance 2."""
    import opendp.prelude as dp
    from opendp.extras.sklearn.linear_model._make_private_theil_sen import (
        make_private_theil_sen,
    )

    dp.enable_features("contrib", "honest-but-curious")

    def make(scale: float) -> Any:
        return make_private_theil_sen(dp.max_divergence(), x_range, y_range, scale=scale)

    meas = make(dp.binary_search_param(make, d_in=2, d_out=eps))
    if meas.map(2) > eps:
        raise RuntimeError("OpenDP calibration exceeded epsilon")
    return meas


def fit_opendp(spec: Spec, train: pd.DataFrame, model: str, eps: float, seed: int) -> np.ndarray:
    """OpenDP's Theil-Sen on the one-predictor model; returns [intercept, slope].  Its noise comes from
    OpenDP's own generator (not seedable): these fits are not reproducible draw for draw."""
    X, y, ranges, y_range = peer_design(spec, train, model)
    meas = opendp_measurement(tuple(ranges[0]), tuple(y_range), eps)
    np.random.seed(seed)  # its pairing shuffle uses numpy's global generator
    slope, intercept = meas(np.column_stack([X[:, 0], y]))
    return np.array([intercept, slope])


def fit_peer(cfg: Config, spec: Spec, train: pd.DataFrame, ref: Reference, eps: float, seed: int) -> Outcome:
    """A peer fit (pure epsilon-DP: eps_spent is epsilon); peers report no intervals.  OpenDP's calibration of
    the noise scale to epsilon (public, once per bounds and epsilon) is done before the clock starts."""
    fitter: Callable[..., np.ndarray] = fit_diffprivlib if cfg.library == "diffprivlib" else fit_opendp
    if cfg.library == "opendp":
        _, _, ranges, y_range = peer_design(spec, train, cfg.model)
        opendp_measurement(tuple(ranges[0]), tuple(y_range), eps)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params = fitter(spec, train, cfg.model, eps, seed)
    return Outcome("ok", params, eps, cfg.method, None, "no interval API", time.perf_counter() - start)


# -- records --------------------------------------------------------------------------------------------------------

def record(cfg: Config, spec: Spec, ref: Reference, n_train: int, eps: float, seed: int, out: Outcome) -> dict:
    """One raw record: the fit's metrics against the OLS reference."""
    j = headline_index(spec, ref)
    rec: dict[str, Any] = {
        "dataset": spec.name, "config": cfg.label, "method": cfg.method, "library": cfg.library,
        "bounds": cfg.bounds, "model": cfg.model, "n_train": n_train, "d": len(ref.names), "epsilon": eps,
        "delta": 0.0 if cfg.library != "dpstats" else DELTA, "seed": seed, "status": out.status,
        "refused": out.status != "ok", "method_used": out.method_used, "eps_spent": out.eps_spent,
        "seconds": round(out.seconds, 5), "headline": ref.names[j], "headline_ols": float(ref.params[j]),
        "interval_note": out.interval_note, "pred_privacy": out.pred_privacy, "pred_released": out.pred_released,
    }
    if out.params is None:
        return rec
    b, b_ols, s = out.params, ref.params, ref.scale
    with np.errstate(divide="ignore", invalid="ignore"):
        coef_rel = np.abs(b - b_ols) / np.abs(b_ols)
    den = float(np.linalg.norm(s * b_ols))
    se = float(ref.bse[j])
    t = float(stats.t.ppf(0.975, ref.df_resid))
    rec.update({
        "headline_dp": float(b[j]), "rel_err": float(coef_rel[j]), "sign_ok": bool(np.sign(b[j]) == np.sign(b_ols[j])),
        "std_err": float(np.linalg.norm(s * (b - b_ols)) / den) if den > 0 else float("nan"),
        "coef_rel_err": [round(float(v), 6) for v in coef_rel],
        "r2_test": r2(ref.y_test, ref.X_test @ b), "r2_test_ols": ref.r2_test,
        "interval": out.interval is not None,
    })
    rec["r2_gap"] = rec["r2_test"] - rec["r2_test_ols"]
    if out.interval is not None:
        lo, hi = out.interval
        rec.update({"ci_lo": lo, "ci_hi": hi, "covers_ols": bool(lo <= b_ols[j] <= hi),
                    "width_ratio": (hi - lo) / (2 * t * se)})
    return rec


def run_task(task: tuple[str, Config, tuple[float, ...], int, int, dict[str, dict[str, Any]]]) -> list[dict]:
    """All epsilons and seeds (``first_seed`` on) of one configuration on one data set."""
    name, cfg, epsilons, seeds, first_seed, extra = task
    spec, train, _ = prepared(name)
    ref = reference(name, cfg.model)
    if cfg.library == "opendp" and len(ref.names) != 2:
        return []  # Theil-Sen fits one numeric covariate: not applicable to a factor's dummy columns
    out = []
    for eps in epsilons:
        for s in range(seeds):
            seed = first_seed + s
            if cfg.library == "dpstats":
                outcome = fit_dpstats(cfg, spec, train, ref, eps, seed, extra)
            else:
                try:
                    outcome = fit_peer(cfg, spec, train, ref, eps, seed)
                except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, recorded with its type
                    outcome = Outcome(f"peer error: {type(exc).__name__}", interval_note=str(exc)[:200])
            out.append(record(cfg, spec, ref, len(train), eps, seed, outcome))
    return out


def reference_rows(names: Iterable[str]) -> list[dict]:
    """The OLS references (full and one-predictor) of each data set, for the raw output."""
    rows = []
    for name in names:
        for model in ("full", "one"):
            ref = reference(name, model)
            rows.append({"dataset": name, "model": model, "columns": ref.names, "params": ref.params.tolist(),
                         "bse": ref.bse.tolist(), "r2_test": ref.r2_test})
    return rows


def run(names: Sequence[str], cfgs: Sequence[Config], epsilons: Sequence[float], seeds: int, jobs: int,
        log: Callable[[str], None] = lambda m: print(m, file=sys.stderr), *, first_seed: int = SEED_BASE,
        extra: Mapping[str, Mapping[str, Any]] | None = None,
        constants: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    """Run every (data set, configuration) task, in ``jobs`` processes; records sorted for reproducibility.
    ``extra``: options added to a method's defaults (``--option``); ``constants``: module constants of the methods
    set in every process before the fits (``--constant``)."""
    set_constants(constants or {})
    added = {m: dict(o) for m, o in (extra or {}).items()}
    tasks = [(n, c, tuple(epsilons), seeds, first_seed, added) for n in names for c in cfgs]
    tasks.sort(key=lambda t: -len(prepared(t[0])[1]))  # largest first: better packing across processes
    records: list[dict] = []
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs, initializer=set_constants, initargs=(constants or {},)) as pool:
            for i, recs in enumerate(pool.map(run_task, tasks, chunksize=1)):
                records += recs
                if (i + 1) % 20 == 0:
                    log(f"  {i + 1}/{len(tasks)} tasks, {time.perf_counter() - started:.0f} s")
    else:
        for i, task in enumerate(tasks):
            records += run_task(task)
            if (i + 1) % 20 == 0:
                log(f"  {i + 1}/{len(tasks)} tasks, {time.perf_counter() - started:.0f} s")
    order = {c.label: i for i, c in enumerate(cfgs)}
    records.sort(key=lambda r: (r["dataset"], order.get(r["config"], 0), r["epsilon"], r["seed"]))
    return records


# -- summary --------------------------------------------------------------------------------------------------------

def _med(values: Iterable[float], digits: int = 3) -> str:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return f"{np.median(vals):.{digits}f}" if vals else "-"


def _share(flags: Sequence[bool]) -> str:
    return f"{100 * np.mean(flags):.0f}%" if len(flags) else "-"


def cell(recs: list[dict]) -> dict[str, str]:
    """The summary numbers of one group of fits."""
    ok = [r for r in recs if not r["refused"]]
    refused = [r for r in recs if r["refused"]]
    with_ci = [r for r in ok if r.get("interval")]
    spent = [r["eps_spent"] / r["epsilon"] for r in refused if not math.isnan(r["eps_spent"])]
    return {
        "fits": str(len(recs)),
        "rel_err": _med(r["rel_err"] for r in ok),
        "sign": _share([r["sign_ok"] for r in ok]),
        "std_err": _med(r["std_err"] for r in ok),
        "r2_gap": _med((r["r2_gap"] for r in ok), 3),
        "refused": _share([r["refused"] for r in recs]),
        "spent": f"{np.mean(spent):.2f}" if spent else "-",
        "ci": _share([bool(r.get("interval")) for r in recs]),
        "cover": _share([r["covers_ols"] for r in with_ci]),
        "width": _med((r["width_ratio"] for r in with_ci), 1),
        "sec": _med((r["seconds"] for r in recs), 3),
    }


def targets_table(records: list[dict]) -> str:
    """``auto`` with bounds against the targets of the accuracy and inference issues (17 and 18)."""
    def at(eps: float) -> dict[str, str]:
        return cell([r for r in records if r["config"] == "auto" and r["epsilon"] == eps])

    rows = [("median relative error of the headline, epsilon = 1", "<= 0.25", 1.0, "rel_err"),
            ("headline sign right, epsilon = 1", ">= 90%", 1.0, "sign"),
            ("median relative error of the headline, epsilon = 3", "<= 0.10", 3.0, "rel_err"),
            ("95% interval reported, epsilon = 1", ">= 95%", 1.0, "ci"),
            ("interval covers the OLS estimate, epsilon = 1", ">= 90%", 1.0, "cover")]
    lines = ["| `auto` with bounds | target | measured |", "|---|---|---|"]
    epsilons = {r["epsilon"] for r in records}
    lines += [f"| {what} | {goal} | {at(eps)[key]} |" for what, goal, eps, key in rows if eps in epsilons]
    return "\n".join(lines)


def method_table(records: list[dict], epsilons: Sequence[float]) -> str:
    """Per configuration and epsilon, pooled over data sets."""
    head = ("| method | epsilon | fits | median rel. error (headline) | sign right | median std. coef. error | "
            "median test R^2 - OLS | refused | eps spent per refusal (share) | interval reported | covers OLS | "
            "median width / OLS width | median s/fit |")
    lines = [head, "|" + "---|" * 13]
    labels = list(dict.fromkeys(r["config"] for r in records))
    for label in labels:
        for eps in epsilons:
            recs = [r for r in records if r["config"] == label and r["epsilon"] == eps]
            if not recs:
                continue
            c = cell(recs)
            lines.append(f"| {label} | {eps:g} | {c['fits']} | {c['rel_err']} | {c['sign']} | {c['std_err']} | "
                         f"{c['r2_gap']} | {c['refused']} | {c['spent']} | {c['ci']} | {c['cover']} | "
                         f"{c['width']} | {c['sec']} |")
    return "\n".join(lines)


def _paired(records: list[dict], a: str, b: str, key: str = "rel_err") -> dict[tuple, tuple[dict, dict]]:
    """Fits of configurations ``a`` and ``b`` on the same data set, epsilon and seed where both have ``key``."""
    def index(label: str) -> dict[tuple, dict]:
        return {(r["dataset"], r["epsilon"], r["seed"]): r for r in records
                if r["config"] == label and r.get(key) is not None}
    left, right = index(a), index(b)
    return {k: (left[k], right[k]) for k in left.keys() & right.keys()}


def bounds_table(records: list[dict], epsilons: Sequence[float]) -> str:
    """Each method with declared bounds against the same method without, on the fits where both released."""
    lines = ["| method | epsilon | paired fits | median rel. error with bounds | without | sign right with | without | "
             "data sets worse with bounds (median > 1.5 x without + 0.02) |", "|" + "---|" * 8]
    for label in dict.fromkeys(r["config"] for r in records):
        if not label.endswith(" (no bounds)"):
            continue
        method = label[: -len(" (no bounds)")]
        for eps in epsilons:
            pairs = [v for k, v in _paired(records, method, label).items() if k[1] == eps]
            if not pairs:
                continue
            per: dict[str, tuple[list[float], list[float]]] = {}
            for w, wo in pairs:
                per.setdefault(w["dataset"], ([], []))
                per[w["dataset"]][0].append(w["rel_err"])
                per[w["dataset"]][1].append(wo["rel_err"])
            worse = [f"{name} ({np.median(x):.2f} vs {np.median(y):.2f})" for name, (x, y) in per.items()
                     if np.median(x) > 1.5 * np.median(y) + 0.02]
            lines.append(f"| {method} | {eps:g} | {len(pairs)} | {_med(w['rel_err'] for w, _ in pairs)} | "
                         f"{_med(wo['rel_err'] for _, wo in pairs)} | {_share([w['sign_ok'] for w, _ in pairs])} | "
                         f"{_share([wo['sign_ok'] for _, wo in pairs])} | "
                         f"{len(worse)} of {len(per)}{': ' + '; '.join(worse) if worse else ''} |")
    return "\n".join(lines)


def baseline_width_table(records: list[dict], epsilons: Sequence[float], baseline: str = "ssp") -> str:
    """The width of ``auto``'s interval against the parametric bootstrap's (``baseline``) on the same fits."""
    lines = [f"| epsilon | fits where both report | median width auto / {baseline} | share within 2x (ratio <= 2) | "
             "by method `auto` chose: fits, median ratio |", "|---|---|---|---|---|"]
    pairs = _paired(records, "auto", baseline, key="width_ratio")
    for eps in epsilons:
        ratios = [(a["method_used"], a["width_ratio"] / b["width_ratio"]) for k, (a, b) in pairs.items()
                  if k[1] == eps and a.get("interval") and b.get("interval")]
        if not ratios:
            continue
        chosen = sorted({m for m, _ in ratios})
        by = "; ".join(f"{m}: {sum(1 for c, _ in ratios if c == m)}, {_med((r for c, r in ratios if c == m), 2)}"
                       for m in chosen)
        lines.append(f"| {eps:g} | {len(ratios)} | {_med((r for _, r in ratios), 2)} | "
                     f"{_share([r <= 2.0 for _, r in ratios])} | {by} |")
    return "\n".join(lines)


def dataset_table(records: list[dict], epsilons: Sequence[float], label: str) -> str:
    """Per data set, for one configuration (auto with bounds by default)."""
    eps_cols = " | ".join(f"rel. error eps={e:g}" for e in epsilons)
    header = (f"| data set | n (train) | d | chose | {eps_cols} | sign right | interval reported | refused | "
              "headline (OLS) |")
    lines = [header, "|" + "---|" * (8 + len(epsilons))]
    for name in dict.fromkeys(r["dataset"] for r in records):
        recs = [r for r in records if r["dataset"] == name and r["config"] == label]
        if not recs:
            continue
        chose = ", ".join(sorted({r["method_used"] for r in recs if r["method_used"]})) or "-"
        errs = " | ".join(cell([r for r in recs if r["epsilon"] == e])["rel_err"] for e in epsilons)
        c = cell(recs)
        lines.append(f"| {name} | {recs[0]['n_train']:,} | {recs[0]['d']} | {chose} | {errs} | {c['sign']} | "
                     f"{c['ci']} | {c['refused']} | `{recs[0]['headline']}` = {recs[0]['headline_ols']:.4g} |")
    return "\n".join(lines)


#: the theory check's band: predicted / measured privacy error within a factor of 3 (issue 18)
THEORY_BAND = 3.0


@cache
def public_intervals(name: str, model: str) -> tuple[list[str], list, tuple[float, float] | None, int | None]:
    """The design's column names, declared column ranges, response range and intercept column (public facts)."""
    spec, train, _ = prepared(name)
    design = build_design(model_formula(spec, model), train, eval_env=patsy.EvalEnvironment.capture(0),
                          bounds=spec.bound_pairs())
    names = list(design.column_names)
    intervals = [None if iv is None else (iv.lo, iv.hi) for iv in design.column_intervals]
    response = None if design.response_interval is None else (design.response_interval.lo,
                                                               design.response_interval.hi)
    return names, intervals, response, names.index("Intercept") if "Intercept" in names else None


def rates_prediction(r: dict) -> float | None:
    """The headline's privacy error as the error block gives it from public facts and the rates alone (the
    sampling error of a design uniform on the declared ranges times the privacy-to-sampling ratio of the
    method's upper rate, else of the minimax lower bound): what it showed for pgd, dpsgd and theilsen before
    they released their error split.  None without bounds or a released fit."""
    if r["refused"] or not r["bounds"] or not r["method_used"] or r["library"] != "dpstats":
        return None
    names, intervals, response, intercept = public_intervals(r["dataset"], r["model"])
    bounds = error_bounds(r["method_used"], r["n_train"], r["d"], r["epsilon"], r["delta"])
    errors = with_coefficients(bounds, names, split=None, intervals=intervals, response_interval=response,
                               intercept_index=intercept).coefficients
    return None if errors is None or r["headline"] not in names else float(errors.privacy[names.index(r["headline"])])


def theory_cells(records: list[dict], rates: bool = False) -> list[dict]:
    """Per (configuration, data set, epsilon) with released fits that all carry a prediction: the root mean
    square of the predicted privacy error of the headline over the seeds, the measured one (root mean square
    of b_dp - b_ols over the same fits) and their ratio; with ``rates``, the prediction from the rates alone
    (:func:`rates_prediction`)."""
    groups: dict[tuple[str, str, float], list[dict]] = {}
    for r in records:
        if not r["refused"] and "headline_dp" in r:
            groups.setdefault((r["config"], r["dataset"], r["epsilon"]), []).append(r)
    out = []
    for (label, name, eps), recs in groups.items():
        preds = [rates_prediction(r) if rates else r.get("pred_privacy") for r in recs]
        if any(p is None for p in preds):
            continue
        errors = np.array([r["headline_dp"] - r["headline_ols"] for r in recs])
        measured = math.sqrt(np.mean(errors**2))
        predicted = math.sqrt(np.mean(np.square(preds)))
        spread = float(np.std(errors, ddof=1)) if len(recs) > 1 else math.nan
        out.append({"config": label, "dataset": name, "epsilon": eps, "fits": len(recs), "predicted": predicted,
                    "measured": measured, "ratio": predicted / measured if measured > 0 else math.inf,
                    "bias_share": abs(float(np.mean(errors))) / measured if measured > 0 else math.nan,
                    "noise_ratio": predicted / spread if spread > 0 else math.nan,
                    "n_mu": recs[0]["n_train"] * gaussian_mu(eps, recs[0]["delta"]),
                    "released": not rates and all(r.get("pred_released") for r in recs),
                    "methods": ", ".join(sorted({r["method_used"] for r in recs}))})
    return out


def theory_table(records: list[dict], rates: bool = False) -> str:
    """Per configuration: the share of (data set, epsilon) cells whose predicted / measured privacy error of
    the headline lies in [1/3, 3], the median ratio, and the cells outside the band (``rates``: the prediction
    from the rates alone)."""
    cells = theory_cells(records, rates)
    lines = ["| method | cells | within [1/3, 3] | median predicted / measured | predicted < 1/3 | predicted > 3 | "
             "within, n mu < 100 / >= 100 | median predicted / sd over seeds | median abs(mean error) / rms | "
             "prediction from | cells outside the band (data set@epsilon: ratio) |", "|" + "---|" * 11]
    for label in dict.fromkeys(r["config"] for r in records):
        part = [c for c in cells if c["config"] == label]
        if not part:
            continue
        ratios = np.array([c["ratio"] for c in part])
        inside = (ratios >= 1 / THEORY_BAND) & (ratios <= THEORY_BAND)
        released = np.mean([c["released"] for c in part])
        source = "released values" if released == 1 else "rates" if released == 0 else f"released in {released:.0%}"
        off = sorted((c for c in part if not 1 / THEORY_BAND <= c["ratio"] <= THEORY_BAND), key=lambda c: c["ratio"])
        shown = ", ".join(f"{c['dataset']}@{c['epsilon']:g}: {c['ratio']:.2g}" for c in off[:12])
        shown += f", ... ({len(off)} in all)" if len(off) > 12 else ""
        small = np.array([c["n_mu"] < 100 for c in part])
        split = " / ".join(f"{np.mean(inside[m]):.0%} of {int(m.sum())}" if m.any() else "-" for m in (small, ~small))
        lines.append(f"| {label} | {len(part)} | {np.mean(inside):.0%} | {np.median(ratios):.2f} | "
                     f"{np.mean(ratios < 1 / THEORY_BAND):.0%} | {np.mean(ratios > THEORY_BAND):.0%} | {split} | "
                     f"{np.nanmedian([c['noise_ratio'] for c in part]):.2f} | "
                     f"{np.nanmedian([c['bias_share'] for c in part]):.2f} | {source} | {shown or '-'} |")
    return "\n".join(lines)


def status_table(records: list[dict]) -> str:
    """Why fits were refused, by configuration."""
    lines = ["| method | refusals by reason |", "|---|---|"]
    for label in dict.fromkeys(r["config"] for r in records):
        reasons: dict[str, int] = {}
        for r in records:
            if r["config"] == label and r["refused"]:
                reasons[r["status"]] = reasons.get(r["status"], 0) + 1
        if reasons:
            lines.append(f"| {label} | " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) + " |")
    return "\n".join(lines)


def interval_notes(records: list[dict]) -> str:
    """The reasons given for not reporting an interval, by configuration (first words only)."""
    lines = ["| method | released fits without an interval, by reason |", "|---|---|"]
    for label in dict.fromkeys(r["config"] for r in records):
        reasons: dict[str, int] = {}
        for r in records:
            if r["config"] == label and not r["refused"] and not r.get("interval"):
                key = r["interval_note"].split(":")[0]
                reasons[key] = reasons.get(key, 0) + 1
        if reasons:
            lines.append(f"| {label} | " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) + " |")
    return "\n".join(lines)


def specs_table(names: Sequence[str]) -> str:
    """The data sets: n, formula, headline, source of the specification."""
    lines = ["| data set | n (all / train) | d | formula | headline | specification from |",
             "|---|---|---|---|---|---|"]
    for name in names:
        spec, train, test = prepared(name)
        d = len(reference(name, "full").names)
        lines.append(f"| {name} | {len(train) + len(test):,} / {len(train):,} | {d} | `{spec.formula}` | "
                     f"`{spec.headline}` | {spec.spec_source} |")
    return "\n".join(lines)


def versions() -> str:
    """Library versions of this run."""
    out = [f"Python {platform.python_version()}"]
    for pkg in ("numpy", "pandas", "statsmodels", "dpstats", "diffprivlib", "opendp"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            out.append(f"{pkg} (not installed)" if pkg != "dpstats" else "dpstats (this checkout)")
    return ", ".join(out)


def seed_range(meta: dict) -> str:
    """The run's noise seeds, 'first..last' (runs before ``--first-seed`` started at ``SEED_BASE``)."""
    first = int(meta.get("first_seed", SEED_BASE))
    return f"{first}..{first + meta['seeds'] - 1}"


def theory_report(records: list[dict], meta: dict) -> str:
    """theory.md: the theory check alone (for BENCHMARKS.md), with the command and the run's size."""
    names = list(dict.fromkeys(r["dataset"] for r in records))
    return f"""# The theory block's predicted privacy error against the measured one (issue 18)

Command: `{meta['command']}` ({meta['seconds']:.0f} s on {meta['jobs']} process(es); {meta['versions']}).
{len(names)} data sets, {len(records)} fits, delta = {DELTA:g}, noise seeds
{seed_range(meta)}.

Per data set and epsilon (a cell), the error block's predicted privacy error of the headline coefficient
(`res.error_bounds.coefficients.privacy`: the root mean square of the released coefficient minus least squares on
the same clipped data, in the coefficient's units; root mean square over the noise seeds) over the measured one
(the root mean square of b_dp - b_ols over the same seeds, b_ols statsmodels OLS on the same training rows).
Target (issue 18): a ratio in [1/3, 3].  Cells with a refused fit or without a prediction (no declared bounds and
no released error split) are left out; "1 predictor" is the response on the headline variable alone.

{theory_table(records)}

The same cells with the prediction from public facts and the rates alone (the error block's prediction for pgd,
dpsgd and theilsen before they released their error split; ssp and adassp always used released values):

{theory_table([r for r in records if r["bounds"]], rates=True)}
"""


def summary(records: list[dict], meta: dict) -> str:
    """The markdown summary written to summary.md (and included in BENCHMARKS.md)."""
    epsilons = sorted({r["epsilon"] for r in records})
    names = list(dict.fromkeys(r["dataset"] for r in records))
    return f"""# Real published regressions at paper sizes

Command: `{meta['command']}` ({meta['seconds']:.0f} s on {meta['jobs']} process(es); {meta['versions']}).
{len(names)} data sets, {len(records)} fits; delta = {DELTA:g} for dpstats, 0 for the peers (pure epsilon-DP);
noise seeds {seed_range(meta)}; every fit on the fixed 80% training split, the reference
is statsmodels OLS on the same rows.  Raw records: `benchmarks/results/real_data/records.jsonl.gz`; OLS
references: `benchmarks/results/real_data/ols_reference.json`.

Definitions (`benchmarks/real_data.py`): *rel. error* |b_dp - b_ols| / |b_ols| of the headline coefficient;
*std. coef. error* ||s (b_dp - b_ols)|| / ||s b_ols|| over the slopes, s the training standard deviations of
the design columns (scale-free); *test R^2 - OLS* on the 20% test rows; medians and sign shares over released
fits; *refused* over all fits, with the epsilon a refusal spent as a share of the fit's epsilon (from the
exception's `privacy_spent`); *interval reported* over all fits (a finite 95% interval for the headline);
*covers OLS* and *width / OLS width* (the private interval's width over the classical 95% interval's,
2 t se_OLS) over the fits that reported one.  Peers are marked [peer]; "1 predictor" is the response on the
headline variable alone (the comparison with OpenDP's Theil-Sen is like for like there).

## Against the targets (issues 17 and 18)

{targets_table(records)}

## By method and epsilon (pooled over data sets)

{method_table(records, epsilons)}

## Declared bounds against none, fit by fit (issue 17, part 4)

Each method that also ran without bounds, on the fits where both configurations released an estimate (same data
set, epsilon and noise seed); the last column lists the data sets where the median with bounds is worse than
1.5 times the median without plus 0.02 (five seeds per cell, so single sets move by chance).

{bounds_table(records, epsilons)}

## Interval width against the parametric bootstrap (issue 18)

`auto`'s 95% interval for the headline coefficient against the parametric bootstrap of `ssp` (Ferrando, Wang &
Sheldon 2022: re-draw the released sufficient statistics' noise and sampling error, re-fit) on the same fits,
where both report one; the target is a median ratio of at most 2.

{baseline_width_table(records, epsilons)}

## `auto` with bounds, per data set

{dataset_table(records, epsilons, "auto")}

## `auto` without bounds, per data set

{dataset_table(records, epsilons, "auto (no bounds)")}

## The theory block's predicted privacy error against the measured one (issue 18)

Per data set and epsilon (a cell), the error block's predicted privacy error of the headline coefficient
(`res.error_bounds.coefficients.privacy`, the root mean square over the noise seeds) over the measured one (the
root mean square of b_dp - b_ols over the same seeds); the target is a ratio in [1/3, 3].  Cells with a refused
fit or without a prediction (no declared bounds and no released error split) are left out.

{theory_table(records)}

## Refusals by reason

{status_table(records)}

## Released fits without an interval, by reason

{interval_notes(records)}

## The data sets

{specs_table(names)}

Bounds, their reasons and the declared factor levels are in `benchmarks/real_data_specs.py`; provenance and
licences of the files in `benchmarks/data/README.md`.
"""


# -- main -----------------------------------------------------------------------------------------------------------

def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", help="comma-separated names (default: all)")
    p.add_argument("--methods", help="comma-separated dpstats methods, 'auto', 'diffprivlib', 'opendp' (default: all)")
    p.add_argument("--epsilons", help="comma-separated (default 0.5,1,3)")
    p.add_argument("--seeds", type=int, help="noise seeds per cell (default 5; 1 with --quick)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1; the machine is shared)")
    p.add_argument("--quick", action="store_true", help=f"{len(QUICK_DATASETS)} small data sets, 1 seed, epsilon 1")
    p.add_argument("--no-peers", action="store_true", help="skip diffprivlib and OpenDP even when installed")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="output folder (records, references, summary.md)")
    p.add_argument("--summarise", action="store_true", help="rebuild summary.md from the saved records only")
    p.add_argument("--first-seed", type=int, default=SEED_BASE, help=f"first noise seed (default {SEED_BASE})")
    p.add_argument("--option", action="append", default=[], metavar="METHOD.NAME=VALUE",
                   help="an option added to a method's defaults, e.g. pgd.chains=10 (a Python literal; repeatable)")
    p.add_argument("--constant", action="append", default=[], metavar="MODULE.NAME=VALUE",
                   help="a module constant of dpstats.methods set for the run, e.g. pgd.PENALTY=0.5 (a measurement "
                        "of a public rule's constant; a Python literal; repeatable)")
    return p.parse_args(argv)


def set_constants(constants: Mapping[str, Mapping[str, Any]]) -> None:
    """Set ``--constant`` values on the modules of dpstats.methods (in this process); an unknown name is refused."""
    for module_name, values in constants.items():
        module = importlib.import_module(f"dpstats.methods.{module_name}")
        for name, value in values.items():
            if not hasattr(module, name):
                raise SystemExit(f"--constant: dpstats.methods.{module_name} has no {name}")
            setattr(module, name, value)


def extra_options(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--option`` values as {method: {name: value}} (values read as Python literals)."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, _, value = item.partition("=")
        method, _, name = key.partition(".")
        if not (method and name and value):
            raise SystemExit(f"--option takes METHOD.NAME=VALUE, got {item!r}")
        out.setdefault(method, {})[name] = ast.literal_eval(value)
    return out


def constant_values(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--constant`` values as {module: {name: value}} (the same form as ``--option``)."""
    try:
        return extra_options(items)
    except SystemExit:
        raise SystemExit(f"--constant takes MODULE.NAME=VALUE, got {list(items)!r}") from None


def command_line(args: argparse.Namespace) -> str:
    parts = ["python benchmarks/real_data.py"]
    for flag in ("datasets", "methods", "epsilons"):
        if getattr(args, flag):
            parts.append(f"--{flag} {getattr(args, flag)}")
    parts += [f"--seeds {args.seeds}", f"--jobs {args.jobs}"] + (["--quick"] if args.quick else [])
    parts += ["--no-peers"] if args.no_peers else []
    parts += [f"--first-seed {args.first_seed}"] if args.first_seed != SEED_BASE else []
    parts += [f"--option {o}" for o in args.option] + [f"--constant {c}" for c in args.constant]
    return " ".join(parts)


def main(argv: Sequence[str] | None = None) -> list[dict]:
    args = parse(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.summarise:
        with gzip.open(out / "records.jsonl.gz", "rt") as fh:
            records = [json.loads(line) for line in fh]
        meta = json.loads((out / "meta.json").read_text())
        (out / "summary.md").write_text(summary(records, meta))
        (out / "theory.md").write_text(theory_report(records, meta))
        return records
    args.seeds = args.seeds or (1 if args.quick else 5)
    if args.quick:
        args.epsilons = args.epsilons or "1"
        args.datasets = args.datasets or ",".join(QUICK_DATASETS)
    names = args.datasets.split(",") if args.datasets else [s.name for s in SPECS]
    for name in names:
        spec_by_name(name)
    epsilons = [float(e) for e in args.epsilons.split(",")] if args.epsilons else list(EPSILONS)
    cfgs = configs(args.methods.split(",") if args.methods else None, peers=not args.no_peers)
    started = time.perf_counter()
    records = run(names, cfgs, epsilons, args.seeds, max(1, args.jobs), first_seed=args.first_seed,
                  extra=extra_options(args.option), constants=constant_values(args.constant))
    meta = {"command": command_line(args), "seconds": time.perf_counter() - started, "jobs": args.jobs,
            "seeds": args.seeds, "first_seed": args.first_seed, "versions": versions(),
            "configs": [asdict(c) for c in cfgs]}
    with gzip.GzipFile(out / "records.jsonl.gz", "wb", mtime=0) as fh:
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode())
    (out / "ols_reference.json").write_text(json.dumps(reference_rows(names), indent=1))
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    (out / "summary.md").write_text(summary(records, meta))
    (out / "theory.md").write_text(theory_report(records, meta))
    print(f"{len(records)} fits in {meta['seconds']:.0f} s; summary: {out / 'summary.md'}", file=sys.stderr)
    return records


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
