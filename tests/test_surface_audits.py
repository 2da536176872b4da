"""Neighbouring data sets through the surfaces around the fit: ``dpstats.compare``, the scikit-learn wrapper, the
budget accountant (in memory, threads, a budget file shared by processes), ``dp_ols_arrays`` and the results'
methods after the fit (issue: red-team of the surfaces, session 50).

The earlier audits (tests/test_neighbour_*.py, tests/test_branch_audits.py, tests/test_blackbox_audit.py) run
``dpstats.dp_ols`` itself.  Here one row of a base data set D is replaced by an extreme value (a corner of the
declared bounds, 1e300, -1e300, 5e-324, -0.0, NaN, inf, -inf) and D and its neighbour D' go through each surface
with the same seed.  What is not noise must be the same on both: the exception type and its message with the numbers
masked, the set of warnings (category, masked message), what is printed, the budget spent and the accountant's
history (status, masked label), the summary and LaTeX texts masked.

What the sweep found: ``compare`` scored every fit with the in-sample R^2 computed by numpy on the data, so a row
near the largest float made numpy print ``RuntimeWarning: overflow encountered in square`` (or ``in matmul``) on D'
only.  ``compare`` runs on public data only (``data_are_public=True``), so nothing private leaked, but its output
still differed from its neighbour's by a numpy warning that no released number explains; the R^2 of such a fit is
now NaN, silently, as the docstring of ``Comparison`` says.

Everything is deterministic (fixed data and seeds, no Monte Carlo): the false-failure rate is 0.  A refusal that
``missing="raise"`` or a dtype decides (NaN in ``compare``'s in-memory design) is the domain's, the same as
``dp_ols``'s, and is left out of the comparison where noted.
"""

from __future__ import annotations

import multiprocessing
import pickle
import re
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats import PrivacyAccountant
from dpstats.errors import BudgetExceededError

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b", re.IGNORECASE)
SEED = 3
LARGEST = float(np.finfo(float).max)
#: one replaced value per pattern (a corner of the declared bounds [0, 10] and [-10, 20], and values beyond them)
PATTERNS: dict[str, float] = {"corner": 10.0, "1e300": 1e300, "-1e300": -1e300, "5e-324": 5e-324, "-0.0": -0.0,
                              "largest": LARGEST, "nan": np.nan, "inf": np.inf, "-inf": -np.inf}
FAST = ["corner", "1e300", "-1e300", "5e-324", "-0.0", "nan", "inf"]


def _masked(text: object) -> str:
    """Text with every number replaced by '#' (with its sign, also LaTeX's $-$) and spacing collapsed."""
    return re.sub(r"\s+", " ", _NUMBER.sub("#", str(text)).replace("$-$#", "#")).strip()


def _outcome(run: Callable[[], Any], capsys: pytest.CaptureFixture[str]) -> tuple[Any, ...]:
    """What ``run`` shows apart from its noise: its value (already masked by the caller) or its exception (type,
    masked message, spend), the set of warnings (category, masked message) and what it printed, masked."""
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value: Any = ("ok", run())
        except Exception as exc:  # noqa: BLE001 - compared between neighbours, type and masked message
            value = ("error", type(exc).__name__, _masked(exc), tuple(getattr(exc, "privacy_spent", (None,))))
    shown = sorted({(w.category.__name__, _masked(w.message)) for w in caught})
    return value, tuple(shown), _masked(capsys.readouterr().out)


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, (n, 2))
    return X, X @ [1.0, -0.5] + rng.normal(0, 1, n)


def _neighbour(X: np.ndarray, y: np.ndarray, where: str, value: float) -> tuple[np.ndarray, np.ndarray]:
    X2, y2 = X.copy(), y.copy()
    if where == "y":
        y2[5] = value
    else:
        X2[5, int(where)] = value
    return X2, y2


def _history(acc: PrivacyAccountant) -> list[tuple[str, str]]:
    return [(h.status, _masked(h.label)) for h in acc.history]


# -- compare ------------------------------------------------------------------------------------------------------

def _compare(methods: list[str], bounds: dict[str, tuple[float, float]] | None) -> Callable[..., Any]:
    def run(X: np.ndarray, y: np.ndarray) -> tuple[Any, ...]:
        frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})
        study = dpstats.compare("y ~ x1 + x2", frame, methods=methods, epsilons=[1.0], trials=1, data_are_public=True,
                                bounds=bounds, random_state=SEED, progress=False, verbose=True)
        out = study.frame
        assert study.total_epsilon <= 1.0 * len(methods) + 1e-12  # never above the budgets of the fits
        return (list(out["status"]), [_masked(m) for m in out["message"]], list(out["epsilon_spent"]),
                list(out["delta_spent"]), study.total_epsilon)
    return run


