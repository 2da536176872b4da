"""The memos of a refit's design build: the formula's parse (dpstats.formula.schema.parse_formula), patsy's
designs of a formula patsy builds without reading a row (dpstats.formula.design._KeptBuilders) and the rank probe
(dpstats.formula.identifiable).  A refit of one formula on
one schema with the same declarations reuses them, and any change of a public fact they read (a bounds dict or a
levels list mutated in place, a column's dtype, the columns' order, missing=) is parsed and built afresh, with the
refusal, warning and design a first build gives.  Deterministic."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import patsy
import pytest

from dpstats.errors import (
    DataTypeError,
    FormulaError,
    InvalidBoundsError,
    TransformDomainError,
    UndeclaredCategoriesWarning,
    UndeclaredLevelsError,
)
from dpstats.formula import build_design, identifiable
from dpstats.formula import design as design_module
from dpstats.formula import schema as schema_module
from dpstats.formula.schema import parse_formula


@pytest.fixture(autouse=True)
def _empty_memo(monkeypatch):
    monkeypatch.setattr(schema_module, "_PARSES", type(schema_module._PARSES)())
    monkeypatch.setattr(design_module, "_KEPT_BUILDERS", design_module._KeptBuilders(8))
    monkeypatch.setattr(design_module, "_LEVELS_PASSED", design_module._PassedChecks(8))


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"x": rng.uniform(1, 9, n), "z": rng.uniform(-1, 1, n), "y": rng.normal(size=n),
                         "g": rng.choice(["a", "b", "c"], n)})


def test_a_refit_reuses_the_parse_with_its_own_containers():
    df = _frame()
    bounds = {"x": (1.0, 10.0), "y": (-5.0, 5.0)}
    first = parse_formula("y ~ np.log(x) + z", df, bounds=bounds, levels=None, missing="raise")
    again = parse_formula("y ~ np.log(x) + z", df.copy(), bounds=dict(bounds), levels=None, missing="raise")
    assert again.plan is first.plan and again.schema is first.schema
    assert again.facts == first.facts and again.facts is not first.facts
    assert again.factor_codes == first.factor_codes and again.factor_codes is not first.factor_codes
    assert again.columns == first.columns and again.columns is not first.columns


def test_a_bounds_dict_mutated_in_place_is_parsed_again():
    df = _frame()
    bounds = {"x": (1.0, 10.0), "y": (-5.0, 5.0)}
    first = parse_formula("y ~ np.log(x) + z", df, bounds=bounds, levels=None, missing="raise")
    assert dict((v, (lo, hi)) for v, lo, hi in first.plan.clip) == {"x": (1.0, 10.0)}
    bounds["x"] = (0.0, 10.0)
    with pytest.raises(TransformDomainError, match=r"'np.log\(x\)' is undefined \(or overflows\)"):
        parse_formula("y ~ np.log(x) + z", df, bounds=bounds, levels=None, missing="raise")
    bounds["x"] = [2.0, 8.0]
    moved = parse_formula("y ~ np.log(x) + z", df, bounds=bounds, levels=None, missing="raise")
    assert moved.plan.clip == (("x", 2.0, 8.0),)
    bounds["g"] = (0.0, 1.0)
    with pytest.raises(InvalidBoundsError, match="bounds were given for 'g'"):
        parse_formula("y ~ np.log(x) + z + g", df, bounds=bounds, levels={"g": ["a", "b", "c"]}, missing="raise")


def test_a_levels_list_mutated_in_place_is_parsed_again():
    df = _frame()
    levels = {"g": ["a", "b", "c"]}
    first = parse_formula("y ~ z + g", df, bounds=None, levels=levels, missing="raise")
    assert first.plan.levels == (("g", ("a", "b", "c")),)
    levels["g"].reverse()
    again = parse_formula("y ~ z + g", df, bounds=None, levels=levels, missing="raise")
    assert again.plan.levels == (("g", ("c", "b", "a")),)
    levels["g"].append("a")
    with pytest.raises(FormulaError, match="levels for 'g' must be a non-empty list of distinct values"):
        parse_formula("y ~ z + g", df, bounds=None, levels=levels, missing="raise")
    design = build_design("y ~ z + g", df, levels={"g": ["c", "b", "a"]})
    assert design.column_names == ["Intercept", "g[T.b]", "g[T.a]", "z"]


def test_a_changed_dtype_column_order_or_missing_is_parsed_again():
    df = _frame()
    parse_formula("y ~ x + z", df, bounds=None, levels=None, missing="raise")
    changed = df.assign(y=df["y"].astype(str))
    with pytest.raises(DataTypeError, match="the response 'y' must be numeric"):
        parse_formula("y ~ x + z", changed, bounds=None, levels=None, missing="raise")
    as_text = parse_formula("y ~ x + z", df.assign(z=df["z"].astype(str)), bounds=None, levels=None, missing="raise")
    assert not pd.api.types.is_numeric_dtype(as_text.schema["z"].dtype)
    bounds = {"z": (0.0, 1.0)}
    as_int = df.assign(z=(df["z"] > 0).astype("int64"))
    assert parse_formula("y ~ x + z", as_int, bounds=bounds, levels=None, missing="raise").integer_supports == {
        "z": (0.0, 1.0)}
    as_float = as_int.assign(z=as_int["z"].astype(float))
    assert parse_formula("y ~ x + z", as_float, bounds=bounds, levels=None, missing="raise").integer_supports == {}
    dotted = parse_formula("y ~ .", df[["y", "x", "z"]], bounds=None, levels=None, missing="raise")
    reordered = parse_formula("y ~ .", df[["y", "z", "x"]], bounds=None, levels=None, missing="raise")
    assert dotted.factor_codes == ["x", "z"] and reordered.factor_codes == ["z", "x"]
    assert parse_formula("y ~ x + z", df, bounds=None, levels=None, missing="drop").plan.missing == "drop"


def test_a_categorical_dtype_with_other_categories_is_parsed_again():
    df = _frame().assign(g=lambda d: pd.Categorical(d["g"], categories=["a", "b", "c"]))
    first = parse_formula("y ~ z + g", df, bounds=None, levels=None, missing="raise")
    other = df.assign(g=pd.Categorical(df["g"], categories=["c", "b", "a"]))
    again = parse_formula("y ~ z + g", other, bounds=None, levels=None, missing="raise")
    assert list(first.schema["g"].dtype.categories) == ["a", "b", "c"]
    assert list(again.schema["g"].dtype.categories) == ["c", "b", "a"]


def test_a_parse_that_warns_warns_on_every_call():
    df = _frame().assign(g=lambda d: pd.Categorical(d["g"], categories=["a", "b", "c"]))
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parse_formula("y ~ z + g", df, bounds=None, levels={"g": ["a", "b"]}, missing="null")
        assert [w.category for w in caught] == [UndeclaredCategoriesWarning]


def test_declarations_that_are_not_plain_dicts_of_lists_are_parsed_every_time():
    df = _frame()
    bounds = pd.Series({"x": (1.0, 10.0)})
    parse_formula("y ~ x", df, bounds={"x": np.array([1.0, 10.0])}, levels=None, missing="raise")
    parse_formula("y ~ x", df, bounds=bounds.to_dict(), levels=None, missing="raise")
    assert len(schema_module._PARSES) == 1  # only the dict of tuples is kept


def _count_builds(monkeypatch) -> list[int]:
    built: list[int] = []
    real = patsy.design_matrix_builders
    monkeypatch.setattr(patsy, "design_matrix_builders", lambda *a, **k: built.append(1) or real(*a, **k))
    return built


def test_a_refit_of_bare_numeric_variables_reuses_patsys_designs(monkeypatch):
    built = _count_builds(monkeypatch)
    df = _frame()
    bounds = {"x": (1.0, 10.0), "z": (-1.0, 1.0), "y": (-5.0, 5.0)}
    first = build_design("y ~ x + z + x:z", df, bounds=bounds)
    assert built == []  # the designs of the zero-row check of the levels (patsy.dmatrices) are the rows' too
    again = build_design("y ~ x + z + x:z", df.copy(), bounds=dict(bounds))
    assert built == [] and again.design_info is first.design_info
    assert again.column_names == first.column_names == ["Intercept", "x", "z", "x:z"]
    np.testing.assert_array_equal(again.X, first.X)
    as_int = build_design("y ~ x + z + x:z", df.assign(x=np.round(df["x"]).astype("int64")), bounds=bounds)
    assert as_int.column_names == first.column_names
    np.testing.assert_array_equal(as_int.X[:, 1], np.round(df["x"]))
    np.testing.assert_array_equal(as_int.X[:, 2], first.X[:, 2])


@pytest.mark.parametrize("formula", ["y ~ np.log(x) + z", "y ~ x + g", "y ~ I(x) : z", 'y ~ Q("x") + z',
                                     "y ~ x * C(g) + np.sqrt(x)", "y ~ C(g, Sum) + I(x ** 2 / 3 - z)",
                                     "y ~ z + C(g, levels=['a', 'b', 'c'])", "np.exp(y) ~ I(-x) + np.log1p(x)"])
def test_a_refit_of_factors_with_declared_levels_and_stateless_transforms_reuses_patsys_designs(monkeypatch, formula):
    built = _count_builds(monkeypatch)
    df = _frame()
    bounds = {"x": (1.0, 10.0), "z": (-1.0, 1.0), "y": (-5.0, 5.0)}
    first = build_design(formula, df, bounds=bounds, levels={"g": ["a", "b", "c"]})
    assert built == []  # the zero-row check's designs serve the rows
    again = build_design(formula, df.copy(), bounds=dict(bounds), levels={"g": ["a", "b", "c"]})
    assert built == [] and again.design_info is first.design_info
    monkeypatch.setattr(design_module, "_KEPT_BUILDERS", design_module._KeptBuilders(8))
    monkeypatch.setattr(design_module, "_LEVELS_PASSED", design_module._PassedChecks(8))
    fresh = build_design(formula, df, bounds=bounds, levels={"g": ["a", "b", "c"]})
    assert again.column_names == fresh.column_names
    np.testing.assert_array_equal(again.X, fresh.X)
    np.testing.assert_array_equal(again.y, fresh.y)


@pytest.mark.parametrize("formula", ["y ~ x + bs(z, knots=[0.0], lower_bound=-1, upper_bound=1)",
                                     "y ~ x + I(z > 0)", "y ~ x + I(2 ** 40 * 2 ** 40 + z)", "y ~ x + C(np.abs(k))",
                                     "y ~ x + I(k ** -1)"])
def test_a_formula_with_other_factors_is_built_from_the_rows_every_time(monkeypatch, formula):
    built = _count_builds(monkeypatch)
    df = _frame().assign(k=lambda d: (np.arange(len(d)) % 3 + 1).astype("int64"))
    for _ in range(2):
        try:
            build_design(formula, df, bounds={"x": (1.0, 10.0), "z": (-1.0, 1.0)}, allow_data_levels=True)
        except FormulaError:
            pass  # (the negative power of an integer: refused the same way both times)
    assert len(built) == 2


def test_levels_read_from_the_rows_are_read_again_when_one_row_changes(monkeypatch):
    built = _count_builds(monkeypatch)
    df = _frame()
    first = build_design("y ~ z + g", df, allow_data_levels=True)
    changed = df.copy()
    changed.loc[3, "g"] = "d"
    again = build_design("y ~ z + g", changed, allow_data_levels=True)
    assert len(built) == 2
    assert first.column_names == ["Intercept", "g[T.b]", "g[T.c]", "z"]
    assert again.column_names == ["Intercept", "g[T.b]", "g[T.c]", "g[T.d]", "z"]


def test_kept_designs_follow_one_changed_row_categories_levels_and_dtypes(monkeypatch):
    df = _frame()
    bounds = {"x": (1.0, 10.0), "z": (-1.0, 1.0), "y": (-5.0, 5.0)}
    formula = "y ~ x * C(g) + np.log(x)"
    first = build_design(formula, df, bounds=bounds, levels={"g": ["a", "b", "c"]})
    one_row = df.copy()
    one_row.loc[7, "x"] = 2.5
    one_row.loc[8, "g"] = "c" if df.loc[8, "g"] != "c" else "a"
    moved = build_design(formula, one_row, bounds=bounds, levels={"g": ["a", "b", "c"]})
    assert moved.design_info is first.design_info
    differs = np.flatnonzero(np.any(moved.X != first.X, axis=1))
    assert differs.tolist() == [7, 8]
    assert moved.X[7, moved.column_names.index("np.log(x)")] == np.log(2.5)
    levels = {"g": ["c", "b", "a"]}
    reordered = build_design(formula, df, bounds=bounds, levels=levels)
    assert reordered.column_names[1:3] == ["C(g)[T.b]", "C(g)[T.a]"]
    levels["g"] = ["a", "b", "c"]
    assert build_design(formula, df, bounds=bounds, levels=levels).column_names == first.column_names
    as_cat = df.assign(g=pd.Categorical(df["g"], categories=["b", "a", "c"]))
    assert build_design(formula, as_cat, bounds=bounds).column_names[1:3] == ["C(g)[T.a]", "C(g)[T.c]"]
    as_int = df.assign(x=np.round(df["x"]).astype("int64"))
    by_int = build_design(formula, as_int, bounds=bounds, levels={"g": ["a", "b", "c"]})
    np.testing.assert_array_equal(by_int.X[:, by_int.column_names.index("np.log(x)")], np.log(np.round(df["x"])))
    with pytest.raises(UndeclaredLevelsError, match="'g'"):
        build_design(formula, df, bounds=bounds)
    as_text = df.assign(x=df["x"].astype(str))
    with pytest.raises(InvalidBoundsError, match="bounds were given for 'x', which is not numeric"):
        build_design(formula, as_text, bounds=bounds, levels={"g": ["a", "b", "c"]})


def test_a_bare_variable_made_boolean_or_text_gets_its_own_design(monkeypatch):
    built = _count_builds(monkeypatch)
    df = _frame()
    build_design("y ~ x + z", df)
    as_bool = build_design("y ~ x + z", df.assign(z=df["z"] > 0))  # (a boolean's levels are False, True)
    assert len(built) == 0 and as_bool.column_names == ["Intercept", "z[T.True]", "x"]
    with pytest.raises(UndeclaredLevelsError, match="'z'"):
        build_design("y ~ x + z", df.assign(z=np.where(df["z"] > 0, "p", "n")))
    assert build_design("y ~ x + z", df).column_names == ["Intercept", "x", "z"]


def _count_misses(monkeypatch) -> tuple[list[int], list[int]]:
    """(parses computed, zero-row checks of the levels made): the misses of the two memos of a refit."""
    parses: list[int] = []
    checks: list[int] = []
    real_parse, real_check = schema_module._parse_formula, design_module._schema_dmatrices
    monkeypatch.setattr(schema_module, "_parse_formula", lambda *a, **k: parses.append(1) or real_parse(*a, **k))
    monkeypatch.setattr(design_module, "_schema_dmatrices", lambda *a, **k: checks.append(1) or real_check(*a, **k))
    return parses, checks


def test_both_memos_are_keyed_by_the_same_public_facts(monkeypatch):
    parses, checks = _count_misses(monkeypatch)
    df = _frame()
    formula = "y ~ np.log(x) + z + g"
    bounds = {"x": (1.0, 10.0), "y": (-5.0, 5.0)}
    levels = {"g": ["a", "b", "c"]}

    def build(frame=df, *, shown=formula, missing="raise"):
        return build_design(shown, frame, bounds=bounds, levels=levels, missing=missing)

    def misses() -> tuple[int, int]:
        return len(parses), len(checks)

    build()
    assert misses() == (1, 1)
    build_design(formula, df.copy(), bounds=dict(bounds), levels={"g": list(levels["g"])})  # equal facts: both hit
    assert misses() == (1, 1)
    bounds["x"] = (2.0, 10.0)  # mutated in place
    assert build().column_intervals[3].lo == np.log(2.0)
    assert misses() == (2, 2)
    build()
    assert misses() == (2, 2)
    levels["g"].reverse()  # mutated in place
    assert build().column_names == ["Intercept", "g[T.b]", "g[T.a]", "np.log(x)", "z"]
    assert misses() == (3, 3)
    build(df.assign(z=df["z"].astype("float32")))  # a dtype
    assert misses() == (4, 4)
    build(df[["g", "z", "y", "x"]])  # the columns' order
    assert misses() == (5, 5)
    build(missing="drop")
    assert misses() == (6, 6)
    build(shown="y ~ np.log(x) + g + z")
    assert misses() == (7, 7)
    build()  # every one kept
    build(df.assign(z=df["z"].astype("float32")))
    build(missing="drop")
    assert misses() == (7, 7)


def test_the_rank_probe_is_computed_once_for_a_refit_and_again_for_other_public_facts(monkeypatch):
    monkeypatch.setattr(identifiable, "_PROBES", identifiable._ProbeMemo(8))
    probed: list[int] = []
    real = identifiable.RankProbe._probe_matrix
    monkeypatch.setattr(identifiable.RankProbe, "_probe_matrix",
                        lambda self, info: probed.append(1) or real(self, info))
    df = _frame().assign(k=lambda d: (np.arange(len(d)) % 2).astype("int64"))
    bounds = {"x": (1.0, 10.0), "k": (0.0, 1.0), "y": (-5.0, 5.0)}
    formula = "y ~ x + k + I(k ** 2) + C(g)"
    first = build_design(formula, df, bounds=bounds, levels={"g": ["a", "b", "c"]})
    assert first.dependent_columns() == ["k", "I(k ** 2)"] and len(probed) == 1
    one_row = df.copy()
    one_row.loc[4, "k"] = 1 - one_row.loc[4, "k"]
    again = build_design(formula, one_row, bounds=dict(bounds), levels={"g": ["a", "b", "c"]})
    assert again.design_info is first.design_info
    assert again.dependent_columns() == ["k", "I(k ** 2)"] and len(probed) == 1
    # the same design under other declared bounds: k takes three values, no dependency
    wider = identifiable.RankProbe(first.rank_probe.plan, first.rank_probe.schema, {**bounds, "k": (0.0, 2.0)}, {})
    assert wider.dependent_columns(first.design_info) == [] and len(probed) == 2
    # ... and under other supports or schema dtypes
    supported = identifiable.RankProbe(first.rank_probe.plan, first.rank_probe.schema, bounds, {"k": (0.0, 1.0, 2.0)})
    assert supported.dependent_columns(first.design_info) == [] and len(probed) == 3
    schema = first.rank_probe.schema.assign(k=first.rank_probe.schema["k"].astype("float32"))
    as_float = identifiable.RankProbe(first.rank_probe.plan, schema, bounds, first.rank_probe.supports)
    assert as_float.dependent_columns(first.design_info) == ["k", "I(k ** 2)"] and len(probed) == 4
    assert first.dependent_columns() == ["k", "I(k ** 2)"] and len(probed) == 4
    assert build_design(formula, df, bounds={**bounds, "k": (0.0, 2.0)},
                        levels={"g": ["a", "b", "c"]}).dependent_columns() == []


def test_the_probe_memo_keeps_at_most_its_bytes_of_probe_matrices():
    memo = identifiable._ProbeMemo(8, max_bytes=3000)
    infos = [object() for _ in range(3)]
    for info in infos:
        memo.get(info, ("probe", ()), lambda: (np.zeros((10, 16)), np.ones(16, dtype=bool), np.zeros(16, dtype=bool)))
    assert len(memo._held) == 2  # 1,312 bytes each: the oldest went
    calls: list[int] = []
    memo.get(infos[0], ("probe", ()), lambda: calls.append(1))
    memo.get(infos[2], ("probe", ()), lambda: calls.append(1))
    assert calls == [1]
    huge = identifiable._ProbeMemo(8, max_bytes=10)
    huge.get(infos[0], ("probe", ()), lambda: np.zeros(100))
    assert len(huge._held) == 1  # the newest is kept whatever its size


_PAIRED_FORMULAS = [
    "y ~ x + z", "y ~ np.log(x + 300) * z", "y ~ I(x ** 2) + I(z / 3)", "y ~ C(g) + x", "y ~ g * x",
    "y ~ C(g, Sum) + z", "y ~ C(g, Treatment('b'))", "y ~ C(g, levels=['c', 'a', 'b']) * x", "y ~ b + x",
    "y ~ C(b) * z", "y ~ C(x, levels=[2, 1, 0], contrast=Sum)", "y ~ Q('x') + Q('g')", "y ~ b:g + x",
    "np.log(y + 100) ~ x + g", "y ~ 0 + g + np.sqrt(np.abs(z))", "y ~ C(h, levels=[1, 2, 3]) + z",
]


def _paired_column(kind: str, n: int, rng: np.random.Generator) -> pd.Series:
    if kind.startswith("cat"):
        cats = [["a", "b", "c"], ["c", "a", "b"], ["a", "b"]][int(kind[3:])]
        return pd.Series(pd.Categorical(rng.choice(cats, n), categories=cats))
    if kind == "bool":
        return pd.Series(rng.random(n) < 0.5)
    if kind == "object":
        return pd.Series(rng.choice(["a", "b", "c"], n).astype(object))
    return pd.Series(rng.integers(0, 3, n).astype(kind))


def test_a_kept_design_builds_what_a_fresh_one_builds_on_frames_of_random_dtypes(monkeypatch):
    # patsy's designs kept from one frame (_KeptBuilders) give the next frame the X, y and column names a fresh
    # build gives, byte for byte, or the same error: formulas of factors, transforms, Q(), C() with levels and
    # contrasts, booleans, Categoricals with reordered categories, int/float/object dtypes and columns that shadow a
    # name of the namespace (np, I, C, Sum) in either frame; deterministic (a fixed seed)
    rng = np.random.default_rng(54)
    kinds = {"x": ["int8", "int64", "uint8", "float32", "float64"], "z": ["int16", "float64"],
             "y": ["float64", "float32"], "g": ["cat0", "cat1", "cat2", "bool", "object"],
             "b": ["bool", "cat2", "int8"], "h": ["int64", "float64", "cat0"]}

    def frame(n: int, same_as: dict[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
        chosen = same_as or {v: str(rng.choice(k)) for v, k in kinds.items()}
        df = pd.DataFrame({v: _paired_column(k, n, rng) for v, k in chosen.items()})
        if rng.random() < 0.25:
            df[str(rng.choice(["np", "I", "C", "Sum", "log"]))] = rng.normal(size=n)
        return df, chosen

    def outcome(desc, df, formula, variables):
        try:
            X, y, X_info, y_info = design_module._dmatrices(desc, df, formula, variables)
        except Exception as exc:  # noqa: BLE001 - the kept and the fresh build must fail alike
            return type(exc).__name__, str(exc)
        return (np.asarray(X).dtype.str, np.asarray(X).tobytes(), np.asarray(y).tobytes(),
                tuple(X_info.column_names), tuple(y_info.column_names))

    hits = 0
    for _ in range(120):
        formula = _PAIRED_FORMULAS[rng.integers(len(_PAIRED_FORMULAS))]
        desc = patsy.ModelDesc.from_formula(formula)
        first, chosen = frame(int(rng.choice([0, 5, 30])))
        second, _ = frame(30, chosen if rng.random() < 0.6 else None)
        kept_builders = design_module._KeptBuilders(8)
        monkeypatch.setattr(design_module, "_KEPT_BUILDERS", kept_builders)
        outcome(desc, first, formula, [c for c in first.columns if c in formula])
        variables = [c for c in second.columns if c in formula]
        hits += kept_builders.get(desc, second, variables) is not None
        kept = outcome(desc, second, formula, variables)
        monkeypatch.setattr(design_module, "_KEPT_BUILDERS", design_module._KeptBuilders(8))
        assert kept == outcome(desc, second, formula, variables), (formula, dict(first.dtypes), dict(second.dtypes))
    assert hits >= 30  # the kept path was taken (56 of the 120 pairs with this seed)
