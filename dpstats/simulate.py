"""Synthetic regression data with adversarially corrupted labels.

The generative model of Liu, Jain, Kong, Oh & Suggala (2023, Sec. 7
"Experiments" and App. K): w* uniform on the unit sphere; x ~ N(0, Sigma)
projected onto the unit sphere with Sigma = diag(kappa, 1, ..., 1); noise
z ~ U[-sigma, sigma]; y = x^T w* + z.  A fraction ``corruption`` of the labels
(rows chosen uniformly at random, covariates untouched: their Assumption 2)
is then replaced by an adversary.

The adversary (``attack="sign"``, the default) sets a corrupted label to
y_i = -M sign(w*^T x_i), with M = ``corrupt_scale``: the largest label the
public label range allows, with the sign that pulls any least-squares fit
away from w* (the corrupted rows alone are fitted by a vector pointing along
-w*).  ``attack="constant"`` sets y_i = M (a shift that an intercept would
absorb).  Both know w*, as a worst-case adversary may.

Everything a data analyst could know publicly about this design is in
:class:`SimulatedData`: covariates lie on the unit sphere (so each design
column is in [-1, 1]) and labels lie in [-label_bound, label_bound], with
label_bound = max(1 + sigma, M) fixed by the simulation's parameters (not by
the realised corruption), so that a method that needs bounds is given the
same declaration with and without corruption.

The error metric of the paper is ||w - w*||_Sigma; here Sigma is taken as
the covariance E[x x^T] of the *projected* covariates the regression sees
(diagonal, computed by one-dimensional quadrature), available as
``SimulatedData.covariance`` and used by :meth:`SimulatedData.error`.

:func:`sparse_regression_data` simulates the sparse setting of Cai, Wang &
Zhang (2021) instead: an s-sparse coefficient vector with entries +-1, a
Rademacher design and Gaussian noise (the lasso's support-recovery test
and ``benchmarks/error_vs_n.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import integrate

from dpstats.errors import InvalidArgumentError

__all__ = ["SimulatedData", "projected_covariance", "robust_regression_data", "SparseRegressionData",
           "sparse_regression_data"]


@dataclass(frozen=True)
class SimulatedData:
    """A simulated data set with corrupted labels and its truth (made by :func:`robust_regression_data`).

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``y, x1, ..., xd`` (no intercept column; use the formula
        ``y ~ x1 + ... + xd - 1``, see :attr:`formula`).
    w_star : numpy.ndarray
        The true coefficients.
    covariance : numpy.ndarray
        E[x x^T] of the (projected) covariates: the Sigma of the error metric.
    corrupted : numpy.ndarray
        Boolean mask of the rows whose labels the adversary replaced.
    sigma, kappa, corruption : float
        Public parameters of the simulation.
    label_bound : float
        Public bound on ``|y|``.

    Examples
    --------
    >>> from dpstats.simulate import robust_regression_data
    >>> data = robust_regression_data(1000, 3, corruption=0.05, random_state=0)
    >>> data.formula
    'y ~ x1 + x2 + x3 - 1'
    >>> int(data.corrupted.sum())
    50
    """

    frame: pd.DataFrame
    w_star: np.ndarray
    covariance: np.ndarray
    corrupted: np.ndarray
    sigma: float
    kappa: float
    corruption: float
    label_bound: float

    @property
    def X(self) -> np.ndarray:
        """The covariates as an n x d array."""
        return self.frame[self.columns].to_numpy()

    @property
    def y(self) -> np.ndarray:
        """The (partly corrupted) labels."""
        return self.frame["y"].to_numpy()

    @property
    def columns(self) -> list[str]:
        """The covariates' names, ``x1 .. xd``."""
        return [f"x{j + 1}" for j in range(self.w_star.size)]

    @property
    def formula(self) -> str:
        """``y ~ x1 + ... + xd - 1`` (the model has no intercept)."""
        return "y ~ " + " + ".join(self.columns) + " - 1"

    def bounds(self) -> dict[str, tuple[float, float]]:
        """The public bounds of the simulation's design.

        Returns
        -------
        dict of str to (float, float)
            Every covariate in [-1, 1] (the unit sphere) and ``|y| <= label_bound``.
        """
        out = {c: (-1.0, 1.0) for c in self.columns}
        out["y"] = (-self.label_bound, self.label_bound)
        return out

    def error(self, w: np.ndarray | pd.Series) -> float:
        """The paper's error of an estimate: ``||w - w*||_Sigma``, Sigma the covariance of the projected covariates.

        Parameters
        ----------
        w : numpy.ndarray or pandas.Series
            An estimate of the d coefficients.

        Returns
        -------
        float
            The error.
        """
        diff = np.asarray(w, dtype=float) - self.w_star
        return float(math.sqrt(diff @ self.covariance @ diff))


