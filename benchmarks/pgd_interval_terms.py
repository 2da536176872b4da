"""Which term of pgd's interval makes it conservative on the realistic coverage grid (session 55).

Run:  python benchmarks/pgd_interval_terms.py [--reps 30] [--n 100 1000] [--jsonl FILE] [--out FILE.md]
      python benchmarks/pgd_interval_terms.py --held-out SET,SET,... [--epsilons 0.5,1,3] [--seeds 5] [--jsonl FILE]
      python benchmarks/pgd_interval_terms.py --real-data [--epsilons 0.5,1,3] [--seeds 5] [--jsonl FILE]
      python benchmarks/pgd_interval_terms.py --summarise FILE[.gz][,FILE] [--out FILE.md]

Fits pgd with its default options on the settings of ``benchmarks/coverage_grid.py`` (the same data, bounds and
seeds) and, at each fit, rebuilds the interval's predictive draws (:func:`dpstats.methods.pgd._interval_draws`)
from the same released values term by term, then the basic 95% interval of each variant:

* ``full``: every term (the draws rebuilt with a generator of their own: the variants share it);
* ``normal_spread``: the chains' spread as a normal instead of a t with K - 1 degrees of freedom;
* ``no_offsets``: the chains' spread without the share of their public start offsets they kept (the error block's
  :func:`~dpstats.methods.pgd.kept_share`, where significant and at most ``KEPT_SHARE_LIMIT``);
* ``no_undo``: without the shrinkage correction (the draws not mapped by S^-1 and not moved by the bias);
* ``no_carried``: without phase 1's noise carried into the output;
* ``sampling_z0``: the sandwich's released statistics taken at their values instead of one-sided 95% bounds;
* ``no_sampling``: without the sandwich sampling part;
* ``no_stretch``: without the allowance beyond the tail clip.

It records, per fit, each variant's coverage of the true coefficients and of the clipped data's least squares and
its width over the OLS interval's, and the root mean square of each term's draws (method units, over the OLS
standard error), with the public facts (n, d, epsilon, bounds, n * mu) and released values (the chains' kept
share, the shrinkage) that could tell the over-covering settings from the others.  Post-processing only: the fit
is the package's; the variants reuse its released values.

``--held-out`` fits the named regressions of ``benchmarks/held_out.py`` (its formulas, bounds and noise seeds,
``method="auto"``) and records, for each of pgd's fits, whether each variant's interval for the headline covers
least squares; the summary gives coverage and median width by band of n * mu (the other methods' fits keep their
interval in every variant); ``--real-data`` does the same on the real-data benchmark's ``auto`` fits
(``benchmarks/real_data.py``).  The records of session 55 are in ``benchmarks/results/pgd_interval_terms/`` and the
reading in docs/choosing.md ("Over-coverage on the simulation grid").
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats
sys.path.insert(0, str(Path(__file__).resolve().parent))

import coverage_grid as grid  # noqa: E402

import dpstats  # noqa: E402
import dpstats.pipeline as pipeline  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402
from dpstats.inference import basic_bootstrap_interval  # noqa: E402
from dpstats.methods import pgd  # noqa: E402
from dpstats.methods.common.linalg import psd_projection  # noqa: E402
from dpstats.privacy.calibration import gaussian_mu  # noqa: E402

VARIANTS = ("full", "normal_spread", "no_offsets", "no_undo", "no_carried", "sampling_z0", "no_sampling",
            "no_stretch")
TERMS = ("spread", "spread_no_offsets", "carried", "undo_extra", "bias", "sampling", "sampling_z0")

_state: dict = {}


def _capture_offsets(original):
    def wrapped(st, lin, chains, offsets, tail=None):
        _state["offsets"] = offsets
        return original(st, lin, chains, offsets, tail)
    return wrapped


def _capture_noisy(original):
    def wrapped(stats, *args, **kwargs):
        out = original(stats, *args, **kwargs)
        if "inference" in kwargs.get("name", ""):
            _state["noisy"] = np.asarray(out, dtype=float)
        return out
    return wrapped


def _spread_draws(dev: np.ndarray, g: np.ndarray, chi2: np.ndarray, t: bool) -> np.ndarray:
    k = dev.shape[0]
    spread = (g @ dev) / math.sqrt(k * (k - 1))
    return spread * np.sqrt((k - 1) / chi2)[:, None] if t else spread


def _offsets_removed(chains: np.ndarray, offsets: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """The chains' deviations (K, d) without the significant kept share of their offsets (the error block's rule),
    rescaled so that their sum of squares over K - 1 estimates the variance where a share took a degree of freedom."""
    d, k = chains.shape
    dev = basis.T @ (chains - chains.mean(axis=1, keepdims=True))
    off = basis.T @ offsets
    share = pgd.significant_share(pgd.kept_share(dev, off), dev, off) if k > 2 else np.zeros(d)
    share = np.where(share <= pgd.KEPT_SHARE_LIMIT, share, 0.0)
    dof = np.where((share > 0.0) & (share < 1.0), k - 2.0, k - 1.0)
    residuals = (dev - share[:, None] * off) * np.sqrt((k - 1.0) / dof)[:, None]
    _state["kept_share"] = share
    return (basis @ residuals).T


def _variant_draws(rows, st, cache, chains, gram, sigma_g, clip, mu, n, lin, tail=None, *, variance_floor=0.0,
                   rng=None, ledger=None):
    """The package's draws (returned unchanged), and each variant's draws in method units (into ``_state``)."""
    out = _original_draws(rows, st, cache, chains, gram, sigma_g, clip, mu, n, lin, tail,
                          variance_floor=variance_floor, rng=rng, ledger=ledger)
    noisy = _state["noisy"]
    own = np.random.default_rng(12345)
    estimate = chains.mean(axis=1)
    A, _ = st.affine_back()
    norm_bound = pgd.gradient_norm_bound(st, estimate)
    floor = psd_projection(gram, sigma_g)
    rows_n = st.rows or n
    v_sampling = A @ pgd.sandwich(noisy, floor, clip, rows_n, mu, norm_bound, variance_floor) @ A.T
    saved = pgd.SAMPLING_Z
    pgd.SAMPLING_Z = 0.0
    try:
        v_z0 = A @ pgd.sandwich(noisy, floor, clip, rows_n, mu, norm_bound, variance_floor) @ A.T
    finally:
        pgd.SAMPLING_Z = saved
    d, k = chains.shape
    B = pgd.DRAWS
    dev = (chains - estimate[:, None]).T
    dev_noff = _offsets_removed(chains, _state["offsets"], lin.basis)
    g = own.standard_normal((B, k))
    chi2 = np.sum(own.standard_normal((B, k - 1)) ** 2, axis=1)
    spread_t = _spread_draws(dev, g, chi2, True)
    spread_n = _spread_draws(dev, g, chi2, False)
    spread_noff = _spread_draws(dev_noff, g, chi2, True)
    carried = (own.standard_normal((B, d)) * np.sqrt(lin.carried)) @ lin.basis.T
    bias = lin.bias(estimate)[None, :]
    tail_part = np.zeros((B, d))
    if tail is not None:
        tail_part = own.standard_normal((B, d)) @ tail.noise.T - tail.left[None, :]
    zs = own.standard_normal((B, d))

    def sampling_of(v):
        w, V = np.linalg.eigh(0.5 * (v + v.T))
        return (zs * np.sqrt(np.maximum(w, 0.0))) @ V.T

    samp, samp_z0 = sampling_of(v_sampling), sampling_of(v_z0)
    centre = st.params_back(estimate)[None, :]
    u = own.uniform(size=(B, 1))

    def build(spread=spread_t, undo=True, carry=True, sampling=samp, stretch=True):
        priv = spread + (carried if carry else 0.0)
        priv = lin.undo(priv) + bias if undo else priv
        draws = centre + (priv + tail_part) @ A.T + sampling
        if stretch and tail is not None and tail.kept.any():
            allowance = A @ tail.allowance
            away = (draws - np.median(draws, axis=0)) * allowance[None, :] < 0.0
            draws = draws - np.where(away, u * allowance[None, :], 0.0)
        return draws

    _state["variants"] = {
        "full": build(), "normal_spread": build(spread=spread_n), "no_offsets": build(spread=spread_noff),
        "no_undo": build(undo=False), "no_carried": build(carry=False), "sampling_z0": build(sampling=samp_z0),
        "no_sampling": build(sampling=0.0), "no_stretch": build(stretch=False)}
    _state["terms"] = {
        "spread": spread_t @ A.T, "spread_no_offsets": spread_noff @ A.T, "carried": carried @ A.T,
        "undo_extra": (lin.undo(spread_t + carried) - (spread_t + carried)) @ A.T,
        "bias": np.repeat(bias @ A.T, B, axis=0), "sampling": samp, "sampling_z0": samp_z0}
    _state["shrink_min"] = float(np.min(lin.shrink))
    _state["tail"] = tail is not None and bool(tail.kept.any())
    _state["y_scale"] = float(st.y_scale)
    _state["x_scale_med"] = float(np.median(st.scale[[j for j in range(d) if j != st.domain.intercept_index]])) \
        if d > 1 else float("nan")
    return out


def _inference_back(original):
    def wrapped(inference, scaling):
        _state["variants_user"] = {k: scaling.draws_back(v) for k, v in _state.get("variants", {}).items()}
        _state["terms_user"] = {k: scaling.draws_back(v) - scaling.draws_back(np.zeros_like(v))
                                for k, v in _state.get("terms", {}).items()}
        return original(inference, scaling)
    return wrapped


_original_draws = pgd._interval_draws


def install(set_attribute: Callable[[object, str, object], None] = setattr) -> None:
    """Wrap pgd's interval draws, its error split and Gaussian mechanism (to read the offsets and the released
    2-vector) and the pipeline's map of the draws back to the user's units (``set_attribute``: pytest's
    ``monkeypatch.setattr`` in the tests, so that they undo it)."""
    set_attribute(pgd, "_interval_draws", _variant_draws)
    set_attribute(pgd, "error_split", _capture_offsets(pgd.error_split))
    set_attribute(pgd, "gaussian_mechanism_mu", _capture_noisy(pgd.gaussian_mechanism_mu))
    set_attribute(pipeline, "_inference_back", _inference_back(pipeline._inference_back))


def run_setting(setting: grid.Setting, reps: int) -> list[dict]:
    rule = pgd.SPEC.inference_rule
    if not rule.reports_at(setting.n, setting.epsilon, grid.DELTA):
        return []
    rng = np.random.default_rng(setting.seed)
    truth = grid.coefficients(setting.d)
    x_bounds, y_bounds = grid.declared_bounds(setting.d, setting.design, setting.bounds)
    lo, hi = np.array([b[0] for b in x_bounds]), np.array([b[1] for b in x_bounds])
    out = []
    for r in range(reps):
        X, y = grid.simulate(setting.n, setting.d, setting.design, rng)
        _state.clear()
        try:
            res = dpstats.dp_ols_arrays(X, y, setting.epsilon, grid.DELTA, method="pgd", x_bounds=x_bounds,
                                        y_bounds=y_bounds, intercept=True, random_state=setting.seed + r)
        except DPStatsError:
            continue
        if not res.inference_available or "variants_user" not in _state:
            continue
        target, _ = grid._least_squares(np.clip(X, lo, hi), np.clip(y, *y_bounds))
        _, ols_se = grid._least_squares(X, y)
        b = res.params.to_numpy()
        ci = res.conf_int().to_numpy()
        rec = {"n": setting.n, "d": setting.d, "design": setting.design, "bounds": setting.bounds,
               "epsilon": setting.epsilon, "rep": r, "n_mu": setting.n * gaussian_mu(setting.epsilon, grid.DELTA),
               "shrink_min": _state["shrink_min"], "tail": _state["tail"], "y_scale": _state["y_scale"],
               "x_scale_med": _state["x_scale_med"],
               "kept_share_max": float(np.max(_state.get("kept_share", [0.0]))),
               "package_cover": ((ci[:, 0] <= truth) & (truth <= ci[:, 1])).tolist(),
               "package_width": float(np.mean((ci[:, 1] - ci[:, 0]) / (2 * 1.959964 * ols_se)))}
        for name, draws in _state["variants_user"].items():
            lower, upper = basic_bootstrap_interval(b, draws, 0.05)
            rec[f"{name}_cover"] = ((lower <= truth) & (truth <= upper)).tolist()
            rec[f"{name}_cover_ls"] = ((lower <= target) & (target <= upper)).tolist()
            rec[f"{name}_width"] = float(np.mean((upper - lower) / (2 * 1.959964 * ols_se)))
        for name, draws in _state["terms_user"].items():
            rec[f"rms_{name}"] = float(np.mean(np.sqrt(np.mean(draws**2, axis=0)) / ols_se))
        out.append(rec)
    return out


def _keep_last_fit(module: Any) -> None:
    """Make ``module``'s ``dpstats.dp_ols`` keep each fit's results in ``_state["res"]`` (the benchmark modules call
    ``dpstats.dp_ols`` through their own ``dpstats`` name, which is replaced by a shim that does)."""
    fitted = module.dpstats.dp_ols

    def keep(*args: Any, **kwargs: Any) -> Any:
        _state.clear()
        _state["res"] = fitted(*args, **kwargs)
        return _state["res"]

    module.dpstats = type("dpstats_shim", (), {"dp_ols": staticmethod(keep)})


def _add_variants(rec: dict, head: str, b_ols: float, se: float) -> None:
    """Add to ``rec`` each variant's headline interval from the last fit (``_state``): whether it covers least
    squares' ``b_ols`` and its width over the OLS interval's (standard error ``se``); a variant the fit did not
    rebuild keeps the package's own interval."""
    res = _state["res"]
    j = list(res.params.index).index(head)
    b = res.params.to_numpy()
    for v in VARIANTS:
        draws = _state.get("variants_user", {}).get(v)
        if draws is None:
            rec[f"{v}_covers"], rec[f"{v}_width"] = rec["covers"], rec["width"]
            continue
        lower, upper = basic_bootstrap_interval(b, draws, 0.05)
        rec[f"{v}_covers"] = bool(lower[j] <= b_ols <= upper[j])
        rec[f"{v}_width"] = float((upper[j] - lower[j]) / (2 * 1.959964 * se))


