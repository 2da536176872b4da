"""The ``dpstats`` console command: fit in every format, example, datasets, methods, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.cli import main

REPO = Path(__file__).resolve().parents[1]
BOUNDS = {"x": [0, 10], "y": [-10, 40]}
LEVELS = {"g": ["a", "b", "c"]}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """A small synthetic data set with a string factor: y = 2 + 3 x + effect(g) + noise."""
    rng = np.random.default_rng(12345)
    n = 3000
    x = rng.uniform(0, 10, n)
    g = rng.choice(["a", "b", "c"], n)
    y = 2 + 3 * x + np.select([g == "b", g == "c"], [1.0, -1.0], 0.0) + rng.normal(0, 1, n)
    return pd.DataFrame({"y": np.clip(y, -10, 40), "x": x, "g": g})


@pytest.fixture(scope="module")
def csv(frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fit_args(csv: Path, *extra: str, formula: str = "y ~ x + C(g)") -> list[str]:
    return ["fit", formula, "--data", str(csv), "--epsilon", "1", "--delta", "1e-6", "--method", "ssp",
            "--bounds", json.dumps(BOUNDS), "--levels", json.dumps(LEVELS), "--seed", "0", *extra]


# -- fit ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, marker", [
    ("text", "Differentially Private Regression Results"),
    ("latex", "\\begin{tabular}"),
    ("html", "<table"),
])
def test_fit_renders_each_summary_format(capsys, csv, fmt, marker):
    code, out, err = run(capsys, *fit_args(csv, "--format", fmt))
    assert code == 0, err
    assert err == ""
    assert marker in out
    assert "C(g)[T.b]" in out and "x" in out
    assert "ssp" in out


def test_fit_json_is_the_library_result(capsys, csv, frame):
    code, out, err = run(capsys, *fit_args(csv, "--format", "json"))
    assert code == 0, err
    got = json.loads(out)
    ref = dpstats.dp_ols("y ~ x + C(g)", frame, epsilon=1.0, delta=1e-6, method="ssp",
                         bounds={k: tuple(v) for k, v in BOUNDS.items()}, levels=LEVELS, random_state=0)
    assert got["method"] == "ssp"
    assert got["nobs"] == len(frame)
    assert list(got["params"]) == list(ref.params.index)
    np.testing.assert_allclose(list(got["params"].values()), ref.params.to_numpy(), rtol=1e-12)
    assert got["privacy"]["epsilon_spent"] <= 1.0 + 1e-12
    # the intervals the text summary prints (before: the standard errors only)
    np.testing.assert_allclose(list(got["conf_int"].values()), ref.conf_int().to_numpy(), rtol=1e-12)
    # a sanity check on utility: n = 3000, epsilon = 1, well-scaled data; deterministic under seed 0 (error 0.10);
    # over 100 re-seeds (1-100) the error's root mean square was 0.13 (largest 0.42): 0.6 is 4.5 of those sds (the
    # former bound 0.5 was 3.7: about 2e-4), so a re-seed fails with probability about 2 Phi(-4.5) = 7e-6
    assert abs(got["params"]["x"] - 3.0) < 0.6


@pytest.mark.parametrize("choice, rescale", [("columns", True), ("centred", "centred"), ("off", False)])
def test_fit_rescale_is_the_library_option(capsys, csv, frame, choice, rescale):
    """``--rescale`` gives ``dp_ols`` its ``rescale=``: the same coefficients as the library with that choice (on a
    product of x with itself, a column the centring re-expresses)."""
    formula = "y ~ x + I(x ** 2) + C(g)"
    code, out, err = run(capsys, *fit_args(csv, "--format", "json", "--rescale", choice, formula=formula))
    assert code == 0, err
    ref = dpstats.dp_ols(formula, frame, epsilon=1.0, delta=1e-6, method="ssp",
                         bounds={k: tuple(v) for k, v in BOUNDS.items()}, levels=LEVELS, random_state=0,
                         rescale=rescale)
    np.testing.assert_allclose(list(json.loads(out)["params"].values()), ref.params.to_numpy(), rtol=1e-12)
    assert ("fitted with each variable centred" in out) is (choice == "centred")


def test_fit_is_reproducible_with_a_seed(capsys, csv):
    outs = [run(capsys, *fit_args(csv, "--format", "json"))[1] for _ in range(2)]
    assert json.loads(outs[0])["params"] == json.loads(outs[1])["params"]


def test_fit_on_a_bundled_data_set(capsys):
    code, out, err = run(capsys, "fit", "price ~ carat + C(clarity)", "--data", "diamonds", "--epsilon", "1",
                         "--method", "ssp", "--bounds", '{"carat": [0, 5], "price": [0, 20000]}', "--seed", "1",
                         "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    assert got["nobs"] == 53940
    assert "C(clarity)[T.IF]" in got["params"]  # levels come from the loader's public Categorical dtype


def test_bounds_from_a_file_equal_inline_bounds(capsys, csv, tmp_path):
    bfile = tmp_path / "bounds.json"
    bfile.write_text(json.dumps(BOUNDS))
    inline = run(capsys, *fit_args(csv, "--format", "json"))
    args = fit_args(csv, "--format", "json")
    args[args.index("--bounds") + 1] = str(bfile)
    from_file = run(capsys, *args)
    assert inline[0] == from_file[0] == 0
    assert json.loads(inline[1])["params"] == json.loads(from_file[1])["params"]


def test_a_bound_for_a_column_of_the_file_the_formula_does_not_use_is_ignored(capsys, frame, tmp_path):
    """As dp_ols ignores a bound for a DataFrame column the formula does not use, so does the command line for a
    column of the file's header (it used to refuse: only the formula's columns are read)."""
    path = tmp_path / "wide.csv"
    frame.assign(w=1.0).to_csv(path, index=False)
    plain = run(capsys, *fit_args(path, "--format", "json"))
    args = fit_args(path, "--format", "json")
    args[args.index("--bounds") + 1] = json.dumps({**BOUNDS, "w": [0, 2]})
    extra = run(capsys, *args)
    assert plain[0] == extra[0] == 0, extra[2]
    assert json.loads(plain[1])["params"] == json.loads(extra[1])["params"]
    args[args.index("--bounds") + 1] = json.dumps({**BOUNDS, "nope": [0, 2]})
    assert run(capsys, *args)[0] != 0  # a name that is no column of the file is still refused


def test_levels_from_a_file_and_from_the_formula(capsys, csv, tmp_path):
    lfile = tmp_path / "levels.json"
    lfile.write_text(json.dumps(LEVELS))
    args = fit_args(csv, "--format", "json")
    args[args.index("--levels") + 1] = str(lfile)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    by_file = json.loads(out)["params"]

    args = fit_args(csv, "--format", "json", formula="y ~ x + C(g, levels=['a', 'b', 'c'])")
    i = args.index("--levels")
    del args[i:i + 2]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    in_formula = json.loads(out)["params"]
    assert list(by_file.values()) == list(in_formula.values())  # same design, same seed, same noise


def test_string_column_without_declared_levels_is_a_clear_error(capsys, csv):
    args = fit_args(csv)
    i = args.index("--levels")
    del args[i:i + 2]
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "levels" in err and "--levels" in err
    assert "Traceback" not in err


def test_a_reference_level_of_a_text_column_without_declared_levels_is_the_same_clear_error(capsys, csv):
    # regression (s51 new-user check, MASS's bacteria from a CSV file: "present ~ C(trt, Treatment('placebo')) +
    # week" without --levels): patsy failed first on the reference level, which no declared level holds, and the
    # error was a FormulaError on building the design "from the declared schema alone"
    args = fit_args(csv, formula="y ~ x + C(g, Treatment('b'))")
    i = args.index("--levels")
    del args[i:i + 2]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: the levels of 'C(g, Treatment('b'))' would be read from the private data")
    assert "--levels '{\"VAR\": [\"a\", \"b\"]}'" in err and "declared schema" not in err
    code, out, err = run(capsys, *fit_args(csv, formula="y ~ x + C(g, Treatment('b'))"))
    assert code == 0 and "C(g, Treatment('b'))[T.a]" in out


def test_missing_bounds_on_the_command_line_says_a_text_column_needs_levels(capsys, frame, tmp_path):
    """A CSV column is read as numbers unless --levels declares it a factor, so auto's refusal for want of bounds
    (263 rows: too few for pgd's released domain) names a text column among the columns to bound; the command
    line's advice says a factor needs --levels instead (s44 new-user check, R's Womenlf from the command line)."""
    path = tmp_path / "small.csv"
    frame.head(263).to_csv(path, index=False)
    code, out, err = run(capsys, "fit", "x ~ g", "--data", str(path), "--epsilon", "1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "Declare bounds for: g" in err and "--levels '{\"VAR\": [\"a\", \"b\"]}' instead" in err


def test_missing_bounds_on_the_command_line_says_a_boolean_column_needs_dtypes(capsys, frame, tmp_path):
    """A boolean predictor written to CSV (True/False) is read as numbers, so auto's refusal for want of bounds names
    it; the advice names --dtypes '{"VAR": "bool"}', with which the column is a factor as in Python (s52 new-user
    check, The Effect's organ-donation difference-in-differences from the command line)."""
    path = tmp_path / "small_bool.csv"
    frame.head(263).assign(t=lambda d: d.x > d.x.median()).drop(columns="g").to_csv(path, index=False)
    code, out, err = run(capsys, "fit", "y ~ t", "--data", str(path), "--epsilon", "1", "--bounds", '{"y": [-10, 40]}')
    assert code == 2 and out == "" and "Declare bounds for: t" in err
    assert "--dtypes '{\"VAR\": \"bool\"}' instead" in err
    code, out, err = run(capsys, "fit", "y ~ t", "--data", str(path), "--epsilon", "1", "--bounds", '{"y": [-10, 40]}',
                         "--dtypes", '{"t": "bool"}', "--seed", "1")
    assert code == 0 and "t[T.True]" in out, err


def test_a_refusal_offering_missing_drop_names_its_flag(capsys, frame, tmp_path):
    """s54 new-user check: pgd's refusal without bounds offers missing='drop' where the rows it needs are at most n
    (510 rows, the response unbounded, epsilon 1: 517 rows with the missing-value screen, 507 without it); on the
    command line the one-line error named only the Python spelling, and now names --missing drop too."""
    path = tmp_path / "unbounded_response.csv"
    frame.head(510).drop(columns="g").to_csv(path, index=False)
    for method in ("auto", "pgd"):
        code, out, err = run(capsys, "fit", "y ~ x", "--data", str(path), "--epsilon", "1", "--bounds",
                             '{"x": [0, 10]}', "--method", method)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "or pass missing='drop'" in err and "For missing='drop' on the command line: --missing drop." in err, err


def test_missing_values_refused_then_dropped_on_request(capsys, frame, tmp_path):
    df = frame.copy()
    df.loc[:1999, "x"] = np.nan  # many: the charged missing-value screen refuses
    path = tmp_path / "with_na.csv"
    df.to_csv(path, index=False)
    code, out, err = run(capsys, *fit_args(path))
    assert code == 2 and "missing value" in err and "noisy count" in err and "--missing drop" in err
    code, out, err = run(capsys, *fit_args(path, "--missing", "drop", "--format", "json"))
    assert code == 0, err
    got = json.loads(out)
    assert got["nobs"] == len(frame)  # n stays public: the incomplete rows are public null rows
    assert any("null row" in note for note in got["privacy"]["notes"])
    assert main(["fit", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "public null row" in help_text and "post-drop n" not in help_text  # the help says what the fit does


def test_non_private_reference_is_labelled(capsys, csv):
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(csv), "--epsilon", "inf", "--method", "ols")
    assert code == 0, err
    assert "NOT PRIVATE" in out


def test_method_options_are_passed_through(capsys, csv):
    base = fit_args(csv, "--format", "json")
    base[base.index("--method") + 1] = "adassp"
    code, out, err = run(capsys, *base, "--option", "rho=0.1")
    assert code == 0, err
    assert json.loads(out)["method"] == "adassp"
    code, out, err = run(capsys, *base, "--option", "rho=2")
    assert code == 2 and "rho" in err


@pytest.mark.parametrize("option, flag", [
    ("missing=drop", "use --missing instead"),
    ("random_state=3", "use --seed instead"),
    ("rescale=off", "use --rescale instead"),
    ("chunksize=10", "the command line has no flag for it"),
])
def test_option_naming_a_dp_ols_argument_points_to_its_flag(capsys, csv, option, flag):
    code, out, err = run(capsys, *fit_args(csv), "--option", option)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "an argument of dp_ols, not a method option" in err and flag in err
    assert "Traceback" not in err


# -- errors: one line on stderr, exit status 2, no traceback ------------------------------------------------------

@pytest.mark.parametrize("change, fragment", [
    ({"--data": "no/such/file.csv"}, "neither an existing CSV file nor a bundled data set"),
    ({"--epsilon": "-1"}, "epsilon must be > 0"),
    ({"--delta": "1.5"}, "delta"),
    ({"--method": "nope"}, "unknown method 'nope'"),
    ({"--bounds": '{"x": [0, 10], "y": '}, "--bounds: invalid JSON"),
    ({"--bounds": "[0, 10]"}, "--bounds must be a JSON object"),
    ({"--bounds": "no-such-bounds.json"}, "neither a JSON object nor an existing JSON file"),
    ({"--bounds": '{"x": [10, 0], "y": [-10, 40]}'}, "lo must be strictly below hi"),
    ({"--bounds": '{"x": [0, 10]}'}, "--bounds"),  # response bound missing: MissingBoundsError + CLI hint
    ({"--levels": '{"g": "abc"}'}, "must be a JSON list"),
    ({"formula": "y ~ x +"}, "cannot parse formula"),
    ({"formula": "y ~ nope"}, "nope"),
])
def test_bad_input_exits_2_with_one_line(capsys, csv, change, fragment):
    args = fit_args(csv)
    for key, value in change.items():
        if key == "formula":
            args[1] = value
        else:
            args[args.index(key) + 1] = value
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    assert err.count("\n") == 1, err
    assert fragment in err
    assert "Traceback" not in err


def test_a_declared_type_the_fields_do_not_fit_is_named_in_the_refusal(capsys, tmp_path):
    """A two-valued column written yes/no and declared bool reads as missing in every row, and the screen refuses
    (charged): the one-line error says which fields a declared type reads, as it says a text column needs levels."""
    path = tmp_path / "yesno.csv"
    path.write_text("y,x\n" + "".join(f"{'yes' if i % 3 else 'no'},{i % 50}\n" for i in range(300)))
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(path), "--epsilon", "1", "--seed", "1",
                         "--bounds", '{"x": [0, 50]}', "--dtypes", '{"y": "bool"}')
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "noisy count" in err and "True/False or 1/0 for bool" in err


def test_text_column_without_levels_in_a_csv_names_the_likely_cause(capsys, csv):
    """``g`` is text in the file; used bare without --levels it is read as numbers, every field missing, and the
    screen refuses (charged): the one-line error says a text column needs its levels declared."""
    args = fit_args(csv, formula="y ~ x + g")
    args[args.index("--levels") + 1] = "{}"
    args[args.index("--method") + 1] = "pgd"  # needs no bound for g
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "noisy count" in err and "a text column reads as a missing value in every row" in err
    assert "--levels" in err and "C(VAR, levels=[...])" in err


def test_unreadable_csv_is_a_clean_error(capsys, tmp_path):
    bad = tmp_path / "binary.csv"
    bad.write_bytes(b"\x00\xff\xfe\x00")
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(bad), "--epsilon", "1")
    assert code == 2 and err.startswith("error: --data: cannot read") and "Traceback" not in err
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(tmp_path), "--epsilon", "1")
    assert code == 2 and "is a directory" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_as_data_is_refused_before_it_is_read(capsys, tmp_path):
    """A named pipe (as a process substitution <(...) gives one) can be read once, and the CLI reads a CSV file's
    header before its rows: it was refused as a file whose header "is not text", or hung waiting for a second
    writer. It is refused from its type (public), before it is opened."""
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)

    def write() -> None:  # a writer for each opening, so that reading the pipe does not hang (a daemon thread)
        while True:
            try:
                with open(fifo, "w") as handle:
                    handle.write("y,x\n" + "".join(f"{i % 7},{i}\n" for i in range(200)))
            except BrokenPipeError:  # a reader that closed the pipe after its header
                pass

    threading.Thread(target=write, daemon=True).start()
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(fifo), "--epsilon", "1", "--bounds",
                         '{"x": [0, 200], "y": [0, 10]}')
    assert code == 2 and "is not a regular file" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    [],
    ["fit"],
    ["fit", "y ~ x", "--data", "diamonds", "--epsilon", "abc"],
    ["fit", "y ~ x", "--data", "diamonds", "--epsilon", "1", "--format", "pdf"],
    ["fit", "y ~ x", "--data", "diamonds", "--epsilon", "1", "--seed", "-1"],
    ["example", "--seed", "x"],
    ["nosuchcommand"],
])
def test_usage_errors_exit_2_without_traceback(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "error:" in err and "usage:" in err
    assert "Traceback" not in err


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "fit", "--help")
    assert code == 0 and "--bounds" in out and "--levels" in out


