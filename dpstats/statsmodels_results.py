"""Reading statsmodels regression results beside dpstats fits (:func:`dpstats.table`,
:func:`dpstats.plotting.coef_plot`): a module of its own, importing no other dpstats module, so that both can use
it without an import cycle (``tables`` imports ``results``, which imports ``plotting``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["is_statsmodels", "statsmodels_coefficients"]


def is_statsmodels(res: Any) -> bool:
    """Whether ``res`` looks like a statsmodels regression results object (``params``, ``bse``, ``model`` and
    ``conf_int``), as :func:`table` and :func:`dpstats.plotting.coef_plot` take one.

    Parameters
    ----------
    res : object
        Anything.

    Returns
    -------
    bool
        True for a statsmodels results object (or one with the same attributes).
    """
    return hasattr(res, "params") and hasattr(res, "bse") and hasattr(res, "model") and hasattr(res, "conf_int")


def statsmodels_coefficients(res: Any, alpha: float) -> tuple[pd.Series, np.ndarray]:
    """A statsmodels fit's coefficients by design-column name, and their ``1 - alpha`` intervals.

    Parameters
    ----------
    res : statsmodels results
        A fitted model (from a formula, a DataFrame or arrays: array columns take the model's ``exog_names``,
        ``const, x1, ...``).
    alpha : float
        The intervals' level is ``1 - alpha`` (statsmodels' ``conf_int(alpha)``).

    Returns
    -------
    params : pandas.Series
        The coefficients, indexed by column name.
    ci : numpy.ndarray
        Their intervals, one row ``(low, high)`` per coefficient.
    """
    params = pd.Series(res.params, dtype=float)
    if not isinstance(res.params, pd.Series):
        params.index = list(getattr(res.model, "exog_names", None) or [f"x{i}" for i in range(len(params))])
    return params, np.asarray(res.conf_int(alpha), dtype=float)
