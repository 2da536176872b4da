"""A budget that refuses seeded fits (``PrivacyAccountant(refuse_seeded=True)``).

With ``random_state`` fixed by the analyst, the noise is reproducible: two ``ssp`` fits with one seed, charged
0.5 + 0.5 to an accountant of epsilon 1, differ by exactly the difference of their statistics (the hostile audit
recovered one row's x * y to the last bit), so the cap bounds nothing.  A custodian's accountant refuses such fits
before the data are touched; the default still allows them (reproducible research and tests).
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import InvalidArgumentError, InvalidPrivacyParameterError
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.sklearn import DPLinearRegression

BOUNDS = {"x": (-1.0, 1.0), "y": (-2.0, 2.0)}


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 500)
    return pd.DataFrame({"x": x, "y": np.clip(0.5 * x + 0.3 * rng.normal(size=500), -2, 2)})


def _fit(acct: PrivacyAccountant, **kw: object) -> dpstats.DPRegressionResults:
    return dpstats.dp_ols("y ~ x", _data(), 0.5, 1e-7, method="ssp", bounds=BOUNDS, accountant=acct, **kw)


@pytest.mark.parametrize("seed", [0, np.random.default_rng(1), np.random.SeedSequence(2)])
def test_a_refusing_budget_refuses_every_seeded_fit_and_spends_nothing(seed: object) -> None:
    acct = PrivacyAccountant(1.0, 1e-6, refuse_seeded=True)
    with pytest.raises(InvalidArgumentError, match="random_state") as err:
        _fit(acct, random_state=seed)
    assert err.value.privacy_spent == (0.0, 0.0)
    assert acct.spent == (0.0, 0.0) and acct.history == []
    res = _fit(acct)  # the operating system's generator
    assert np.isfinite(res.params).all() and acct.spent[0] == pytest.approx(0.5)


def test_the_default_budget_allows_seeded_fits() -> None:
    acct = PrivacyAccountant(1.0, 1e-6)
    assert not acct.refuses_seeded
    a, b = _fit(acct, random_state=3), _fit(acct, random_state=3)
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())  # why a custodian refuses them
    assert acct.spent[0] == pytest.approx(1.0)


def test_a_budget_file_keeps_the_refusal_for_every_accountant_that_opens_it(tmp_path) -> None:
    path = tmp_path / "budget.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=path, refuse_seeded=True)
    for acct in (PrivacyAccountant.open(path), PrivacyAccountant(1.0, 1e-6, path=path),
                 pickle.loads(pickle.dumps(PrivacyAccountant.open(path)))):
        assert acct.refuses_seeded
        with pytest.raises(InvalidArgumentError, match="this budget refuses fits with a fixed random_state"):
            _fit(acct, random_state=0)
    assert PrivacyAccountant.open(path).spent == (0.0, 0.0)
    allowing = tmp_path / "allowing.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=allowing)
    assert not PrivacyAccountant.open(allowing).refuses_seeded


def test_budget_show_says_whether_seeded_fits_are_refused(tmp_path, capsys) -> None:
    from dpstats.cli import main  # noqa: PLC0415

    for refuse, word in ((True, "refused"), (False, "allowed")):
        path = tmp_path / f"{word}.sqlite"
        PrivacyAccountant(1.0, 1e-6, path=path, refuse_seeded=refuse)
        assert main(["budget", "show", str(path)]) == 0
        assert f"seeded fits: {word}" in capsys.readouterr().out
        assert main(["budget", "show", str(path), "--format", "json"]) == 0
        assert '"seeded_fits": "%s"' % ("refuse" if refuse else "allow") in capsys.readouterr().out


def test_the_scikit_learn_wrapper_goes_through_the_same_check() -> None:
    from dpstats.sklearn import DPLinearRegression  # noqa: PLC0415

    acct = PrivacyAccountant(1.0, 1e-6, refuse_seeded=True)
    data = _data()
    est = DPLinearRegression(epsilon=0.5, delta=1e-7, method="ssp", bounds={"x0": (-1, 1)}, y_bounds=(-2, 2),
                             accountant=acct, random_state=0)
    with pytest.raises(InvalidArgumentError, match="this budget refuses fits with a fixed random_state"):
        est.fit(data[["x"]].to_numpy(), data["y"].to_numpy())
    assert acct.spent == (0.0, 0.0)


def _neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two data sets that differ in one row."""
    df = _data()
    other = df.copy()
    other.loc[0, ["x", "y"]] = [0.9, -1.5]
    return df, other


def _ols_through(acct: PrivacyAccountant, df: pd.DataFrame, entry: str) -> None:
    """The non-private reference through ``acct`` by one of the three entry points."""
    inf = float("inf")
    if entry == "dp_ols":
        dpstats.dp_ols("y ~ x", df, epsilon=inf, method="ols", accountant=acct)
    elif entry == "dp_ols_arrays":
        dpstats.dp_ols_arrays(df[["x"]].to_numpy(), df["y"].to_numpy(), intercept=False, epsilon=inf, method="ols",
                              accountant=acct)
    else:
        DPLinearRegression(method="ols", epsilon=inf, accountant=acct).fit(df[["x"]], df["y"])


@pytest.mark.parametrize("entry", ["dp_ols", "dp_ols_arrays", "DPLinearRegression"])
@pytest.mark.parametrize("persistent", [False, True], ids=["memory", "sqlite"])
def test_an_accountant_refuses_the_non_private_reference_on_both_neighbours(entry, persistent, tmp_path) -> None:
    """``method="ols"`` with ``epsilon=inf`` through an accountant is refused before the data are touched, with one
    message for both neighbours, and recorded as nothing (before: exact least squares were released while the
    accountant recorded no fit, so an analyst handed a custodian's accountant could step around it)."""
    acct = (PrivacyAccountant(1.0, 1e-6, path=tmp_path / "budget.sqlite", refuse_seeded=True) if persistent
            else PrivacyAccountant(1.0, 1e-6, refuse_seeded=True))
    messages = set()
    for df in _neighbours():
        with pytest.raises(InvalidPrivacyParameterError, match="cannot pay for a fit that is not private") as err:
            _ols_through(acct, df, entry)
        assert err.value.privacy_spent == (0.0, 0.0)
        assert "drop accountant=" in str(err.value).lower()
        messages.add(str(err.value))
    assert len(messages) == 1
    assert acct.spent == (0.0, 0.0) and acct.history == []
    ref = dpstats.dp_ols("y ~ x", _data(), epsilon=float("inf"), method="ols")  # without accountant= it runs
    assert ref.params["x"] == pytest.approx(np.polyfit(_data()["x"], _data()["y"], 1)[0])


def test_an_accountant_refuses_an_infinite_epsilon_for_any_method() -> None:
    acct = PrivacyAccountant(1.0, 1e-6)
    for method in ("auto", "ssp"):
        with pytest.raises(InvalidPrivacyParameterError, match="epsilon=inf means no privacy, and a privacy budget"):
            dpstats.dp_ols("y ~ x", _data(), epsilon=float("inf"), method=method, bounds=BOUNDS, accountant=acct)
    assert acct.spent == (0.0, 0.0) and acct.history == []