def projected_covariance(d: int, kappa: float) -> np.ndarray:
    """The covariance E[x x^T] of x = g/||g||, g ~ N(0, diag(kappa, 1, ..., 1)).

    By sign symmetry it is diagonal.  With U = kappa Z^2 and V ~ chi^2_{d-1}::

        E[U/(U+V)] = int_0^inf E[U e^{-tU}] E[e^{-tV}] dt
                   = int_0^inf kappa (1 + 2 kappa t)^{-3/2} (1 + 2t)^{-(d-1)/2} dt;

    the other d-1 entries share the rest of the unit trace equally.

    Parameters
    ----------
    d : int
        Dimension.
    kappa : float
        The first variance before the projection (the others are 1).

    Returns
    -------
    numpy.ndarray
        The d x d diagonal covariance (trace 1).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.simulate import projected_covariance
    >>> float(np.trace(projected_covariance(4, kappa=10.0)))
    1.0
    """
    if d == 1:
        return np.ones((1, 1))

    def integrand(t: float) -> float:
        return kappa * (1.0 + 2.0 * kappa * t) ** -1.5 * (1.0 + 2.0 * t) ** (-(d - 1) / 2.0)

    first, _ = integrate.quad(integrand, 0.0, np.inf, limit=200)
    return np.diag([first] + [(1.0 - first) / (d - 1)] * (d - 1))


def robust_regression_data(n: int, d: int, *, kappa: float = 1.0, sigma: float = 0.1, corruption: float = 0.0,
                           corrupt_scale: float | None = None, attack: str = "sign",
                           random_state: int | np.random.Generator | None = None) -> SimulatedData:
    """Simulate the paper's setting with a fraction ``corruption`` of adversarially corrupted labels.

    Parameters
    ----------
    n, d : int
        Rows and covariates.
    kappa : float
        Sigma = diag(kappa, 1, ..., 1) before the projection onto the sphere (>= 1).
    sigma : float
        Noise z ~ U[-sigma, sigma].
    corruption : float
        Fraction of labels replaced by the adversary (rows chosen at random), in [0, 1).
    corrupt_scale : float, optional
        M, the magnitude of corrupted labels; default 5 (1 + sigma).
    attack : {"sign", "constant"}
        ``"sign"`` (y = -M sign(w*^T x)) or ``"constant"`` (y = M).
    random_state : int, numpy.random.Generator or None
        Seed or Generator (this is data simulation, not a private release).

    Returns
    -------
    SimulatedData
        The data, the truth and the public facts of the design.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        A parameter out of range, or an unknown attack (a ``ValueError``).

    Examples
    --------
    >>> import dpstats
    >>> from dpstats.simulate import robust_regression_data
    >>> data = robust_regression_data(20_000, 5, corruption=0.05, random_state=1)
    >>> res = dpstats.dp_ols(data.formula, data.frame, epsilon=1.0, delta=1e-6, method="ssp",
    ...                      bounds=data.bounds(), random_state=0)
    >>> data.error(res.params) > 0
    True
    """
    if not (n >= 1 and d >= 1 and kappa >= 1 and sigma >= 0 and 0 <= corruption < 1):
        raise InvalidArgumentError(f"need n, d >= 1, kappa >= 1, sigma >= 0 and 0 <= corruption < 1; got n={n}, "
                                   f"d={d}, kappa={kappa}, sigma={sigma}, corruption={corruption}")
    if attack not in {"sign", "constant"}:
        raise InvalidArgumentError(f"attack must be 'sign' or 'constant', got {attack!r}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    scale = 5.0 * (1.0 + sigma) if corrupt_scale is None else float(corrupt_scale)
    w_star = rng.standard_normal(d)
    w_star /= np.linalg.norm(w_star)
    g = rng.standard_normal((n, d))
    g[:, 0] *= math.sqrt(kappa)
    x = g / np.linalg.norm(g, axis=1, keepdims=True)
    y = x @ w_star + rng.uniform(-sigma, sigma, size=n)
    corrupted = np.zeros(n, dtype=bool)
    n_bad = int(round(corruption * n))
    if n_bad:
        rows = rng.choice(n, size=n_bad, replace=False)
        corrupted[rows] = True
        y[rows] = -scale * np.sign(x[rows] @ w_star) if attack == "sign" else scale
    frame = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(d)])
    frame.insert(0, "y", y)
    return SimulatedData(frame=frame, w_star=w_star, covariance=projected_covariance(d, kappa),
                         corrupted=corrupted, sigma=float(sigma), kappa=float(kappa), corruption=float(corruption),
                         label_bound=max(1.0 + sigma, scale))


