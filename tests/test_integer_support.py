"""An integer column declared between two consecutive integers takes two values by public facts alone.

The schema's integer dtype and the declared bounds (k, k + 1) fix the values of every design column built
from the bare variable (clipping an integer to [k, k + 1] leaves k or k + 1), so the methods that use a column's
public values (Theil-Sen's slope grid and error block, DP-SGD's dummy units) and ``auto``'s two-valued-response
rule treat it like a two-level factor or a boolean.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import patsy
import pytest

import dpstats
from dpstats.bounds import column_values
from dpstats.formula.design import build_design
from dpstats.formula.schema import parse_formula
from dpstats.methods import theilsen


def _frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = (rng.random(n) < 0.4).astype(int)
    return pd.DataFrame({"g": g, "y": 2.0 + 0.8 * g + rng.normal(0.0, 1.0, n),
                         "yb": (rng.random(n) < 0.3 + 0.2 * g).astype(int),
                         "likert": rng.integers(1, 6, n), "w": rng.normal(0.0, 1.0, n)})


def _supports(formula: str, df: pd.DataFrame, bounds: dict) -> dict:
    return parse_formula(formula, df, bounds=bounds, levels=None, missing="raise").integer_supports


@pytest.mark.parametrize(("dtype", "bounds", "expected"), [
    ("int64", (0, 1), (0.0, 1.0)),
    ("int8", (1, 2), (1.0, 2.0)),
    ("Int64", (0, 1), (0.0, 1.0)),      # pandas' nullable integers
    ("uint8", (0.0, 1.0), (0.0, 1.0)),  # integral floats as bounds
    ("float64", (0, 1), None),          # a float column may hold any value in [0, 1]
    ("int64", (0, 2), None),            # three values
    ("int64", (0.5, 1.5), None),        # not consecutive integers: clipping gives 0.5, 1, 1.5
])
def test_integer_supports_come_from_the_dtype_and_the_declared_bounds(dtype, bounds, expected):
    df = _frame().assign(g=lambda f: f["g"].astype(dtype))
    found = _supports("y ~ g", df, {"g": bounds, "y": (-2, 7)})
    assert found.get("g") == expected
    assert "y" not in found  # a float response


def test_no_support_without_bounds_or_for_a_declared_factor():
    df = _frame()
    assert _supports("y ~ g", df, {"y": (-2, 7)}) == {}
    design = build_design("y ~ g", df, bounds={"y": (-2, 7)}, levels={"g": [0, 1]})
    assert design.variable_supports == {}  # a factor: its values come from the contrast matrix instead
    assert column_values(design.design_info) == ((1.0,), (0.0, 1.0))


def test_design_columns_of_a_two_valued_integer_take_its_values():
    """A bare variable takes its support, a product with a factor the products, a transform of it none (the
    transform's values are not those of the variable)."""
    df = _frame()
    bounds = {"g": (0, 1), "y": (-2, 7), "w": (-4, 4), "likert": (1, 5)}
    design = build_design("y ~ g + w + likert + np.exp(g) + g:C(likert, levels=[1, 2, 3, 4, 5])", df, bounds=bounds)
    assert design.variable_supports == {"g": (0.0, 1.0)}
    values = dict(zip(design.column_names, column_values(design.design_info, design.variable_supports),
                      strict=True))
    assert values["g"] == (0.0, 1.0)
    assert values["w"] is None and values["likert"] is None and values["np.exp(g)"] is None
    assert values["g:C(likert, levels=[1, 2, 3, 4, 5])[T.3]"] == (0.0, 1.0)
    frame = pd.DataFrame({"g": [0, 1]})
    info = patsy.dmatrix("g", frame).design_info
    assert column_values(info, {"g": (3.0, 4.0)}) == ((1.0,), (3.0, 4.0))


def test_an_integer_response_declared_zero_one_is_two_valued():
    df = _frame()
    assert build_design("yb ~ g", df, bounds={"g": (0, 1), "yb": (0, 1)}).two_valued_response
    assert not build_design("yb ~ g", df, bounds={"g": (0, 1), "yb": (0, 5)}).two_valued_response
    assert not build_design("yb ~ g", df.assign(yb=df["yb"].astype(float)),
                            bounds={"g": (0, 1), "yb": (0, 1)}).two_valued_response


def test_auto_skips_theilsen_for_an_integer_zero_one_response():
    """As for a boolean response (a linear probability model): Theil-Sen's median slope is not the difference
    in proportions."""
    df = _frame(300)
    res = dpstats.dp_ols("yb ~ g", df, 1.0, 1e-6, bounds={"g": (0, 1), "yb": (0, 1)}, random_state=0)
    assert res.method == "pgd"
    float_response = dpstats.dp_ols("yb ~ g", df.assign(yb=df["yb"].astype(float)), 1.0, 1e-6,
                                    bounds={"g": (0, 1), "yb": (0, 1)}, random_state=0)
    assert float_response.method == "theilsen"


def test_theilsen_sees_the_integer_predictor_as_two_valued(monkeypatch):
    seen = []
    original = theilsen.two_values

    def spy(ctx, x_col, x_range):
        out = original(ctx, x_col, x_range)
        seen.append(out)
        return out

    monkeypatch.setattr(theilsen, "two_values", spy)
    df = _frame()
    for frame in (df, df.assign(g=df["g"].astype(float))):
        dpstats.dp_ols("y ~ g", frame, 1.0, 1e-6, method="theilsen", bounds={"g": (0, 1), "y": (-2, 7)},
                       random_state=0, bootstrap=100)
    # the public rescaling maps [0, 1] to [-1, 1]; the float column is not two-valued by any public fact
    assert seen == [(-1.0, 1.0), None]


@pytest.mark.parametrize("method", ["theilsen", "dpsgd", "pgd"])
def test_a_value_outside_the_declared_bounds_is_clipped_onto_the_support(method):
    """The support is an assumption the fit enforces, not one it trusts: an integer outside (0, 1) is clipped to
    the nearer bound before any method reads it, so the release is the one the clipped data give (same seed)."""
    df = _frame(200)
    wild = df.copy()
    wild.loc[[3, 50, 120], "g"] = [7, -4, 1_000_000]
    clipped = df.copy()
    clipped.loc[[3, 50, 120], "g"] = [1, 0, 1]
    fits = [dpstats.dp_ols("y ~ g", frame, 1.0, 1e-6, method=method, bounds={"g": (0, 1), "y": (-2, 7)},
                           random_state=4) for frame in (wild, clipped)]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())


