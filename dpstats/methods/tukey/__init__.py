"""TukeyEM: private aggregation of block models by approximate Tukey depth (``method="tukey"``).

Amin, Joseph, Ribero & Vassilvitskii, "Easy differentially private linear
regression", ICLR 2023 (arXiv 2208.07353), Algorithms 1-2, with the
propose-test-release (PTR) check of Brown, Gaboardi, Smith, Ullman &
Zakynthinou (NeurIPS 2021).  The rows are cut into m public blocks, one
model is fitted per block (per-block OLS, or the moments of a private
pilot's residuals), and one point of high approximate Tukey depth among the
models is released by a restricted exponential mechanism once a PTR test
has certified that the models are concentrated enough.

Privacy, in one paragraph: a replaced row lies in one public block, so it
changes one of the m models; the PTR statistic is 1-sensitive and released
with Laplace noise (epsilon_PTR); the exponential mechanism on the depth
regions uses the factor exp(epsilon_EM q / 2), valid under replace-one, and
is (epsilon_EM, delta)-indistinguishable on every data set within the
released distance of a safe one, so the release is (epsilon_PTR +
epsilon_EM, delta)-DP.  The private centres and radii (exponential
mechanisms), the radius check (discrete Laplace) and the pilot (Gaussian)
compose with it by basic composition, each charged to the ledger; every map
back to the user's coefficients is post-processing.  No data bounds are
needed: declared ranges only restrict the private preprocessing.

Proof: docs/proofs/tukey.md.

Modules: :mod:`~dpstats.methods.tukey.options` (the options),
:mod:`~dpstats.methods.tukey.plan` (number of models, layout, budget),
:mod:`~dpstats.methods.tukey.preprocessing` (private centres and radii),
:mod:`~dpstats.methods.tukey.radius_check`, :mod:`~dpstats.methods.tukey.pilot`,
:mod:`~dpstats.methods.tukey.passes` and :mod:`~dpstats.methods.tukey.block_sums`
(the reads), :mod:`~dpstats.methods.tukey.depth` (approximate Tukey depth and
volumes), :mod:`~dpstats.methods.tukey.em` (PTR and the restricted exponential
mechanism) and :mod:`~dpstats.methods.tukey.method` (the fit).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from dpstats.methods.spec import MethodSpec
from dpstats.methods.tukey.method import fit
from dpstats.methods.tukey.options import TukeyOptions
from dpstats.methods.tukey.plan import AUTO_ROWS_PER_COLUMN, MIN_ROWS_PER_COLUMN, public_refusal
from dpstats.rates import UpperRate

__all__ = ["SPEC", "TukeyOptions", "fit", "public_refusal", "theory_rate"]

_NO_RATE = UpperRate(uncovered_source="TukeyEM (Amin et al. 2023)", why_none=(
    "Amin et al.'s utility theorem (Thm 3.1, via Brown et al. 2021) covers only the exact-depth Tukey EM; "
    "dpstats implements the approximate-depth EM, which has no utility theorem (in practice it needs "
    "n >~ 1000 d with m = 1000 models)"))


def theory_rate(guarantee: str) -> UpperRate:
    """TukeyEM has no proved rate for the estimator implemented here (the approximate-depth EM)."""
    return _NO_RATE


def _min_rows(d: int) -> int:
    return MIN_ROWS_PER_COLUMN * d


def _auto_min_rows(d: int) -> int:
    return AUTO_ROWS_PER_COLUMN * d


SPEC = MethodSpec(
    name="tukey",
    title="TukeyEM (approximate Tukey depth with propose-test-release)",
    citation="Amin, Joseph, Ribero & Vassilvitskii (ICLR 2023), Algorithms 1-2",
    fit=fit,
    options=TukeyOptions,
    needs_bounds=False,
    unbounded_guarantee="a replaced row changes one block's model, whatever its values",
    regimes=("no data bounds needed; n of about 1000*d or more at epsilon 1; refuses for free where even ideal "
             "block estimates would almost never pass its test (below about 500*d to 840*d rows at epsilon 1 with "
             "the default m, or a given m= too small for the budget); may still refuse (PTR) after spending about "
             "half the budget"),
    min_rows=_min_rows,
    theory_rate=theory_rate,
    auto_rank=20,
    auto_min_rows=_auto_min_rows,
    public_refusal=public_refusal,
)

#: names that moved into the submodules (kept for one release, with a DeprecationWarning)
_MOVED = {"default_m": "plan", "ideal_distance": "plan", "choose_blocks": "plan", "jitter_models": "em",
          "tukey_em": "em", "TukeyRelease": "em", "CENTRE_GRID": "preprocessing"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        module = f"dpstats.methods.tukey.{_MOVED[name]}"
        warnings.warn(f"dpstats.methods.tukey.{name} is deprecated; import it from {module}", DeprecationWarning,
                      stacklevel=2)
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'dpstats.methods.tukey' has no attribute {name!r}")