def held_out_records(names: list[str], epsilons: list[float], seeds: int, path: Path | None = None) -> list[dict]:
    """``benchmarks/held_out.py``'s records (the same fits and noise seeds) with, for pgd's fits, whether each
    variant's interval for the headline covers least squares and its width over the OLS interval's (other methods'
    fits keep their interval in every variant); with ``path``, each data set's records are appended to it as they
    finish."""
    import held_out

    _keep_last_fit(held_out)
    out = []
    for name in names:
        _, formula, head, _ = held_out.SPECS[name]
        ols = held_out.least_squares(formula, held_out.frame(name))
        b_ols, se = float(ols.params[head]), float(ols.bse[head])
        for rec in held_out.fits(name, "auto", epsilons, seeds):
            if rec.get("reported"):
                _add_variants(rec, head, b_ols, se)
                rec["n_mu"] = rec["n"] * gaussian_mu(held_out.fit_epsilon(rec["eps"], True), held_out.DELTA)
            out.append(rec)
            if path is not None:
                with path.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
        print(name, flush=True)
    return out


def real_data_records(epsilons: list[float], seeds: int, path: Path | None = None) -> list[dict]:
    """The real-data benchmark's ``auto`` fits (``benchmarks/real_data.py``: its training rows, formulas, bounds and
    noise seeds from 1000) in the held-out records' form, with each variant's headline interval (as
    :func:`held_out_records`; n * mu at the training rows' n)."""
    import real_data

    _keep_last_fit(real_data)
    out = []
    for spec in real_data.SPECS:
        _, train, _ = real_data.prepared(spec.name)
        ref = real_data.reference(spec.name, "full")
        j = real_data.headline_index(spec, ref)
        b_ols, se = float(ref.params[j]), float(ref.bse[j])
        for eps in epsilons:
            for seed in range(real_data.SEED_BASE, real_data.SEED_BASE + seeds):
                _state.clear()
                outcome = real_data.fit_dpstats(real_data.Config("auto"), spec, train, ref, eps, seed)
                rec = {"set": spec.name, "n": len(train), "eps": eps, "seed": seed, "chose": outcome.method_used,
                       "reported": outcome.interval is not None}
                if outcome.interval is not None:
                    lo, hi = outcome.interval
                    rec |= {"covers": bool(lo <= b_ols <= hi), "width": (hi - lo) / (2 * 1.959964 * se),
                            "n_mu": len(train) * gaussian_mu(eps, real_data.DELTA)}
                    _add_variants(rec, ref.names[j], b_ols, se)
                out.append(rec)
                if path is not None:
                    with path.open("a") as fh:
                        fh.write(json.dumps(rec) + "\n")
        print(spec.name, flush=True)
    return out


