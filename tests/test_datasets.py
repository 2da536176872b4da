"""Bundled data sets: list, load (public levels, no download), describe, errors, and a non-editable install."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np  # noqa: F401 - the example formulas use np.log
import pandas as pd
import pytest

import dpstats
from dpstats import datasets
from dpstats.datasets import UnknownDatasetError
from dpstats.errors import DPStatsError

REPO = Path(__file__).resolve().parents[1]

EXPECTED = {
    "diamonds": (53940, ["carat", "cut", "color", "clarity", "depth", "table", "price", "x", "y", "z"]),
    "penguins": (344, ["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g",
                       "sex", "year"]),
    "mtcars": (32, ["name", "mpg", "cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am", "gear", "carb"]),
}

# ggplot2's ?diamonds page: price $326-$18,823, carat 0.2-5.01, x 0-10.74, y 0-58.9, z 0-31.8, depth 43-79,
# table 43-95 (the page of the data set's documentation, copied here by hand, not from the data)
GGPLOT2_DIAMONDS_RANGES = {"price": (326, 18823), "carat": (0.2, 5.01), "x": (0, 10.74), "y": (0, 58.9),
                           "z": (0, 31.8), "depth": (43, 79), "table": (43, 95)}


@pytest.fixture(scope="module")
def loaded() -> dict[str, pd.DataFrame]:
    return {name: datasets.load(name) for name in datasets.list()}


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a bundled data set must load without touching the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_list_names_every_bundled_set():
    assert datasets.list() == ["diamonds", "mtcars", "penguins"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_shape_columns_and_public_levels(name, no_network):
    df = datasets.load(name)
    rows, columns = EXPECTED[name]
    info = datasets.describe(name)
    assert df.shape == (rows, len(columns)) == (info.n_rows, len(columns))
    assert list(df.columns) == columns
    for col, levels in info.levels.items():
        assert isinstance(df[col].dtype, pd.CategoricalDtype), col
        assert list(df[col].cat.categories) == levels  # the declared public levels, in the declared order
        assert not df[col].cat.ordered
    # the Categorical conversion lost no value: every non-missing raw value is one of the public levels
    raw = pd.read_csv(REPO / "data" / info.file)
    for col in info.levels:
        assert df[col].isna().sum() == raw[col].isna().sum(), col


def test_declared_levels_are_the_documented_ones():
    assert datasets.describe("diamonds").levels == {
        "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
        "color": ["J", "I", "H", "G", "F", "E", "D"],
        "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
    }
    assert datasets.describe("penguins").levels == {
        "species": ["Adelie", "Chinstrap", "Gentoo"], "island": ["Biscoe", "Dream", "Torgersen"],
        "sex": ["female", "male"],
    }
    assert datasets.describe("mtcars").levels == {}


def test_missing_values_are_as_documented(loaded):
    assert not loaded["diamonds"].isna().any().any()
    assert not loaded["mtcars"].isna().any().any()
    peng = loaded["penguins"]
    assert peng.isna().any(axis=1).sum() == 11
    assert peng["sex"].isna().sum() == 11
    assert peng["body_mass_g"].isna().sum() == 2


def test_diamonds_ranges_are_ggplot2s_documented_ones():
    info = datasets.describe("diamonds")
    assert info.documented_ranges == GGPLOT2_DIAMONDS_RANGES
    assert "documentation" in info.ranges_source


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_public_ranges_contain_every_value(name, loaded):
    info = datasets.describe(name)
    assert info.documented_ranges and info.ranges_source
    df = loaded[name]
    for var, (lo, hi) in info.documented_ranges.items():
        assert lo < hi
        values = df[var].dropna()
        assert values.min() >= lo and values.max() <= hi, (name, var)


@pytest.mark.parametrize("name", ["penguins", "mtcars"])
def test_round_ranges_are_labelled_as_domain_knowledge(name):
    info = datasets.describe(name)
    assert "domain knowledge" in info.ranges_source and "not computed from the data" in info.ranges_source


def test_describe_returns_a_copy():
    info = datasets.describe("diamonds")
    info.documented_ranges["price"] = (0, 1)
    info.levels["cut"].append("Bogus")
    again = datasets.describe("diamonds")
    assert again.documented_ranges["price"] == (326, 18823)
    assert "Bogus" not in again.levels["cut"]


def test_describe_has_provenance():
    for name in datasets.list():
        info = datasets.describe(name)
        assert info.name == name and info.title and info.source and info.licence and info.example_formula


@pytest.mark.parametrize("call", [datasets.load, datasets.describe])
@pytest.mark.parametrize("bad", ["iris", "", "Diamonds", None])
def test_unknown_name_is_a_typed_error(call, bad):
    with pytest.raises(UnknownDatasetError, match="unknown data set .*; bundled: diamonds, mtcars, penguins") as err:
        call(bad)
    assert isinstance(err.value, DPStatsError) and isinstance(err.value, KeyError)
    assert "unknown data set" in str(err.value) and "diamonds, mtcars, penguins" in str(err.value)
    assert not str(err.value).startswith('"')  # readable, not KeyError's quoted repr


@pytest.mark.parametrize("name, nobs", [("diamonds", 53940), ("mtcars", 32), ("penguins", 333)])
def test_example_formulas_go_through_the_formula_api(name, nobs, loaded):
    info = datasets.describe(name)
    res = dpstats.dp_ols(info.example_formula, loaded[name], epsilon=math.inf, method="ols", missing="drop")
    assert res.params.notna().all()
    assert res.nobs == nobs  # penguins: the 11 rows with a missing value are dropped


# -- the package ships its data: a non-editable install into a temporary folder -----------------------------------

def _can_build_wheel_without_isolation() -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools

    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)  # setuptools ships bdist_wheel itself from 70.1 on


@pytest.mark.skipif(not _can_build_wheel_without_isolation(),
                    reason="--no-build-isolation needs setuptools with bdist_wheel (pip install wheel)")
def test_non_editable_install_ships_the_data(tmp_path):
    # Build from a copy of the source tree so that the build leaves nothing (build/, *.egg-info) in the checkout
    # and no stale build/ folder from an earlier build can leak into the install.
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".venv*", "benchmarks", "vignettes"))
    target = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet",
                          "--disable-pip-version-check", "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert (target / "dpstats" / "data" / "diamonds.csv.gz").is_file()
    assert (target / "dpstats" / "data" / "README.md").is_file()

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    code = ("import dpstats, pathlib; "
            "print(dpstats.datasets.load('diamonds').shape); "
            "print(dpstats.datasets.load('penguins')['species'].cat.categories.tolist()); "
            "print(pathlib.Path(dpstats.__file__).resolve().parent)")
    run = subprocess.run([sys.executable, "-c", code], cwd=outside, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "(53940, 10)"
    assert lines[1] == "['Adelie', 'Chinstrap', 'Gentoo']"
    assert Path(lines[2]) == (target / "dpstats").resolve()  # the installed copy, not the checkout

    cli = subprocess.run([sys.executable, "-m", "dpstats", "datasets"], cwd=outside, env=env, capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert "diamonds" in cli.stdout and "penguins" in cli.stdout