COMPARE_CASES = {
    "bounded": (["ssp", "adassp", "noisy_ols", "pgd"], {"x1": (0, 10), "x2": (0, 10), "y": (-10, 20)}, 300),
    "bound-free": (["tukey", "robgd"], None, 4000),
}


def _compare_pairs(case: str, patterns: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    methods, bounds, n = COMPARE_CASES[case]
    X, y = _data(n)
    run = _compare(methods, bounds)
    base = _outcome(lambda: run(X, y), capsys)
    assert base[0][0] == "ok" and "ok" in base[0][1][0], base  # noisy_ols refuses at n=300 (charged, the same on D')
    for name in patterns:
        if name == "nan":  # missing="raise": compare's design refuses it before any fit, as dp_ols does (domain)
            continue
        for where in ("0", "y"):
            X2, y2 = _neighbour(X, y, where, PATTERNS[name])
            assert _outcome(lambda X2=X2, y2=y2: run(X2, y2), capsys) == base, (case, name, where)


@pytest.mark.parametrize("case", list(COMPARE_CASES))
def test_compare_neighbours_same_outcome(case, capsys):
    """Before: a row at 1e300 (or -1e300) made numpy warn 'overflow encountered in square' / 'in matmul' while
    compare scored the fits with the in-sample R^2, on D' only."""
    _compare_pairs(case, ["1e300", "-1e300", "5e-324", "-0.0", "corner", "inf"], capsys)


def test_compare_overflowing_r2_is_nan_without_warning():
    """The in-sample R^2 of a fit whose sums of squares overflow is NaN, with no numpy warning."""
    X, y = _data(300)
    y[5] = 1e300
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        study = dpstats.compare("y ~ x1 + x2", frame, methods=["ssp"], epsilons=[1.0], trials=2, data_are_public=True,
                                bounds={"x1": (0, 10), "x2": (0, 10), "y": (-10, 20)}, random_state=SEED,
                                progress=False, verbose=False)
    assert list(study.frame["status"]) == ["ok", "ok"]
    assert study.frame["r2"].isna().all()


def test_compare_refused_method_spends_what_it_says(capsys):
    """A method that refuses (tukey at n=300: its test cannot pass) is a row with its error class, a public message
    and its own spend; the total is the sum of the rows' spends, never above the fits' budgets."""
    X, y = _data(300)
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})
    study = dpstats.compare("y ~ x1 + x2", frame, methods=["ssp", "tukey"], epsilons=[0.5, 1.0], trials=2,
                            data_are_public=True, bounds={"x1": (0, 10), "x2": (0, 10), "y": (-10, 20)},
                            random_state=SEED, progress=False, verbose=False)
    out = study.frame
    assert set(out.loc[out["method"] == "ssp", "status"]) == {"ok"}
    refused = out[out["method"] == "tukey"]
    assert set(refused["status"]) == {"InsufficientDataError"} and (refused["message"] != "").all()
    assert study.total_epsilon == pytest.approx(out["epsilon_spent"].sum())
    assert study.total_epsilon <= 2 * (0.5 + 1.0) * 2 + 1e-12
    assert (out["epsilon_spent"] <= out["epsilon"] + 1e-12).all()


# -- the scikit-learn wrapper -------------------------------------------------------------------------------------

def _sklearn(method: str, frame: bool, **params: Any) -> Callable[..., Any]:
    from dpstats.sklearn import DPLinearRegression

    def run(X: np.ndarray, y: np.ndarray) -> tuple[Any, ...]:
        acc = PrivacyAccountant(5.0, 1e-5)
        inputs: Any = pd.DataFrame(X, columns=["a", "b"]) if frame else X
        target: Any = pd.Series(y) if frame else y
        est = DPLinearRegression(method=method, epsilon=1.0, random_state=SEED, accountant=acc, **params)
        est.fit(inputs, target)
        new = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], columns=["a", "b"]) if frame else np.array([[1.0, 2.0],
                                                                                                 [3.0, 4.0]])
        assert np.isfinite(est.predict(new)).all()
        return est.privacy_report_.epsilon_spent, est.method_, _history(acc), acc.remaining
    return run


