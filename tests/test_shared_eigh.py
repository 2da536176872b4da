"""The eigen-decompositions a sufficient-statistics fit shares (dpstats.methods.common.linalg.shared_eigh): a
matrix met before within the block is decomposed once, with the arrays a new decomposition gives, nothing is kept
after the block, and an adassp or ssp fit decomposes its released X^T X once.  The bootstrap's mirrored noise is
the upper triangle mirrored.  Deterministic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.inference import parametric_bootstrap
from dpstats.methods.common import linalg
from dpstats.methods.registry import ReleasedStatistics


def _count_eigh(monkeypatch) -> list[tuple[int, ...]]:
    shapes: list[tuple[int, ...]] = []
    real = np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda a, *args, **kw: shapes.append(np.shape(a)) or real(a, *args, **kw))
    return shapes


def test_a_matrix_met_before_in_the_block_is_decomposed_once(monkeypatch):
    shapes = _count_eigh(monkeypatch)
    a = np.random.default_rng(0).normal(size=(6, 6))
    a = a + a.T
    fresh_w, fresh_v = np.linalg.eigh(a)
    shapes.clear()
    with linalg.shared_eigh():
        w1, v1 = linalg.eigh(a)
        w2, v2 = linalg.eigh(a.copy())
        assert len(shapes) == 1 and w2 is w1 and v2 is v1
        np.testing.assert_array_equal(w1, fresh_w)
        np.testing.assert_array_equal(v1, fresh_v)
        with pytest.raises(ValueError, match="read-only"):
            w1[0] = 0.0
        b = a.copy()
        b[0, 1] = np.nextafter(b[0, 1], np.inf)
        linalg.eigh(b)
        assert len(shapes) == 2  # one bit apart: another matrix
        zero = np.zeros((2, 2))
        linalg.eigh(zero)
        linalg.eigh(-zero)
        assert len(shapes) == 4  # -0.0 and 0.0 are other bytes
    linalg.eigh(a)
    assert len(shapes) == 5  # nothing kept after the block
    assert linalg._EIGH_MEMO.get() is None


@pytest.mark.parametrize("method", ["adassp", "ssp"])
def test_a_sufficient_statistics_fit_decomposes_its_released_gram_once(monkeypatch, method):
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.uniform(-1, 1, size=(3000, 4)), columns=["a", "b", "c", "e"])
    df["y"] = df.to_numpy() @ np.array([1.0, -0.5, 0.25, 0.0]) + rng.normal(0, 0.5, 3000)
    bounds = {"a": (-1.0, 1.0), "b": (-1.0, 1.0), "c": (-1.0, 1.0), "e": (-1.0, 1.0), "y": (-5.0, 5.0)}
    fit = dpstats.dp_ols("y ~ a + b + c + e", df, 1.0, 1e-6, bounds=bounds, method=method, random_state=4)
    shapes = _count_eigh(monkeypatch)
    again = dpstats.dp_ols("y ~ a + b + c + e", df, 1.0, 1e-6, bounds=bounds, method=method, random_state=4)
    single = [s for s in shapes if len(s) == 2]
    # without the shared decompositions adassp made 11 and ssp 10 (the released X^T X again in the projection, the
    # bootstrap, the floored inverses and the error split); now 3
    assert len(single) <= 4
    np.testing.assert_array_equal(again.params.to_numpy(), fit.params.to_numpy())
    np.testing.assert_array_equal(again.bse.to_numpy(), fit.bse.to_numpy())


def test_the_bootstraps_gram_noise_is_its_upper_triangle_mirrored():
    release = ReleasedStatistics(gram=np.array([[100.0, 3.0, 1.0], [3.0, 50.0, 2.0], [1.0, 2.0, 40.0]]),
                                 moment=np.array([20.0, 25.0, 5.0]), yty=30.0, n=100, gram_noise_sd=1.0,
                                 moment_noise_sd=1.0, yty_noise_sd=1.0)
    seen: list[np.ndarray] = []

    def estimator(gram, moment, rng):
        seen.append(gram.copy())
        return np.linalg.solve(gram, moment[..., None])[..., 0]

    parametric_bootstrap(release, np.array([0.2, 0.5, 0.1]), estimator, 50, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    d = 3
    rng.standard_normal((50, d))
    rng.standard_normal((50, d))
    e = rng.standard_normal((50, d, d))
    sym = np.triu(e) + np.swapaxes(np.triu(e, 1), -1, -2)
    q = linalg.psd_projection(release.gram)
    np.testing.assert_array_equal(seen[0], q + release.gram_noise_sd * sym)