# -- example, datasets, methods -------------------------------------------------------------------------------------

def test_example_needs_no_bounds_by_default(capsys):
    code, out, err = run(capsys, "example", "--seed", "0")
    assert code == 0, err
    info = dpstats.datasets.describe("diamonds")
    assert "diamonds" in out and info.example_formula in out
    assert "none declared" in out and "auto chose" in out
    method = out.split("Method:", 1)[1].split()[0]
    assert not dpstats.available_methods()[method].needs_bounds
    assert "Differentially Private Regression Results" in out
    assert "epsilon spent" in out


def test_example_with_a_method_that_needs_bounds_points_to_its_own_option(capsys):
    # 'dpstats example' has no --bounds: its hint is --documented-bounds
    code, out, err = run(capsys, "example", "--seed", "0", "--method", "ssp")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "--documented-bounds" in err and "--bounds '" not in err


def test_example_with_documented_bounds_says_where_they_come_from(capsys):
    code, out, err = run(capsys, "example", "--seed", "0", "--documented-bounds")
    assert code == 0, err
    assert "documentation" in out and "public knowledge" in out
    assert "price [326, 18823]" in out and "carat [0.2, 5.01]" in out
    assert "Differentially Private Regression Results" in out


def test_datasets_command_lists_names_and_titles(capsys):
    code, out, err = run(capsys, "datasets")
    assert code == 0
    for name in dpstats.datasets.list():
        assert name in out
        assert dpstats.datasets.describe(name).title in out