def held_out_table(records: list[dict]) -> str:
    """Coverage of least squares and median width of each variant's headline interval, by band of n * mu."""
    rep = pd.DataFrame([r for r in records if r.get("reported")])
    bands = [15.0, 100.0, 300.0, 1000.0, math.inf]
    rows = []
    for lo, hi in zip(bands[:-1], bands[1:], strict=True):
        g = rep[(rep["n_mu"] >= lo) & (rep["n_mu"] < hi)]
        if g.empty:
            continue
        row = {"n * mu": f"{lo:g} to {hi:g}", "fits (data sets)": f"{len(g)} ({g['set'].nunique()})",
               "package": f"{g['covers'].mean():.1%} / {g['width'].median():.2f}"}
        row |= {v: f"{g[f'{v}_covers'].mean():.1%} / {g[f'{v}_width'].median():.2f}" for v in VARIANTS}
        rows.append(row)
    return pd.DataFrame(rows).to_markdown(index=False)


def summarise(records: list[dict]) -> pd.DataFrame:
    """Per setting and variant: coverage of the truth, its cluster MC sd, median width over OLS."""
    df = pd.DataFrame(records)
    keys = ["design", "bounds", "n", "d", "epsilon"]
    rows = []
    for key, g in df.groupby(keys):
        row = dict(zip(keys, key, strict=True)) | {"fits": len(g), "n_mu": float(g["n_mu"].iloc[0])}
        for v in ("package", *VARIANTS):
            covered = np.array(g[f"{v}_cover"].tolist(), dtype=bool)
            row[f"{v}_cov"] = float(covered.mean())
            row[f"{v}_sd"] = grid.cluster_mc_sd(covered)
            row[f"{v}_width"] = float(np.median(g[f"{v}_width"]))
        for t in TERMS:
            row[f"rms_{t}"] = float(np.median(g[f"rms_{t}"]))
        row["kept_share_max"] = float(np.median(g["kept_share_max"]))
        row["shrink_min"] = float(np.median(g["shrink_min"]))
        row["tail"] = float(np.mean(g["tail"]))
        rows.append(row)
    return pd.DataFrame(rows)