SKLEARN_CASES = {
    "adassp-array": ("adassp", False, {"bounds": (0, 10), "y_bounds": (-10, 20)}, 300),
    "auto-frame": ("auto", True, {"bounds": (0, 10), "y_bounds": (-10, 20)}, 300),
    "robgd-array": ("robgd", False, {}, 4000),
}


def _assert_neighbours_same_outcome(run, X, y, capsys, case: str) -> None:
    """The base data fit, and every fast pattern put in column 0 or in y gives the base's outcome."""
    base = _outcome(lambda: run(X, y), capsys)
    assert base[0][0] == "ok", base
    for name in FAST:
        for where in ("0", "y"):
            X2, y2 = _neighbour(X, y, where, PATTERNS[name])
            assert _outcome(lambda X2=X2, y2=y2: run(X2, y2), capsys) == base, (case, name, where)


@pytest.mark.parametrize("case", list(SKLEARN_CASES))
def test_sklearn_neighbours_same_outcome(case, capsys):
    method, frame, params, n = SKLEARN_CASES[case]
    X, y = _data(n)
    run = _sklearn(method, frame, **params)
    _assert_neighbours_same_outcome(run, X, y, capsys, case)


def test_sklearn_cross_validation_composes_on_the_accountant():
    """Five folds at epsilon=1 through an accountant of 3: three fits are released and charged, the other two are
    refused before their data are read (BudgetExceededError, recorded by scikit-learn as failed folds with a NaN
    score); the accountant's total never exceeds its budget."""
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import cross_val_score

    from dpstats.sklearn import DPLinearRegression

    X, y = _data(500)
    acc = PrivacyAccountant(3.0, 1e-5)
    est = DPLinearRegression(method="adassp", epsilon=1.0, bounds=(0, 10), y_bounds=(-10, 20), accountant=acc)
    with pytest.warns(FitFailedWarning, match="2 fits failed out of a total of 5"):
        scores = cross_val_score(est, X, y, cv=5)
    assert np.isfinite(scores[:3]).all() and np.isnan(scores[3:]).all()
    assert [h.status for h in acc.history] == ["released"] * 3
    assert acc.spent[0] <= 3.0 and acc.remaining[0] >= 0.0


# -- the accountant -----------------------------------------------------------------------------------------------

def _fit_into(acc: PrivacyAccountant, X: np.ndarray, y: np.ndarray, out: list[str]) -> None:
    try:
        dpstats.dp_ols_arrays(X, y, 1.0, method="adassp", intercept=True, x_bounds=(0, 10), y_bounds=(-10, 20),
                              accountant=acc)
        out.append("released")
    except BudgetExceededError:
        out.append("refused")


