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
from dpstats.errors import InvalidArgumentError
from dpstats.privacy.accountant import PrivacyAccountant

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
        with pytest.raises(InvalidArgumentError):
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
    with pytest.raises(InvalidArgumentError):
        est.fit(data[["x"]].to_numpy(), data["y"].to_numpy())
    assert acct.spent == (0.0, 0.0)