def counts(table: pd.DataFrame, variant: str, band: tuple[float, float] = grid.BAND) -> dict:
    cov, sd = table[f"{variant}_cov"], table[f"{variant}_sd"]
    return {"variant": variant, "settings": len(table), "in band": int(((cov >= band[0]) & (cov <= band[1])).sum()),
            "below": int((cov < band[0]).sum()), "above": int((cov > band[1]).sum()),
            "below by > 2 sd": int((cov < 0.95 - 2 * sd).sum()), "above by > 2 sd": int((cov > 0.95 + 2 * sd).sum()),
            "median width / OLS": float(np.median(table[f"{variant}_width"]))}


N_MU_BANDS = ((15.0, 100.0), (100.0, 300.0), (300.0, 1000.0), (1000.0, math.inf))


def report(table: pd.DataFrame) -> str:
    """Counts of each variant over all settings, then by band of n * mu and by the declared bounds, then the median
    root mean square of each term (over the OLS standard error) by band."""
    parts = ["All settings:\n\n" + pd.DataFrame([counts(table, v) for v in ("package", *VARIANTS)]).to_markdown(
        index=False, floatfmt=".3g")]
    for lo, hi in N_MU_BANDS:
        for bounds in ("loose", "tight"):
            g = table[(table["n_mu"] >= lo) & (table["n_mu"] < hi) & (table["bounds"] == bounds)]
            if not g.empty:
                parts.append(f"n * mu {lo:g} to {hi:g}, {bounds} bounds:\n\n" + pd.DataFrame(
                    [counts(g, v) for v in ("package", *VARIANTS)]).to_markdown(index=False, floatfmt=".3g"))
    terms = []
    for lo, hi in N_MU_BANDS:
        g = table[(table["n_mu"] >= lo) & (table["n_mu"] < hi)]
        if not g.empty:
            terms.append({"n * mu": f"{lo:g} to {hi:g}", "settings": len(g)}
                         | {t: float(np.median(g[f"rms_{t}"])) for t in TERMS}
                         | {"kept share (max over directions)": float(np.median(g["kept_share_max"])),
                            "shrinkage s (min)": float(np.median(g["shrink_min"]))})
    parts.append("Median over settings of each term's root mean square over the OLS standard error:\n\n"
                 + pd.DataFrame(terms).to_markdown(index=False, floatfmt=".3g"))
    return "\n\n".join(parts)