def test_concurrent_fits_never_overspend_an_in_memory_accountant():
    """Eight threads fit at epsilon=1 through one accountant of 5: exactly five are released, three refused."""
    X, y = _data(300)
    acc = PrivacyAccountant(5.0, 1e-4)
    out: list[str] = []
    threads = [threading.Thread(target=_fit_into, args=(acc, X, y, out)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == ["refused"] * 3 + ["released"] * 5
    assert acc.spent[0] <= 5.0 and [h.status for h in acc.history] == ["released"] * 5


def _process_fits(path: str, queue: Any) -> None:
    X, y = _data(300)
    acc = PrivacyAccountant.open(path)
    out: list[str] = []
    for _ in range(3):
        _fit_into(acc, X, y, out)
    queue.put(out)


@pytest.mark.slow
def test_concurrent_processes_never_overspend_a_budget_file(tmp_path):
    """Two processes, three fits each at epsilon=1, on one budget file of 3: three released in all."""
    path = str(tmp_path / "budget.json")
    PrivacyAccountant(3.0, 1e-4, path=path)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_process_fits, args=(path, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join()
    assert sorted(r for out in results for r in out) == ["refused"] * 3 + ["released"] * 3
    acc = PrivacyAccountant.open(path)
    assert acc.spent[0] <= 3.0 and [h.status for h in acc.history] == ["released"] * 3


def test_sklearn_fit_failing_after_spending_is_charged_to_a_budget_file(tmp_path, monkeypatch):
    """A method that releases and then fails (an untyped error quoting a value) inside the scikit-learn wrapper: the
    estimator raises InternalFitError naming the type only, with the ledger's spend, and the budget file records
    the fit as "failed after spending" with that spend, also when it is opened again."""
    import dataclasses

    from dpstats.errors import InternalFitError
    from dpstats.methods import registry
    from dpstats.sklearn import DPLinearRegression

    real = registry.get_method("adassp")

    def fit(*args: Any, **kw: Any) -> Any:
        released = real.fit(*args, **kw)
        raise ValueError(f"value 3.14159 and {released.params}")

    monkeypatch.setitem(registry._REGISTRY, "adassp", dataclasses.replace(real, fit=fit))
    path = str(tmp_path / "budget.json")
    acc = PrivacyAccountant(3.0, 1e-5, path=path)
    X, y = _data(300)
    est = DPLinearRegression(method="adassp", epsilon=1.0, bounds=(0, 10), y_bounds=(-10, 20), accountant=acc)
    with pytest.raises(InternalFitError, match="fitting failed with ValueError; its message is withheld") as info:
        est.fit(X, y)
    err = info.value
    assert "3.14159" not in str(err) and err.__cause__ is None and err.__context__ is None
    assert 0.0 < err.privacy_spent[0] <= 1.0
    again = PrivacyAccountant.open(path)
    spent = pytest.approx(err.privacy_spent[0])
    assert [(h.status, h.epsilon) for h in again.history] == [("failed after spending", spent)]
    assert again.spent[0] == pytest.approx(err.privacy_spent[0])


# -- dp_ols_arrays and the results' methods -------------------------------------------------------------------------

def _arrays(method: str, **kw: Any) -> Callable[..., Any]:
    def run(X: np.ndarray, y: np.ndarray) -> tuple[Any, ...]:
        acc = PrivacyAccountant(5.0, 1e-5)
        res = dpstats.dp_ols_arrays(X, y, 1.0, method=method, intercept=True, random_state=SEED, accountant=acc, **kw)
        new = np.array([[1.0, 2.0], [3.0, 4.0]])
        assert np.isfinite(res.predict(new).to_numpy()).all()
        res.get_prediction(new[:1])
        again = pickle.loads(pickle.dumps(res))
        assert again.params.equals(res.params)
        return (res.privacy.epsilon_spent, _masked(res.summary()), _masked(res.summary().as_latex()),
                _masked(res.inference_reason), _history(acc))
    return run


ARRAY_CASES = {
    "adassp": ("adassp", {"x_bounds": (0, 10), "y_bounds": (-10, 20)}, 300),
    "auto": ("auto", {"x_bounds": (0, 10), "y_bounds": (-10, 20)}, 300),
    "tukey": ("tukey", {}, 4000),
}


@pytest.mark.parametrize("case", list(ARRAY_CASES))
def test_arrays_and_results_neighbours_same_outcome(case, capsys):
    method, kw, n = ARRAY_CASES[case]
    X, y = _data(n)
    run = _arrays(method, **kw)
    _assert_neighbours_same_outcome(run, X, y, capsys, case)


def test_results_keep_no_data():
    """The results object keeps no array of the data: its pickle grows with n only by the released inference draws
    (a fixed number of them; at n=300 the inference is withheld), never by n rows, and predict() without newdata is
    refused."""
    sizes = {}
    for n in (300, 30000):
        X, y = _data(n)
        res = dpstats.dp_ols_arrays(X, y, 1.0, method="adassp", intercept=True, x_bounds=(0, 10),
                                    y_bounds=(-10, 20), random_state=SEED)
        sizes[n] = len(pickle.dumps(res))
    assert sizes[30000] < 100_000, sizes  # 30000 rows of 3 floats would be 720 kB
    with pytest.raises(dpstats.errors.InvalidArgumentError, match="predict needs newdata"):
        res.predict()


# -- the heavy sweep ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("surface", ["compare-bounded", "compare-bound-free", "sklearn", "arrays"])
def test_every_pattern_every_surface(surface, capsys):
    """Every pattern (also -inf and the largest float) in every column, on every case of each surface."""
    if surface.startswith("compare"):
        _compare_pairs(surface.split("-", 1)[1], list(PATTERNS), capsys)
        return
    cases = ({k: (_sklearn(m, f, **p), n) for k, (m, f, p, n) in SKLEARN_CASES.items()} if surface == "sklearn" else
             {k: (_arrays(m, **kw), n) for k, (m, kw, n) in ARRAY_CASES.items()})
    for case, (run, n) in cases.items():
        X, y = _data(n)
        base = _outcome(lambda run=run, X=X, y=y: run(X, y), capsys)
        for name, value in PATTERNS.items():
            for where in ("0", "1", "y"):
                X2, y2 = _neighbour(X, y, where, value)
                assert _outcome(lambda run=run, X2=X2, y2=y2: run(X2, y2), capsys) == base, (case, name, where)
