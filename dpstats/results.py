"""DPRegressionResults: what a private fit returns (statsmodels-style).

Mirrors :class:`statsmodels.regression.linear_model.RegressionResults` where
that makes sense (``params``, ``bse``, ``conf_int``, ``predict``, ``nobs``,
``df_model``, ``summary``), plus ``privacy`` and ``error_bounds``.  A
quantity the method cannot provide privately is unavailable with the reason,
never computed non-privately from the data: the results object does not even
hold the data.

One inference API for every method: ``bse``, ``tvalues``, ``pvalues``,
``conf_int()`` and ``cov_params()`` never raise and never warn.  A fit
without reported inference (the method gives none, ``inference=False``, or
its inference was withheld) returns NaN of the usual shape, and
:attr:`DPRegressionResults.inference_reason` says why, so generic code needs
neither ``try``/``except`` nor warning filters.  For every kind of inference
(bootstrap, normal, t, classical) the p-values invert the intervals: p <
alpha exactly when the (1 - alpha) interval excludes 0.
"""

from __future__ import annotations

import html
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from dpstats import errors
from dpstats.formula.frame import check_unique_columns
from dpstats.formula.predict import design_matrix_for_prediction, finite_predictions, variables_of
from dpstats.formula.recipe import DesignRecipe
from dpstats.inference import basic_bootstrap_interval, basic_bootstrap_pvalue, bootstrap_zvalues, private_rsquared
from dpstats.mean_prediction import MeanPrediction, mean_standard_errors
from dpstats.methods.spec import Inference, ReleasedSums
from dpstats.privacy.report import PrivacyReport
from dpstats.summary_text import (
    SUMMARY_WIDTH,
    FootnotedTable,
    fit_rows,
    shorten_stubs,
    split_explanation,
    stub_room,
    wrap_note,
)
from dpstats.table_grid import (
    DEFAULT_DIGITS,
    WITHHELD_CELL,
    check_digits,
    check_thousands,
    coefficient_cells,
    coefficient_grid,
    html_number,
    privacy_latex,
)
from dpstats.theory import ErrorBounds
from dpstats.validation import check_alpha, shown

__all__ = ["DPRegressionResults", "DPModel", "MeanPrediction"]

#: names that moved to dpstats.errors and are no longer raised or emitted (deprecated here)
_DEPRECATED = {"InferenceUnavailableError": "no longer raised", "InferenceWithheldWarning": "no longer emitted"}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        warnings.warn(f"dpstats.results.{name} is deprecated and {_DEPRECATED[name]}: a fit without inference "
                      "returns NaN and DPRegressionResults.inference_reason says why (the class is "
                      f"dpstats.errors.{name})", DeprecationWarning, stacklevel=2)
        return getattr(errors, name)
    raise AttributeError(f"module 'dpstats.results' has no attribute {name!r}")


_IN_SAMPLE = ("in-sample values are functions of each private row, so a private fit does not release them; "
              "predict(new_data) predicts public or new rows")
_TESTS = ("tests from the fit's covariance need standard errors from released values only: use pvalues, "
          "conf_int() and tidy() (basic bootstrap where the method gives one), or res.inference_reason when none")
#: statsmodels results attributes a private fit does not have, with what to use instead (``__getattr__``)
_NOT_RELEASED = {
    "fittedvalues": _IN_SAMPLE, "resid": _IN_SAMPLE, "resid_pearson": _IN_SAMPLE, "get_influence": _IN_SAMPLE,
    "t_test": _TESTS, "f_test": _TESTS, "wald_test": _TESTS,
    "summary2": "use summary() (text, as_html(), as_latex()) or tidy() / glance() for frames",
    "llf": "the likelihood is a function of every private row and is not released",
    "aic": "information criteria need the likelihood, which is not released; compare fits with glance()",
    "bic": "information criteria need the likelihood, which is not released; compare fits with glance()",
}
_THEORY = ("the theory (each coefficient's privacy and sampling error, the minimax rates at this n, d, epsilon and "
           "delta) is res.error_bounds")
#: names that other parts of dpstats (the estimator's privacy_report_) or a reader's guess give to what a result
#: holds under another name (``__getattr__``)
_ELSEWHERE = {"theory": _THEORY, "rates": _THEORY, "minimax": _THEORY,
              "privacy_report": "the privacy report is res.privacy (DPLinearRegression.privacy_report_)",
              "privacy_report_": "the privacy report is res.privacy (DPLinearRegression.privacy_report_)"}


