"""Sufficient statistics of clipped rows, accumulated in one pass over any split of the data into chunks.

The sufficient-statistics methods (``ssp``, ``adassp``, ``noisy_ols``) release
noisy versions of

    X^T X = sum_i x_i x_i^T,   X^T v = sum_i x_i v_i,   v^T v = sum_i v_i^2,

where x_i is a design row clipped column-wise to the declared (public) ranges
and v_i the clipped response, truncated to [-T, T] when a method asks for it
(Cai et al.'s f_T in ``noisy_ols``).  Each is a sum of one term per row, so
one pass (:class:`StatisticsPass`, combined by :func:`add_statistics`) computes
it chunk by chunk, in any order and on any machine: the statistic is the same
function of the data whatever the partition (only the order of the
floating-point additions changes), so a method's privacy argument (the
sensitivities of these sums under replace-one neighbours, given clipping) is
the same for in-memory rows, files and a Dask cluster.

:class:`ReleasedStatistics` holds what such a method released (the noisy sums
and their public noise sds), for inference and for the results;
:class:`ReleasedSums` the sums a private R^2 needs, computed from released
values (:func:`dpstats.inference.private_rsquared`).

Nothing here draws noise.

Numeric range: each clipped term is at most B_X^2, B_X B_Y or B_Y^2, so the
sums are finite whatever the rows once n times those is below 1e300;
:func:`check_bounds_range` refuses wider bounds (reachable only with bounds
near 1e150 and ``rescale=False``) from public facts, before any release,
because beyond that an overflowing sum would depend on the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import NoiseScaleRangeError
from dpstats.methods.common.extremes import QUIET, square
from dpstats.rows.base import writable

__all__ = ["STATISTICS_LIMIT", "check_statistics_range", "check_bounds_range", "SufficientStatistics", "StatisticsPlan",
           "StatisticsPass", "add_statistics", "ReleasedStatistics", "ReleasedSums"]


#: The largest value a sum over the rows of clipped terms may reach: below it nothing computed from the sums
#: (X^T X, its eigenvalues, X^T y, y^T y, a gradient sum) can overflow, whatever the rows.
STATISTICS_LIMIT = 1e300


def check_statistics_range(n: int, term_bound: float) -> None:
    """Refuse, from public facts only, a fit whose sums over ``n`` rows of terms bounded by ``term_bound`` (from
    the declared bounds: B_X^2, B_X B_Y, B_Y^2, c_x R) could overflow.

    Without this check such a sum would be inf for some data and finite for others (and an eigenvalue routine
    would fail on it): a data-dependent outcome that no noise hides.  It is reachable only with declared
    bounds near 1e150 or beyond and ``rescale=False`` (the public rescaling maps every bound to [-1, 1]); since
    declared and derived ranges are limited to :data:`dpstats.validation.MAX_BOUND_MAGNITUDE`, only with n * d
    beyond any real data set.
    """
    total = n * term_bound  # a Python float: inf, not an exception, on overflow
    if not total <= STATISTICS_LIMIT:
        raise NoiseScaleRangeError(
            f"the declared bounds are too wide for double precision: sums over n={n} rows of terms as large as "
            f"{term_bound:.3g} could overflow. Declare bounds on the data's scale, or keep rescale=True (the "
            "default), which fits on the design rescaled to [-1, 1]")


def check_bounds_range(bounds: DataBounds, n: int) -> None:
    """:func:`check_statistics_range` for X^T X, X^T y and y^T y of ``n`` rows clipped to ``bounds`` (terms at
    most B_X^2, B_X B_Y and B_Y^2)."""
    b_x, b_y = bounds.x_norm, bounds.y_abs
    check_statistics_range(n, max(square(b_x), square(b_y), b_x * b_y))


@dataclass(frozen=True)
class StatisticsPlan:
    """What a method needs accumulated, decided from public facts (bounds and options) before any data are read.

    ``label_truncation``: T of f_T (the clipped response is further truncated
    to [-T, T]); None for no truncation.
    """

    label_truncation: float | None = None


@dataclass
class SufficientStatistics:
    """Sums over rows of clipped x x^T, x v and v^2, and the number of rows.

    ``clipped`` says whether rows were clipped to bounds (always, for the
    private methods); ``label_truncation`` the T applied to the response.
    """

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    n: int
    label_truncation: float | None = None
    clipped: bool = True

    @property
    def d(self) -> int:
        return int(self.xty.size)

    @classmethod
    def zeros(cls, d: int, *, label_truncation: float | None = None, clipped: bool = True) -> SufficientStatistics:
        return cls(np.zeros((d, d)), np.zeros(d), 0.0, 0, label_truncation, clipped)

    @classmethod
    def from_arrays(cls, X: np.ndarray, y: np.ndarray, bounds: DataBounds | None,
                    plan: StatisticsPlan = StatisticsPlan(), inplace: bool = False) -> SufficientStatistics:
        """The statistics of the rows (X, y): clipped to ``bounds`` (None: not clipped), labels truncated per
        ``plan``; ``inplace`` clips the caller's own float arrays in place (chunks)."""
        if bounds is not None:
            Xc, yc = bounds.clip(X, y, inplace=inplace)
        else:
            Xc, yc = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        T = plan.label_truncation
        if T is not None:
            yc = np.clip(yc, -T, T)
        with np.errstate(**QUIET):  # finite for clipped rows once check_statistics_range passed
            return cls(Xc.T @ Xc, Xc.T @ yc, float(yc @ yc), int(Xc.shape[0]), T, bounds is not None)

    def __add__(self, other: SufficientStatistics) -> SufficientStatistics:
        if (self.label_truncation != other.label_truncation or self.clipped != other.clipped
                or self.xty.shape != other.xty.shape):
            raise ValueError("cannot add sufficient statistics accumulated under different plans")
        return SufficientStatistics(self.xtx + other.xtx, self.xty + other.xty, self.yty + other.yty,
                                    self.n + other.n, self.label_truncation, self.clipped)


