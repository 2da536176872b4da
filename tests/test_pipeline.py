"""The one fit pipeline (dpstats.pipeline): options declared once, the guard after the data are touched, and one
read of a CSV file for a one-pass method.  Deterministic: fixed seeds and data, no statistical tolerance."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from chunk_helpers import UnreadableSource

import dpstats
from dpstats.errors import ConvergenceError, InternalFitError, MethodOptionError
from dpstats.methods import registry, ssp
from dpstats.methods.registry import FitContext, MethodFit, MethodOptions, MethodSpec
from dpstats.privacy.mechanisms import gaussian_mechanism_mu
from dpstats.rows import InMemoryRows, Rows

BOUNDS = {"x": (0.0, 1.0), "y": (-2.0, 4.0)}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 3000)})
    df["y"] = 1 + 2 * df.x + rng.normal(0, 0.3, 3000)
    return df


@dataclass(frozen=True)
class _Options(MethodOptions):
    spend: bool = True
    typed: bool = False


def _broken_fit(rows: Rows, ctx: FitContext, options: _Options) -> MethodFit:
    """Releases one noisy mean, then fails with an untyped error whose message holds a data value."""
    total = rows.reduce(lambda X, y, offset: float(y.sum()), lambda a, b: a + b)
    if options.spend:
        gaussian_mechanism_mu(total / ctx.n, l2_sensitivity=1.0, mu=0.1, rng=ctx.rng, ledger=ctx.ledger, name="m")
    if options.typed:
        raise ConvergenceError("diverged")
    raise ValueError(f"secret value {total!r}")


def _register(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = MethodSpec(name="broken", title="broken", citation="-", fit=_broken_fit, options=_Options,
                      needs_bounds=False)
    monkeypatch.setitem(registry._REGISTRY, spec.name, spec)


@pytest.mark.parametrize("spend", [True, False])
def test_an_untyped_failure_after_reading_is_typed_charged_and_says_nothing_of_the_data(frame, monkeypatch, spend):
    _register(monkeypatch)
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(InternalFitError, match="fitting failed with ValueError; its message is withheld") as err:
        dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="broken", accountant=acct, random_state=0, spend=spend)
    exc = err.value
    assert "secret" not in str(exc) and exc.original_type == "ValueError"  # the type only, never the message
    assert exc.__cause__ is None and exc.__context__ is None  # the original error is not attached
    # a failure no rule decided may depend on the rows read: the whole budget is charged, whether or not the
    # method had charged part of it (session 50; before, a failure ahead of the first charge settled at zero)
    assert exc.privacy_spent == (1.0, 1e-6) and "the whole budget is charged" in str(exc)
    assert acct.spent == pytest.approx((1.0, 1e-6))
    assert [s.status for s in acct.history] == ["failed after spending"]


def test_a_typed_failure_after_spending_carries_the_ledgers_charge_not_the_class_default(frame, monkeypatch):
    _register(monkeypatch)
    with pytest.raises(ConvergenceError, match="diverged") as err:
        dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="broken", random_state=0, typed=True)
    assert err.value.privacy_spent[0] > 0.0 and ConvergenceError.privacy_spent == (0.0, 0.0)


def test_options_are_declared_once_and_unknown_ones_refused_before_reading(frame):
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(MethodOptionError, match="it accepts inference, bootstrap, rho"):
        dpstats.dp_ols("y ~ x", UnreadableSource(frame), 1.0, 1e-6, method="adassp", bounds=BOUNDS, rhoo=0.1,
                       accountant=acct)
    with pytest.raises(MethodOptionError, match="bootstrap must be an integer"):
        dpstats.dp_ols("y ~ x", UnreadableSource(frame), 1.0, 1e-6, method="ssp", bounds=BOUNDS, bootstrap=10,
                       accountant=acct)
    with pytest.raises(MethodOptionError, match="eigen_failure must lie in"):
        dpstats.dp_ols("y ~ x", UnreadableSource(frame), 1.0, 1e-6, method="noisy_ols", bounds=BOUNDS,
                       eigen_failure=1e-3, accountant=acct)
    with pytest.raises(MethodOptionError, match="does not accept intercept_index"):
        dpstats.dp_ols("y ~ x", UnreadableSource(frame), 1.0, 1e-6, method="robgd", intercept_index=0,
                       accountant=acct)
    assert acct.spent == (0.0, 0.0)
    assert ssp.SSPOptions.names() == ("inference", "bootstrap")


def test_a_csv_file_is_read_once_by_a_one_pass_method(frame, tmp_path):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    for method in ("ssp", "ols"):
        eps = float("inf") if method == "ols" else 1.0
        res = dpstats.dp_ols("y ~ x", str(path), eps, 1e-6, method=method, bounds=BOUNDS, random_state=1)
        mem = dpstats.dp_ols("y ~ x", frame, eps, 1e-6, method=method, bounds=BOUNDS, random_state=1)
        assert any("(1 pass over the data" in note for note in res.privacy.notes), method
        np.testing.assert_allclose(res.params.to_numpy(), mem.params.to_numpy(), rtol=1e-9)


def test_in_memory_rows_are_one_read_only_chunk():
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    seen = []

    def record(Xc, yc, offset):
        seen.append((Xc.shape[0], offset, Xc.flags.writeable))
        return Xc.shape[0]

    assert InMemoryRows(X, y).reduce(record, lambda a, b: a + b) == 6
    assert seen == [(6, 0, False)]
    seen.clear()
    assert InMemoryRows(X, y, 4).reduce(record, lambda a, b: a + b) == 6
    assert seen == [(4, 0, True), (2, 4, True)]


def test_the_method_choice_names_the_method_missing_drop_left_out():
    """With missing="drop" the fit's reason for pgd named only pgd's regime, so one predictor below n * mu = 100,
    where the README and docs/choosing.md say auto fits theilsen, got pgd without a word on why (session 46's
    new-user check, UN infant mortality on GDP).  The same facts without missing="drop" name nothing left out."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 10, 200)})
    df["y"] = df["x"] + rng.normal(size=200)
    bounds = {"x": (0, 10), "y": (-50, 50)}
    dropped = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, missing="drop", random_state=0)
    kept = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, random_state=0)
    assert (dropped.method, kept.method) == ("pgd", "theilsen")
    assert "missing='drop' left out 'theilsen'" in dropped.privacy.method_choice
    assert "left out" not in kept.privacy.method_choice


