"""Private inference for the sufficient-statistics methods: a parametric bootstrap (ssp, adassp) and its
closed form for output perturbation (noisy_ols).

Ferrando, Wang & Sheldon, "Parametric bootstrap for differentially private
confidence intervals", AISTATS 2022.  The released quantities of SSP-type
methods are noisy X^T X, X^T y and y^T y (plus, for AdaSSP, a noisy
lambda_min).  Treating the design as fixed, the sampling model is

    X^T y = X^T X beta + X^T e,   X^T e ~ N(0, sigma^2 X^T X),

and each release adds independent Gaussian noise of known (public) scale.
The bootstrap plugs in estimates computed *only from released values*:

* Q = PSD projection of the noisy X^T X (estimate of X^T X),
* beta_0 = (XX~)^{-1} Xy~ with an eigenvalue floor (the SSP estimate, which is
  nearly unbiased: it is the plug-in truth even when the method itself is a
  shrinkage estimator such as AdaSSP),
* sigma^2_hat = (y^T y~ - 2 beta_0' X^T y~ + beta_0' Q beta_0) / (n - d),
  floored at the noise level of the y^T y release divided by n - d,

simulates B releases from that model (sampling error *and* privacy noise) and
re-runs the method's own post-processing on each, giving replicates b*_k whose
spread around beta_0 estimates the law of (b_hat - beta).  It returns the
re-centred replicates r_k = b_hat + b*_k - beta_0.  Everything is
post-processing of released values, so it costs no budget beyond the y^T y
release, which is a named step in the ledger.  The results object turns the
replicates into standard errors (their sd) and basic bootstrap intervals
[2 b_hat - q_(1-a/2)(r), 2 b_hat - q_(a/2)(r)] = [b_hat - q_(1-a/2)(b* - beta_0),
b_hat - q_(a/2)(b* - beta_0)], which correct the method's bias at beta_0
(AdaSSP's ridge shrinkage) as well as its spread.

Tests and intervals are one procedure (:func:`basic_bootstrap_interval`,
:func:`basic_bootstrap_pvalue`).  The basic bootstrap treats b_hat - beta as
distributed like r - b_hat, so the test of beta_j = 0 rejects at level a
exactly when 0 lies outside the (1 - a) interval.  With B replicates, m_j =
min(#{r_kj <= 2 b_j}, #{r_kj >= 2 b_j}) and k the smallest integer with
2k/B >= a, the interval is [2 b_j - r_(B-k+1), 2 b_j - r_(k)] (order statistics)
and the p-value is min(1, 2 m_j / B): 0 is outside the interval iff m_j < k iff
p_j < a, for every coefficient and every a (p has resolution 2/B, and p = 0
means "below 2/B").  The z column is (2 b_j - median_k r_kj) / sd_k(r_kj): the
bias-corrected estimate over the bootstrap standard error, the normal
approximation of the same test (equal to it when the replicates are normal).

When inference is withheld (:func:`withholding_reason`)
----------------------------------------------------------
The bootstrap's plug-in Q and its linearisation need the privacy noise in
X^T X to be small next to lambda_min; ``noise_to_signal`` measures this from
released values.  Pooling 1520 fits of ``benchmarks/coverage.py``'s
simulation (n = 1000-10000, d = 4, 8, 11, epsilon = 0.15-4, 40-60 fits per
setting, 200 replicates; data from that script's ``simulate``) by their
released ratio, nominal 95% intervals covered (all coefficients pooled):

======  ==========  ==========  ==========  ========  ======  =======  =======  ========  =========
ratio   (0.4, 0.5]  (0.5, 0.6]  (0.6, 0.8]  (0.8, 1]  (1, 2]  (2, 5]   (5, 10]  (10, 20]  > 20
ssp     0.99        0.97        0.99        1.00      1.00    0.99     0.99     0.89      0.82-0.89
adassp  0.97        0.95        0.89        0.77      0.63    0.48     0.39     0.37      0.27-0.47
======  ==========  ==========  ==========  ========  ======  =======  =======  ========  =========

(Below 0.3, ``benchmarks/results/coverage.md`` measured 0.94-0.96 for both.)
ssp's intervals stay valid, if conservative, up to a ratio of 10; adassp's
ridge, refit in every replicate, makes its replicates a poor model of the
estimator once the noise approaches lambda_min.  The rule: inference is
withheld where the measured coverage fell below 0.90, that is above the
method's threshold (``MethodSpec.inference_rule.withhold_above``; ssp: 10,
adassp: 0.6), or when the replicates are
degenerate (a non-finite value or a zero spread).  The results then report
the coefficients but no standard error, z, p or interval: the text, LaTeX
and HTML tables show "—" with the reason, the accessors return NaN (without
a warning) and ``DPRegressionResults.inference_reason`` holds the reason.
Between :data:`RELIABILITY_THRESHOLD` and the withholding threshold the
intervals are reported with the warning of :func:`unreliable_note`.

Caveats (stated in the summary): the intervals are for the coefficients of
the clipped data's regression (clipping that binds biases them), and the
uncertainty of sigma^2_hat and of Q is not propagated, so coverage is
approximate at small n; ``benchmarks/coverage.py`` measures it.

Output perturbation (``noisy_ols``): :func:`noisy_estimate_covariance`
-----------------------------------------------------------------------
``noisy_ols`` releases b~ = b + W, with b the least-squares solution on the
(clipped, truncated) data and W ~ N(0, s^2 I) drawn after, and independently
of, everything else; s = Delta(L) / mu is computed from released values (the
private lambda_min bound L) and public ones, so it is itself released.  Given
the design, b ~ N(beta, sigma^2 G^{-1}) (G = X^T X; exact for Gaussian errors,
asymptotic otherwise), b does not depend on the lambda_min noise, and the
refusal and s depend on the design and that noise only.  Hence, conditionally
on the released s (and on the fit not having refused),

    b~ - beta ~ N(0, sigma^2 G^{-1} + s^2 I).

The parametric bootstrap of this release (re-draw the sampling error, the
lambda_min noise, the bound and W, re-run the release) would have this law as
its limit if it held s at its released value; re-drawing the lambda_min noise
instead would mix over values of s that were not used, a wider reference than
the conditional one.  So the replicates are not simulated: the covariance is
written down, from released values only:

* G^{-1} from a noisy X^T X (a release for inference), its eigenvalues
  floored at ``eigen_floor`` (a released lower bound on lambda_min(G)),
* sigma^2 from a noisy v^T v (v the truncated labels) and the released b~:
  E_W[b~' G b~] = b' G b + s^2 tr(G) and RSS = v'v - b' G b, so
  RSS_hat = vv~ - b~' XX~ b~ + s^2 tr(XX~) (unbiased), clipped to the public
  [noise sd of vv~, n T^2] and divided by n - d.

The errors of sigma^2_hat matter only through the sampling share of the
variance.  Weighted by that share, its two noise terms from W (2 W' G b and
W' G W - s^2 tr G) change the variance of coefficient j by a relative amount
of order ||G b|| (G^{-1})_jj^(1/2) / (sigma n) (about ||Sigma b|| / (sigma
sqrt(n)) for G ~ n Sigma, by AM-GM on the two variance parts) and
sqrt(2 tr G^2) (G^{-1})_jj / n (about sqrt(2 d) kappa(Sigma) / n): when the
privacy noise dominates, sigma^2 barely matters; when sampling dominates, b~
is close to b.  The noise of the two inference releases shrinks relative to
X^T X and RSS as n grows, so the budget for inference can be small
(``noisy_ols.INFERENCE_SHARE``).
Intervals are b~ -/+ z_(1-alpha/2) se.  They are for the coefficients of the
regression of the clipped labels truncated at T (truncation that binds,
T below the declared bound, biases them).

The error split (:func:`sufficient_statistics_split`)
------------------------------------------------------
The summary's error block reports, for each coefficient, the privacy part
of its error (b - b_ls, with b_ls least squares on the same clipped data)
next to its sampling part (the error of b_ls), both from released values.
With H the inverse of the matrix the method solves with (the released XX~,
plus AdaSSP's ridge, eigenvalues floored as in the fit) and b the released
coefficients, the first-order expansion of b = H Xy~ in the noises e (of
X^T y, sd s_xy) and E (of X^T X, symmetric, sd s_xx on and above the
diagonal) is b - b_ls ~ H (e - E b) - (bias of the ridge), with

    Cov(e - E b) = s_xy^2 I + s_xx^2 (||b||^2 I + b b^T - diag(b o b))

(for j != k, E_jk and E_kj are one draw).  The sampling part is
sigma^2_hat G~^{-1}, G~ the released X^T X with its eigenvalues floored at
its noise sd.  When the fit ran the bootstrap, its replicates correct what
the expansion misses: their mean minus b is the bias (AdaSSP's shrinkage),
and wherever their variance minus the sampling part exceeds its Monte Carlo
error (3 sqrt(2 / (B - 1)) relative), that difference is the coefficient's
privacy variance (the expansion's covariance is rescaled coefficient by
coefficient to it): where the noise of X^T X is large next to its smallest
eigenvalue the estimator is far from linear in the noise (its eigenvalue
floor and ridge damp it), and the replicates, which re-run it, follow it.  For ``noisy_ols`` the
split is exact: the released noise s^2 I is the privacy part and
sigma^2_hat G~^{-1} the sampling part of its covariance.

Private R^2 (:func:`private_rsquared`)
--------------------------------------
R^2 = 1 - RSS(b) / TSS, for the released coefficients b on the data as the
method saw them (clipped; for ``noisy_ols`` with labels truncated at T), with
TSS = y'y - (1'y)^2 / n.  With an intercept column (a column of ones, left as
it is by the public rescaling) 1'y is that column's entry of X^T y, so the
sums follow from released values at no extra budget (:class:`ReleasedSums`):

* ``ssp``, ``adassp`` (:func:`plug_in_sums`): the released XX~, Xy~ and yy~
  plugged into RSS(b) = y'y - 2 b'X'y + b'X'X b;
* ``noisy_ols`` (:func:`output_perturbation_sums`), which releases b~ = b + W,
  W ~ N(0, s^2 I), and for inference XX~ and vv~ but no X^T v: X^T v = G b
  (normal equations), so RSS(b~) = v'v - b'G b + W'G W, estimated without bias
  by vv~ - b~'XX~ b~ + 2 s^2 tr(XX~) (E[b~'XX~ b~] = b'G b + s^2 tr G, as
  above), and X^T v by XX~ b~ (unbiased: XX~ and W are independent).

R^2 is the same in the rescaled units the method saw and in the user's: the
public map (:mod:`dpstats.scaling`) gives X b = c_y + s_y X' b' row by row, so
RSS and TSS both scale by s_y^2.  The estimate's error comes from the noise of
the releases (of order their noise sd over TSS, which grows like n) and, for
the plug-in, from the dependence of b on that noise, of the order of the
noise-to-signal ratio above; RSS is floored at 0 (so R^2 <= 1), and a
released TSS that is not positive gives no R^2.  The estimate is reported
only where both are small: a plug-in fit's released noise-to-signal ratio at
most :data:`RELIABILITY_THRESHOLD`, and a first-order noise sd, computed from
the public noise scales, at most :data:`RSQUARED_MAX_SD`
(``benchmarks/private_rsquared.py`` measures the error on either side).
Adjusted R^2 is 1 - (1 - R^2)(n - 1)/(n - d).  Without an intercept column,
1'y is not released and no R^2 is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpstats.deprecation import MovedUp
from dpstats.methods.common.linalg import eigh, psd_projection, psd_sqrt, solve_noisy_normal_equations
from dpstats.methods.common.sufficient import ReleasedStatistics, ReleasedSums
from dpstats.methods.spec import ErrorSplit
from dpstats.privacy.mechanisms import post_processing_normal

__all__ = ["SufficientStatisticsRelease", "parametric_bootstrap", "residual_variance", "noise_to_signal",
           "RELIABILITY_THRESHOLD", "unreliable_note", "format_ratio", "withholding_reason",
           "floored_inverse", "noise_propagation", "sufficient_statistics_split", "expected_noise_to_signal",
           "basic_bootstrap_interval", "basic_bootstrap_pvalue", "bootstrap_zvalues",
           "noisy_estimate_covariance", "ReleasedSums", "plug_in_sums", "output_perturbation_sums",
           "private_rsquared", "window_mean_covariance"]

#: noise_to_signal() above which the bootstrap intervals are flagged as unreliable.  Chosen from
#: benchmarks/coverage.py: every setting whose coverage fell outside [0.93, 0.97] had a ratio above 0.3,
#: and settings below it covered within the band.
RELIABILITY_THRESHOLD = 0.3

#: estimator(gram_draws (B, d, d), moment_draws (B, d), rng) -> coefficient draws (B, d)
BatchEstimator = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


#: released sufficient statistics (the name this module used before they moved beside the statistics)
SufficientStatisticsRelease = ReleasedStatistics


def residual_variance(release: SufficientStatisticsRelease, beta: np.ndarray, gram_psd: np.ndarray) -> float:
    """sigma^2_hat from released quantities only (see the module docstring).

    Parameters
    ----------
    release : ReleasedStatistics
        The noisy X^T X, X^T y and y^T y, with n and their noise sds.
    beta : numpy.ndarray
        The coefficients at which the residuals are taken (d).
    gram_psd : numpy.ndarray
        The PSD projection Q of the released X^T X (d, d).

    Returns
    -------
    float
        (y^T y~ - 2 beta' X^T y~ + beta' Q beta) / (n - d), floored at the noise sd of y^T y~ over n - d.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ReleasedStatistics
    >>> release = ReleasedStatistics(gram=np.array([[100.0, 0.0], [0.0, 50.0]]), moment=np.array([20.0, 25.0]),
    ...                              yty=30.0, n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> from dpstats.inference import residual_variance
    >>> round(residual_variance(release, np.array([0.2, 0.5]), release.gram), 4)
    0.1378
    """
    d = beta.size
    dof = max(release.n - d, 1)
    rss = release.yty - 2.0 * float(beta @ release.moment) + float(beta @ gram_psd @ beta)
    return max(rss / dof, release.yty_noise_sd / dof)


def noise_to_signal(release: SufficientStatisticsRelease) -> float:
    """2 sqrt(d) sigma_XX / lambda_min(Q): the typical spectral size of the X^T X noise relative to the
    smallest eigenvalue of the (projected) released X^T X.  Computed from released values only.

    When it is not small, the estimator is far from linear in the noise and the plug-in Q is poor, so the
    bootstrap's approximation breaks down (measured in benchmarks/coverage.py).

    Parameters
    ----------
    release : ReleasedStatistics
        The noisy X^T X and its noise sd.

    Returns
    -------
    float
        The ratio (inf when the projected X^T X is singular).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ReleasedStatistics
    >>> release = ReleasedStatistics(gram=np.array([[100.0, 0.0], [0.0, 50.0]]), moment=np.array([20.0, 25.0]),
    ...                              yty=30.0, n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> from dpstats.inference import noise_to_signal
    >>> round(float(noise_to_signal(release)), 4)
    0.0566
    """
    d = release.moment.size
    lam = float(np.linalg.eigvalsh(psd_projection(release.gram))[0])
    spectral_noise = 2.0 * np.sqrt(d) * release.gram_noise_sd
    return float("inf") if lam <= 0 else spectral_noise / lam


#: noise-to-signal ratios above this are displayed as "> 1e6": the released X^T X is then singular at the
#: scale of its noise, and the digits of the ratio carry no information.
RATIO_DISPLAY_CAP = 1e6


def format_ratio(ratio: float) -> str:
    """A noise-to-signal ratio for people: two significant digits, or "> 1e6" when larger or infinite.

    Parameters
    ----------
    ratio : float
        The ratio (:func:`noise_to_signal`).

    Returns
    -------
    str
        The ratio as shown in messages.

    Examples
    --------
    >>> from dpstats.inference import format_ratio
    >>> format_ratio(0.04321), format_ratio(float("inf"))
    ('0.043', '> 1e6')
    """
    if not math.isfinite(ratio) or ratio > RATIO_DISPLAY_CAP:
        return f"> {RATIO_DISPLAY_CAP:.0e}".replace("e+0", "e")
    return f"{ratio:.2g}"


def unreliable_note(ratio: float, limits: Mapping[str, float] | None = None) -> str:
    """The summary's warning when noise_to_signal() exceeds RELIABILITY_THRESHOLD, naming the withholding
    thresholds ``limits`` (``MethodSpec.inference_rule.withhold_above``, the most tolerant first).

    Parameters
    ----------
    ratio : float
        The fit's released noise-to-signal ratio (:func:`noise_to_signal`).
    limits : mapping of str to float or None, optional
        Withholding thresholds by method name, named in the warning (a fit passes its own method's); None:
        none named.

    Returns
    -------
    str
        The warning, starting with ``"WARNING:"``.

    Examples
    --------
    >>> from dpstats.inference import unreliable_note
    >>> print(unreliable_note(0.45, {"ssp": 10.0}))
    WARNING: the privacy noise in X^T X is large next to its smallest eigenvalue (noise-to-signal 0.45; ...
    """
    thresholds = sorted(((limit, name) for name, limit in (limits or {}).items()), reverse=True)
    named = " (" + ", ".join(f"{name} {limit:g}" for limit, name in thresholds) + ")" if thresholds else ""
    singular = not math.isfinite(ratio) or ratio > RATIO_DISPLAY_CAP
    shown = format_ratio(ratio) + (": the released X^T X is singular at the scale of its noise" if singular else "")
    return (f"WARNING: the privacy noise in X^T X is large next to its smallest eigenvalue (noise-to-signal "
            f"{shown}; above {RELIABILITY_THRESHOLD}); in this regime the bootstrap intervals were measured to miss "
            f"their nominal coverage (benchmarks/coverage.py), and above a method's withholding threshold{named} "
            "none are reported. More rows, a larger epsilon, fewer columns or factor codings with common "
            "reference levels help.")


def withholding_reason(method: str, ratio: float | None, limit: float | None, draws: np.ndarray | None,
                       bse: np.ndarray | None = None) -> str:
    """Why the inference of a fit must not be reported ("" when it may be); public and released values only.

    Withheld when the released noise-to-signal ``ratio`` exceeds the method's withholding threshold ``limit``
    (``MethodSpec.inference_rule``), when the bootstrap replicates are degenerate (a non-finite value, or a
    coefficient whose replicates do not vary), or when a standard error is not finite.

    Parameters
    ----------
    method : str
        The method's name (for the message).
    ratio : float or None
        The fit's released noise-to-signal ratio (None: not released).
    limit : float or None
        The method's withholding threshold (None: none).
    draws : numpy.ndarray or None
        The fit's re-centred bootstrap replicates (B, d), if any.
    bse : numpy.ndarray or None, optional
        The fit's standard errors, if any.

    Returns
    -------
    str
        The reason, or ``""`` when the inference may be reported.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import withholding_reason
    >>> withholding_reason("ssp", 0.2, 10.0, None, bse=np.array([0.1, np.inf]))
    'some standard errors are not finite'
    """
    if ratio is not None and limit is not None and not float(ratio) <= limit:
        return (f"the privacy noise in X^T X is too large next to its smallest eigenvalue (noise-to-signal "
                f"{format_ratio(float(ratio))}, above {limit:g} for {method}), where {method}'s bootstrap intervals "
                "were measured to cover less than 90% of the time (see dpstats.inference); the "
                "coefficients are released, their standard errors, z, p and intervals are not reported. More rows, "
                "a larger epsilon, fewer columns, merging a factor's rare levels (a level of few rows is a direction "
                "of X^T X with a small eigenvalue) or factor codings with common reference levels help")
    if draws is not None:
        if not np.all(np.isfinite(draws)):
            return "the bootstrap replicates are not all finite, so they define no interval"
        if np.any(np.ptp(draws, axis=0) == 0):
            return "the bootstrap replicates of some coefficient do not vary (a degenerate bootstrap distribution)"
    if bse is not None and not np.all(np.isfinite(bse)):
        return "some standard errors are not finite"
    return ""


def _order_statistic_rank(alpha: float, replicates: int) -> int:
    """The smallest k >= 1 with 2k / B >= alpha (the rank that makes interval and p-value one test)."""
    k = max(1, int(math.ceil(alpha * replicates / 2)))
    while k > 1 and 2 * (k - 1) / replicates >= alpha:
        k -= 1
    while 2 * k / replicates < alpha:
        k += 1
    return k


def basic_bootstrap_interval(params: np.ndarray, draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(1 - alpha) basic bootstrap intervals [2 b - r_(B-k+1), 2 b - r_(k)] from re-centred replicates
    (rows of ``draws``); see the module docstring.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b (d).
    draws : numpy.ndarray
        The re-centred replicates r (B, d).
    alpha : float
        One minus the confidence level.

    Returns
    -------
    tuple of numpy.ndarray
        The lower and the upper ends (d each).

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.random.default_rng(0).normal([1.0, 0.0], 0.5, size=(1000, 2))
    >>> from dpstats.inference import basic_bootstrap_interval
    >>> lower, upper = basic_bootstrap_interval(np.array([1.0, 0.0]), draws, 0.05)
    >>> lower.round(1), upper.round(1)
    (array([ 0.1, -1. ]), array([2. , 0.9]))
    """
    b = draws.shape[0]
    k = _order_statistic_rank(alpha, b)
    ordered = np.sort(draws, axis=0)
    return 2 * params - ordered[b - k], 2 * params - ordered[k - 1]


def basic_bootstrap_pvalue(params: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Two-sided p-values of beta_j = 0 by inverting the basic bootstrap intervals: min(1, 2 m_j / B) with
    m_j = min(#{r <= 2 b_j}, #{r >= 2 b_j}); p_j < alpha iff 0 is outside the (1 - alpha) interval.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b (d).
    draws : numpy.ndarray
        The re-centred replicates r (B, d).

    Returns
    -------
    numpy.ndarray
        The p-values (d), in steps of 2 / B.

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.random.default_rng(0).normal([1.0, 0.0], 0.5, size=(1000, 2))
    >>> from dpstats.inference import basic_bootstrap_pvalue
    >>> basic_bootstrap_pvalue(np.array([1.0, 0.0]), draws)
    array([0.034, 0.964])
    """
    centre = 2 * params
    below = np.sum(draws <= centre, axis=0)
    above = np.sum(draws >= centre, axis=0)
    return np.minimum(1.0, 2 * np.minimum(below, above) / draws.shape[0])


def bootstrap_zvalues(params: np.ndarray, draws: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """(2 b - median(r)) / sd(r): the bias-corrected estimate over the bootstrap standard error.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b (d).
    draws : numpy.ndarray
        The re-centred replicates r (B, d).
    scale : numpy.ndarray, optional
        The standard errors to divide by, where the fit reports others than the replicates' sd (d).

    Returns
    -------
    numpy.ndarray
        The z values (d).

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.random.default_rng(0).normal([1.0, 0.0], 0.5, size=(1000, 2))
    >>> from dpstats.inference import bootstrap_zvalues
    >>> bootstrap_zvalues(np.array([1.0, 0.0]), draws).round(1)
    array([2., 0.])
    """
    return (2 * params - np.median(draws, axis=0)) / (np.std(draws, axis=0, ddof=1) if scale is None else scale)


def parametric_bootstrap(release: SufficientStatisticsRelease, beta_hat: np.ndarray, estimator: BatchEstimator,
                         replicates: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Re-centred replicates (replicates, d) of the estimator (see the module docstring); and sigma^2_hat.

    Parameters
    ----------
    release : ReleasedStatistics
        The noisy X^T X, X^T y and y^T y, with n and their noise sds.
    beta_hat : numpy.ndarray
        The released coefficients (d).
    estimator : callable
        ``estimator(gram_draws (B, d, d), moment_draws (B, d), rng) -> coefficient draws (B, d)``: the method's
        post-processing of its releases, vectorised over replicates.
    replicates : int
        The number B of replicates; 0 runs none (a fit whose inference :func:`withholding_reason` withholds from
        its released noise-to-signal ratio alone: sigma^2_hat is still computed, the estimator is not called and
        ``rng`` is not drawn from).
    rng : numpy.random.Generator
        The random source of the simulation (post-processing: it touches released values only).

    Returns
    -------
    tuple of (numpy.ndarray, float)
        The re-centred replicates b_hat + b* - beta_0 (B, d), and sigma^2_hat.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ReleasedStatistics
    >>> release = ReleasedStatistics(gram=np.array([[100.0, 0.0], [0.0, 50.0]]), moment=np.array([20.0, 25.0]),
    ...                              yty=30.0, n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> from dpstats.inference import parametric_bootstrap
    >>> def solve(gram, moment, rng):
    ...     return np.linalg.solve(gram, moment[..., None])[..., 0]
    >>> draws, sigma2 = parametric_bootstrap(release, np.array([0.2, 0.5]), solve, 500, np.random.default_rng(0))
    >>> draws.shape, round(sigma2, 4)
    ((500, 2), 0.1378)
    """
    d = beta_hat.size
    q = psd_projection(release.gram)
    beta_0 = solve_noisy_normal_equations(release.gram, release.moment, eigen_floor=release.gram_noise_sd)
    sigma2 = residual_variance(release, beta_0, q)
    if replicates == 0:
        return np.empty((0, d)), sigma2
    root = psd_sqrt(q)
    z = post_processing_normal((replicates, d), rng)
    moment_true = q @ beta_0 + np.sqrt(sigma2) * z @ root  # rows: Q beta_0 + X^T e, X^T e ~ N(0, s^2 Q)
    moment = moment_true + release.moment_noise_sd * post_processing_normal((replicates, d), rng)
    e = post_processing_normal((replicates, d, d), rng)
    lower = np.tril_indices(d, -1)
    e[..., lower[0], lower[1]] = e[..., lower[1], lower[0]]  # N(0,1) on and above the diagonal, mirrored
    gram = q + release.gram_noise_sd * e
    return beta_hat + estimator(gram, moment, rng) - beta_0, sigma2


def noisy_estimate_covariance(params: np.ndarray, noise_sd: float, gram: np.ndarray, yty: float, *, n: int,
                              yty_noise_sd: float, label_bound: float, eigen_floor: float) -> tuple[np.ndarray, float]:
    """Covariance sigma^2_hat G~^{-1} + s^2 I of a released b~ = b + N(0, s^2 I), and sigma^2_hat.

    ``params`` is the released b~, ``noise_sd`` its released noise sd s, ``gram`` and ``yty`` the noisy X^T X
    and v^T v (v: the labels as the estimator saw them, |v| <= ``label_bound``), ``eigen_floor`` a released
    lower bound on lambda_min(X^T X).  See "Output perturbation" in the module docstring; released and public
    values only.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b~ (d).
    noise_sd : float
        Their released noise sd s.
    gram : numpy.ndarray
        The noisy X^T X (d, d).
    yty : float
        The noisy v^T v.
    n : int
        Rows (public).
    yty_noise_sd : float
        The noise sd of ``yty``.
    label_bound : float
        The public bound on the labels as the estimator saw them.
    eigen_floor : float
        A released lower bound on lambda_min(X^T X).

    Returns
    -------
    tuple of (numpy.ndarray, float)
        The covariance (d, d) of b~, and sigma^2_hat.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import noisy_estimate_covariance
    >>> cov, sigma2 = noisy_estimate_covariance(np.array([0.2, 0.5]), 0.01, np.diag([100.0, 50.0]), 30.0, n=100,
    ...                                         yty_noise_sd=1.0, label_bound=1.0, eigen_floor=10.0)
    >>> np.sqrt(np.diag(cov)).round(3), round(sigma2, 4)
    (array([0.038, 0.053]), 0.1379)
    """
    d = params.size
    dof = max(n - d, 1)
    rss = yty - float(params @ gram @ params) + noise_sd**2 * float(np.trace(gram))
    rss = min(max(rss, yty_noise_sd), n * label_bound**2)
    sigma2 = rss / dof
    w, v = np.linalg.eigh(0.5 * (gram + gram.T))
    inverse = (v / np.maximum(w, eigen_floor)) @ v.T
    return sigma2 * inverse + noise_sd**2 * np.eye(d), sigma2


def floored_inverse(matrix: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """The inverse of a symmetric matrix with its eigenvalues floored at ``floor`` (the operator the fit's
    :func:`~dpstats.methods.common.linalg.solve_noisy_normal_equations` applies); zero on a null space.

    Parameters
    ----------
    matrix : numpy.ndarray
        A symmetric matrix (d, d) (its symmetric part is used).
    floor : float, default 0.0
        The eigenvalue floor.

    Returns
    -------
    numpy.ndarray
        The (pseudo-)inverse (d, d).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import floored_inverse
    >>> floored_inverse(np.diag([4.0, 0.5]), floor=1.0)
    array([[0.25, 0.  ],
           [0.  , 1.  ]])
    """
    w, v = eigh(0.5 * (matrix + matrix.T))
    w = np.maximum(w, floor)
    tol = max(float(np.max(np.abs(w))), 1.0) * w.size * np.finfo(float).eps
    inv = np.where(w > tol, 1.0 / np.where(w > tol, w, 1.0), 0.0)
    return (v * inv) @ v.T


def noise_propagation(solve: np.ndarray, params: np.ndarray, moment_noise_sd: float,
                      gram_noise_sd: float) -> np.ndarray:
    """First-order covariance H C H of b = H Xy~ from the noises of X^T y and X^T X (module docstring, "The
    error split"): C = s_xy^2 I + s_xx^2 (||b||^2 I + b b^T - diag(b o b)), ``solve`` = H.

    Parameters
    ----------
    solve : numpy.ndarray
        H, the inverse of the matrix the method solves with (d, d).
    params : numpy.ndarray
        The released coefficients b (d).
    moment_noise_sd : float
        The noise sd s_xy of X^T y.
    gram_noise_sd : float
        The noise sd s_xx of X^T X.

    Returns
    -------
    numpy.ndarray
        The covariance H C H (d, d).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import noise_propagation
    >>> cov = noise_propagation(np.diag([0.01, 0.02]), np.array([0.2, 0.5]), 1.0, 1.0)
    >>> np.sqrt(np.diag(cov)).round(4)
    array([0.0114, 0.0227])
    """
    b = np.asarray(params, dtype=float)
    c = gram_noise_sd**2 * (float(b @ b) * np.eye(b.size) + np.outer(b, b) - np.diag(b * b))
    c += moment_noise_sd**2 * np.eye(b.size)
    return solve @ c @ solve


def expected_noise_to_signal(gram: np.ndarray, gram_noise_sd: float) -> float:
    """The :func:`noise_to_signal` a release of ``gram`` with noise sd ``gram_noise_sd`` is expected to show (for
    planning): 2 sqrt(d) s / (lambda_min - 2 sqrt(d) s), the spectral size of the noise over the smallest
    eigenvalue it leaves (inf when none).

    Parameters
    ----------
    gram : numpy.ndarray
        An X^T X (d, d) that the planner assumes (not a released one).
    gram_noise_sd : float
        The noise sd its release would have.

    Returns
    -------
    float
        The expected ratio (inf when the noise would swamp the smallest eigenvalue).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import expected_noise_to_signal
    >>> round(expected_noise_to_signal(np.diag([100.0, 50.0]), 1.0), 4)
    0.06
    """
    spectral_noise = 2.0 * math.sqrt(gram.shape[0]) * gram_noise_sd
    lam = float(np.linalg.eigvalsh(gram)[0]) - spectral_noise
    return spectral_noise / lam if lam > 0 else math.inf


#: the Monte Carlo tolerance of a bootstrap variance, relative, in units of its sd sqrt(2 / (B - 1))
_MC_SDS = 3.0


def _match_bootstrap(linear: np.ndarray, draws: np.ndarray, sampling: np.ndarray | None) -> np.ndarray:
    """The first-order privacy covariance ``linear`` rescaled, coefficient by coefficient, to the privacy variance
    the bootstrap shows (replicate variance minus the sampling part) wherever that exceeds its Monte Carlo error
    (module docstring, "The error split"): S linear S with S diagonal, which keeps it positive semi-definite."""
    spread = np.var(draws, axis=0, ddof=1)
    excess = spread - (0.0 if sampling is None else np.diag(sampling))
    resolved = excess > _MC_SDS * math.sqrt(2.0 / max(draws.shape[0] - 1, 1)) * spread
    lin = np.diag(linear)
    scale = np.where(resolved & (lin > 0), np.sqrt(np.maximum(excess, 0.0) / np.where(lin > 0, lin, 1.0)), 1.0)
    return linear * np.outer(scale, scale)


def _debiased(bias: np.ndarray, released: ReleasedStatistics, params: np.ndarray, solve: np.ndarray,
              sigma2: float | None) -> np.ndarray:
    """The bootstrap's bias, shrunk by the part that comes from its plug-in truth (module docstring, "The error
    split").  The bias at beta_0 is M beta_0 with M = I - H Q (H the fit's solve, Q the projected XX~), and
    beta_0 (the SSP estimate) has covariance V = H_0 C H_0 + sigma^2_hat H_0 around beta: so E[(M beta_0)_j^2]
    exceeds the bias at beta squared by (M V M^T)_jj, which is subtracted coordinate by coordinate (floored at 0).
    C is evaluated at the released coefficients (``params``), not at beta_0, whose size the noise inflates."""
    d = bias.size
    plain = floored_inverse(released.gram, released.gram_noise_sd)
    spread = noise_propagation(plain, params, released.moment_noise_sd, released.gram_noise_sd)
    if sigma2 is not None:
        spread = spread + sigma2 * plain
    m = np.eye(d) - solve @ psd_projection(released.gram)
    excess = np.diag(m @ spread @ m.T)
    keep = np.sqrt(np.maximum(bias**2 - excess, 0.0))
    return np.sign(bias) * keep


def sufficient_statistics_split(released: ReleasedStatistics, params: np.ndarray, *, sigma2: float | None,
                                ridge: float = 0.0, eigen_floor: float = 0.0, draws: np.ndarray | None = None,
                                privacy_source: str = "", sampling_source: str = "") -> ErrorSplit:
    """Privacy and sampling parts of the error of b = (XX~ + ridge I)^{-1} Xy~ (eigenvalues floored at
    ``eigen_floor``) from released values only (module docstring, "The error split").

    Parameters
    ----------
    released : ReleasedStatistics
        The noisy X^T X and X^T y and their noise sds (``yty`` is not read).
    params : numpy.ndarray
        The released coefficients b.
    sigma2 : float or None
        sigma^2_hat from released values, or None (no sampling part).
    ridge, eigen_floor : float
        The fit's ridge (AdaSSP) and eigenvalue floor (SSP).
    draws : numpy.ndarray or None
        The fit's re-centred bootstrap replicates (B, d), when it ran the bootstrap.
    privacy_source, sampling_source : str
        How the parts were computed, in words.

    Returns
    -------
    ErrorSplit
        The privacy part (second moment of b - b_ls) and the sampling part (covariance of b_ls), d x d each.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ReleasedStatistics
    >>> release = ReleasedStatistics(gram=np.array([[100.0, 0.0], [0.0, 50.0]]), moment=np.array([20.0, 25.0]),
    ...                              yty=30.0, n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> from dpstats.inference import sufficient_statistics_split
    >>> split = sufficient_statistics_split(release, np.array([0.2, 0.5]), sigma2=0.12)
    >>> np.sqrt(np.diag(split.privacy)).round(4), np.sqrt(np.diag(split.sampling)).round(4)
    (array([0.0114, 0.0227]), array([0.0346, 0.049 ]))
    """
    b = np.asarray(params, dtype=float)
    d = b.size
    solve = floored_inverse(released.gram + ridge * np.eye(d), eigen_floor)
    privacy = noise_propagation(solve, b, released.moment_noise_sd, released.gram_noise_sd)
    sampling = None if sigma2 is None else sigma2 * floored_inverse(released.gram, released.gram_noise_sd)
    if draws is not None:
        bias = _debiased(np.mean(draws, axis=0) - b, released, b, solve, sigma2)
        privacy = _match_bootstrap(privacy, draws, sampling) + np.outer(bias, bias)
    elif ridge > 0:
        bias = -ridge * floored_inverse(released.gram, released.gram_noise_sd) @ b  # first order in the ridge
        privacy = privacy + np.outer(bias, bias)
    return ErrorSplit(privacy=privacy, sampling=sampling, privacy_source=privacy_source,
                      sampling_source=sampling_source)


def window_mean_covariance(iterates: np.ndarray, batches: int = 10) -> np.ndarray:
    """The covariance of the mean of a window of noisy iterates, by non-overlapping batch means.

    The window (m, d) is cut into ``batches`` consecutive batches; the covariance of their means divided by
    the number of batches estimates that of the window's mean when each batch is longer than the iterates'
    correlation time (Flegal & Jones, Ann. Statist. 2010, batch means for Markov chains).  A drift in the
    window (iterates still converging) inflates it, so it errs on the large side.  Iterates of a private
    descent are post-processing of its releases, so this costs no budget.

    Parameters
    ----------
    iterates : numpy.ndarray
        The window's iterates, (m, d), in order.
    batches : int, default 10
        Number of batches (fewer when m is smaller; at least 2).

    Returns
    -------
    numpy.ndarray
        The covariance (d, d); zeros when the window has fewer than 2 iterates.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import window_mean_covariance
    >>> draws = np.random.default_rng(1).standard_normal((10_000, 1))  # independent draws: var(mean) = 1e-4
    >>> round(float(window_mean_covariance(draws, batches=100)[0, 0]) * 1e4, 1)
    1.0
    """
    x = np.asarray(iterates, dtype=float)
    m, d = x.shape
    k = min(int(batches), m)
    if k < 2:
        return np.zeros((d, d))
    size = m // k
    means = x[m - k * size:].reshape(k, size, d).mean(axis=1)
    return np.atleast_2d(np.cov(means, rowvar=False)) / k


def plug_in_sums(params: np.ndarray, release: SufficientStatisticsRelease, noise_to_signal: float) -> ReleasedSums:
    """RSS(b) = y'y - 2 b'X'y + b'X'X b with the released XX~, Xy~ and yy~ of ``release`` plugged in (ssp,
    adassp; module docstring, "Private R^2").  Noise other than yy~'s: -2 b'e + b'E b (e, E the independent
    noises of Xy~ and XX~), of sd sqrt(4 s_xy^2 ||b||^2 + 2 s_xx^2 ||b||^4) at most.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b (d).
    release : ReleasedStatistics
        The noisy X^T X, X^T y and y^T y, and their noise sds.
    noise_to_signal : float
        The fit's released noise-to-signal ratio (:func:`noise_to_signal`), kept with the sums.

    Returns
    -------
    ReleasedSums
        RSS(b), y^T y~, X^T y~ and their noise sds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ReleasedStatistics
    >>> release = ReleasedStatistics(gram=np.array([[100.0, 0.0], [0.0, 50.0]]), moment=np.array([20.0, 25.0]),
    ...                              yty=30.0, n=100, gram_noise_sd=1.0, moment_noise_sd=1.0, yty_noise_sd=1.0)
    >>> from dpstats.inference import plug_in_sums
    >>> sums = plug_in_sums(np.array([0.2, 0.5]), release, noise_to_signal=0.06)
    >>> round(sums.rss, 2), round(sums.rss_noise_sd, 3)
    (13.5, 1.152)
    """
    b = np.asarray(params, dtype=float)
    rss = release.yty - 2.0 * float(b @ release.moment) + float(b @ release.gram @ b)
    norm = float(np.linalg.norm(b))
    return ReleasedSums(
        rss=rss, yty=float(release.yty), xty=np.asarray(release.moment, dtype=float).copy(),
        rss_noise_sd=math.hypot(2.0 * release.moment_noise_sd * norm, math.sqrt(2.0) * release.gram_noise_sd * norm**2),
        yty_noise_sd=release.yty_noise_sd, xty_noise_sd=np.full(b.size, release.moment_noise_sd),
        noise_to_signal=float(noise_to_signal))


def output_perturbation_sums(params: np.ndarray, noise_sd: float, gram: np.ndarray, gram_noise_sd: float,
                             yty: float, yty_noise_sd: float) -> ReleasedSums:
    """Sums for released b~ = b + N(0, s^2 I) (``noise_sd`` s) with a noisy X^T X (``gram``) and v^T v (``yty``):
    RSS(b~) ~ vv~ - b~'XX~ b~ + 2 s^2 tr(XX~) and X^T v ~ XX~ b~, both unbiased (module docstring).  Noise
    other than vv~'s: -b~'E b~ + 2 s^2 tr E (from XX~) and -2 W'G b - 2 (W'G W - s^2 tr G) (from W), their sds
    added in quadrature.

    Parameters
    ----------
    params : numpy.ndarray
        The released coefficients b~ (d).
    noise_sd : float
        Their released noise sd s.
    gram : numpy.ndarray
        The noisy X^T X (d, d).
    gram_noise_sd : float
        Its noise sd.
    yty : float
        The noisy v^T v.
    yty_noise_sd : float
        Its noise sd.

    Returns
    -------
    ReleasedSums
        RSS(b~), v^T v~, the estimate of X^T v and their noise sds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import output_perturbation_sums
    >>> sums = output_perturbation_sums(np.array([0.2, 0.5]), 0.01, np.diag([100.0, 50.0]), 1.0, 30.0, 1.0)
    >>> round(sums.rss, 2), sums.xty
    (13.53, array([20., 25.]))
    """
    b = np.asarray(params, dtype=float)
    g = np.asarray(gram, dtype=float)
    gb = g @ b
    d = b.size
    rss = float(yty) - float(b @ gb) + 2.0 * noise_sd**2 * float(np.trace(g))
    norm = float(np.linalg.norm(b))
    from_gram = math.sqrt(2.0) * gram_noise_sd * norm**2 + 2.0 * noise_sd**2 * gram_noise_sd * math.sqrt(d)
    from_w = 2.0 * noise_sd * float(np.linalg.norm(gb)) + 2.0 * math.sqrt(2.0) * noise_sd**2 * float(np.linalg.norm(g))
    rss_sd = math.hypot(from_gram, from_w)
    xty_sd = np.sqrt(gram_noise_sd**2 * norm**2 + noise_sd**2 * np.sum(g * g, axis=1))
    return ReleasedSums(rss=rss, yty=float(yty), xty=gb, rss_noise_sd=rss_sd, yty_noise_sd=float(yty_noise_sd),
                        xty_noise_sd=xty_sd)


#: largest first-order noise sd (from the public noise scales) of a private R^2 that is reported; chosen with
#: benchmarks/private_rsquared.py (benchmarks/results/private_rsquared.md)
RSQUARED_MAX_SD = 0.02


def private_rsquared(sums: ReleasedSums, *, n: int, d: int, intercept_index: int | None
                     ) -> tuple[float, float, str, float]:
    """(R^2, adjusted R^2, reason, noise sd) from released sums; NaN with the reason where they determine none.

    Parameters
    ----------
    sums : ReleasedSums
        The fit's sums, from released values only.
    n, d : int
        Rows and design columns (public).
    intercept_index : int or None
        The position of the intercept column (a column of ones), None without one.

    Returns
    -------
    tuple of (float, float, str, float)
        R^2, adjusted R^2, the reason there is none (``""`` when there is one) and the estimate's noise sd
        (NaN where not computed).

    Notes
    -----
    To first order, R^2 - R^2_true = (-dRSS + (1 - R^2) dTSS) / TSS, where y^T y's noise enters both (net
    -R^2 s_yy), and dTSS = -2 ybar e_0 with e_0 the noise of the sum of y.  The noise sd is
    sqrt((R^2 s_yy)^2 + s_rss^2 + (2 (1 - R^2) |ybar| s_sum)^2) / TSS: independent releases add in quadrature,
    and the correlation of the sum's noise with the rest of X^T y's is ignored (within a factor sqrt(2)).
    R^2 is withheld when this sd exceeds :data:`RSQUARED_MAX_SD`, and, for the plug-in, when the released
    noise-to-signal ratio exceeds :data:`RELIABILITY_THRESHOLD` (the estimate's bias from the dependence of b
    on the noise grows with it; benchmarks/private_rsquared.py).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.inference import ReleasedSums, private_rsquared
    >>> sums = ReleasedSums(rss=3000.0, yty=12000.0, xty=np.array([800.0, 40000.0]), rss_noise_sd=20.0,
    ...                     yty_noise_sd=20.0, xty_noise_sd=np.array([20.0, 20.0]))
    >>> r2, adjusted, reason, sd = private_rsquared(sums, n=10000, d=2, intercept_index=0)
    >>> round(r2, 3), reason
    (0.749, '')
    """
    nan = float("nan")
    if intercept_index is None:
        return nan, nan, ("the model has no intercept column, and the centred R^2 needs the sum of y, which is "
                          "released only as the intercept's entry of X^T y"), nan
    if sums.noise_to_signal > RELIABILITY_THRESHOLD:
        return nan, nan, (f"the privacy noise in X^T X is large next to its smallest eigenvalue (noise-to-signal "
                          f"{format_ratio(sums.noise_to_signal)}, above {RELIABILITY_THRESHOLD}), where the estimate "
                          "from released statistics is biased"), nan
    total = float(sums.xty[intercept_index])
    tss = sums.yty - total**2 / n
    if not tss > 0:
        return nan, nan, ("the released total sum of squares is not positive (the privacy noise of y^T y is larger "
                          "than the spread of y), so R^2 is undefined"), nan
    r2 = 1.0 - max(sums.rss, 0.0) / tss
    sd = math.sqrt((r2 * sums.yty_noise_sd) ** 2 + sums.rss_noise_sd**2
                   + (2.0 * (1.0 - r2) * (total / n) * float(sums.xty_noise_sd[intercept_index])) ** 2) / tss
    if not sd <= RSQUARED_MAX_SD:
        return nan, nan, (f"the estimate from released statistics is too noisy (noise sd {sd:.2g}, above "
                          f"{RSQUARED_MAX_SD}); more rows or a larger epsilon help"), sd
    adj = 1.0 - (1.0 - r2) * (n - 1) / (n - d) if n > d else nan
    return r2, adj, "", sd


#: withheld_reason and WITHHOLD_THRESHOLD, deprecated: they read the registry, which sits above this module
#: (dpstats.methods.registry adds them when it is imported)
MOVED_UP = MovedUp("dpstats.inference")


def __getattr__(name: str) -> Any:
    if name == "InferenceWithheldWarning":
        import warnings  # noqa: PLC0415

        from dpstats import errors  # noqa: PLC0415

        warnings.warn("InferenceWithheldWarning is deprecated and no longer emitted: a withheld fit's standard "
                      "errors are NaN and DPRegressionResults.inference_reason says why", DeprecationWarning,
                      stacklevel=2)
        return errors.InferenceWithheldWarning
    return MOVED_UP.get(name)