def add_statistics(a: SufficientStatistics, b: SufficientStatistics) -> SufficientStatistics:
    """a + b, in place on ``a`` (the combine of :class:`StatisticsPass`; ``a`` is the runner's accumulator)."""
    a.xtx += b.xtx
    a.xty += b.xty
    a.yty += b.yty
    a.n += b.n
    return a


class StatisticsPass:
    """The pass (X, y, offset) -> :class:`SufficientStatistics` of one chunk, clipped to the public ``bounds``.

    Picklable (Dask ships it to the workers).  It ignores the offset
    (``uses_offset = False``).  Two passes are equal when their bounds and
    plans are, so that a pass the pipeline ran to count the rows
    (:meth:`~dpstats.rows.chunked.ChunkedRows.prime`) serves the method's own.
    """

    uses_offset = False

    def __init__(self, bounds: DataBounds | None, plan: StatisticsPlan = StatisticsPlan()) -> None:
        self.bounds = bounds
        self.plan = plan

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> SufficientStatistics:
        # chunks read from a source are the pass's own and are clipped in place; in-memory rows are copied
        return SufficientStatistics.from_arrays(X, y, self.bounds, self.plan, inplace=writable(X, y))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StatisticsPass) or self.plan != other.plan:
            return False
        a, b = self.bounds, other.bounds
        if a is None or b is None:
            return a is b
        return bool(np.array_equal(a.column_lo, b.column_lo) and np.array_equal(a.column_hi, b.column_hi)
                    and a.y_lo == b.y_lo and a.y_hi == b.y_hi)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class ReleasedStatistics:
    """Released (noisy) sufficient statistics and the public noise sd of each release.

    All of the clipped, rescaled rows the method saw.

    Attributes
    ----------
    gram : numpy.ndarray
        The noisy X^T X (d x d).
    moment : numpy.ndarray
        The noisy X^T y.
    yty : float
        The noisy y^T y.
    n : int
        The public number of rows.
    gram_noise_sd, moment_noise_sd, yty_noise_sd : float
        The public standard deviation of the noise of each entry of each release.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import SufficientStatisticsRelease
    >>> release = SufficientStatisticsRelease(gram=np.eye(2) * 100, moment=np.array([50.0, 20.0]), yty=40.0,
    ...                                       n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> release.n, release.moment.shape
    (100, (2,))
    """

    gram: np.ndarray
    moment: np.ndarray
    yty: float
    n: int
    gram_noise_sd: float
    moment_noise_sd: float
    yty_noise_sd: float


@dataclass(frozen=True)
class ReleasedSums:
    """The sums R^2 needs, computed from released values only, in the units the method saw, with the sizes of
    their privacy noise (first order, from the public noise scales).

    Attributes
    ----------
    rss : float
        Residual sum of squares of the released coefficients on the data as the method saw them.
    yty : float
        The released y^T y.
    xty : numpy.ndarray
        The released X^T y (or its estimate from released values); its intercept entry is the sum of y.
    rss_noise_sd : float
        Standard deviation (first order) of the noise in ``rss`` other than that of ``yty``.
    yty_noise_sd : float
        Standard deviation of the noise of ``yty``.
    xty_noise_sd : numpy.ndarray
        Standard deviation of the noise of each entry of ``xty``.
    noise_to_signal : float
        The released noise-to-signal ratio of X^T X where the estimate depends on it (plug-in), else 0.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import ReleasedSums
    >>> sums = ReleasedSums(rss=12.0, yty=40.0, xty=np.array([50.0, 20.0]), rss_noise_sd=0.5, yty_noise_sd=1.0,
    ...                     xty_noise_sd=np.ones(2))
    >>> sums.noise_to_signal
    0.0
    """

    rss: float
    yty: float
    xty: np.ndarray
    rss_noise_sd: float
    yty_noise_sd: float
    xty_noise_sd: np.ndarray
    noise_to_signal: float = 0.0
