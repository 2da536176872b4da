"""The error of a fit's coefficients, in their own units, and what the minimax theorems say about it.

The error block of a fit (:class:`ErrorBounds`, ``DPRegressionResults.error_bounds``)
starts with each coefficient's error split into two parts
(:class:`CoefficientErrors`), in the units of the coefficients:

* privacy: the released coefficient minus least squares on the same clipped
  data (the privacy noise and the bias it causes), as a root mean square;
* sampling: the standard error of that least-squares fit.

Where the method returns an error split from its released values
(``MethodFit.error_split``: ``ssp``, ``adassp`` and ``noisy_ols`` from their
released statistics; ``pgd``, ``dpsgd``, ``theilsen``, ``robgd`` and
``ambssgd`` from their released noise scales, steps and estimates), the
privacy part is computed from those (:mod:`dpstats.inference`, "The error
split"), and the sampling part too where the method released what it needs.
Otherwise only public facts are known, and the block says so: the
sampling part is that of least squares on a design uniform on the declared
ranges with the residual sd of a response uniform on its declared range
(:func:`design_moments`, :func:`assumed_residual_sd`), and the privacy part is
that times the privacy-to-sampling ratio of the method's upper rate (or of
the minimax lower bound when it has none), up to the rates' constants.
Without declared bounds there are no units to convert to, and only the rates
are shown.

The rates (below) are in units of the noise standard deviation sigma and
hold up to absolute constants (the papers do not give them): they tell
orders of magnitude, not exact errors, and are kept as a labelled reference.
Each is split into a statistical (sampling) term and a privacy term
(:mod:`dpstats.rates`).

Lower bounds (over all (epsilon, delta)-DP estimators; Cai, Wang & Zhang,
"The cost of privacy", Ann. Statist. 2021, seed numbering):

* Thm 18 (classical): sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1), when
  eps = O(1), n^-1 exp(-3 eps n/2) <= delta <= n^-(1+tau) for some tau > 0,
  and sqrt(d log(1/delta))/(n eps) = O(1);
* Thm 16 (s-sparse): sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1),
  with the same delta range and sqrt(s log(1/delta)) log(d/s)/(n eps) = O(1).

Upper bounds: each method registers its own rate with the method
(``MethodSpec.theory_rate``, defined in the method's module), or says why
there is none; this module reads the registry.  A rate that a fit's
inference releases make smaller is evaluated at the budget its point
estimate actually spends (:func:`point_estimate_epsilon`).

Conditions stated as "= O(1)" are checked with the constant 1; a failed
condition makes the bound "not applicable" and names the condition.
:func:`rate_plan` inverts the rates for a target error in units of sigma
(``dpstats.plan`` without bounds; :func:`dpstats.planning.plan`, which with
declared bounds answers in the units of the coefficients);
:func:`plot_plan` draws the rates (matplotlib, the ``plot`` extra).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.table import SimpleTable

from dpstats.blas import single_threaded_blas
from dpstats.deprecation import MovedUp
from dpstats.errors import InvalidArgumentError, InvalidPrivacyParameterError, UnknownMethodError
from dpstats.methods.registry import ErrorSplit, MethodSpec, available_methods, get_method
from dpstats.privacy.calibration import gaussian_epsilon, gaussian_mu
from dpstats.rates import (
    CAI,
    MODEL,
    SPARSE_MODEL,
    Rate,
    RateBound,
    UpperRate,
    classical_conditions,
    log_inv,
    no_conditions,
    sparse_conditions,
)
from dpstats.summary_text import fit_rows
from dpstats.validation import check_budget_total, finite_real, shown

__all__ = ["RateBound", "ErrorBounds", "CoefficientErrors", "classical_lower_bound", "sparse_lower_bound",
           "error_bounds", "coefficient_errors", "with_coefficients", "design_moments", "assumed_residual_sd",
           "sampling_covariance", "rate_plan", "plot_plan", "point_estimate_epsilon", "CLASSICAL_LOWER",
           "SPARSE_LOWER"]

_GUARANTEES = ("worst-case", "conditional")

CLASSICAL_LOWER = Rate(
    "lower", "minimax lower bound (classical)", f"{CAI} Thm 18",
    "sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d * math.sqrt(log_inv(dl)) / (n * e),
    classical_conditions, (MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True)

SPARSE_LOWER = Rate(
    "lower", "minimax lower bound (s-sparse)", f"{CAI} Thm 16",
    "sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(s * math.log(d) / n),
    lambda n, d, e, dl, s: s * math.log(d / s) * math.sqrt(log_inv(dl)) / (n * e),
    sparse_conditions, (SPARSE_MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True, needs_sparsity=True)

NON_PRIVATE_LOWER = Rate(
    "lower", "minimax lower bound (no privacy)", "classical minimax rate of linear regression",
    "sqrt(d/n)", lambda n, d, s: math.sqrt(d / n), lambda n, d, e, dl, s: 0.0, no_conditions, (MODEL,),
    n_min=lambda d, s: 1.0)


def upper_rates(spec: MethodSpec) -> list[tuple[str, UpperRate]]:
    """The distinct upper rates a method registers, one per guarantee that selects a different one, with that
    guarantee (its own guarantee first)."""
    if spec.theory_rate is None:
        return []
    out: list[tuple[str, UpperRate]] = []
    for guarantee in dict.fromkeys([spec.guarantee, *_GUARANTEES]):
        upper = spec.theory_rate(guarantee)
        if not any(upper.rate is u.rate and upper.why_none == u.why_none for _, u in out):
            out.append((guarantee, upper))
    return out


def _upper_rates_view() -> dict[str, Rate]:
    """The registered rates by "method" or "method/guarantee" (the keys of the deprecated ``UPPER_RATES``)."""
    out: dict[str, Rate] = {}
    for name, spec in sorted(available_methods().items()):
        rates = [(g, u.rate) for g, u in upper_rates(spec) if u.rate is not None]
        for guarantee, rate in rates:
            out[name if len(rates) == 1 else f"{name}/{guarantee}"] = rate
    return out


#: deprecated names that moved to a module above this one (``plan``: :mod:`dpstats.planning`, which adds it)
MOVED_UP = MovedUp("dpstats.theory")


def __getattr__(name: str) -> Any:
    if name == "UPPER_RATES":
        warnings.warn("dpstats.theory.UPPER_RATES is deprecated: each method registers its rate as "
                      "MethodSpec.theory_rate (see dpstats.theory.upper_rates)", DeprecationWarning, stacklevel=2)
        return _upper_rates_view()
    return MOVED_UP.get(name)



def _check_rate_arguments(n: float, d: int, epsilon: float, delta: float, s: int | None = None) -> None:
    """Refuse (n, d, epsilon, delta) outside the rates' domain: n, d >= 1, epsilon > 0 (infinite: no privacy) and,
    for a finite epsilon, 0 < delta < 1; a sparsity 1 <= s <= d."""
    if not (n >= 1 and d >= 1):
        raise InvalidArgumentError(f"the rates need n >= 1 rows and d >= 1 coefficients, got n={n}, d={d}")
    if s is not None and not 1 <= s <= d:
        raise InvalidArgumentError(f"the sparsity s must lie in 1..d, got s={s} with d={d}")
    if not (math.isinf(epsilon) and epsilon > 0):  # the non-private rate takes any delta
        check_budget_total(epsilon, delta)


def classical_lower_bound(n: int, d: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(statistical, privacy) terms of Cai, Wang & Zhang Thm 18, in units of sigma.

    sqrt(d/n) and min(d sqrt(log(1/delta)) / (n epsilon), 1), up to absolute constants; with an infinite
    epsilon, the non-private rate (privacy term 0).

    Parameters
    ----------
    n : int
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.

    Returns
    -------
    tuple of (float, float)
        The statistical and the privacy term.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        n or d below 1.
    dpstats.errors.InvalidPrivacyParameterError
        epsilon <= 0, or delta outside (0, 1) with a finite epsilon.

    Examples
    --------
    >>> from dpstats.theory import classical_lower_bound
    >>> sampling, privacy = classical_lower_bound(10_000, 5, 1.0, 1e-6)
    >>> round(sampling, 4), round(privacy, 4)
    (0.0224, 0.0019)
    """
    _check_rate_arguments(n, d, epsilon, delta)
    rate = NON_PRIVATE_LOWER if math.isinf(epsilon) else CLASSICAL_LOWER
    b = rate.at(n, d, epsilon, delta, 0)
    return b.statistical, b.privacy  # type: ignore[return-value]


