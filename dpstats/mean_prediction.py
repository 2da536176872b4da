"""Intervals for the mean response at new rows, from a fit's released inference: ``res.get_prediction(new)``.

The mean response at a row x0 is the linear combination x0' b of the coefficients, so its uncertainty follows from
the same released quantities as the coefficients' own (post-processing): for a fit with a parametric bootstrap,
the basic bootstrap interval of x0' b from the replicates x0' r_k (the interval :meth:`conf_int` gives each
coefficient, applied to the combination); for a fit with a covariance V from released values, the normal (or, for
the non-private reference, t) interval x0' b -/+ q sqrt(x0' V x0).  An interval for a new observation would also
need the residual variance of the private rows, which no method releases, so there is none; without inference the
columns are NaN and the fit's ``inference_reason`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from dpstats.errors import InvalidArgumentError
from dpstats.inference import basic_bootstrap_interval
from dpstats.validation import check_alpha

__all__ = ["MeanPrediction", "mean_standard_errors"]


def _row_scales(X: np.ndarray) -> np.ndarray:
    """The largest magnitude of each row (1 for a row of zeros): dividing by it keeps the quadratic forms and the
    replicates' combinations of a large but finite row from overflowing (and a tiny one from underflowing)."""
    scale = np.max(np.abs(X), axis=1) if X.shape[1] else np.ones(X.shape[0])
    return np.where(scale > 0, scale, 1.0)


def mean_standard_errors(X: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """sqrt(x0' V x0) for each row x0 of X, computed as s sqrt(u' V u) with u = x0 / s and s the row's largest
    magnitude, so that a finite row whose square overflows still gets its finite standard error (inf only where
    the standard error itself exceeds the float range)."""
    scale = _row_scales(X)
    U = X / scale[:, None]
    with np.errstate(over="ignore"):
        return scale * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", U, cov, U), 0.0))


#: why a fit gives nothing for a new observation (the module docstring)
_NO_OBSERVATION_INTERVAL = ("there is no {what}: it would need the residual variance of the private rows, which no "
                            "method releases; se_mean, conf_int() and summary_frame() give the mean response at "
                            "each new row")


class _NoObservationError(InvalidArgumentError, AttributeError):
    """The refusal of statsmodels' ``se_obs``: an :class:`~dpstats.errors.InvalidArgumentError` saying why, and an
    ``AttributeError`` as a missing attribute is, so that ``hasattr``, ``getattr(..., default)`` and
    ``inspect.getmembers`` still answer (a property raising anything else breaks them)."""


@dataclass(frozen=True)
class MeanPrediction:
    """The mean response at new rows with its standard error and confidence intervals (statsmodels'
    ``get_prediction`` for the mean; see the module docstring).

    Attributes
    ----------
    predicted_mean : pandas.Series
        x0' b for each new row (what ``predict`` returns).
    se_mean : pandas.Series
        sqrt(x0' V x0), V the fit's ``cov_params()``; NaN without inference.
    X : numpy.ndarray
        The new rows' design (m, d).
    draws : numpy.ndarray or None
        The fit's re-centred bootstrap replicates (B, d), if it has them.
    df : int or None
        The degrees of freedom of t intervals (the non-private reference), else None (normal).
    available : bool
        Whether the fit reports inference.

    Examples
    --------
    >>> import math, numpy as np, pandas as pd, dpstats
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.uniform(0, 10, 200)})
    >>> df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(0, 1, 200)
    >>> res = dpstats.dp_ols("y ~ x", df, math.inf, method="ols")
    >>> prediction = res.get_prediction(pd.DataFrame({"x": [2.0, 8.0]}))
    >>> bool((prediction.conf_int()[:, 0] < prediction.predicted_mean).all())
    True
    """

    predicted_mean: pd.Series
    se_mean: pd.Series
    X: np.ndarray
    draws: np.ndarray | None
    df: int | None
    available: bool

    @property
    def var_pred_mean(self) -> pd.Series:
        """x0' V x0 for each new row, the square of ``se_mean`` (statsmodels' name); NaN without inference."""
        return self.se_mean ** 2

    @property
    def se_obs(self) -> pd.Series:
        """statsmodels' standard error of a new observation, which there is not (module docstring).

        Raises
        ------
        InvalidArgumentError
            Always, saying so and naming ``se_mean`` (also an ``AttributeError``: ``hasattr`` answers False).
        """
        raise _NoObservationError(_NO_OBSERVATION_INTERVAL.format(what="standard error of a new observation "
                                                                "(statsmodels' se_obs)"))

    def conf_int(self, alpha: float = 0.05, obs: bool = False) -> np.ndarray:
        """(1 - alpha) intervals of the mean at each new row, an (m, 2) array (statsmodels' layout); NaN without
        inference.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level, in (0, 1).
        obs : bool, default False
            statsmodels' switch to an interval for a new observation, which there is not (module docstring):
            True raises :class:`dpstats.errors.InvalidArgumentError` saying so.

        Returns
        -------
        numpy.ndarray
            Lower and upper ends, one row per new row.

        Raises
        ------
        InvalidArgumentError
            With ``obs=True``.
        """
        if obs:
            raise InvalidArgumentError(_NO_OBSERVATION_INTERVAL.format(what="interval for a new observation "
                                                                     "(statsmodels' obs=True, obs_ci_lower/"
                                                                     "obs_ci_upper)"))
        alpha = check_alpha(alpha)
        mean = self.predicted_mean.to_numpy()
        if not self.available:
            return np.full((mean.size, 2), np.nan)
        if self.draws is not None:
            scale = _row_scales(self.X)  # the basic interval is equivariant under a positive scale of the row
            lower, upper = basic_bootstrap_interval(mean / scale, self.draws @ (self.X / scale[:, None]).T, alpha)
            with np.errstate(over="ignore"):
                return np.column_stack([lower * scale, upper * scale])
        q = stats.t.ppf(1 - alpha / 2, self.df) if self.df else stats.norm.ppf(1 - alpha / 2)
        se = self.se_mean.to_numpy()
        return np.column_stack([mean - q * se, mean + q * se])

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """``mean``, ``mean_se``, ``mean_ci_lower`` and ``mean_ci_upper`` per new row, as statsmodels names them
        (no ``obs_ci``: see the module docstring).

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level.

        Returns
        -------
        pandas.DataFrame
        """
        interval = self.conf_int(alpha)
        return pd.DataFrame({"mean": self.predicted_mean.to_numpy(), "mean_se": self.se_mean.to_numpy(),
                             "mean_ci_lower": interval[:, 0], "mean_ci_upper": interval[:, 1]},
                            index=self.predicted_mean.index)
