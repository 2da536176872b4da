"""Release-by-release sensitivity of a whole fit on a neighbouring pair, by a coupled replay.

A fit on D records, for every mechanism call (Gaussian and Laplace releases, Gaussian blocks), the exact statistic
it was given, the sensitivity it was calibrated to and its noisy output.  The same fit is then run on a neighbour D'
with the same seed, every mechanism computing its statistic on D' but returning D's recorded output: every later
pass, clip and decision sees the released state of D, which is exactly the conditioning of adaptive composition
(each release is private given the earlier outputs).  The change of each statistic between D and D' must then be
at most the sensitivity charged for it (L2; L1 for a Laplace release; a symmetric matrix's upper triangle).

The noise is still drawn on D' (and discarded), so the generator advances as on D and public post-processing draws
stay aligned.  Exact (no Monte Carlo): no false failures.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import dpstats.privacy.mechanisms as mechanisms

#: relative slack on a sensitivity: the passes sum in floating point
SLACK = 1e-9


@dataclass
class Replay:
    """The recorded releases of D, and what the replay on D' found."""

    replaying: bool = False
    recorded: list[tuple[str, np.ndarray, float, Any]] = field(default_factory=list)
    position: int = 0
    ratios: list[tuple[str, float]] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def restart(self, replaying: bool) -> None:
        """Start recording (D) or replaying (D')."""
        if not replaying:
            self.recorded = []
        self.replaying, self.position, self.ratios, self.faults = replaying, 0, [], []

    def release(self, call: Callable[[], Any], statistic: Any, sensitivity: float, name: str, kind: str) -> Any:
        """Run the real mechanism; on D record it, on D' compare its statistic with D's and return D's output."""
        out = call()
        flat = _flat(statistic, kind)
        if not self.replaying:
            self.recorded.append((name, flat, float(sensitivity), out))
            return out
        if self.position >= len(self.recorded):
            self.faults.append(f"release {self.position} ({name}) was not made on D")
            return out
        was_name, was, was_sensitivity, was_out = self.recorded[self.position]
        self.position += 1
        if (was_name, was.shape, was_sensitivity) != (name, flat.shape, float(sensitivity)):
            self.faults.append(f"release {self.position - 1}: {name} {flat.shape} at {sensitivity} on D', "
                               f"{was_name} {was.shape} at {was_sensitivity} on D")
        elif not (np.all(np.isfinite(flat)) and np.all(np.isfinite(was))):
            self.faults.append(f"{name}: a statistic that is not finite")
        else:
            moved = float(np.linalg.norm(flat - was, ord=1 if kind == "l1" else 2))
            self.ratios.append((name, moved / sensitivity))
            if moved > sensitivity * (1.0 + SLACK):
                self.faults.append(f"{name}: moved by {moved:.6g}, sensitivity {sensitivity:.6g}")
        return was_out

    def finish(self) -> None:
        """Every release of D was made on D' too."""
        if self.position != len(self.recorded):
            self.faults.append(f"D' made {self.position} releases, D {len(self.recorded)}")


def _flat(statistic: Any, kind: str) -> np.ndarray:
    value = np.asarray(statistic, dtype=float)
    if kind == "symmetric":
        return value[np.triu_indices(value.shape[0])]
    return value.ravel()


def install(monkeypatch: pytest.MonkeyPatch) -> Replay:
    """Route every mechanism of dpstats through a :class:`Replay` (the module-level functions wherever a module
    imported them, and the Gaussian blocks' releases)."""
    replay = Replay()
    gaussian, symmetric, laplace = (mechanisms.gaussian_mechanism_mu, mechanisms.symmetric_gaussian_mechanism,
                                    mechanisms.laplace_mechanism)
    block, fixed = mechanisms.GaussianBlock.release, mechanisms.FixedGaussianBlock.release

    def gaussian_mu(value: Any, *, l2_sensitivity: float, **kw: Any) -> Any:
        return replay.release(lambda: gaussian(value, l2_sensitivity=l2_sensitivity, **kw), value, l2_sensitivity,
                              kw["name"], "l2")

    def symmetric_gaussian(matrix: Any, *, l2_sensitivity: float, **kw: Any) -> Any:
        return replay.release(lambda: symmetric(matrix, l2_sensitivity=l2_sensitivity, **kw), matrix,
                              l2_sensitivity, kw["name"], "symmetric")

    def laplace_mech(value: Any, *, l1_sensitivity: float, **kw: Any) -> Any:
        return replay.release(lambda: laplace(value, l1_sensitivity=l1_sensitivity, **kw), value, l1_sensitivity,
                              kw["name"], "l1")

    def block_release(self: Any, value: Any, *, l2_sensitivity: float, rng: Any) -> Any:
        return replay.release(lambda: block(self, value, l2_sensitivity=l2_sensitivity, rng=rng), value,
                              l2_sensitivity, "Gaussian block", "l2")

    def fixed_release(self: Any, value: Any, *, l2_sensitivity: float | None = None, rng: Any) -> Any:
        return replay.release(lambda: fixed(self, value, l2_sensitivity=l2_sensitivity, rng=rng), value,
                              self.l2_sensitivity, "fixed Gaussian block", "l2")

    for name, module in list(sys.modules.items()):
        if not name.startswith("dpstats") or module is None:
            continue
        for attribute, original, new in (("gaussian_mechanism_mu", gaussian, gaussian_mu),
                                         ("symmetric_gaussian_mechanism", symmetric, symmetric_gaussian),
                                         ("laplace_mechanism", laplace, laplace_mech)):
            if getattr(module, attribute, None) is original:
                monkeypatch.setattr(module, attribute, new)
    monkeypatch.setattr(mechanisms.GaussianBlock, "release", block_release)
    monkeypatch.setattr(mechanisms.FixedGaussianBlock, "release", fixed_release)
    return replay


def replay_pair(replay: Replay, fit: Callable[[Any], Any], data: Any, neighbour: Any) -> tuple[Any, Any]:
    """Fit ``data`` recording, then ``neighbour`` replaying; the two results (or the exceptions raised)."""
    results = []
    for replaying, frame in ((False, data), (True, neighbour)):
        replay.restart(replaying)
        try:
            results.append(fit(frame))
        except Exception as exc:  # noqa: BLE001 - the caller compares whatever escapes
            results.append(exc)
    replay.finish()
    return results[0], results[1]