def test_methods_command_reads_the_registry(capsys):
    code, out, err = run(capsys, "methods")
    assert code == 0
    lines = out.splitlines()
    assert all(h in lines[0] for h in ("name", "title", "needs bounds", "guarantee", "citation"))
    for name, spec in dpstats.available_methods().items():
        row = next(ln for ln in lines if ln.split()[0] == name)
        assert spec.title in row and spec.citation in row
        assert ("yes" if spec.needs_bounds else "no") in row
        assert (spec.guarantee if spec.private else "NOT PRIVATE") in row
    assert any(ln.startswith("auto") for ln in lines)


def test_python_dash_m_dpstats_example(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "dpstats", "example", "--seed", "0"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Differentially Private Regression Results" in proc.stdout
    assert "none declared" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_example_with_documented_bounds_withholds_unsupported_inference(capsys):
    # the full example formula at epsilon=1 with adassp: the released noise-to-signal ratio is far above
    # adassp's withholding threshold, so no interval, z or p is printed, and the reason is (fixed seed).
    # (auto chooses pgd below 10^5 rows since the pgd estimator, so adassp is named.)
    code, out, err = run(capsys, "example", "--documented-bounds", "--seed", "0", "--method", "adassp")
    assert code == 0
    table = out.split("privacy step")[0]
    assert "adassp" in table and "\u2014" in table and "Inference withheld" in out
    assert "e+1" not in out and "inf" not in table.split("Df Model")[1]


def test_plan_command_prints_the_library_plan(capsys):
    argv = ["plan", "--bounds", json.dumps(BOUNDS), "--n", "5000", "--epsilon", "1", "--method", "ssp", "noisy_ols"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "ssp:" in text and "noisy_ols:" in text and "rows needed" in text and "Assumptions:" in text
    assert main(argv + ["--format", "csv"]) == 0
    csv_text = capsys.readouterr().out
    library = dpstats.plan(bounds={k: tuple(v) for k, v in BOUNDS.items()}, n=5000, epsilon=1.0,
                           method=["ssp", "noisy_ols"]).to_frame()
    from io import StringIO  # noqa: PLC0415

    printed = pd.read_csv(StringIO(csv_text))
    np.testing.assert_allclose(printed["privacy"], library["privacy"], rtol=1e-12)
    assert main(argv + ["--format", "json"]) == 0
    records = pd.DataFrame(json.loads(capsys.readouterr().out))  # one record per row of the library's frame
    assert list(records.columns) == list(library.columns) and len(records) == len(library)
    np.testing.assert_allclose(records["privacy"], library["privacy"], rtol=1e-9)  # to_json keeps 10 digits
    assert main(["plan", "--bounds", json.dumps(BOUNDS), "--n", "5000", "--format", "json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), list)


def test_plan_command_takes_the_formula_as_fit_does(capsys):
    """``dpstats plan FORMULA ...`` as ``dpstats fit FORMULA ...`` (s44 new-user check: before, argparse's
    "unrecognized arguments"); the same plan as --formula; two different formulas are a one-line error."""
    common = ["--bounds", json.dumps(BOUNDS), "--levels", json.dumps(LEVELS), "--n", "3000", "--epsilon", "1",
              "--method", "ssp", "--format", "csv"]
    assert main(["plan", "y ~ x + C(g)", *common]) == 0
    positional = capsys.readouterr().out
    assert main(["plan", "--formula", "y ~ x + C(g)", *common]) == 0
    assert positional == capsys.readouterr().out and "C(g)[T.b]" in positional
    assert main(["plan", "y ~ x", "--formula", "y ~ x + C(g)", *common]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "two different formulas" in err and len(err.strip().splitlines()) == 1


def test_plan_command_errors_are_one_line(capsys):
    assert main(["plan", "--bounds", json.dumps({"x": [0, 1]}), "--n", "100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "formula" in err and len(err.strip().splitlines()) == 1


def test_plan_command_without_a_model_names_its_flags_not_pythons(capsys):
    """s55 new-user check: ``dpstats plan --bounds '{"thalach": ..., "age": ...}' --n 303`` without a formula said
    "plan needs formula= (or response= naming the response among the bounds)": Python's keywords, and the command
    has no flag for a response. It now names FORMULA and --formula, and why the default (y ~ ...) does not apply;
    with a y among the bounds the default still plans."""
    assert main(["plan", "--bounds", json.dumps({"thalach": [60, 220], "age": [18, 90]}), "--n", "303"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: dpstats plan needs the model: give it as FORMULA or --formula")
    assert "response=" not in err and "formula=" not in err and len(err.strip().splitlines()) == 1
    assert main(["plan", "--bounds", json.dumps({"y": [60, 220], "age": [18, 90]}), "--n", "303", "--method",
                 "pgd", "--format", "csv"]) == 0
    assert "pgd,age," in capsys.readouterr().out


def test_plan_command_speaks_in_flags(capsys):
    """s53's third new-user check: ``dpstats plan``'s text and its refusal of an undeclared variable named
    dpstats.plan's keyword arguments (``plan(..., method='auto')``, ``dtypes=``, ``spread=``, ``missing='raise'``,
    ``bounds={'married': (lo, hi)}``), which the command does not take; they now name its flags too."""
    bounds = {"wage": [100, 10000], "educ": [0, 20]}
    argv = ["plan", "np.log(wage) ~ educ + married", "--bounds", json.dumps(bounds), "--n", "935", "--epsilon", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert err.rstrip().endswith("""On the command line: --bounds '{"married": [lo, hi]}', --levels '{"married": """
                                 """["a", "b"]}' or, for a two-valued variable, --dtypes '{"married": "bool"}'.""")
    assert main(argv + ["--dtypes", json.dumps({"married": "bool"}), "--spread", json.dumps({"educ": 3})]) == 0
    text = capsys.readouterr().out
    assert "dpstats plan --method auto gives its table alone" in text and "--missing raise" in text
    assert "--dtypes gives no type" in text and "--spread and --correlation" in text
    assert not any(word in text for word in ("plan(", "dtypes=", "spread=", "correlation=", "missing='", "method='"))


def test_plan_command_takes_the_response_type_and_an_assumed_outcome_share(capsys):
    """--dtypes and --outcome-share reach dpstats.plan: pgd's rare-outcome rule withholds the intervals of a boolean
    response whose rarer value is 5% of 800 rows at epsilon 1, as the library plan says; bad values are one-line
    errors."""
    argv = ["plan", "--formula", "y ~ x", "--bounds", json.dumps({"y": [0, 1], "x": [0, 10]}), "--n", "800",
            "--epsilon", "1", "--method", "pgd", "--dtypes", json.dumps({"y": "bool"})]
    assert main(argv + ["--outcome-share", "0.05", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    library = dpstats.plan(bounds={"y": (0, 1), "x": (0, 10)}, formula="y ~ x", n=800, epsilon=1.0, method="pgd",
                           dtypes={"y": bool}, outcome_share=0.05).to_frame()
    assert [r["inference"] for r in rows] == list(library["inference"])
    assert rows[0]["intervals"] == "withheld" and rows[0]["inference"].startswith("withheld (rare outcome")
    for bad in (["--dtypes", json.dumps({"y": "nonsense"})], ["--dtypes", "[1]"], ["--outcome-share", "0.7"]):
        assert main(argv[:-2] + bad) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_plan_command_takes_missing_correlation_and_spread(capsys):
    """--missing, --correlation and --spread reach dpstats.plan: with --missing drop auto plans pgd where it plans
    theilsen otherwise (one predictor, n * mu below 100), and the printed errors are the library plan's; a spread
    that is not a number is a one-line error."""
    bounds = {"y": [-50, 50], "x": [0, 10]}
    argv = ["plan", "--formula", "y ~ x", "--bounds", json.dumps(bounds), "--n", "200", "--epsilon", "1",
            "--method", "auto", "--format", "json"]
    for missing, chosen in (("raise", "theilsen"), ("drop", "pgd")):
        assert main(argv + ["--missing", missing]) == 0
        assert {r["method"] for r in json.loads(capsys.readouterr().out)} == {chosen}
    assert main(argv + ["--correlation", "0.3", "--spread", json.dumps({"x": 2.0})]) == 0
    rows = json.loads(capsys.readouterr().out)
    library = dpstats.plan(bounds={k: tuple(v) for k, v in bounds.items()}, formula="y ~ x", n=200, epsilon=1.0,
                           method="auto", correlation=0.3, spread={"x": 2.0}).to_frame()
    np.testing.assert_allclose([r["privacy"] for r in rows], library["privacy"], rtol=1e-9)  # JSON: 10 digits
    default = dpstats.plan(bounds={k: tuple(v) for k, v in bounds.items()}, formula="y ~ x", n=200, epsilon=1.0,
                           method="auto").to_frame()
    assert not np.allclose(library["privacy"], default["privacy"])  # the assumptions reached the plan
    assert main(argv + ["--spread", json.dumps({"x": "wide"})]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_plan_command_takes_level_shares(capsys):
    """--level-shares reaches dpstats.plan (session 56): a level named by its text in JSON, "2000", is the integer
    level 2000 of --levels, and the printed sampling errors are the library plan's; shares that are not numbers are a
    one-line error."""
    argv = ["plan", "--formula", "y ~ C(year)", "--bounds", json.dumps({"y": [0, 1]}), "--levels",
            json.dumps({"year": [1990, 2000]}), "--n", "1000", "--epsilon", "1", "--method", "pgd", "--format", "json"]
    assert main(argv + ["--level-shares", json.dumps({"year": {"2000": 0.02}})]) == 0
    rows = json.loads(capsys.readouterr().out)
    library = dpstats.plan(bounds={"y": (0, 1)}, formula="y ~ C(year)", levels={"year": [1990, 2000]}, n=1000,
                           epsilon=1.0, method="pgd", level_shares={"year": {2000: 0.02}}).to_frame()
    np.testing.assert_allclose([r["sampling"] for r in rows], library["sampling"], rtol=1e-7)  # JSON: 10 decimals
    assert main(argv + ["--level-shares", json.dumps({"year": {"2000": "rare"}})]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_plan_command_takes_the_correlation_of_named_pairs(capsys):
    """--correlation '{"a": {"b": 0.8}}' is the library's correlation={("a", "b"): 0.8}; a pair's value that is
    not an object is a one-line error."""
    bounds = {"y": [-50, 50], "a": [0, 10], "b": [0, 10], "c": [0, 10]}
    argv = ["plan", "--formula", "y ~ a + b + c", "--bounds", json.dumps(bounds), "--n", "2000", "--epsilon", "1",
            "--method", "adassp", "--format", "json"]
    assert main(argv + ["--correlation", json.dumps({"a": {"b": 0.8}})]) == 0
    rows = json.loads(capsys.readouterr().out)
    library = dpstats.plan(bounds={k: tuple(v) for k, v in bounds.items()}, formula="y ~ a + b + c", n=2000,
                           epsilon=1.0, method="adassp", correlation={("a", "b"): 0.8}).to_frame()
    np.testing.assert_allclose([r["sampling"] for r in rows], library["sampling"], rtol=1e-9)
    assert main(argv + ["--correlation", json.dumps({"a": 0.8})]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --correlation") and len(err.strip().splitlines()) == 1


def test_plan_command_takes_the_fits_rescale(capsys):
    """--rescale centred reaches dpstats.plan (the fit's --rescale; off, the raw design, is not a plan choice)."""
    bounds = {"x": [1, 60], "y": [550, 750]}
    argv = ["plan", "--bounds", json.dumps(bounds), "--formula", "y ~ x + I(x**2)", "--n", "420", "--epsilon", "1",
            "--method", "pgd", "--rsquared", "0.5", "--format", "csv"]
    assert main(argv + ["--rescale", "centred"]) == 0
    from io import StringIO  # noqa: PLC0415

    printed = pd.read_csv(StringIO(capsys.readouterr().out))
    library = dpstats.plan(formula="y ~ x + I(x**2)", bounds={k: tuple(v) for k, v in bounds.items()}, n=420,
                           epsilon=1.0, method="pgd", rsquared=0.5, rescale="centred").to_frame()
    np.testing.assert_allclose(printed["privacy"], library["privacy"], rtol=1e-12)
    assert main(argv + ["--rescale", "off"]) == 2
    assert "invalid choice: 'off'" in capsys.readouterr().err


def test_plan_command_takes_a_methods_options_and_agrees_with_the_fit(capsys):
    """Session 55: --option NAME=VALUE reaches dpstats.plan's method_options for the one method named, so the plan of
    TukeyEM with m=200 shows the refusal its fit raises before spending anything (and --option without one
    method is a one-line error)."""
    bounds = {"x": [-6, 6], "y": [-20, 20]}
    argv = ["plan", "y ~ x", "--bounds", json.dumps(bounds), "--n", "20000", "--epsilon", "1", "--method", "tukey",
            "--option", "m=200", "--option", "ptr=mass", "--format", "json"]
    assert main(argv) == 0
    printed = pd.DataFrame(json.loads(capsys.readouterr().out))
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=20000)})
    df["y"] = 1.0 + df["x"] + 0.1 * rng.normal(size=20000)
    with pytest.raises(dpstats.errors.InsufficientDataError) as info:
        dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="tukey", bounds={k: tuple(v) for k, v in bounds.items()},
                       m=200, ptr="mass", random_state=0)
    assert (printed["refusal"] == str(info.value)).all() and "m >= 551 models" in str(info.value)
    assert main(argv[:-2]) == 0
    assert "tukey's options as given (m=200, ptr='mass')" in capsys.readouterr().out  # the assumption names them
    assert main(["plan", "y ~ x", "--bounds", json.dumps(bounds), "--n", "20000", "--option", "m=200"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "needs exactly one method" in err and len(err.strip().splitlines()) == 1


# -- warnings and column types on the command line (session 43 new-user check) ---------------------------------------

@pytest.fixture(scope="module")
def indicator_csv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """A 0/1 response stored as integers in a CSV file (which stores no types): y = 1 when x plus noise is large."""
    rng = np.random.default_rng(7)
    n = 2000
    x = rng.uniform(0, 10, n)
    y = (x + rng.normal(0, 3, n) > 6).astype(int)
    df = pd.DataFrame({"y": y, "x": x})
    path = tmp_path_factory.mktemp("cli_dtypes") / "indicator.csv"
    df.to_csv(path, index=False)
    return path, df


def _indicator_args(path: Path, *extra: str) -> list[str]:
    return ["fit", "y ~ x", "--data", str(path), "--epsilon", "1", "--bounds", json.dumps({"y": [0, 1], "x": [0, 10]}),
            "--seed", "3", "--format", "json", *extra]


def test_a_dpstats_warning_is_one_line_with_the_command_line_spelling(capsys, indicator_csv):
    """A CSV column is read as float64 unless declared, so a 0/1 response draws FloatIndicatorWarning: on the command
    line it is one ``warning:`` line (no source path, no code line) that names the flag that fixes it."""
    path, _ = indicator_csv
    code, out, err = run(capsys, *_indicator_args(path))
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: ") and "stored as floats" in lines[0]
    assert "--dtypes '{\"y\": \"int64\"}'" in lines[0]
    assert "cli.py" not in err and "res = dp_ols" not in err


def test_the_command_line_hint_for_a_float_response_in_0_1_does_not_tell_a_proportion_to_become_integers(
        capsys, tmp_path):
    """A proportion declared in [0, 1] (OME's share of correct answers in session 50's new-user check) drew "declare
    the CSV column's type: --dtypes int64"; followed, every fraction became a missing value (a fraction in an integer
    column is one), dropped without a word under --missing drop.  The hint now says it is for a column of 0 and 1
    only, and what a fraction in an int64 column becomes."""
    rng = np.random.default_rng(5)
    path = tmp_path / "share.csv"
    pd.DataFrame({"y": rng.uniform(0, 1, 300).round(2), "x": rng.uniform(0, 10, 300)}).to_csv(path, index=False)
    code, _, err = run(capsys, *_indicator_args(path))
    assert code == 0, err
    assert "a CSV column of 0 and 1 only is declared with --dtypes '{\"y\": \"int64\"}'" in err
    assert "leave a proportion's column undeclared (a fraction in an int64 column is read as a missing value)" in err
    assert "declare the CSV column's type" not in err


def test_dtypes_makes_a_csv_indicator_two_valued_as_in_python(capsys, indicator_csv):
    path, df = indicator_csv
    code, out, err = run(capsys, *_indicator_args(path, "--dtypes", '{"y": "int64"}'))
    assert code == 0 and err == ""  # declared int64: two-valued, no warning
    got = json.loads(out)
    res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds={"y": (0, 1), "x": (0, 10)}, random_state=3)
    assert got["params"] == pytest.approx(res.params.to_dict(), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("argv_extra, data, fragment", [
    (["--dtypes", '{"yy": "int64"}'], None, "'yy', not a column of the file"),
    (["--dtypes", '{"y": "nope"}'], None, "numpy type name"),
    (["--dtypes", '{"price": "int64"}'], "diamonds", "carries its own"),
])
def test_dtypes_refusals_are_one_line(capsys, indicator_csv, argv_extra, data, fragment):
    path, _ = indicator_csv
    args = _indicator_args(path, *argv_extra)
    if data is not None:
        args = ["fit", "price ~ carat", "--data", data, "--epsilon", "1", *argv_extra]
    code, out, err = run(capsys, *args)
    assert code == 2 and err.startswith("error: ") and fragment in err and "Traceback" not in err


def test_missing_values_warning_names_the_flag(capsys, frame, tmp_path):
    """A few missing values (above the screen's warning threshold, below its refusal) draw MissingValuesWarning:
    one line that says --missing drop, and the help says the default screens rather than refuses outright."""
    df = frame.copy()
    df.loc[:79, "x"] = np.nan
    path = tmp_path / "few_na.csv"
    df.to_csv(path, index=False)
    code, out, err = run(capsys, *fit_args(path, "--format", "json"))
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("warning: ") for ln in lines)
    assert "--missing drop" in lines[0] and "cli.py" not in err
    assert main(["fit", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "noisy count" in help_text and "refuse (default)" not in help_text and "--dtypes" in help_text


@pytest.mark.parametrize("flag", ["--spread", "--correlation"])
def test_plan_command_refuses_a_json_list_for_a_mapping_flag_in_one_line(capsys, flag):
    # --spread '[]' raised a bare KeyError (the flag had no example for the message) with a traceback
    argv = ["plan", "--bounds", json.dumps({"x": [0, 10], "y": [-5, 5]}), "--n", "100", "--epsilon", "1", flag, "[]"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} must be a JSON object") and len(err.strip().splitlines()) == 1


def test_fit_charges_a_budget_file_and_is_refused_when_it_cannot_cover_the_fit(capsys, csv, tmp_path):
    """`dpstats fit` had no way to charge a custodian's budget file: every command-line fit was outside the
    accountant. --budget PATH opens the file (PrivacyAccountant.open) and passes it as accountant=."""
    path = tmp_path / "budget.sqlite"
    dpstats.PrivacyAccountant(1.5, 1e-5, path=path)
    code, out, err = run(capsys, *fit_args(csv, "--budget", str(path)))
    assert code == 0 and "Differentially Private Regression Results" in out
    (spend,) = dpstats.PrivacyAccountant.open(path).history
    assert spend.label == "ssp: y ~ x + C(g) [seeded]" and spend.epsilon == pytest.approx(1.0)
    code, out, err = run(capsys, *fit_args(csv, "--budget", str(path)))
    assert code == 2 and out == "" and err.startswith("error: this fit asks for (epsilon=1, delta=1e-06)")
    assert "nothing was spent" in err and dpstats.PrivacyAccountant.open(path).spent[0] == pytest.approx(1.0)
    code, out, err = run(capsys, *fit_args(csv, "--budget", str(tmp_path / "none.sqlite")))
    assert code == 2 and "no such file" in err
    code, out, err = run(capsys, "fit", "y ~ x", "--data", str(csv), "--epsilon", "inf", "--method", "ols",
                         "--budget", str(path))
    assert code == 2 and "leave out --budget" in err


def test_fit_with_a_budget_file_that_refuses_seeds_refuses_seed(capsys, csv, tmp_path):
    path = tmp_path / "budget.sqlite"
    dpstats.PrivacyAccountant(2.0, 1e-5, path=path, refuse_seeded=True)
    code, out, err = run(capsys, *fit_args(csv, "--budget", str(path)))
    assert code == 2 and "refuses fits with a fixed random_state" in err and "leave out --seed" in err
    assert dpstats.PrivacyAccountant.open(path).spent == (0.0, 0.0)


def test_a_csv_response_without_bounds_or_type_draws_a_note_that_names_dtypes_bool(capsys, tmp_path):
    """Session 51's second new-user check wrote a boolean response (a yes to a contingent-valuation bid) to CSV with
    ``DataFrame.to_csv`` (True/False) and fitted it with ``dpstats fit`` as in Python: the column was read as a
    number without a public range and the fit released a clipping domain for it, without a word.  A ``note:`` line
    now says so and names ``--dtypes '{"yes": "bool"}'``, with which the fit is the Python fit of the boolean column;
    it is decided by the formula and the declarations only, never by the rows."""
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 10, 800)  # enough rows for pgd to release the undeclared response's domain at epsilon 1
    df = pd.DataFrame({"yes": rng.uniform(size=800) < 0.2 + 0.05 * x, "x": x})
    path = tmp_path / "bids.csv"
    df.to_csv(path, index=False)
    base = ["fit", "yes ~ x", "--data", str(path), "--epsilon", "1", "--bounds", json.dumps({"x": [0, 10]}),
            "--seed", "3", "--format", "json"]
    code, _, err = run(capsys, *base)
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert code == 0 and len(notes) == 1 and "the response 'yes' has no declared bounds or type" in notes[0]
    assert "--dtypes '{\"yes\": \"bool\"}'" in notes[0]
    code, out, err = run(capsys, *base, "--dtypes", '{"yes": "bool"}')
    assert code == 0 and "note: " not in err
    res = dpstats.dp_ols("yes ~ x", df, 1.0, 1e-6, bounds={"x": (0, 10)}, random_state=3)
    assert json.loads(out)["params"] == pytest.approx(res.params.to_dict(), rel=1e-12, abs=1e-12)
    # a declared range draws no note
    code, _, err = run(capsys, *base[:7], json.dumps({"x": [0, 10], "yes": [0, 1]}), *base[8:])
    assert code == 0 and "note: " not in err