def test_a_numpy_warning_made_an_error_by_the_users_filter_is_charged_the_whole_budget(frame, monkeypatch):
    """A warnings filter ("error") can turn a RuntimeWarning inside the method into an exception: it is no dpstats
    type, so it is an InternalFitError charged the whole budget, as its message says (a dpstats warning made an error
    keeps its type and the ledger's spend).  numpy's floating-point warnings no longer arise inside a fit (it runs
    under np.errstate(all="ignore"), test_caller_error_state.py), so the warning here is another library's."""

    def numpy_warns(rows: Rows, ctx: FitContext, options: _Options) -> MethodFit:
        np.square(np.array([1e300]))  # silenced inside a fit: no warning, no exception
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.warn("a library's runtime warning", RuntimeWarning, stacklevel=1)
        raise AssertionError("the warning did not become an error")

    spec = MethodSpec(name="broken", title="broken", citation="-", fit=numpy_warns, options=_Options,
                      needs_bounds=False)
    monkeypatch.setitem(registry._REGISTRY, spec.name, spec)
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(InternalFitError, match="failed with RuntimeWarning.*the whole budget is charged") as err:
        dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="broken", accountant=acct, random_state=0)
    assert err.value.privacy_spent == (1.0, 1e-6) and acct.spent == pytest.approx((1.0, 1e-6))
    assert [s.status for s in acct.history] == ["failed after spending"]