def _lines(path: Path) -> list[str]:
    """The non-empty lines of a records file, gzipped (``.gz``) or not."""
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [line for line in text.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--max-n", type=int, default=10_000)
    parser.add_argument("--jsonl", default="")
    parser.add_argument("--summarise", default="")
    parser.add_argument("--out", default="")
    parser.add_argument("--designs", nargs="*", default=list(grid.GRID_DESIGN))
    parser.add_argument("--n", nargs="*", type=int, default=None)
    parser.add_argument("--held-out", default="", help="comma-separated held-out data sets (benchmarks/held_out.py)")
    parser.add_argument("--epsilons", default="0.5,1,3")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--real-data", action="store_true", help="the real-data benchmark's auto fits")
    args = parser.parse_args()
    if args.real_data:
        install()
        records = real_data_records([float(e) for e in args.epsilons.split(",")], args.seeds,
                                    Path(args.jsonl) if args.jsonl else None)
        print(held_out_table(records))
        return
    if args.held_out:
        install()
        records = held_out_records(args.held_out.split(","), [float(e) for e in args.epsilons.split(",")], args.seeds,
                                   Path(args.jsonl) if args.jsonl else None)
        print(held_out_table(records))
        return
    if args.summarise:
        records = [json.loads(line) for path in args.summarise.split(",") for line in _lines(Path(path))]
        if "set" in records[0]:  # held-out records
            print(held_out_table(records))
            return
    else:
        install()
        done: set = set()
        path = Path(args.jsonl) if args.jsonl else None
        records = []
        if path is not None and path.exists():
            records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            done = {(r["n"], r["d"], r["design"], r["bounds"], r["epsilon"]) for r in records}
        for s in grid.settings(["pgd"], False, {"pgd": args.max_n}, tuple(args.designs)):
            if (s.n, s.d, s.design, s.bounds, s.epsilon) in done or (args.n and s.n not in args.n):
                continue
            new = run_setting(s, args.reps)
            records += new
            if path is not None:
                with path.open("a") as fh:
                    fh.writelines(json.dumps(r) + "\n" for r in new)
            print(f"{s.design}/{s.bounds} n={s.n} d={s.d} eps={s.epsilon}: {len(new)} fits", flush=True)
    table = summarise(records)
    text = report(table)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n\n" + table.to_markdown(index=False, floatfmt=".3g") + "\n")


if __name__ == "__main__":
    main()
