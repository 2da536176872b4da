"""Products and powers centred at pgd's released means although every bound is declared (measured, not adopted).

With every variable and the response bounded, the default (``rescale="centred"``) centres a product or power at the
midpoints of its variables' declared ranges before a private fit sees the design; without them pgd centres it at
its own released means (docs/proofs/pgd.md, step 3b).  This script runs another benchmark of this checkout with one
change, in this process only: where the method is pgd (``auto``'s choice included), ``rescale`` is ``"centred"``,
every bound is declared and the design has centrable columns (:meth:`dpstats.formula.Design.centrable_columns`:
those of its declared centring, or, where every midpoint is 0 and so nothing is centred, the powers and products
it would centre), the pipeline applies no public rescaling and hands pgd the centrable columns, which it centres at
released means inside the declared ranges: the bound-free path of step 3b on a public domain.  The budget is the
same (the moments' budget split between the two releases, as there).  Measured in session 54 against the code as
it is, on the same noise seeds; the figures and why it was not adopted: docs/choosing.md, "Products and powers".

Run from the repository root (the arguments after the benchmark's name are that benchmark's own)::

    python benchmarks/released_centring.py held_out --method auto --seeds 10 --epsilons 0.5,1,3 \
        --datasets 401ksubs,restinsp --jsonl released.jsonl
    python benchmarks/released_centring.py centring --seeds 10 --epsilons 1,3 --out released_centring.md
    python benchmarks/released_centring.py centring_figures --out released_figures.md
    python benchmarks/released_centring.py real_data --datasets card,cps,nhefs,wage --methods auto --seeds 15 \
        --no-peers --out released_real_data

(``real_data`` must run with one job, its default: the change is made in this process only.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from dpstats import pipeline  # noqa: E402
from dpstats.methods.common import product_centring  # noqa: E402

BENCHMARKS = ("held_out", "centring", "centring_figures", "real_data")
_DECLARED = pipeline._public_transform
_RELEASE = product_centring.release_moments
_INTERVALS = product_centring._centring_intervals
_FIRST: list[Any] = []  # the first release of the current fit's centred moments (its centres and scales)


def _released_transform(spec: Any, design: Any, rescale: str) -> tuple[Any, Any]:
    """The pipeline's clip ranges and public rescaling, with pgd's centrable columns left to its released means
    where every bound is declared (module docstring); elsewhere as the package does it."""
    if spec.private and spec.name == "pgd" and rescale == "centred" and not design.missing_bounds:
        centrable, declared = design.centrable_columns(), design.public_centring()
        if centrable is not None and (declared is None or set(centrable.centred) == set(declared.centred)):
            return (design.data_bounds() if spec.needs_bounds else None), None
    return _DECLARED(spec, design, rescale)


def _release_kept(*args: Any, **kwargs: Any) -> Any:
    """``release_moments`` as it is, keeping the first release of a centred fit (the released scales the gate
    reads)."""
    st = _RELEASE(*args, **kwargs)
    if kwargs.get("only") is None:
        _FIRST[:] = [st]
    return st


def _gated_intervals(gate: float) -> Any:
    """The centring's intervals, with a variable centred at its declared midpoint c instead where its released mean
    m lies within ``gate`` released scales of c, |m - c| <= gate s (post-processing of the first release)."""
    def intervals(domain: Any, centres: np.ndarray, centring: Any) -> Any:
        scales = domain.half * _FIRST[0].scale
        mid = 0.5 * (domain.lo + domain.hi)
        moved = np.where(np.abs(np.clip(centres, domain.lo, domain.hi) - mid) <= gate * scales, mid, centres)
        return _INTERVALS(domain, moved, centring)
    return intervals


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark named by the first argument with the change (module docstring).

    Parameters
    ----------
    argv : sequence of str, optional
        The benchmark's name (one of ``BENCHMARKS``) and its own arguments, with ``--gate G`` anywhere after the
        name to centre a variable at its released mean only where that lies more than G released scales from its
        declared midpoint (else at the midpoint, inside the same releases); ``sys.argv[1:]`` when None.

    Returns
    -------
    None
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in BENCHMARKS:
        raise SystemExit(f"usage: released_centring.py {{{','.join(BENCHMARKS)}}} [that benchmark's arguments]")
    if args[0] == "real_data" and "--jobs" in args[:-1] and args[args.index("--jobs") + 1] != "1":
        raise SystemExit("real_data must run with one job here (the change is made in this process only)")
    if "--gate" in args[1:-1]:  # centre at the released mean only where it lies beyond gate released scales
        at = args.index("--gate")
        gate = float(args[at + 1])
        del args[at:at + 2]
        product_centring.release_moments = _release_kept  # type: ignore[assignment]
        product_centring._centring_intervals = _gated_intervals(gate)  # type: ignore[assignment]
    pipeline._public_transform = _released_transform  # type: ignore[assignment]
    importlib.import_module(args[0]).main(args[1:])


if __name__ == "__main__":
    main()
