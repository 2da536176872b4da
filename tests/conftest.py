"""Shared test data: the simulated designs that several test modules use identically.

pytest loads this file before the test modules; tests/ has no ``__init__.py``, so pytest's default ("prepend")
import mode registers it as the module ``conftest`` and the test modules import the designs from it by name.
Each design is a function of (n, seed) only, so every module gets exactly the rows it had before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["LINEAR_FORMULA", "LINEAR_BOUNDS", "linear_frame", "FACTOR_FORMULA", "FACTOR_BOUNDS", "factor_frame"]

# -- two uniform covariates (tests/test_error_split.py, tests/test_inference_api.py) --------------------------------
LINEAR_FORMULA = "y ~ x1 + x2"
LINEAR_BOUNDS = {"x1": (-1.0, 1.0), "x2": (0.0, 5.0), "y": (-10.0, 10.0)}


def linear_frame(n: int, seed: int, noise: float = 1.0) -> pd.DataFrame:
    """y = 1 + 2 x1 - 0.5 x2 + noise * N(0, 1), x1 ~ U(-1, 1), x2 ~ U(0, 5): inside ``LINEAR_BOUNDS`` except y's
    rare tails."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(0, 5, n)})
    df["y"] = 1 + 2 * df.x1 - 0.5 * df.x2 + noise * rng.normal(0, 1, n)
    return df


# -- two covariates and a three-level factor (tests/test_results_tools.py, tests/test_tables.py) --------------------
FACTOR_FORMULA = "y ~ x1 + x2 + C(g, levels=['a', 'b', 'c'])"
FACTOR_BOUNDS = {"x1": (0, 10), "x2": (-1, 1), "y": (-10, 40)}


def factor_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """y = 1 + 2 x1 - 3 x2 + 2 [g = b] + N(0, 1), x1 ~ U(0, 10), x2 ~ U(-1, 1), g uniform on a, b, c."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.uniform(-1, 1, n),
                       "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = 1 + 2 * df.x1 - 3 * df.x2 + 2 * (df.g == "b") + rng.normal(0, 1, n)
    return df