def sparse_lower_bound(n: int, d: int, s: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(statistical, privacy) terms of Cai, Wang & Zhang Thm 16, in units of sigma.

    sqrt(s log d / n) and min(s log(d/s) sqrt(log(1/delta)) / (n epsilon), 1), up to absolute constants.

    Parameters
    ----------
    n : int
        Rows.
    d : int
        Coefficients.
    s : int
        Sparsity: the number of non-zero coefficients.
    epsilon, delta : float
        The privacy budget.

    Returns
    -------
    tuple of (float, float)
        The statistical and the privacy term.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        n or d below 1, or s outside 1..d.
    dpstats.errors.InvalidPrivacyParameterError
        epsilon <= 0, or delta outside (0, 1) with a finite epsilon.

    Examples
    --------
    >>> from dpstats.theory import sparse_lower_bound
    >>> sampling, privacy = sparse_lower_bound(10_000, 100, 5, 1.0, 1e-6)
    >>> round(sampling, 4), round(privacy, 4)
    (0.048, 0.0056)
    """
    _check_rate_arguments(n, d, epsilon, delta, s)
    b = SPARSE_LOWER.at(n, d, epsilon, delta, s)
    return b.statistical, b.privacy  # type: ignore[return-value]


_FMT = dict(
    data_fmts=["%s"], empty_cell="", colwidths=None, colsep="  ", row_pre="", row_post="",
    table_dec_above="=", table_dec_below="=", header_dec_below="-", header_fmt="%s",
    stub_fmt="%s", title_align="c", header_align="r", data_aligns="r", stubs_align="l", fmt="txt",
)


def _cell(x: float | None, ok: bool) -> str:
    return f"{x:.3g}" if (ok and x is not None) else "n/a"


# -- the error of each coefficient, in the coefficients' units -----------------------------------------------------

#: what the block says when the privacy part comes from a rate, not from the fit's released values
RATE_CAVEAT = "up to constants; from public facts, not measured on this fit"


def design_moments(intervals: Sequence[tuple[float, float] | None], intercept_index: int | None, *,
                   spread: Sequence[float] | None = None,
                   correlation: float | np.ndarray = 0.0,
                   mean: Sequence[float] | None = None) -> np.ndarray | None:
    """E[x x^T] of a row whose design columns are uniform on their declared ranges (the default of the error
    block and of :func:`dpstats.planning.plan`), or None when some column has no declared range.

    Parameters
    ----------
    intervals : sequence of (float, float) or None
        Declared range (lo, hi) of each design column.
    intercept_index : int or None
        The intercept column (the constant 1).
    spread : sequence of float, optional
        The sd of each column instead of that of the uniform, (hi - lo) / sqrt(12).
    correlation : float or numpy.ndarray
        Common correlation of the non-constant columns (default 0: independent), or a (d, d) matrix of
        correlations (its intercept row and column are not used).
    mean : sequence of float, optional
        The mean of each column instead of the midpoint of its range.

    Returns
    -------
    numpy.ndarray or None
        E[x x^T] (d, d), or None when some column has no declared range.

    Examples
    --------
    >>> from dpstats.theory import design_moments
    >>> design_moments([(1.0, 1.0), (0.0, 1.0)], intercept_index=0)
    array([[1.        , 0.5       ],
           [0.5       , 0.33333333]])
    """
    declared = [iv for iv in intervals if iv is not None]
    if len(declared) < len(intervals):
        return None
    lo = np.array([iv[0] for iv in declared], dtype=float)
    hi = np.array([iv[1] for iv in declared], dtype=float)
    centre = (lo + hi) / 2.0 if mean is None else np.array(mean, dtype=float)
    sd = (hi - lo) / math.sqrt(12.0) if spread is None else np.array(spread, dtype=float)
    if intercept_index is not None:
        centre[intercept_index], sd[intercept_index] = 1.0, 0.0
    if np.ndim(correlation) == 0:
        corr = np.full((centre.size, centre.size), float(correlation))
    else:
        corr = np.array(correlation, dtype=float)
    np.fill_diagonal(corr, 1.0)
    return corr * np.outer(sd, sd) + np.outer(centre, centre)


def assumed_residual_sd(response_interval: tuple[float, float], rsquared: float = 0.0) -> float:
    """The residual sd of a response uniform on its declared range with this R^2: (hi - lo) / sqrt(12)
    sqrt(1 - R^2).

    Parameters
    ----------
    response_interval : (float, float)
        The declared range (lo, hi) of the response.
    rsquared : float, default 0.0
        The assumed R^2 of the model.

    Returns
    -------
    float
        The assumed residual sd, in the response's units.

    Examples
    --------
    >>> from dpstats.theory import assumed_residual_sd
    >>> round(assumed_residual_sd((0.0, 12.0), rsquared=0.75), 4)
    1.7321
    """
    lo, hi = response_interval
    return (hi - lo) / math.sqrt(12.0) * math.sqrt(max(1.0 - rsquared, 0.0))


def sampling_covariance(n: float, second_moment: np.ndarray, residual_sd: float) -> np.ndarray:
    """sigma^2 (n E[x x^T])^{-1}: the covariance of least squares on n rows with this second moment.

    Parameters
    ----------
    n : float
        Rows.
    second_moment : numpy.ndarray
        E[x x^T] of a row (d, d), e.g. from :func:`design_moments`.
    residual_sd : float
        sigma, the residual sd.

    Returns
    -------
    numpy.ndarray
        The covariance (d, d) (a pseudo-inverse when the second moment is singular).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.theory import sampling_covariance
    >>> sampling_covariance(100, np.eye(2), 2.0)
    array([[0.04, 0.  ],
           [0.  , 0.04]])
    """
    # the second moment is symmetric positive semi-definite: its pseudo-inverse from one symmetric
    # eigendecomposition (several times cheaper than the SVD of np.linalg.pinv at large d)
    with single_threaded_blas():  # (threaded LAPACK took seconds for d = 400 on two busy cores)
        values, vectors = np.linalg.eigh(n * np.asarray(second_moment, dtype=float))
    keep = values > max(values.max(initial=0.0), 0.0) * values.size * np.finfo(float).eps
    inverse = (vectors[:, keep] / values[keep]) @ vectors[:, keep].T
    return residual_sd**2 * inverse


def _sd(cov: np.ndarray | None, d: int) -> np.ndarray:
    return np.full(d, np.nan) if cov is None else np.sqrt(np.maximum(np.diag(cov), 0.0))


@dataclass(frozen=True)
class CoefficientErrors:
    """The privacy and the sampling part of each coefficient's error, in the coefficients' units.

    Attributes
    ----------
    names : tuple of str
        The coefficients.
    privacy : numpy.ndarray
        Root mean square of the privacy part: the released coefficient minus least squares on the same
        (clipped) data.
    sampling : numpy.ndarray
        Standard error of that least-squares fit (the sampling part); NaN where unknown.
    privacy_source, sampling_source : str
        How each part was obtained, in words.
    released : bool
        True when the privacy part comes from the fit's released values, False when from a rate.
    lower_bound : bool
        True when the privacy part leaves out a bias known to be large (``ErrorSplit.privacy_lower_bound``).
    sampling_assumed : bool
        True when the sampling part is not from released values but from the public assumptions (a design and
        a response uniform on their declared ranges): then no statement says which part is larger.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.theory import CoefficientErrors
    >>> errors = CoefficientErrors(("Intercept", "x"), np.array([0.1, 0.3]), np.array([0.2, 0.2]),
    ...                            "released noise", "plug-in sigma^2", released=True)
    >>> errors.ratio
    array([0.5, 1.5])
    >>> print(errors.statement())
    From the released values: the privacy error is larger than the sampling error for 1 of 2 coefficients
    (x; up to 1.5 times).
    """

    names: tuple[str, ...]
    privacy: np.ndarray
    sampling: np.ndarray
    privacy_source: str
    sampling_source: str
    released: bool
    lower_bound: bool = False
    sampling_assumed: bool = False

    @property
    def ratio(self) -> np.ndarray:
        """privacy / sampling, per coefficient (NaN where the sampling part is unknown)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.privacy / self.sampling

    def statement(self) -> str:
        """One line: for which coefficients the privacy part is the larger one.

        Returns
        -------
        str
            The sentence shown in the summary.
        """
        where = "From the released values" if self.released else f"By the rates ({RATE_CAVEAT})"
        ratio = self.ratio
        if not np.any(np.isfinite(ratio)):
            return (f"{where}: privacy error of each coefficient up to {np.nanmax(self.privacy):.3g}; its sampling "
                    "error is not known from released values.")
        larger = [name for name, r in zip(self.names, ratio, strict=True) if r > 1]
        if self.released and self.sampling_assumed:
            bound = (", a lower bound: it leaves out this method's bias against least squares" if self.lower_bound
                     else "")
            return (f"{where} (privacy part): privacy error of each coefficient up to {np.nanmax(self.privacy):.3g}"
                    f"{bound}; {np.nanmin(ratio):.2g} to {np.nanmax(ratio):.2g} times the sampling error shown, "
                    "which is not released but an assumption (a response uniform on its declared range), so which "
                    "part is larger is not known from released values.")
        if not larger and self.lower_bound:
            return (f"{where}: the privacy error shown (at most {np.nanmax(ratio):.2g} times sampling) is a lower "
                    "bound: it leaves out this method's bias against least squares, which can be the larger part, "
                    "so neither part is known to dominate.")
        if not larger:
            return (f"{where}: the sampling error is larger than the privacy error for every coefficient (privacy at "
                    f"most {np.nanmax(ratio):.2g} times sampling).")
        shown = ", ".join(larger[:4]) + (", ..." if len(larger) > 4 else "")
        least = "at least " if self.lower_bound else ""
        return (f"{where}: the privacy error is larger than the sampling error for {least}{len(larger)} of "
                f"{len(self.names)} coefficients ({shown}; up to {np.nanmax(ratio):.2g} times"
                f"{', a lower bound' if self.lower_bound else ''}).")

    def sources(self) -> str:
        """How both parts were obtained.

        Returns
        -------
        str
            ``"privacy: ...; sampling: ..."``.
        """
        return f"privacy: {self.privacy_source}; sampling: {self.sampling_source}"

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient: privacy, sampling, ratio.

        Returns
        -------
        pandas.DataFrame
            Columns ``privacy``, ``sampling`` and ``ratio``, indexed by ``term``.
        """
        return pd.DataFrame({"privacy": self.privacy, "sampling": self.sampling, "ratio": self.ratio},
                            index=pd.Index(self.names, name="term"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (non-finite values as None).

        Returns
        -------
        dict
            ``terms``, ``privacy``, ``sampling``, ``privacy_source``, ``sampling_source``, ``released``,
            ``lower_bound`` and ``sampling_assumed``.
        """
        def clean(a: np.ndarray) -> list[float | None]:
            return [float(v) if math.isfinite(v) else None for v in a]
        return {"terms": list(self.names), "privacy": clean(self.privacy), "sampling": clean(self.sampling),
                "privacy_source": self.privacy_source, "sampling_source": self.sampling_source,
                "released": self.released, "lower_bound": self.lower_bound,
                "sampling_assumed": self.sampling_assumed}

    def headers(self) -> list[str]:
        """The headers of :meth:`table`'s columns.

        Returns
        -------
        list of str
            One header per column.
        """
        return ["privacy", "sampling", "privacy/sampling"]

    def cells(self) -> list[list[str]]:
        """:meth:`table`'s rows of cells, one per coefficient (no stub).

        Returns
        -------
        list of list of str
            The formatted privacy error, sampling error and their ratio of each coefficient.
        """
        return [[_number(p), _number(s), _number(r, ".2g")]
                for p, s, r in zip(self.privacy, self.sampling, self.ratio, strict=True)]

    def table(self, esc: Callable[[str], str] = str, stubs: Sequence[str] | None = None) -> SimpleTable:
        """The split as a statsmodels SimpleTable (for ``DPRegressionResults.summary()``).

        Parameters
        ----------
        esc : callable, default str
            Escapes each cell (e.g. for LaTeX).
        stubs : sequence of str, optional
            The row names (the text summary's shortened term names); by default the coefficients' names.

        Returns
        -------
        statsmodels.iolib.table.SimpleTable
            One row per coefficient: privacy, sampling, privacy/sampling.
        """
        rows = [[esc(c) for c in row] for row in self.cells()]
        return SimpleTable(rows, headers=self.headers(), stubs=[esc(n) for n in (stubs or self.names)],
                           title=esc(self.title()), txt_fmt=_FMT)

    def title(self) -> str:
        """The table's title: what the columns are, and where a column is not what its header alone suggests.

        Returns
        -------
        str
            ``"Error of each coefficient (its units)"``, with "rates, up to constants" where the privacy part is not
            from released values, "privacy: a lower bound" where it leaves out a large bias (a reader of the table
            alone would otherwise take a small privacy/sampling ratio at face value), and "sampling: assumed" where
            the sampling part comes from the public assumptions.
        """
        parts = ([] if self.released else ["rates, up to constants"]) \
            + (["privacy: a lower bound"] if self.lower_bound else []) \
            + (["sampling: assumed"] if self.sampling_assumed else [])
        return "Error of each coefficient (its units" + "".join("; " + part for part in parts) + ")"


def _number(x: float, fmt: str = ".3g") -> str:
    return format(float(x), fmt) if math.isfinite(x) else "n/a"


def coefficient_errors(names: Sequence[str], n: int, *, split: ErrorSplit | None = None,
                       intervals: Sequence[tuple[float, float] | None] = (),
                       response_interval: tuple[float, float] | None = None, intercept_index: int | None = None,
                       rate: RateBound | None = None) -> CoefficientErrors | None:
    """Each coefficient's privacy and sampling error in the user's units (module docstring).

    Parameters
    ----------
    names : sequence of str
        The coefficients.
    n : int
        Rows (public).
    split : ErrorSplit or None
        The fit's split from released values, in the user's units (``MethodFit.error_split`` mapped back).
    intervals : sequence of (float, float) or None
        The declared range of each design column (public).
    response_interval : (float, float) or None
        The declared range of the response (public).
    intercept_index : int or None
        The intercept column.
    rate : RateBound or None
        The bound whose privacy-to-sampling ratio converts the sampling part when the fit released no
        privacy part (the method's upper rate, else the minimax lower bound).

    Returns
    -------
    CoefficientErrors or None
        None when neither released values nor declared bounds give the coefficients' units.

    Examples
    --------
    >>> from dpstats.theory import coefficient_errors, error_bounds
    >>> rate = error_bounds("ssp", 1000, 2, 1.0, 1e-6).lower
    >>> errors = coefficient_errors(["Intercept", "x"], 1000, intervals=[(1, 1), (0, 10)],
    ...                             response_interval=(-50, 50), intercept_index=0, rate=rate)
    >>> errors.to_frame().round(3)
               privacy  sampling  ratio
    term
    Intercept    0.303     1.826  0.166
    x            0.053     0.316  0.166
    """
    d = len(names)
    public, public_source = _public_sampling(n, intervals, response_interval, intercept_index)
    if split is not None:
        sampling = split.sampling if split.sampling is not None else public
        sampling_source = (split.sampling_source if split.sampling is not None
                           else public_source if public is not None else "not released")
        return CoefficientErrors(tuple(names), _sd(split.privacy, d), _sd(sampling, d), split.privacy_source,
                                 sampling_source, released=True, lower_bound=split.privacy_lower_bound,
                                 sampling_assumed=split.sampling is None and public is not None)
    if public is None or rate is None or not rate.applicable or not rate.statistical:
        return None
    ratio = float(rate.privacy) / float(rate.statistical)  # type: ignore[arg-type]
    return CoefficientErrors(tuple(names), ratio * _sd(public, d), _sd(public, d),
                             f"the {rate.label}'s privacy-to-sampling ratio ({rate.source}) times the sampling error",
                             public_source, released=False)


def _public_sampling(n: int, intervals: Sequence[tuple[float, float] | None],
                     response_interval: tuple[float, float] | None, intercept_index: int | None
                     ) -> tuple[np.ndarray | None, str]:
    """The sampling covariance from public facts and the default assumptions, and how it was obtained."""
    moments = design_moments(intervals, intercept_index) if intervals else None
    if moments is None or response_interval is None:
        return None, "not known (no declared bounds)"
    if len(intervals) > n:
        return None, "not defined (more design columns than rows: least squares is not identified)"
    sd = assumed_residual_sd(response_interval)
    return sampling_covariance(n, moments, sd), (
        f"least squares on a design uniform on the declared ranges, residual sd {sd:.3g} (a response uniform "
        "on its declared range; an assumption, not released)")


@dataclass(frozen=True)
class ErrorBounds:
    """The error block of one fit: each coefficient's privacy and sampling error in its units, and the rates
    (units of sigma, up to constants) as a reference.

    Attributes
    ----------
    method : str
        The method's name.
    n, d : int
        Rows and coefficients.
    epsilon, delta : float
        The privacy budget.
    sparsity : int or None
        The s used for the sparse bounds, or None.
    lower : RateBound
        The minimax lower bound (Thm 16 when ``sparsity`` is given, else
        Thm 18; the non-private rate when epsilon is infinite).
    upper : RateBound or None
        The method's own rate, or None (``upper_note`` says why).
    upper_note : str
        Why there is no upper bound, or at which budget it was evaluated
        when that is not the fit's (noisy_ols with inference).
    coefficients : CoefficientErrors or None
        Each coefficient's privacy and sampling error in its units (:class:`CoefficientErrors`), or None
        (no fit, or neither released values nor declared bounds give the units).

    Examples
    --------
    >>> from dpstats.theory import error_bounds
    >>> bounds = error_bounds("ssp", 10_000, 5, 1.0, 1e-6)
    >>> bounds.dominant, round(bounds.lower_bound, 4)
    ('sampling', 0.0242)
    >>> print(bounds.table())
                     Error bounds (units of sigma, up to constants)
    ===============================================================================
                         sampling  privacy   total                           source
    -------------------------------------------------------------------------------
    minimax lower bound    0.0224  0.00186  0.0242  Cai, Wang & Zhang (2021) Thm 18
    ===============================================================================
    """

    method: str
    n: int
    d: int
    epsilon: float
    delta: float
    sparsity: int | None
    lower: RateBound
    upper: RateBound | None
    upper_note: str = ""
    coefficients: CoefficientErrors | None = None

    # -- the lower bound's terms, under the names earlier versions used --------------
    @property
    def statistical_term(self) -> float:
        """The lower bound's statistical (sampling) term, in units of sigma."""
        return float(self.lower.statistical)  # type: ignore[arg-type]

    @property
    def privacy_term(self) -> float:
        """The lower bound's privacy term, in units of sigma."""
        return float(self.lower.privacy)  # type: ignore[arg-type]

    @property
    def lower_bound(self) -> float | None:
        """Total of the lower bound, or None when its conditions fail."""
        return self.lower.total if self.lower.applicable else None

    @property
    def upper_bound(self) -> float | None:
        """Total of the method's upper bound, or None (none known, or its conditions fail)."""
        return self.upper.total if (self.upper is not None and self.upper.applicable) else None

    @property
    def lower_bound_source(self) -> str:
        """The theorem of the lower bound."""
        return self.lower.source

    @property
    def upper_bound_source(self) -> str:
        """The theorem of the method's upper bound, or why there is none."""
        return self.upper.source if self.upper is not None else self.upper_note

    @property
    def dominant(self) -> str:
        """Which term of the lower bound is larger: ``"privacy"`` or ``"sampling"``."""
        return self.lower.dominant

    @property
    def conditions(self) -> tuple[str, ...]:
        """Every failed condition ("Not applicable ...") and assumption ("Assumes ..."), in words."""
        out = [f"Not applicable ({b.source}): {f}" for b in self.bounds() for f in b.failed]
        sources: dict[str, list[str]] = {}
        for b in self.bounds():
            for c in b.caveats:
                sources.setdefault(c, []).append(b.source)
        out += [f"Assumes ({'; '.join(src)}): {c}" for c, src in sources.items()]
        return tuple(out)

    def bounds(self) -> list[RateBound]:
        """The lower bound, then the method's upper bound when there is one.

        Returns
        -------
        list of RateBound
            One or two bounds.
        """
        return [self.lower] + ([self.upper] if self.upper is not None else [])

    def dominance_line(self) -> str:
        """One line: is the privacy or the sampling error larger?  For a fit, per coefficient in its units
        (:meth:`CoefficientErrors.statement`); otherwise which term of each rate is larger at this n, d,
        epsilon, delta, and, where the method has no applicable upper bound, that the lower bound alone does not
        tell which part of the fit's error is larger.  With epsilon = inf (the non-private reference) there is no
        privacy noise, and the line says so rather than compare a privacy error of 0 with the sampling error.

        Returns
        -------
        str
            The sentence shown first in the summary's notes.
        """
        if math.isinf(self.epsilon):
            return ("No privacy noise (epsilon = inf, not private): each coefficient's error is its sampling error "
                    "alone.")
        if self.coefficients is not None:
            return self.coefficients.statement()
        where = f"n={self.n}, d={self.d}, epsilon={self.epsilon:.4g}, delta={self.delta:.3g}"
        parts = [f"{b.dominant} dominates the {b.label} (privacy {b.privacy:.3g} vs sampling {b.statistical:.3g})"
                 for b in self.bounds() if b.applicable]
        if not parts:
            return f"At {where} no bound applies (see the failed conditions)."
        if self.upper is None or not self.upper.applicable:
            low = self.lower
            return (f"At {where}: the {low.label}, the least error of any private method, is mostly {low.dominant} "
                    f"(privacy {low.privacy:.3g} vs sampling {low.statistical:.3g}); with no upper bound for this "
                    "method here, the rates do not tell which part of this fit's error is larger.")
        return f"At {where}: " + "; ".join(parts) + "."

    def reference_line(self) -> str:
        """The rates' terms at this n, d, epsilon, delta, as a reference (units of sigma).

        Returns
        -------
        str
            One sentence.
        """
        where = f"n={self.n}, d={self.d}, epsilon={self.epsilon:.4g}, delta={self.delta:.3g}"
        parts = [f"{b.label}: privacy {b.privacy:.3g}, sampling {b.statistical:.3g}"
                 for b in self.bounds() if b.applicable]
        body = "; ".join(parts) if parts else "no bound applies (see the failed conditions)"
        return (f"Reference rates at {where} (units of sigma, up to constants; they describe the model class, "
                f"not this fit): {body}.")

    def notes(self) -> list[str]:
        """Everything the tables do not show: which error is larger, how it was computed, the rates as a
        reference, constants, failed conditions, caveats, missing rate.

        Returns
        -------
        list of str
            One note per line.
        """
        out = [self.dominance_line()]
        if self.coefficients is not None:
            out += [f"Error of each coefficient: {self.coefficients.sources()}.", self.reference_line()]
        elif self.epsilon < math.inf:
            out.append("No declared bounds: the errors cannot be put in the coefficients' units; only the rates "
                       "(units of sigma) are shown.")
        out.append("Rates hold up to absolute constants (units of sigma); they tell orders of magnitude, not exact "
                   "errors.")
        if self.upper_note:
            out.append(f"Method upper bound: {self.upper_note}")
        out += list(self.conditions)
        if math.isfinite(self.epsilon) and self.epsilon > 1:
            out.append(f"Note: epsilon={self.epsilon:.4g} > 1 is treated as O(1); the constants grow with epsilon")
        return out

    def lines(self) -> list[str]:
        """The whole summary as plain-text lines.

        Returns
        -------
        list of str
            Each coefficient's error (when known), each bound, then :meth:`notes`.
        """
        out = []
        if self.coefficients is not None:
            c = self.coefficients
            out += [f"{name}: privacy {_number(p)}, sampling {_number(q)} (units of the coefficient)"
                    for name, p, q in zip(c.names, c.privacy, c.sampling, strict=True)]
        for b in self.bounds():
            if b.applicable:
                out.append(f"{b.label} ({b.source}): ~ {b.total:.3g} sigma = sampling {b.statistical:.3g} + "
                           f"privacy {b.privacy:.3g}; {b.formula}")
            else:
                out.append(f"{b.label} ({b.source}): not applicable; {b.formula}")
        return out + self.notes()

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_frame(self) -> pd.DataFrame:
        """One row per bound: terms (NaN when not applicable), source, formula, failed conditions.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``bound``.
        """
        rows = [{"bound": b.label, "kind": b.kind, "sampling": b.statistical if b.applicable else np.nan,
                 "privacy": b.privacy if b.applicable else np.nan, "total": b.total if b.applicable else np.nan,
                 "source": b.source, "formula": b.formula, "applicable": b.applicable,
                 "failed": "; ".join(b.failed)} for b in self.bounds()]
        return pd.DataFrame(rows).set_index("bound")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (``units`` are those of ``bounds``; ``coefficients`` are in the coefficients'
        units).

        Returns
        -------
        dict
            The fit's facts, ``bounds`` (one record per bound), ``upper_note``, ``dominance`` and
            ``coefficients``.
        """
        return {"method": self.method, "n": self.n, "d": self.d, "epsilon": self.epsilon, "delta": self.delta,
                "sparsity": self.sparsity, "units": "sigma, up to absolute constants",
                "bounds": self.to_frame().reset_index().replace({np.nan: None}).to_dict(orient="records"),
                "upper_note": self.upper_note, "dominance": self.dominance_line(),
                "coefficients": None if self.coefficients is None else self.coefficients.to_dict()}

    def tables(self, esc: Callable[[str], str] = str, width: int | None = None,
               stubs: Sequence[str] | None = None) -> list[SimpleTable]:
        """The summary's tables: each coefficient's error (when known and the fit is private), then the rates.

        A non-private fit (epsilon = inf) has no privacy error: its coefficients' sampling errors are the
        coefficient table's standard errors, so the split is left out.

        Parameters
        ----------
        esc : callable, default str
            Escapes each cell (e.g. for LaTeX).
        width : int, optional
            The widest text line: a longer rates table wraps its source column (:meth:`table`).
        stubs : sequence of str, optional
            The coefficients' row names (the text summary's shortened term names).

        Returns
        -------
        list of statsmodels.iolib.table.SimpleTable
            One or two tables.
        """
        split = [] if self.coefficients is None or math.isinf(self.epsilon) else [self.coefficients.table(esc, stubs)]
        return split + [self.table(esc, width)]

    def table(self, esc: Callable[[str], str] = str, width: int | None = None) -> SimpleTable:
        """The bounds as a statsmodels SimpleTable (for ``DPRegressionResults.summary()``).

        ``esc`` escapes each cell (e.g. for LaTeX).  Columns: sampling and
        privacy terms, total, theorem; "n/a" where a condition fails.

        Parameters
        ----------
        esc : callable, default str
            Escapes each cell.
        width : int, optional
            The widest text line: a source too long for it continues on further rows.

        Returns
        -------
        statsmodels.iolib.table.SimpleTable
            One row per bound.
        """
        rows = [[esc(_cell(b.statistical, b.applicable)), esc(_cell(b.privacy, b.applicable)),
                 esc(_cell(b.total, b.applicable)), esc(b.source)] for b in self.bounds()]
        stubs = [esc(("minimax lower bound" if b.kind == "lower" else f"{self.method} upper bound")
                     + ("" if b.applicable else " (n/a)")) for b in self.bounds()]
        headers = ["sampling", "privacy", "total", "source"]
        if width is not None:
            printed = fit_rows([[stub, *row] for stub, row in zip(stubs, rows, strict=True)], ["", *headers],
                               [(4, 24, False)], width)
            stubs, rows = [r[0] for r in printed], [r[1:] for r in printed]
        return SimpleTable(rows, headers=headers, stubs=stubs,
                           title=esc("Error bounds (units of sigma, up to constants)"), txt_fmt=_FMT)


def _lower_rate(epsilon: float, sparsity: int | None) -> Rate:
    if math.isinf(epsilon):
        return NON_PRIVATE_LOWER
    return SPARSE_LOWER if sparsity is not None else CLASSICAL_LOWER


def point_estimate_epsilon(epsilon: float, delta: float, inference_share: float) -> float:
    """The epsilon, at the fit's ``delta``, of a fit's point estimate alone when ``inference_share`` of its
    GDP budget mu^2 went to releases for inference.

    Gaussian releases compose as mu^2 = sum mu_i^2 (Dong, Roth & Su 2022, Cor. 3.3); with
    mu = gaussian_mu(epsilon, delta) the point estimate gets sqrt(1 - share) mu, converted back to epsilon at
    delta (Balle & Wang 2018, Thm 8).  noisy_ols's worst-case fit first sets aside gamma (delta / 10 by
    default) of delta; converting at delta - gamma instead moves the result by about 2e-5 relative at
    delta = 1e-6, far below the rates' unknown constants.

    Parameters
    ----------
    epsilon, delta : float
        The fit's budget.
    inference_share : float
        The share of mu^2 given to the releases for inference, in [0, 1).

    Returns
    -------
    float
        The point estimate's epsilon (``epsilon`` itself when the share is 0 or epsilon is infinite).

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        When ``inference_share`` is not in [0, 1) (a ValueError too).

    Examples
    --------
    >>> from dpstats.theory import point_estimate_epsilon
    >>> round(point_estimate_epsilon(1.0, 1e-6, 0.25), 3)
    0.857
    """
    if not 0.0 <= inference_share < 1.0:
        raise InvalidArgumentError(f"inference_share must lie in [0, 1), got {inference_share!r}")
    if inference_share == 0.0 or math.isinf(epsilon):
        return epsilon
    return gaussian_epsilon(math.sqrt(1.0 - inference_share) * gaussian_mu(epsilon, delta), delta)



def _spec(method: str | MethodSpec) -> MethodSpec | None:
    if isinstance(method, MethodSpec):
        return method
    try:
        return get_method(method)
    except UnknownMethodError:
        return None


def error_bounds(method: str | MethodSpec, n: int, d: int, epsilon: float, delta: float,
                 sparsity: int | None = None, guarantee: str | None = None, inference: bool = True,
                 coefficients: CoefficientErrors | None = None) -> ErrorBounds:
    """Theory summary for ``method`` (a registered name or spec) at (n, d, epsilon, delta).

    ``sparsity`` switches the lower bound to the sparse Thm 16 (and is needed
    for rates stated for a sparsity, such as the lasso's Thm 17);
    ``guarantee`` selects the method's rate for fits with that guarantee
    (default: the method's own, e.g. noisy_ols's worst-case calibration;
    ``"conditional"`` its paper's).  ``inference`` is the fit's option of that
    name: a rate whose method gives a share of its budget to inference
    releases is then evaluated at the budget left to the point estimate
    (:func:`point_estimate_epsilon`), with ``False`` at the full budget.  The
    lower bound always uses the full (epsilon, delta): it holds for every
    (epsilon, delta)-DP estimator.  ``coefficients`` is the fit's error of
    each coefficient (:func:`coefficient_errors`), shown first.

    Parameters
    ----------
    method : str or MethodSpec
        A registered method (an unknown name gets the lower bound only).
    n, d : int
        Rows and coefficients.
    epsilon, delta : float
        The privacy budget.
    sparsity : int or None, optional
        s for the sparse bounds.
    guarantee : str or None, optional
        The guarantee whose rate is used (default: the method's own).
    inference : bool, default True
        The fit's ``inference`` option.
    coefficients : CoefficientErrors or None, optional
        The fit's error of each coefficient.

    Returns
    -------
    ErrorBounds
        The lower bound, the method's upper bound (or why there is none) and the coefficients' errors.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        n or d below 1.
    dpstats.errors.InvalidPrivacyParameterError
        epsilon <= 0, or delta outside (0, 1) with a finite epsilon.

    Examples
    --------
    >>> from dpstats.theory import error_bounds
    >>> bounds = error_bounds("ssp", 10_000, 5, 1.0, 1e-6)
    >>> print(bounds.dominance_line())
    At n=10000, d=5, epsilon=1, delta=1e-06: the minimax lower bound (classical), the least error of any
    private method, is mostly sampling (privacy 0.00186 vs sampling 0.0224); with no upper bound for this method
    here, the rates do not tell which part of this fit's error is larger.
    """
    _check_rate_arguments(n, d, epsilon, delta)
    s = int(sparsity) if sparsity is not None else 0
    lower = _lower_rate(epsilon, sparsity).at(n, d, epsilon, delta, s)
    spec = _spec(method)
    name = spec.name if spec is not None else str(method)
    upper: RateBound | None = None
    note = "no proved rate registered for this method"
    registered = spec.theory_rate(guarantee or spec.guarantee) if spec is not None and spec.theory_rate else None
    if registered is not None and registered.rate is not None:
        note = ""
        if math.isfinite(epsilon) or not spec.private:  # type: ignore[union-attr]
            eps_rate, note = _rate_epsilon(registered, epsilon, delta, inference)
            if eps_rate > 0.0:
                upper = registered.rate.at(n, d, eps_rate, delta, s)
            else:  # delta alone covers the point estimate's releases: a rate stated for epsilon > 0 says nothing
                note = (f"no rate at delta={delta:g}: the point estimate's share of the budget (inference=True gives "
                        f"{registered.inference_share:g} of mu^2 to the releases for standard errors) is "
                        f"(0, {delta:g})-DP, and the rate is stated for epsilon > 0")
        else:
            note = "no privacy (epsilon = inf): the method's private rate does not apply"
    elif registered is not None and registered.uncovered_source:
        upper = RateBound("upper", f"{name} upper bound", registered.uncovered_source,
                          "none for the implemented estimator", None, None, failed=(registered.why_none,))
        note = ""
    elif registered is not None and registered.why_none:
        note = registered.why_none
    return ErrorBounds(method=name, n=n, d=d, epsilon=epsilon, delta=delta, sparsity=sparsity, lower=lower,
                       upper=upper, upper_note=note, coefficients=coefficients)


def with_coefficients(bounds: ErrorBounds, names: Sequence[str], *, split: ErrorSplit | None,
                      intervals: Sequence[tuple[float, float] | None], response_interval: tuple[float, float] | None,
                      intercept_index: int | None) -> ErrorBounds:
    """``bounds`` with each coefficient's error (:func:`coefficient_errors`): from the fit's released ``split``
    (in the user's units), else converted from the method's upper rate where it applies, else from the minimax
    lower bound.

    Parameters
    ----------
    bounds : ErrorBounds
        The fit's bounds (:func:`error_bounds`).
    names : sequence of str
        The coefficients.
    split : ErrorSplit or None
        The fit's split from released values, in the user's units, or None.
    intervals : sequence of (float, float) or None
        The declared range of each design column.
    response_interval : (float, float) or None
        The declared range of the response.
    intercept_index : int or None
        The intercept column.

    Returns
    -------
    ErrorBounds
        A copy of ``bounds`` with ``coefficients`` set.

    Examples
    --------
    >>> from dpstats.theory import error_bounds, with_coefficients
    >>> bounds = with_coefficients(error_bounds("ssp", 1000, 2, 1.0, 1e-6), ["Intercept", "x"], split=None,
    ...                            intervals=[(1, 1), (0, 10)], response_interval=(-50, 50), intercept_index=0)
    >>> bounds.coefficients.sampling.round(3)
    array([1.826, 0.316])
    """
    rate = bounds.upper if bounds.upper is not None and bounds.upper.applicable else bounds.lower
    coefficients = coefficient_errors(names, bounds.n, split=split, intervals=intervals,
                                      response_interval=response_interval, intercept_index=intercept_index, rate=rate)
    return dataclasses.replace(bounds, coefficients=coefficients)


def _rate_epsilon(upper: UpperRate, epsilon: float, delta: float, inference: bool) -> tuple[float, str]:
    """The epsilon at which a rate is evaluated, and a note when it is not the fit's."""
    share = upper.inference_share
    if not (share > 0 and inference and math.isfinite(epsilon)):
        return epsilon, ""
    eps_point = point_estimate_epsilon(epsilon, delta, share)
    return eps_point, (f"evaluated at the point estimate's budget, epsilon={eps_point:.4g} of {epsilon:.4g} "
                       f"(inference=True gives {share:g} of mu^2 to the releases for standard errors)")

# -- planning: invert the bounds ------------------------------------------------------------------------------

_N_MAX = 1e18


def _smallest_n(pred: Callable[[float], bool], n_min: float) -> float:
    """Smallest integer n >= n_min with pred(n), for a predicate that stays true once true; inf if none <= 1e18."""
    lo = max(1.0, math.ceil(n_min))
    if pred(lo):
        return lo
    hi = lo * 2.0
    while not pred(hi):
        if hi > _N_MAX:
            return math.inf
        lo, hi = hi, hi * 2.0
    while hi - lo > 1:
        mid = math.floor((lo + hi) / 2.0)
        if not lo < mid < hi:  # beyond 2**53 a float cannot split [lo, hi] (the loop never ended): hi is the answer
            break
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi



def _plan_rates(method: str | None, sparsity: int | None) -> list[tuple[str, Rate | None, str]]:
    """(method name or '(any)', rate or None, note) rows for :func:`rate_plan`; the note of a rate says why it is
    not for planning (``UpperRate.not_for_planning``), or is ""."""
    rows: list[tuple[str, Rate | None, str]] = [("(any DP method)", CLASSICAL_LOWER, "")]
    if sparsity is not None:
        rows.append(("(any DP method)", SPARSE_LOWER, ""))
    if method is None:  # every private method with a rate, by name
        for name, spec in sorted(available_methods().items()):
            if spec.private:
                rows += [(name, u.rate, u.not_for_planning) for _, u in upper_rates(spec)
                         if u.rate is not None and (sparsity is not None or not u.rate.needs_sparsity)]
        return rows
    spec = get_method(method)
    found = [u for _, u in upper_rates(spec) if spec.private]
    with_rate = [u for u in found if u.rate is not None]
    if not with_rate:
        why = next((u.why_none for u in found if u.why_none), "no proved rate registered for this method")
        return rows + [(method, None, why)]
    for u in with_rate:
        rate = u.rate
        if rate.needs_sparsity and sparsity is None:  # type: ignore[union-attr]
            rows.append((method, None, f"{rate.source} needs sparsity="))  # type: ignore[union-attr]
        else:
            rows.append((method, rate, u.not_for_planning))
    return rows



def _check_plan_arguments(target: float, d: int, epsilon: float, delta: float, sparsity: int | None,
                          method: str | None) -> None:
    """Refuse :func:`rate_plan`'s arguments with typed errors (all ``ValueError`` subclasses) saying what to fix."""
    def real(x: object) -> bool:
        return finite_real(x)  # a Python int beyond the float range is not: the rates are computed in floats

    def whole(x: object) -> bool:
        return isinstance(x, numbers.Integral) and finite_real(x)

    if not (real(target) and 0 < target):
        raise InvalidArgumentError(f"target must be a finite error > 0 (in units of sigma), got {shown(target)}")
    if not (whole(d) and d >= 1):
        raise InvalidArgumentError(f"d must be a whole number of coefficients >= 1 (within the float range), got "
                                   f"{shown(d)}")
    if not (real(epsilon) and 0 < epsilon):
        raise InvalidPrivacyParameterError(f"plan needs a finite epsilon > 0, got {shown(epsilon)}")
    if not (isinstance(delta, numbers.Real) and not isinstance(delta, bool) and 0 < delta < 1):
        raise InvalidPrivacyParameterError(f"delta must lie strictly between 0 and 1, got {shown(delta)}")
    if sparsity is not None and not (whole(sparsity) and 1 <= sparsity < d):
        raise InvalidArgumentError(f"sparsity must be a whole number with 1 <= sparsity < d={d}, got "
                                   f"{shown(sparsity)}")
    if method == "auto":
        raise UnknownMethodError("plan needs a named method: 'auto' is chosen at fit time; pass method=None to "
                                 "see every method with a known rate")
    if method is not None:
        get_method(method)  # UnknownMethodError listing the registered methods


def rate_plan(target: float, d: int, epsilon: float, delta: float, *, sparsity: int | None = None,
              method: str | None = None) -> pd.DataFrame:
    """How many rows are needed, in units of sigma: the rates of this module inverted for n.

    For each bound (the minimax lower bounds, and the upper bound of
    ``method``, or of every method with a known rate when ``method`` is None)
    the table gives, up to the bounds' unknown constants:

    * ``n_for_target``: the smallest n at which the bound's total error falls
      to ``target`` (in units of sigma);
    * ``n_privacy_for_target``: the smallest n at which the privacy term alone
      falls to ``target``;
    * ``n_privacy_below_sampling``: the smallest n from which the privacy term
      is at most the statistical term (privacy is then no longer the
      bottleneck);
    * ``sampling``, ``privacy``: the two terms at ``n_for_target``;
    * ``conditions``: the theorem's conditions that fail at ``n_for_target``
      (for instance delta >= 1/n when the n needed exceeds 1/delta);
    * ``min_rows``: the method's public minimum n (``MethodSpec.min_rows``);
      a method's three n columns are never below it (the method refuses
      fewer rows), and ``conditions`` says when it binds.

    For a lower bound, ``n_for_target`` is the n below which no
    (epsilon, delta)-DP estimator can reach the target (up to constants).

    Parameters
    ----------
    target : float
        Target error E||b - beta||_2 / sigma (> 0).
    d : int
        Number of coefficients.
    epsilon, delta : float
        The privacy budget.
    sparsity : int or None, optional
        s for the sparse bounds (Thm 16 and the lasso's Thm 17).
    method : str or None, optional
        Restrict the upper bounds to one method.

    Returns
    -------
    pandas.DataFrame
        One row per bound.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        When ``target``, ``d`` or ``sparsity`` is invalid.
    dpstats.errors.InvalidPrivacyParameterError
        When ``epsilon`` or ``delta`` is invalid.
    dpstats.errors.UnknownMethodError
        When ``method`` is ``"auto"`` or not registered.

    Examples
    --------
    >>> from dpstats.theory import rate_plan
    >>> table = rate_plan(0.1, 5, 1.0, 1e-6, method="ssp")
    >>> table[["method", "n_for_target"]]
                method  n_for_target
    0  (any DP method)         831.0
    1              ssp           NaN
    """
    _check_plan_arguments(target, d, epsilon, delta, sparsity, method)
    s = int(sparsity) if sparsity is not None else 0
    records = []
    for name, rate, note in _plan_rates(method, sparsity):
        spec = _spec(name)
        floor = float(spec.min_rows(d)) if spec is not None else np.nan
        if rate is None:
            records.append({"method": name, "bound": "(no rate)", "source": "", "n_for_target": np.nan,
                            "n_privacy_for_target": np.nan, "n_privacy_below_sampling": np.nan,
                            "sampling": np.nan, "privacy": np.nan, "conditions": note, "min_rows": floor})
            continue
        n0 = max(rate.n_min(d, s), 1.0 if math.isnan(floor) else floor)

        def total(n: float, r: Rate = rate) -> float:
            return r.statistical(n, d, s) + r.privacy_term(n, d, epsilon, delta, s)

        # the crossing uses the uncapped privacy term: with the cap, privacy <= sampling also holds at tiny n
        def total_reaches(n: float, f: Callable[[float], float] = total) -> bool:
            return f(n) <= target

        def privacy_reaches(n: float, r: Rate = rate) -> bool:
            return r.privacy_term(n, d, epsilon, delta, s) <= target

        def privacy_below_sampling(n: float, r: Rate = rate) -> bool:
            return r.privacy(n, d, epsilon, delta, s) <= r.statistical(n, d, s)

        n_t = _smallest_n(total_reaches, n0)
        n_p = _smallest_n(privacy_reaches, n0)
        n_x = _smallest_n(privacy_below_sampling, n0)
        at = rate.at(n_t, d, epsilon, delta, s) if math.isfinite(n_t) else None
        conditions = list(at.failed) if at else ["target not reached below n=1e18"]
        if n_t == floor:
            conditions.append(f"{name} refuses fewer than {int(floor)} rows for d={d} (its min_rows)")
        if note:  # the rate is shown but plans nothing (UpperRate.not_for_planning)
            conditions.append(f"not for planning: {note}")
        records.append({
            "method": name, "bound": rate.label, "source": rate.source,
            "n_for_target": n_t, "n_privacy_for_target": n_p, "n_privacy_below_sampling": n_x,
            "sampling": at.statistical if at else np.nan, "privacy": at.privacy if at else np.nan,
            "conditions": "; ".join(conditions), "min_rows": floor,
        })
    frame = pd.DataFrame.from_records(records)
    for col in ("n_for_target", "n_privacy_for_target", "n_privacy_below_sampling", "min_rows"):
        frame[col] = frame[col].astype(float)
    frame.attrs.update(target=target, d=d, epsilon=epsilon, delta=delta, sparsity=sparsity,
                       units="sigma, up to absolute constants")
    return frame


def _check_plot_arguments(d: int, epsilons: Sequence[float], delta: float, sparsity: int | None,
                          method: str | None, n_range: tuple[float, float], target: float | None) -> list[float]:
    """``epsilons`` as a list, or a typed error saying what to fix in :func:`plot_plan`'s arguments (each epsilon
    checked as :func:`rate_plan` checks its own), before anything is drawn."""
    grid = [] if isinstance(epsilons, (str, bytes)) or not isinstance(epsilons, Iterable) else list(epsilons)
    if not grid:
        raise InvalidArgumentError(f"epsilons must be a non-empty list of numbers, one pair of curves each, e.g. "
                                   f"[0.5, 1.0]; got {type(epsilons).__name__}")
    for eps in grid:
        _check_plan_arguments(1.0 if target is None else target, d, eps, delta, sparsity, method)
    try:
        lo, hi = (float(v) for v in n_range)
    except (TypeError, ValueError, OverflowError):
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidArgumentError(f"n_range must be a pair (lo, hi) of finite row counts with lo < hi, e.g. "
                                   f"(1e2, 1e7); got {repr(n_range)[:80]}")
    return grid


def plot_plan(d: int, epsilons: Sequence[float], delta: float, *, sparsity: int | None = None,
              method: str | None = None, n_range: tuple[float, float] = (1e2, 1e7), target: float | None = None,
              ax: Any = None) -> Any:
    """Plot error against n for several epsilon: the minimax lower bound and the method's upper bound.

    Needs matplotlib (``pip install dpstats[plot]``), imported only here.
    Solid lines: the lower bound (Thm 16 with ``sparsity``, else Thm 18);
    dashed: the upper bound of ``method`` when it has a rate.  Log-log axes,
    units of sigma, up to constants.  Returns the matplotlib Axes.

    Parameters
    ----------
    d : int
        Number of coefficients.
    epsilons : sequence of float
        One pair of curves per epsilon.
    delta : float
        The budget's delta.
    sparsity : int or None, optional
        s for the sparse bounds.
    method : str or None, optional
        The method whose upper bound is drawn, when it has a rate.
    n_range : (float, float), default (1e2, 1e7)
        The range of n on the x axis.
    target : float or None, optional
        A target error, drawn as a horizontal line.
    ax : matplotlib.axes.Axes, optional
        The axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes.

    Raises
    ------
    ImportError
        When matplotlib is not installed.
    InvalidArgumentError
        ``epsilons`` is not a list of numbers, or ``d``, ``sparsity``, ``n_range`` or ``target`` is invalid.
    InvalidPrivacyParameterError
        An epsilon that is not a finite number > 0, or a delta outside (0, 1).

    Examples
    --------
    >>> from dpstats.theory import plot_plan
    >>> ax = plot_plan(5, [0.5, 1.0], 1e-6, target=0.05)
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plot_plan needs matplotlib: pip install 'dpstats[plot]'") from exc
    epsilons = _check_plot_arguments(d, epsilons, delta, sparsity, method, n_range, target)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    s = int(sparsity) if sparsity is not None else 0
    ns = np.geomspace(max(n_range[0], 5.0), n_range[1], 200)
    lower = _lower_rate(1.0, sparsity)
    upper = None
    if method is not None:
        spec = get_method(method)
        registered = spec.theory_rate(spec.guarantee) if spec.theory_rate is not None else None
        upper = registered.rate if registered is not None else None
        if upper is not None and upper.needs_sparsity and sparsity is None:
            upper = None
    for k, eps in enumerate(epsilons):
        color = f"C{k}"
        ax.plot(ns, [lower.statistical(n, d, s) + lower.privacy_term(n, d, eps, delta, s) for n in ns], color=color,
                label=f"lower bound, eps={eps:g}")
        if upper is not None:
            ax.plot(ns, [upper.statistical(n, d, s) + upper.privacy(n, d, eps, delta, s) for n in ns], color=color,
                    linestyle="--", label=f"{method} upper bound, eps={eps:g}")
    ax.plot(ns, [lower.statistical(n, d, s) for n in ns], color="grey", linestyle=":", label="sampling term")
    if target is not None:
        ax.axhline(target, color="black", linewidth=0.8, label=f"target {target:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("error / sigma (up to constants)")
    ax.set_title(f"{lower.source}: d={d}" + (f", s={sparsity}" if sparsity is not None else "")
                 + f", delta={delta:g}", fontsize="medium")
    ax.legend(fontsize="small")
    return ax