class SparseRegressionData(NamedTuple):
    """A draw of :func:`sparse_regression_data`: design, response, true coefficients and their support.

    Attributes
    ----------
    X : numpy.ndarray
        The n x d Rademacher design.
    y : numpy.ndarray
        The n responses.
    beta : numpy.ndarray
        The d true coefficients (s of them non-zero).
    support : numpy.ndarray
        The sorted indices of beta's non-zeros.

    Examples
    --------
    >>> from dpstats.simulate import sparse_regression_data
    >>> X, y, beta, support = sparse_regression_data(100, 20, 3, 0.5, random_state=0)
    >>> X.shape, support.size
    ((100, 20), 3)
    """

    X: np.ndarray
    y: np.ndarray
    beta: np.ndarray
    support: np.ndarray


def sparse_regression_data(n: int, d: int, s: int, sigma: float, *,
                           random_state: int | np.random.Generator | None = None) -> SparseRegressionData:
    """Simulate y = X beta + N(0, sigma^2) with an s-sparse beta, the sparse setting of Cai, Wang & Zhang (2021).

    An instance of their high-dimensional sparse linear model (Sec. 5.4: the lower bound of Thm 16 and the
    DP-LASSO of Algorithm 4): beta has s non-zero entries, each -1 or +1 with
    equal probability, on a support drawn uniformly without replacement; a Rademacher design (independent
    entries +-1, so uncorrelated columns, each bounded by the public range [-1, 1]); noise N(0, sigma^2).

    The draws are made in a fixed order (X, the support, the signs, the noise), the order of the code this
    replaced in the lasso's support-recovery test and benchmark, so a seed gives the same data as before and
    the stored results (benchmarks/results/cai.md) stay reproducible.

    Parameters
    ----------
    n, d, s : int
        Rows, columns and the number of non-zero coefficients (1 <= s <= d).
    sigma : float
        Standard deviation of the noise (>= 0).
    random_state : int, numpy.random.Generator or None
        Seed or Generator (this is data simulation, not a private release).

    Returns
    -------
    SparseRegressionData
        ``X`` (n x d), ``y`` (n), ``beta`` (d) and ``support`` (the sorted indices of beta's non-zeros).

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        A parameter out of range (a ``ValueError``).

    Examples
    --------
    >>> import dpstats
    >>> from dpstats.simulate import sparse_regression_data
    >>> X, y, beta, support = sparse_regression_data(500, 1000, 5, 0.5, random_state=0)
    >>> res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="lasso", intercept=False, x_bounds=(-1, 1),
    ...                             y_bounds=(-8, 8), sparsity=5, random_state=0)
    >>> res.params.size
    1000
    """
    if not (n >= 1 and 1 <= s <= d and sigma >= 0):
        raise InvalidArgumentError(f"need n >= 1, 1 <= s <= d and sigma >= 0; got n={n}, d={d}, s={s}, sigma={sigma}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    X = rng.choice([-1.0, 1.0], size=(n, d))
    beta = np.zeros(d)
    support = rng.choice(d, s, replace=False)
    beta[support] = rng.choice([-1.0, 1.0], s)
    y = X @ beta + sigma * rng.normal(size=n)
    return SparseRegressionData(X, y, beta, np.sort(support))