@dataclass
class DPRegressionResults:
    """Results of :func:`dpstats.dp_ols`.

    Attributes
    ----------
    params : pandas.Series
        Released coefficients, indexed by the design column names.
    privacy : PrivacyReport
        Budget requested and spent, step by step, and the guarantee.
    error_bounds : ErrorBounds
        Each coefficient's privacy and sampling error in its units (from released values where the method
        released them), and the rates at this n, d, epsilon, delta as a reference (:mod:`dpstats.theory`).
    nobs, df_model, df_resid : int
        Public facts of the design: rows, and the model's and the residuals' degrees of freedom.
    method, formula, response_name : str
        What was fitted.
    design_info : patsy.DesignInfo
        The design's description (public: column names, declared levels), which :meth:`predict` uses.
    info : dict
        Released or public by-products of the fit (e.g. AdaSSP's ridge), for display: the method's
        ``MethodFit.diagnostics`` (and its released sums for R^2, when it gives them).
    inference_reason : str
        "" when the standard errors, z, p and intervals are reported; otherwise why they are not (the method
        gives none, ``inference=False``, or the diagnostic of :func:`dpstats.inference.withholding_reason`
        failed).  They are then NaN, without an exception or a warning; the tables show "\u2014".

    Examples
    --------
    >>> import numpy as np, pandas as pd, dpstats
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
    >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
    >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
    ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
    >>> res.method, res.nobs, res.privacy.epsilon_spent <= 1.0
    ('ssp', 2000, True)
    >>> list(res.params.index)
    ['Intercept', 'x']
    """

    params: pd.Series
    privacy: PrivacyReport
    error_bounds: ErrorBounds
    nobs: int
    df_model: int
    df_resid: int
    method: str
    formula: str
    response_name: str
    design_info: Any
    info: dict[str, Any]
    _inference: Inference | None = None  # in the user's units (mapped back through the public rescaling)
    _bse_reason: str = ""
    _withheld: str = ""
    _rsquared_value: float | None = None  # the non-private reference's classical R^2
    _released_sums: ReleasedSums | None = None
    _rsquared_reason: str = ""
    _declared_bounds: tuple[tuple[str, float, float], ...] = ()  # (name, lo, hi): what predict() checks new data by
    _bse: np.ndarray | None = field(init=False, default=None, repr=False)
    _cov: np.ndarray | None = field(init=False, default=None, repr=False)
    _tdist_df: int | None = field(init=False, default=None, repr=False)
    _draws: np.ndarray | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        inference = self._inference
        if inference is None:
            return
        self._draws = inference.draws
        self._cov = inference.covariance
        self._bse = np.sqrt(np.diag(self._cov))
        self._tdist_df = inference.df if inference.kind in ("t", "classical") else None

    # -- inference -----------------------------------------------------------------
    @property
    def inference_available(self) -> bool:
        """True when standard errors, z, p and intervals are reported (provided and not withheld)."""
        return self._bse is not None and not self._withheld

    @property
    def inference_reason(self) -> str:
        """Why this fit reports no standard errors, z, p or intervals ("" when it does); public facts and
        released values only."""
        if self._withheld:
            return self._withheld
        return "" if self._bse is not None else self._bse_reason

    @property
    def inference_kind(self) -> str:
        """How the reported inference was made: ``"bootstrap"``, ``"normal"``, ``"t"``, ``"classical"`` (the
        non-private reference), or ``"none"`` when none is reported (:attr:`inference_reason` says why)."""
        return self._inference.kind if self.inference_available and self._inference is not None else "none"

    @property
    def inference_withheld(self) -> str:
        """Deprecated: :attr:`inference_reason` (which also covers methods that give no inference).  Why this
        fit's inference was withheld ("" when it is reported or the method gives none)."""
        warnings.warn("DPRegressionResults.inference_withheld is deprecated: use inference_reason",
                      DeprecationWarning, stacklevel=2)
        return self._withheld

    def _nan(self) -> np.ndarray:
        return np.full(len(self.params), np.nan)

    @property
    def bse(self) -> pd.Series:
        """Standard errors; NaN when the fit reports no inference (:attr:`inference_reason` says why)."""
        values = self._bse if self.inference_available else self._nan()
        return pd.Series(values, index=self.params.index, name="bse")

    @property
    def tvalues(self) -> pd.Series:
        """z (or t) statistics; NaN without inference.  Bootstrap fits: (2 b - median of the replicates) / se,
        the bias-corrected estimate over the standard error (see :mod:`dpstats.inference`); others: b / se."""
        if not self.inference_available:
            return pd.Series(self._nan(), index=self.params.index)
        p = self.params.to_numpy()
        if self._draws is None:
            z = p / self._bse
        else:  # over the reported standard error where it is not the replicates' sd (their central 95%'s)
            robust = self._inference is not None and self._inference.robust_spread
            z = bootstrap_zvalues(p, self._draws, self._bse if robust else None)
        return pd.Series(z, index=self.params.index)

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of coefficient = 0, from the same procedure as :meth:`conf_int`, so that
        p < alpha exactly when 0 lies outside the (1 - alpha) interval; NaN without inference.  Bootstrap fits:
        the basic bootstrap test (resolution 2 / replicates); others: normal (or t) on the z (t) statistic."""
        if not self.inference_available:
            return pd.Series(self._nan(), index=self.params.index)
        if self._draws is not None:
            p = basic_bootstrap_pvalue(self.params.to_numpy(), self._draws)
        else:
            t = self.params.to_numpy() / self._bse
            p = 2 * (stats.t.sf(np.abs(t), self._tdist_df) if self._tdist_df else stats.norm.sf(np.abs(t)))
        return pd.Series(p, index=self.params.index)

    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates (of the bootstrap replicates for bootstrap fits); NaN without inference.

        Returns
        -------
        pandas.DataFrame
            d x d, indexed and labelled by the coefficients' names.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> res.cov_params().shape
        (2, 2)
        """
        d = len(self.params)
        cov = self._cov if self.inference_available and self._cov is not None else np.full((d, d), np.nan)
        return pd.DataFrame(cov, index=self.params.index, columns=self.params.index)

    def conf_int(self, alpha: float = 0.05, cols: Sequence[int | str] | None = None) -> pd.DataFrame:
        """(1 - alpha) confidence intervals, columns 0 and 1 as in statsmodels; NaN without inference.

        Methods with a parametric bootstrap give basic bootstrap intervals
        [2 b - r_(B-k+1), 2 b - r_(k)] (order statistics of the B re-centred
        replicates, k the smallest integer with 2k/B >= alpha; the same test
        as :attr:`pvalues`); methods with a Gaussian release and a covariance
        from released values (``noisy_ols``) give normal intervals
        b -/+ z_(1 - alpha/2) se; the non-private reference gives classical t
        intervals.  A fit that reports no inference gives NaN
        (:attr:`inference_reason` says why).

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level, in (0, 1).
        cols : sequence of int or str, optional
            The coefficients to return, by position (as statsmodels' ``cols``) or by name; all by default.

        Returns
        -------
        pandas.DataFrame
            Columns 0 (lower end) and 1 (upper end), one row per coefficient (of ``cols``).

        Raises
        ------
        dpstats.errors.InvalidArgumentError
            When ``alpha`` is not in (0, 1), or ``cols`` names a coefficient the fit does not have.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> ci = res.conf_int(alpha=0.1)
        >>> bool((ci[0] < res.params).all() and (res.params < ci[1]).all())
        True
        """
        alpha = check_alpha(alpha)
        rows = self._coefficient_positions(cols)
        if not self.inference_available:
            frame = pd.DataFrame({0: self._nan(), 1: self._nan()}, index=self.params.index)
        elif self._draws is not None:
            lo, hi = basic_bootstrap_interval(self.params.to_numpy(), self._draws, alpha)
            frame = pd.DataFrame({0: lo, 1: hi}, index=self.params.index)
        else:
            p = self.params.to_numpy()
            q = stats.t.ppf(1 - alpha / 2, self._tdist_df) if self._tdist_df else stats.norm.ppf(1 - alpha / 2)
            frame = pd.DataFrame({0: p - q * self._bse, 1: p + q * self._bse}, index=self.params.index)
        return frame if rows is None else frame.iloc[rows]

    def _coefficient_positions(self, cols: Sequence[int | str] | None) -> list[int] | None:
        """The positions of ``cols`` (positions or names of coefficients) among the params, None for all; an
        :class:`~dpstats.errors.InvalidArgumentError` naming what is unknown (public: the design's column names)."""
        if cols is None:
            return None
        names = list(self.params.index)
        wanted = [cols] if isinstance(cols, (str, int, np.integer)) else list(cols)
        positions = []
        for c in wanted:
            if isinstance(c, (int, np.integer)) and not isinstance(c, bool) and -len(names) <= int(c) < len(names):
                positions.append(int(c) % len(names))
            elif isinstance(c, str) and c in names:
                positions.append(names.index(c))
            else:
                raise errors.InvalidArgumentError(f"cols must list coefficients by position (0 to {len(names) - 1}) "
                                                  f"or by name (one of {names}); got {shown(c)}")
        return positions

    @property
    def inference_method(self) -> str:
        """How the standard errors and intervals were obtained, in words."""
        if self._withheld:
            return "withheld: " + self._withheld
        inference = self._inference
        if inference is None:
            return "not available: " + self._bse_reason
        if inference.kind == "bootstrap":
            replicates = 0 if inference.draws is None else inference.draws.shape[0]
            return (f"{inference.description or 'parametric bootstrap'} ({replicates} replicates; "
                    "Ferrando, Wang & Sheldon 2022); basic bootstrap intervals; P(boot) is the p-value of the basic "
                    "bootstrap test that the interval inverts (0 outside the 95% interval exactly when P(boot) < "
                    "0.05), read from the replicates' own tails, not from a normal table; z* is the bias-corrected "
                    "estimate (2 coef - median of the replicates) over the standard error, the interval's centre in "
                    "standard errors: where the method's estimated bias (the replicates' median - coef) has coef's "
                    "sign and a larger size, z* and the interval lie on the other side of 0 from coef")
        if inference.kind == "classical":
            return "classical OLS (NOT PRIVATE)"
        return f"{inference.description}; {'t' if inference.kind == 't' else 'normal'} intervals"

    # -- goodness of fit ------------------------------------------------------------------------------------------
    def _rsquared(self) -> tuple[float, float, str]:
        """(R^2, adjusted R^2, reason): NaN and the reason when not available."""
        nan = float("nan")
        has_intercept = "Intercept" in self.params.index
        if not self.privacy.private:
            if self._rsquared_value is None:
                return nan, nan, "the non-private reference computed none here (a rank-deficient design)"
            r2 = float(self._rsquared_value)
            adj = 1.0 - (1.0 - r2) * (self.nobs - int(has_intercept)) / self.df_resid if self.df_resid > 0 else nan
            return r2, adj, ""
        sums = self._released_sums
        if sums is None:
            return nan, nan, self._rsquared_reason or (
                f"method '{self.method}' releases no statistics that determine R^2 (the residual and total sums of "
                "squares would cost extra privacy budget)")
        intercept = list(self.params.index).index("Intercept") if has_intercept else None
        return private_rsquared(sums, n=self.nobs, d=len(self.params), intercept_index=intercept)[:3]

    @property
    def rsquared(self) -> float:
        """R^2 of the released coefficients, NaN when not available (:attr:`rsquared_reason` says why).

        For a private fit it is a private estimate: computed only from the
        method's released statistics (``ssp``, ``adassp``: the noisy X^T X,
        X^T y and y^T y; ``noisy_ols``: its noisy coefficients, X^T X and y^T
        y), at no extra budget, for the data as the method saw them (clipped
        to the declared bounds; ``noisy_ols``: labels truncated at T).  It is
        the same in the rescaled units the method used and in yours.  See
        "Private R^2" in :mod:`dpstats.inference`.  Methods that release no
        such statistics, fits with ``inference=False`` and models without an
        intercept give NaN.  The non-private reference ``ols`` gives the
        classical R^2.
        """
        return self._rsquared()[0]

    @property
    def rsquared_adj(self) -> float:
        """Adjusted R^2, 1 - (1 - R^2)(n - 1)/(n - d); NaN when :attr:`rsquared` is."""
        return self._rsquared()[1]

    @property
    def rsquared_reason(self) -> str:
        """Why :attr:`rsquared` is NaN ("" when it is given)."""
        return self._rsquared()[2]

    # -- frames for other tools ----------------------------------------------------------------------------------
    def tidy(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per coefficient, with broom's columns: term, estimate, std.error, statistic, p.value, conf.low,
        conf.high (the (1 - alpha) interval of :meth:`conf_int`).

        Where the fit reports no inference the last five columns are NaN,
        without a warning (:attr:`inference_method` says why).

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level of ``conf.low`` and ``conf.high``, in (0, 1).

        Returns
        -------
        pandas.DataFrame
            One row per coefficient.

        Raises
        ------
        ValueError
            When ``alpha`` is not in (0, 1).

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> list(res.tidy().columns)
        ['term', 'estimate', 'std.error', 'statistic', 'p.value', 'conf.low', 'conf.high']
        """
        alpha = check_alpha(alpha)
        frame = pd.DataFrame({"term": list(self.params.index), "estimate": self.params.to_numpy()})
        if self.inference_available:
            ci = self.conf_int(alpha).to_numpy()
            values = [self._bse, self.tvalues.to_numpy(), self.pvalues.to_numpy(), ci[:, 0], ci[:, 1]]
        else:
            values = [np.full(len(self.params), np.nan)] * 5
        for name, value in zip(["std.error", "statistic", "p.value", "conf.low", "conf.high"], values, strict=True):
            frame[name] = np.asarray(value, dtype=float)
        return frame

    def glance(self) -> pd.DataFrame:
        """One row about the fit, in broom's style: nobs, epsilon and delta spent (inf and NaN for the
        non-private reference), method, guarantee ("worst-case", "conditional" or "not private"), r.squared and
        adj.r.squared (:attr:`rsquared`: NaN where not released), df.model, df.residual.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> row = res.glance().iloc[0]
        >>> row["method"], row["guarantee"], int(row["nobs"])
        ('ssp', 'worst-case', 2000)
        """
        r2, adj, _ = self._rsquared()
        pr = self.privacy
        return pd.DataFrame([{
            "nobs": self.nobs, "epsilon": pr.epsilon_spent if pr.private else math.inf,
            "delta": pr.delta_spent if pr.private else math.nan, "method": self.method,
            "guarantee": self._guarantee_kind() if pr.private else "not private", "r.squared": r2,
            "adj.r.squared": adj, "df.model": self.df_model, "df.residual": self.df_resid}])

    @property
    def model(self) -> DPModel:
        """The public description of the model (names only), where statsmodels' table helpers look for it."""
        return DPModel(formula=self.formula, endog_names=self.response_name, exog_names=list(self.params.index),
                       method=self.method)

    @property
    def default_model_infos(self) -> dict[str, Callable[[DPRegressionResults], str]]:
        """The rows statsmodels' ``summary_col`` adds under a dpstats fit: N, the budget spent, method, guarantee."""
        return {"N": lambda r: f"{r.nobs}",
                "epsilon": lambda r: f"{r.privacy.epsilon_spent:.3g}" if r.privacy.private else "inf",
                "delta": lambda r: f"{r.privacy.delta_spent:.3g}" if r.privacy.private else "",
                "Method": lambda r: r.method,
                "Guarantee": lambda r: r._guarantee_kind() if r.privacy.private else "not private"}

    # -- prediction ----------------------------------------------------------------
    def predict(self, newdata: Any = None) -> pd.Series:
        """Predictions X_new @ params, with the design built by the stored design_info.

        ``newdata`` is required: in-sample fitted values would need the private
        data, which the results object does not hold.  An unseen factor level is
        an :class:`~dpstats.errors.UnseenLevelError`.  New rows with a covariate
        outside the bounds declared for the fit are predicted with an
        :class:`~dpstats.errors.ExtrapolationWarning` (the fit took those bounds
        as the range of its data); fits without declared bounds are not checked.

        Parameters
        ----------
        newdata : pandas.DataFrame, mapping or 2-D array
            The new rows, with the columns the formula uses (except the response); an array only for a design
            whose columns are all bare variables (a fit from :func:`dpstats.dp_ols_arrays`), its columns in the
            fit's order.

        Returns
        -------
        pandas.Series
            One prediction per row (named ``predicted``).

        Raises
        ------
        ValueError
            When ``newdata`` is not given.
        dpstats.errors.DataTypeError
            When ``newdata`` is not a DataFrame, a dict of columns or (for a fit from arrays) a 2-D array, such
            as a pandas Series.
        dpstats.errors.UnseenLevelError
            When a factor has a level that was not declared.
        dpstats.errors.NonFiniteValueError
            When a design column of ``newdata`` is infinite on some row (an infinite variable or a transform), or
            a prediction overflows the float range (a finite row so large that its product with the coefficients
            does not fit in a float).
        dpstats.errors.FormulaError
            When two columns of ``newdata`` have one name, as the fit refuses them.

        Warns
        -----
        dpstats.errors.ExtrapolationWarning
            When a variable (or design column) with declared bounds lies outside them on some rows of ``newdata``;
            the message names the columns, their bounds and how many rows, never a value.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> res.predict(pd.DataFrame({"x": [0.0, 5.0]})).shape
        (2,)
        """
        X, index = self._new_rows(newdata, "predict")
        return pd.Series(finite_predictions(X, self.params.to_numpy()), index=index, name="predicted")

    def get_prediction(self, newdata: Any = None) -> MeanPrediction:
        """The mean response at new rows with its standard error and confidence interval, from the fit's released
        inference only (:mod:`dpstats.mean_prediction`); ``summary_frame(alpha)`` as in statsmodels, without the
        interval for a new observation, which would need the private rows' residual variance.

        Parameters
        ----------
        newdata : pandas.DataFrame, mapping or 2-D array
            The new rows, as for :meth:`predict`.

        Returns
        -------
        MeanPrediction
            ``predicted_mean``, ``se_mean``, ``conf_int(alpha)`` and ``summary_frame(alpha)``; NaN standard errors
            and intervals when the fit reports no inference (:attr:`inference_reason` says why).

        Raises
        ------
        ValueError, dpstats.errors.DataTypeError, dpstats.errors.UnseenLevelError, dpstats.errors.NonFiniteValueError
            As :meth:`predict`.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> res.get_prediction(pd.DataFrame({"x": [0.0, 5.0]})).summary_frame().columns.tolist()
        ['mean', 'mean_se', 'mean_ci_lower', 'mean_ci_upper']
        """
        X, index = self._new_rows(newdata, "get_prediction")
        mean = pd.Series(finite_predictions(X, self.params.to_numpy()), index=index, name="mean")
        se = mean_standard_errors(X, self.cov_params().to_numpy()) if self.inference_available else (
            np.full(X.shape[0], np.nan))
        return MeanPrediction(predicted_mean=mean, se_mean=pd.Series(se, index=index, name="mean_se"), X=X,
                              draws=self._draws, df=self._tdist_df, available=self.inference_available)

    def _new_rows(self, newdata: Any, caller: str) -> tuple[np.ndarray, pd.Index | None]:
        """The design of ``newdata`` (checked as :meth:`predict` documents) and the index to label its rows."""
        if newdata is None:
            raise errors.InvalidArgumentError(
                f"{caller} needs newdata: in-sample fitted values would reveal the private data, which the results "
                "object does not keep")
        declared = {name: (lo, hi) for name, lo, hi in self._declared_bounds}
        if isinstance(newdata, np.ndarray):
            newdata = _array_rows(newdata, self.design_info, caller)
        if not isinstance(newdata, (pd.DataFrame, Mapping)):
            raise errors.DataTypeError(_newdata_type_message(newdata, self.design_info, caller))
        if isinstance(newdata, pd.DataFrame):
            check_unique_columns(list(newdata.columns))
        X = design_matrix_for_prediction(self.design_info, newdata, declared, stacklevel=5)  # the user's call
        _check_finite_prediction_design(X, list(self.design_info.column_names))
        index = newdata.index if isinstance(newdata, pd.DataFrame) and len(newdata.index) == X.shape[0] else None
        return X, index

    # -- display --------------------------------------------------------------------
    def statistic_labels(self) -> tuple[str, str]:
        """The headers of the test statistic and p-value columns: t and P>|t| (t intervals), z and P>|z| (normal),
        z* and P(boot) for bootstrap fits, whose p-value comes from the replicates, not from a normal table of z*.

        Returns
        -------
        tuple of (str, str)
            (statistic, p-value) headers.
        """
        if self._tdist_df:
            return "t", "P>|t|"
        if self._draws is not None:
            return "z*", "P(boot)"
        return "z", "P>|z|"

    def _coef_cells(self, alpha: float, digits: int = DEFAULT_DIGITS, thousands: str = ""
                    ) -> tuple[list[str], list[list[str]]]:
        """The coefficient table's headers and its rows of cells (one row per coefficient, no stub), numbers as in
        every table of dpstats (:func:`dpstats.table_grid.coefficient_cells`)."""
        lo_name, hi_name = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
        header = ["coef", "std err", *self.statistic_labels(), lo_name, hi_name]
        return header, [cells for _, cells in coefficient_cells(self, alpha, digits=digits, thousands=thousands)]

    def _coef_table(self, alpha: float, esc: Callable[[str], str] = str,
                    stubs: tuple[list[str], list[str]] | None = None, numbers: tuple[int, str] = (DEFAULT_DIGITS, "")
                    ) -> SimpleTable:
        """The coefficient table; ``stubs``: the text summary's (shortened stubs, their footnotes); ``numbers``:
        (digits, thousands) of :func:`dpstats.table_grid.row_format` and :func:`~dpstats.table_grid.format_number`."""
        header, rows = self._coef_cells(alpha, *numbers)
        names, footnotes = stubs if stubs is not None else ([str(s) for s in self.params.index], [])
        number = (lambda c: html_number(esc(c))) if esc is html.escape else esc  # HTML: powers of ten as in LaTeX
        table = FootnotedTable([[number(c) for c in r] for r in rows], headers=[esc(h) for h in header],
                               stubs=[esc(s) for s in names], txt_fmt=_TXT_FMT)
        table.footnotes = [esc(f) for f in footnotes]
        return table

    def _text_stubs(self, alpha: float, width: int, numbers: tuple[int, str] = (DEFAULT_DIGITS, "")
                    ) -> tuple[list[str], list[str]]:
        """The term names as the text summary's stubs (each table's lines within ``width``) and the footnotes
        that give the shortened terms whole (:func:`dpstats.summary_text.shorten_stubs`)."""
        header, rows = self._coef_cells(alpha, *numbers)
        room = stub_room(rows, header, width)
        errors = self.error_bounds.coefficients
        if errors is not None:
            room = min(room, stub_room(errors.cells(), errors.headers(), width))
        first = int(len(self.response_name) > width - _MODEL_TABLE_REST)  # the response's mark comes first
        return shorten_stubs([str(s) for s in self.params.index], room, first)

    def _model_table(self, esc: Callable[[str], str] = str, width: int | None = None) -> SimpleTable:
        """The model facts; with ``width`` (the text summary) a response name too long for it is shortened, with
        a footnote that gives it whole."""
        pr = self.privacy
        private = "yes" if pr.private else "NOT PRIVATE"
        response, footnotes = [self.response_name], list[str]()
        if width is not None:
            response, footnotes = shorten_stubs(response, width - _MODEL_TABLE_REST)
        left = [("Dep. Variable:", response[0]), ("Method:", self.method), ("Private:", private),
                ("Guarantee:", self._guarantee_kind()), ("Neighbours:", self._relation_kind()),
                ("No. Observations:", str(self.nobs)),
                ("Df Model:", str(self.df_model))]
        if pr.private:
            right = [("epsilon requested:", f"{pr.epsilon_requested:.4g}"),
                     ("epsilon spent:", f"{pr.epsilon_spent:.4g}"),
                     ("delta requested:", f"{pr.delta_requested:.3g}"), ("delta spent:", f"{pr.delta_spent:.3g}"),
                     ("Steps:", str(len(pr.steps))), ("Seeded:", "yes" if pr.seeded else "no"), ("", "")]
        else:
            right = [("epsilon:", "inf"), ("", ""), ("", ""), ("", ""), ("", ""), ("", ""), ("", "")]
        rows = [[esc(a[0]), esc(a[1]), esc(b[0]), esc(b[1])] for a, b in zip(left, right, strict=True)]
        table = FootnotedTable(rows, txt_fmt=_TXT_FMT)
        table.footnotes = [esc(f) for f in footnotes]
        return table

    def _guarantee_kind(self) -> str:
        g = self.privacy.guarantee
        return g.split(" ", 1)[0].split(":")[0].lower() if self.privacy.private else "none"

    def _relation_kind(self) -> str:
        return self.privacy.relation.split(" ", 1)[0] if self.privacy.private else "-"

    def _privacy_table(self, esc: Callable[[str], str] = str, width: int | None = None) -> SimpleTable | None:
        """The privacy steps; with ``width`` (the text summary) the names left-aligned, a norm's parenthetical
        explanation a numbered footnote under the table, and the widest columns wrapped to fit ``width``."""
        if not self.privacy.steps:
            return None
        headers = ["privacy step", "mechanism", "sensitivity", "noise scale", "privacy"]
        footnotes: dict[str, str] = {}
        rows = []
        for s in self.privacy.steps:
            scale = "-" if (isinstance(s.noise_scale, float) and math.isnan(s.noise_scale)) else f"{s.noise_scale:.4g}"
            sensitivity = f"{s.sensitivity:.4g} ({s.sensitivity_norm})"
            if width is not None:
                sensitivity = _footnoted(s.sensitivity, s.sensitivity_norm, footnotes)
            rows.append([s.name, s.mechanism + (f" x{s.count}" if s.count > 1 else ""), sensitivity, scale,
                         s.describe_privacy()])
        if width is None:
            return SimpleTable([[esc(c) for c in r] for r in rows], headers=headers, txt_fmt=_TXT_FMT)
        printed = fit_rows(rows, headers, [(4, 20, True), (0, 24, False), (2, 12, False)], width)
        name_width = max(len(headers[0]), *(len(r[0]) for r in printed))
        table = FootnotedTable([[esc(c) for c in r] for r in printed],
                               headers=[esc(headers[0].ljust(name_width)), *map(esc, headers[1:])],
                               datatypes=list(range(len(headers))), txt_fmt={**_TXT_FMT, "data_aligns": "lrrrr"})
        table.footnotes = [esc(f"{mark} {text}") for text, mark in footnotes.items()]
        return table

    def _title(self) -> str:
        return ("Differentially Private Regression Results" if self.privacy.private
                else "OLS Regression Results (NOT PRIVATE)")

    def _tables(self, alpha: float, esc: Callable[[str], str] = str, width: int | None = None,
                slim: bool = False, numbers: tuple[int, str] = (DEFAULT_DIGITS, "")) -> list[SimpleTable]:
        """The summary's tables; ``width``: the text summary's widest line (wide tables wrap to it); ``slim``: the
        model and coefficient tables only; ``numbers``: (digits, thousands) of the coefficient table."""
        stubs = self._text_stubs(alpha, width, numbers) if width is not None else None
        tables = [self._model_table(esc, width), self._coef_table(alpha, esc, stubs, numbers)]
        if slim:
            return tables
        ptab = self._privacy_table(esc, width)
        if ptab is not None:
            tables.append(ptab)
        tables.extend(self.error_bounds.tables(esc, width, None if stubs is None else stubs[0]))
        return tables

    def _extra_lines(self, slim: bool = False) -> list[str]:
        extra = []
        if self._withheld:
            extra.append(f"Inference withheld ({WITHHELD_CELL}): {self._withheld}.")
        elif not self.inference_available:
            extra.append(f"No standard errors ({WITHHELD_CELL}): {self._bse_reason}.")
        elif not self.privacy.private:
            extra.append("NOT PRIVATE: standard errors computed from the data (classical OLS).")
        else:
            target = (self._inference.target if self._inference is not None else "") or \
                "the regression of the clipped data"
            extra.append(f"Inference: {self.inference_method}, computed only from released quantities; intervals "
                         f"are for {target}, and approximate at small n.")
        kept = ("Budget spent", "Guarantee") if slim else ("Budget spent", "Guarantee", "Method choice",
                                                              "Assumption", "Note", "Random")
        extra += [f"Privacy: {line}" for line in self.privacy.lines() if line.startswith(kept)]
        if slim:
            return [*extra, "The full report (privacy steps, the error of each coefficient, the method's choice, "
                            "notes and theory): summary() without slim=True."]
        return extra + [f"Theory: {line}" for line in self.error_bounds.notes()]

    def summary(self, alpha: float = 0.05, slim: bool = False, digits: int = DEFAULT_DIGITS,
                thousands: str = "") -> DPSummary:
        """A statsmodels-style :class:`~statsmodels.iolib.summary.Summary` (as_text, as_latex, as_html).

        ``as_text()`` and ``as_html()`` give the whole report (model,
        coefficients, privacy steps, theory, notes).  ``as_latex()`` gives the
        coefficient table for a paper (a ``table`` float with booktabs rules,
        the fit's facts as notes); ``as_latex(privacy=True)`` adds the privacy
        report as a second table.  Preamble: ``\\usepackage{booktabs}`` and
        ``\\usepackage{graphicx}`` (:data:`dpstats.tables.LATEX_PREAMBLE`).

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level of the intervals shown.
        slim : bool, default False
            As statsmodels' ``summary(slim=True)``: the model and coefficient tables, the inference line, the
            budget spent and the guarantee only (text and HTML; ``as_latex()`` is the coefficient table either
            way).
        digits : int, default 3
            Significant digits of each coefficient's standard error; its estimate and interval get the same
            decimals (none for a standard error of 100 or more, six at most: a row whose standard error is below
            1e-5 is written in powers of ten).  The rule of :func:`dpstats.table`, in the text, HTML and LaTeX alike.
        thousands : str, default ""
            The separator of thousands in the coefficient table (``","``: 23,567), none by default.

        Returns
        -------
        DPSummary
            The report; ``print`` it, or call ``as_text()``, ``as_html()`` or ``as_latex()``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> print(res.summary().as_text())  # doctest: +ELLIPSIS
                Differentially Private Regression Results
        ...
        """
        alpha = check_alpha(alpha)
        numbers = (check_digits(digits), check_thousands(thousands))
        smry = DPSummary()
        tables = self._tables(alpha, width=SUMMARY_WIDTH, slim=slim, numbers=numbers)
        tables[0].title = self._title()
        smry.tables.extend(tables)
        smry.add_extra_txt([part for line in self._extra_lines(slim) for part in wrap_note(line)])
        smry.result, smry.alpha, smry.numbers = self, alpha, numbers
        smry.html_tables = self._tables(alpha, esc=html.escape, slim=slim, numbers=numbers)
        smry.html_notes = [html.escape(line) for line in self._extra_lines(slim)]
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __getstate__(self) -> dict[str, Any]:
        """Pickling: patsy's DesignInfo cannot be pickled; what rebuilds it (formula terms, the names they use,
        a zero-row or one-row public prototype) is stored instead (:mod:`dpstats.formula.recipe`)."""
        state = self.__dict__.copy()
        state["design_info"] = DesignRecipe.of(self.design_info,
                                               {name: (lo, hi) for name, lo, hi in self._declared_bounds})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["design_info"] = state["design_info"].rebuild()
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        """What a statsmodels habit finds here instead (``fittedvalues``, ``resid``, ``t_test``, ...): an
        AttributeError that says why the attribute is not released and what to use; for a guessed name of what the
        result holds under another (``theory``, ``privacy_report``), where it is."""
        hint = _NOT_RELEASED.get(name) or _ELSEWHERE.get(name)
        if hint is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        raise AttributeError(f"'{type(self).__name__}' has no '{name}': {hint}")

    def __repr__(self) -> str:
        tag = "" if self.privacy.private else " NOT PRIVATE"
        return (f"<DPRegressionResults{tag} method={self.method!r} n={self.nobs} d={len(self.params)} "
                f"epsilon_spent={self.privacy.epsilon_spent:.4g}>")

    def _repr_html_(self) -> str:
        return self.summary().as_html() + self.privacy._repr_html_()

    def plot_coefficients(self, **kwargs: Any) -> Any:
        """Coefficient plot with the intervals the method provides; see :func:`dpstats.plotting.coef_plot`.

        Needs matplotlib (the ``plot`` extra).

        Parameters
        ----------
        **kwargs : object
            Passed to :func:`dpstats.plotting.coef_plot`.

        Returns
        -------
        matplotlib.axes.Axes
            The plot's axes.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> ax = res.plot_coefficients()
        """
        from dpstats.plotting import coef_plot  # noqa: PLC0415  (matplotlib is optional)

        return coef_plot(self, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of everything released.

        Returns
        -------
        dict
            The formula, method, n, coefficients, privacy report, error bounds and inference (standard errors,
            the 95% intervals of :meth:`conf_int` as ``[lower, upper]`` and the p-values, or why there are none).

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> out = res.to_dict()
        >>> out["method"], out["params"].keys()
        ('ssp', dict_keys(['Intercept', 'x']))
        """
        out: dict[str, Any] = {
            "formula": self.formula, "method": self.method, "nobs": self.nobs,
            "params": {k: float(v) for k, v in self.params.items()},
            "privacy": self.privacy.to_dict(),
            "error_bounds": self.error_bounds.to_dict(),
            "inference_kind": self.inference_kind,
            "inference_reason": self.inference_reason,
        }
        if self.inference_available:
            out["bse"] = {k: float(v) for k, v in self.bse.items()}
            # the intervals and p-values as the summary shows them: a bootstrap interval need not be coef +- 1.96 se
            out["conf_int"] = {k: [float(lo), float(hi)] for k, (lo, hi) in self.conf_int().iterrows()}
            out["pvalues"] = {k: float(v) for k, v in self.pvalues.items()}
        elif self._withheld:
            out["inference_withheld"] = self._withheld  # the keys of earlier versions
        else:
            out["bse_unavailable"] = self._bse_reason
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as standard JSON: non-finite numbers (NaN where a quantity does not apply, the
        infinite epsilon of the non-private reference) are written as null, never as NaN or Infinity.

        Returns
        -------
        str
            The JSON text, indented.

        Examples
        --------
        >>> import numpy as np, pandas as pd, dpstats
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 2000)})
        >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 2, 2000)
        >>> res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp",
        ...                      bounds={"x": (0, 10), "y": (-10, 40)}, random_state=0)
        >>> import json
        >>> json.loads(res.to_json())["nobs"]
        2000
        """
        return json.dumps(_finite_or_null(self.to_dict()), indent=2, allow_nan=False,
                          default=lambda o: list(o) if isinstance(o, tuple) else str(o))


@dataclass(frozen=True)
class DPModel:
    """``results.model`` of a dpstats fit: the formula and the names (public facts), which statsmodels' table
    helpers (``summary_col``, ``summary_params``) read.  It cannot refit: the results hold no data.

    Attributes
    ----------
    formula : str
        The model's formula.
    endog_names : str
        The response's name.
    exog_names : list of str
        The coefficients' names.
    method : str
        The method that fitted the model.

    Examples
    --------
    >>> from dpstats.results import DPModel
    >>> model = DPModel(formula="y ~ x", endog_names="y", exog_names=["Intercept", "x"], method="ssp")
    >>> model.data.param_names
    ['Intercept', 'x']
    """

    formula: str
    endog_names: str
    exog_names: list[str]
    method: str

    @property
    def data(self) -> SimpleNamespace:
        """Names in the layout of statsmodels' ``model.data`` (param_names, xnames, ynames)."""
        return SimpleNamespace(param_names=list(self.exog_names), xnames=list(self.exog_names),
                               ynames=self.endog_names)


def _array_rows(newdata: np.ndarray, design_info: Any, caller: str = "predict") -> pd.DataFrame:
    """New rows given as a 2-D array, named by the design's variables in order, for a design whose every term but
    the intercept is one bare variable (a fit from arrays); otherwise a typed refusal naming the variables."""
    codes = [f.code for term in design_info.terms for f in term.factors]
    variables = variables_of(codes)
    bare = all(len(term.factors) <= 1 for term in design_info.terms) and len(variables) == len(codes) and all(
        code in (name, f"Q({name!r})") for code, name in zip(codes, variables, strict=True))
    if not bare:
        raise errors.DataTypeError(
            f"{caller} takes a numpy array only for a model whose columns are its variables (a fit from "
            "dp_ols_arrays); this model's formula builds its columns from its variables (transforms or "
            f"factors), so give newdata as a DataFrame with the columns {', '.join(variables)}")
    if newdata.ndim != 2 or newdata.shape[1] != len(variables):
        raise errors.DataTypeError(
            f"{caller}'s array must be 2-D with {len(variables)} columns ({', '.join(variables)}, in the fit's "
            f"order); got shape {newdata.shape}")
    return pd.DataFrame(newdata, columns=variables)


def _newdata_type_message(newdata: object, design_info: Any, caller: str = "predict") -> str:
    """Why ``newdata`` of this type is refused and what to pass, from its type and the model's variables (never a
    value): a Series is one column or one row, so which one is for the caller to say."""
    variables = variables_of([f.code for term in design_info.terms for f in term.factors])
    named = f" with the columns {', '.join(variables)}" if variables else ""
    hint = (" A Series is one column or one row: pass pd.DataFrame({'name': series}) for a column, or "
            "series.to_frame().T for one row." if isinstance(newdata, pd.Series) else "")
    return (f"{caller}'s newdata must be a pandas DataFrame (or a dict of equal-length columns){named}, got "
            f"{type(newdata).__name__}.{hint}")


def _check_finite_prediction_design(X: np.ndarray, column_names: list[str]) -> None:
    """Refuse a design of new data with an infinite entry (an infinite variable, or a transform such as
    ``np.log(0)``), naming its design columns, never a value: the fit's domain is finite values, and a prediction
    of plus or minus infinity is none."""
    bad = [name for name, finite in zip(column_names, np.isfinite(X).all(axis=0), strict=True) if not finite]
    if bad:
        raise errors.NonFiniteValueError(
            f"newdata gives the design column{'s' if len(bad) > 1 else ''} {', '.join(bad)} an infinite value on "
            "some rows; a prediction needs finite values: drop those rows or replace them before predict().")


def _footnoted(sensitivity: float, norm: str, footnotes: dict[str, str]) -> str:
    """A sensitivity cell of the text table: the value and its norm's name, with a footnote mark for the norm's
    parenthetical explanation (the explanation, keyed by its text, goes to ``footnotes`` once)."""
    name, explanation = split_explanation(norm)
    if not explanation:
        return f"{sensitivity:.4g} ({norm})"
    mark = footnotes.setdefault(f"{name}: {explanation}", f"[{len(footnotes) + 1}]")
    return f"{sensitivity:.4g} ({name}) {mark}"


def _finite_or_null(value: Any) -> Any:
    """A copy of nested dicts/lists/tuples with every non-finite float (also numpy floats) replaced by None."""
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


class DPSummary(Summary):
    """statsmodels Summary of a fit: the whole report as text and HTML, a table for papers as LaTeX."""

    result: DPRegressionResults
    alpha: float
    numbers: tuple[int, str] = (DEFAULT_DIGITS, "")
    html_tables: list[SimpleTable]
    html_notes: list[str]

    def as_html(self) -> str:
        """The tables and notes as HTML, with every name and note HTML-escaped."""
        return ("\n".join(t.as_html() for t in self.html_tables) + "<br/><br/>" + "<br/>".join(self.html_notes))

    def as_latex(self, label: str | None = "tab:dpstats", privacy: bool = False) -> str:
        """The coefficient table for a paper: a LaTeX ``table`` float (booktabs rules; shrunk to the text width
        only when wider) with coefficient, standard error, z (t), p and interval, and the fit's facts (N, method,
        budget spent, guarantee, R^2, how the intervals were made, or why there are none) as notes.

        Parameters
        ----------
        label : str or None
            ``\\label`` of the table (the privacy table gets ``label + ":privacy"``).
        privacy : bool
            Add the privacy report (every mechanism call, budget, guarantee, notes) as a second table, whose
            columns wrap within the text width.

        The preamble needs ``\\usepackage{booktabs}`` and ``\\usepackage{graphicx}``
        (:data:`dpstats.tables.LATEX_PREAMBLE`).

        Raises
        ------
        dpstats.errors.DataTypeError
            A ``label`` that is neither a string nor None.
        """
        if label is not None and not isinstance(label, str):
            raise errors.DataTypeError(f"label must be a string (e.g. label='tab:wages') or None, got "
                                       f"{type(label).__name__}")
        digits, thousands = self.numbers
        out = coefficient_grid(self.result, self.alpha, digits=digits, thousands=thousands).as_latex(label)
        if privacy:
            out += "\n" + privacy_latex(self.result, f"{label}:privacy" if label else None)
        return out


#: the model table's text width besides the response name: its labels, the other values (at most 12 characters:
#: the observation count, epsilon and delta cells) and the column separators
_MODEL_TABLE_REST = len("No. Observations:") + len("epsilon requested:") + 12 + 3 * 2
_TXT_FMT = dict(
    data_fmts=["%s"], empty_cell="", colwidths=None, colsep="  ", row_pre="", row_post="",
    table_dec_above="=", table_dec_below="=", header_dec_below="-", header_fmt="%s",
    stub_fmt="%s", title_align="c", header_align="r", data_aligns="r", stubs_align="l", fmt="txt",
)