def test_a_design_singular_on_the_two_values_is_refused_before_reading_a_row():
    """g and I(g ** 2) of an integer column declared (0, 1) are the same column on every data set the fit allows
    (it clips g to 0 or 1): refused from public facts, nothing spent; a float column's are not."""
    from dpstats.errors import SingularDesignError

    df = _frame()
    bounds = {"g": (0, 1), "y": (-2, 7)}
    with pytest.raises(SingularDesignError, match="'g', 'I\\(g \\*\\* 2\\)'"):
        dpstats.dp_ols("y ~ g + I(g**2)", df, 1.0, 1e-6, bounds=bounds, random_state=0)
    assert build_design("y ~ g + I(g**2)", df.assign(g=df["g"].astype(float)), bounds=bounds).dependent_columns() == []
    assert build_design("y ~ g * w", df, bounds={**bounds, "w": (-4, 4)}).dependent_columns() == []


def test_a_float_indicator_response_gets_a_note_on_its_storage():
    """A response declared between consecutive integers but stored as floats is not two-valued by public facts;
    the fit warns (``FloatIndicatorWarning``) and the report says how to store it so that it is (from the dtype and
    the bounds only).  Stored as int or bool, or declared on a wider range, there is neither."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 500)})
    df["y"] = (rng.uniform(size=500) < 0.3).astype(float)
    cases = [(df, {"y": (0, 1)}, 1), (df.assign(y=df.y.astype(int)), {"y": (0, 1)}, 0),
             (df.assign(y=df.y.astype(bool)), {}, 0), (df, {"y": (-1, 2)}, 0)]
    for data, bounds, expected in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dpstats.dp_ols("y ~ x", data, 1.0, 1e-6, method="ssp", bounds={"x": (0, 1), **bounds},
                                 random_state=0)
        assert sum("stored as floats" in note for note in res.privacy.notes) == expected
        assert sum(issubclass(w.category, dpstats.errors.FloatIndicatorWarning) for w in caught) == expected


def test_the_float_indicator_hint_tells_a_csv_reader_how_to_declare_the_type(tmp_path):
    """s55 new-user check: ``dp_ols(..., "rossi.csv")`` with the 0/1 rearrest declared (0, 1) warned "store it as bool
    or int (df['arrest'] = ...)", with no data frame to change; the hint now names ``CSVSource(path, dtype=...)``,
    and the file read through it with that type is two-valued: no warning (deterministic)."""
    rng = np.random.default_rng(2)
    path = tmp_path / "indicator.csv"
    pd.DataFrame({"x": rng.uniform(0, 1, 400), "y": (rng.uniform(size=400) < 0.3).astype(int)}).to_csv(path,
                                                                                                       index=False)
    fit = {"method": "ssp", "bounds": {"x": (0, 1), "y": (0, 1)}, "random_state": 0}
    with pytest.warns(dpstats.errors.FloatIndicatorWarning,
                      match=r"CSVSource\(path, dtype=\{'y': 'int64'\}\) from dpstats\.rows\.sources"):
        dpstats.dp_ols("y ~ x", str(path), 1.0, 1e-6, **fit)
    from dpstats.rows.sources import CSVSource
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpstats.errors.FloatIndicatorWarning)
        res = dpstats.dp_ols("y ~ x", CSVSource(str(path), dtype={"y": "int64"}), 1.0, 1e-6, **fit)
    assert not any("stored as floats" in note for note in res.privacy.notes)


def test_a_proportions_fit_is_told_how_to_silence_the_float_indicator_hint():
    """The hint does not apply to a proportion, whose fits would draw it every time: the warning says how to silence
    it, and that filter does (the summary's note stays)."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 400)})
    df["share"] = np.clip(0.3 + 0.4 * df.x + 0.1 * rng.normal(size=400), 0, 1)
    fit = {"method": "ssp", "bounds": {"x": (0, 1), "share": (0, 1)}, "random_state": 0}
    with pytest.warns(dpstats.errors.FloatIndicatorWarning,
                      match=r"silence this hint with warnings\.filterwarnings\('ignore', "
                            r"category=dpstats\.errors\.FloatIndicatorWarning\)\.$"):
        dpstats.dp_ols("share ~ x", df, 1.0, 1e-6, **fit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=dpstats.errors.FloatIndicatorWarning)
        res = dpstats.dp_ols("share ~ x", df, 1.0, 1e-6, **fit)
    assert sum("stored as floats" in note for note in res.privacy.notes) == 1
