"""The ``dpstats`` console command (also ``python -m dpstats``).

Commands
--------
``dpstats fit FORMULA --data CSV_OR_NAME --epsilon E [--delta D] [--method M] [--bounds JSON] [--levels JSON]
[--seed S] [--missing raise|drop] [--dtypes JSON] [--format text|latex|html|json] [--budget PATH]``
    Fit ``dp_ols`` and print the summary in the chosen format (``--budget``: charged to a budget file).
``dpstats example``
    Fit a log-price regression on the bundled diamonds data (no bounds: auto
    picks pgd, which releases its own clipping domain; ``--documented-bounds``:
    the ranges published in its documentation, inside which pgd clips), print
    the summary and the private coefficients next to ordinary least squares
    on that public data.
``dpstats plan [FORMULA] --bounds JSON [--formula F] [--levels JSON] [--n N] [--epsilon E] [--delta D] [--method M ...]
[--rsquared R | --residual-sd S] [--dtypes JSON] [--outcome-share P] [--level-shares JSON]
[--option NAME=VALUE ...]
[--format text|csv|json]``
    Before spending budget (public facts only): at n rows, the epsilon each
    coefficient needs for a privacy error below its sampling error; at
    epsilon, the rows it needs (:func:`dpstats.plan`).
``dpstats datasets``
    The bundled data sets.
``dpstats methods``
    The registered estimators (read from the method registry).
``dpstats budget show PATH``
    The budget, spend and history of a persistent budget file
    (``PrivacyAccountant(..., path=PATH)``): who (user@host and process id),
    when, which fit, how much was reserved and spent, and the status of each
    reservation.  The file is only read.

A CSV file's columns are read as numbers, except the text columns whose
levels are declared (``--levels`` or ``C(x, levels=[...])`` in the formula):
the types are public facts, never guessed from the rows, exactly as in the
library (:class:`~dpstats.rows.sources.CSVSource`).  Errors raised by dpstats print one line
``error: ...`` on stderr and exit with status 2; so do usage errors.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from dpstats import __version__, datasets
from dpstats.api import dp_ols
from dpstats.errors import (
    ClippedRowsWarning,
    DataTypeError,
    DPStatsError,
    FloatIndicatorWarning,
    FormulaError,
    InvalidArgumentError,
    MissingBoundsError,
    MissingDataError,
    MissingValuesWarning,
    UndeclaredLevelsError,
    UnknownColumnError,
)
from dpstats.formula import public_design
from dpstats.methods.registry import available_methods
from dpstats.pipeline import check_accountant_fit
from dpstats.planning import plan
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.budget_store import budget_document, read_budget_file
from dpstats.privacy.missing_screen import source_hint
from dpstats.rows.chunked import formula_columns, text_level_columns
from dpstats.rows.csv_fields import schema_type
from dpstats.rows.csv_lines import DECOMPRESSION_FAILURES, UNDECOMPRESSABLE_CSV
from dpstats.rows.sources import CSVSource
from dpstats.tables import table
from dpstats.text_wrap import wrap_note
from dpstats.validation import DEFAULT_RESCALE, RESCALE_CHOICES

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_ERROR = 2

_EXAMPLE_DATASET = "diamonds"
#: ``dpstats fit --rescale`` choices as ``dp_ols``'s ``rescale=``
#: ``dp_ols`` arguments that ``dpstats fit`` sets from its own flags (``--option`` is for method options only)
_FIT_FLAGS: dict[str, str] = {
    "formula": "FORMULA", "data": "--data", "epsilon": "--epsilon", "delta": "--delta", "method": "--method",
    "bounds": "--bounds", "random_state": "--seed", "levels": "--levels", "missing": "--missing",
    "allow_data_levels": "--allow-data-levels", "rescale": "--rescale", "accountant": "--budget",
}
_T = TypeVar("_T")
#: the missing-value screen's hint for a fit of a CSV file (its text columns are read as numbers unless declared)
_CSV_TEXT_HINT = ("The data were read from a CSV file, where a column without declared levels is read as numbers, so "
                  "a text column reads as a missing value in every row: declare its levels (--levels "
                  "'{\"VAR\": [\"a\", \"b\"]}' or C(VAR, levels=[...]) in the formula). A column declared with "
                  "--dtypes reads only the fields of its type (whole numbers for an integer type, True/False or 1/0 "
                  "for bool): any other field is a missing value.")


class CLIError(DPStatsError):
    """Bad command-line input detected by the CLI itself (unreadable file, malformed JSON, ...)."""


# -- argument parsing ---------------------------------------------------------------------------------------------

def _float_arg(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number (or 'inf'), got {text!r}") from None


def _seed_arg(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return seed


def _option_arg(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value  # a bare word is a string
    return name.strip(), parsed


def _check_options(options: dict[str, Any]) -> None:
    """Refuse an ``--option`` that names an argument of ``dp_ols`` rather than a method option, naming the flag
    that sets it (public: the caller's arguments; checked before any data are read)."""
    arguments = [name for name, p in inspect.signature(dp_ols).parameters.items() if p.kind is not p.VAR_KEYWORD]
    for name in options:
        if name not in arguments:
            continue
        flag = _FIT_FLAGS.get(name)
        where = (f"use {flag} instead" if flag is not None
                 else "the command line has no flag for it (use dpstats.dp_ols in Python)")
        raise CLIError(f"--option {name}=...: {name!r} is an argument of dp_ols, not a method option; {where}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpstats`` command."""
    parser = argparse.ArgumentParser(
        prog="dpstats",
        description="Differentially private linear regression with an R-style formula interface.",
        epilog="Run 'dpstats COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"dpstats {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    fit = sub.add_parser(
        "fit", help="fit a formula with differential privacy and print the summary",
        description="Fit FORMULA on a CSV file or a bundled data set with differential privacy and print the "
                    "summary. Factor levels and data bounds are public facts: declare them (--levels, "
                    "C(x, levels=[...]) in the formula, --bounds); they are never read from the data.",
        epilog="Example: dpstats fit 'price ~ carat + C(clarity)' --data diamonds --epsilon 1 --delta 1e-6 "
               "--method ssp --bounds '{\"carat\": [0, 5], \"price\": [0, 20000]}' --seed 0",
    )
    fit.add_argument("formula", metavar="FORMULA", help="patsy formula, e.g. 'price ~ carat + C(cut)'")
    fit.add_argument("--data", required=True, metavar="CSV_OR_NAME",
                     help=f"a CSV file (.gz etc. by extension; numbers, except text columns with declared levels) or a "
                          f"bundled data set "
                          f"({', '.join(datasets.list())})")
    fit.add_argument("--epsilon", required=True, type=_float_arg, metavar="E",
                     help="privacy budget epsilon > 0 ('inf' only with --method ols, the NOT PRIVATE reference)")
    fit.add_argument("--delta", type=_float_arg, default=1e-6, metavar="D",
                     help="privacy budget delta in (0, 1), well below 1/n (default: %(default)g)")
    fit.add_argument("--method", default="auto", metavar="M",
                     help="a registered method (see 'dpstats methods') or 'auto' (default)")
    fit.add_argument("--bounds", metavar="JSON",
                     help="public ranges as a JSON object or a path to a JSON file, e.g. "
                          "'{\"carat\": [0, 5], \"price\": [0, 20000]}'")
    fit.add_argument("--levels", metavar="JSON",
                     help="public factor levels as a JSON object or a path to a JSON file, e.g. "
                          "'{\"cut\": [\"Fair\", \"Good\", \"Very Good\", \"Premium\", \"Ideal\"]}'")
    fit.add_argument("--seed", type=_seed_arg, metavar="S",
                     help="seed of the noise, for reproducible research and tests only "
                          "(default: the operating system's CSPRNG)")
    fit.add_argument("--missing", choices=["raise", "drop"], default="raise",
                     help="rows with missing values: raise (default) screens them with a noisy count, charged "
                          "2%% of epsilon, that refuses only where many rows have one (a few enter as public null "
                          "rows, with a warning above a threshold); drop skips the count (each such row becomes a "
                          "public null row that adds nothing to the fit: n counts every row and stays public, the "
                          "number of complete rows stays private)")
    fit.add_argument("--dtypes", metavar="JSON",
                     help="public column types of a CSV file, e.g. '{\"vote\": \"int64\"}' (numpy type names; "
                          "default float64, or text for columns with declared levels): a 0/1 response declared "
                          "int64 or bool with --bounds '{\"vote\": [0, 1]}' is two-valued, as in Python")
    fit.add_argument("--format", choices=["text", "latex", "html", "json"], default="text",
                     help="output format of the summary (default: %(default)s)")
    fit.add_argument("--rescale", choices=list(RESCALE_CHOICES), default=DEFAULT_RESCALE,
                     help="public rescaling by the declared bounds: product and power columns fitted with their "
                          "variables centred at the declared midpoints, then every column mapped to [-1, 1] "
                          "(centred, the default), that map alone (columns), or the raw design (off; pgd, which "
                          "standardises by private estimates, changes only with the centring). In Python: "
                          "rescale='centred', True, False")
    fit.add_argument("--option", action="append", type=_option_arg, default=[], metavar="NAME=VALUE",
                     help="a method-specific option (VALUE is parsed as JSON when it can be), repeatable")
    fit.add_argument("--allow-data-levels", action="store_true",
                     help="accept factor levels read from the data: a LEAK, named as such in the report")
    fit.add_argument("--budget", metavar="PATH",
                     help="charge the fit to a budget file made by PrivacyAccountant(..., path=PATH) (see 'dpstats "
                          "budget show'): a fit it cannot cover is refused, spending nothing")
    fit.set_defaults(func=_cmd_fit)

    ex = sub.add_parser(
        "example", help="fit on the bundled diamonds data and print the summary",
        description="Fit the diamonds example formula (log price on log carat, cut and color, with the most "
                    "common grades as reference levels) and print the summary, then the private coefficients next "
                    "to ordinary least squares on the same public data. By default no bounds are declared, so "
                    "method=auto picks pgd, which releases its own clipping domain from part of the budget; "
                    "--documented-bounds declares the ranges published in the data set's documentation instead "
                    "(pgd then clips inside them). The summary says which method was fitted and why.",
    )
    ex.add_argument("--documented-bounds", action="store_true",
                    help="declare the ranges published in the data set's documentation as bounds")
    ex.add_argument("--epsilon", type=_float_arg, default=1.0, metavar="E", help="(default: %(default)g)")
    ex.add_argument("--delta", type=_float_arg, default=1e-6, metavar="D", help="(default: %(default)g)")
    ex.add_argument("--method", default="auto", metavar="M", help="(default: %(default)s)")
    ex.add_argument("--seed", type=_seed_arg, metavar="S",
                    help="seed of the noise (default: the operating system's CSPRNG)")
    ex.set_defaults(func=_cmd_example)

    pl = sub.add_parser(
        "plan", help="plan a fit before spending budget (errors in the coefficients' units)",
        description="From public facts only (declared bounds, n, epsilon) and stated assumptions: each "
                    "coefficient's expected privacy error next to its sampling error, the epsilon it needs at n "
                    "rows and the rows it needs at epsilon, in agreement with each method's minimum n and refusal "
                    "rules. Nothing is read from data and nothing is spent.",
        epilog="Example: dpstats plan --formula 'price ~ carat' --bounds '{\"carat\": [0, 5], \"price\": [0, 20000]}' "
               "--n 5000 --epsilon 1",
    )
    pl.add_argument("--bounds", required=True, metavar="JSON",
                    help="declared ranges of the variables, the response included (JSON object or file)")
    pl.add_argument("formula_arg", nargs="?", metavar="FORMULA",
                    help="the model, as 'dpstats fit' takes it (or --formula)")
    pl.add_argument("--formula", metavar="F", help="the model (default: y ~ every other bounded variable)")
    pl.add_argument("--levels", metavar="JSON", help="declared factor levels (JSON object or file)")
    pl.add_argument("--n", type=int, metavar="N", help="rows: gives the epsilon each coefficient needs")
    pl.add_argument("--epsilon", type=_float_arg, metavar="E", help="budget: gives the rows each coefficient needs")
    pl.add_argument("--delta", type=_float_arg, default=1e-6, metavar="D", help="(default: %(default)g)")
    pl.add_argument("--method", nargs="+", metavar="M",
                    help="method(s) to plan, or auto (default: every private method)")
    assumed = pl.add_mutually_exclusive_group()
    assumed.add_argument("--rsquared", type=_float_arg, metavar="R",
                         help="assumed R^2 (default 0, of a response uniform on its declared range)")
    assumed.add_argument("--residual-sd", type=_float_arg, metavar="S", help="assumed residual sd (response units)")
    pl.add_argument("--dtypes", metavar="JSON",
                    help="column types as the fit would read them, e.g. '{\"y\": \"bool\"}' (a boolean response, or "
                         "an integer one declared between consecutive integers, is two-valued)")
    pl.add_argument("--outcome-share", type=_float_arg, metavar="P",
                    help="for a two-valued response, the assumed share of its rarer value, in (0, 0.5]: the plan "
                         "then applies pgd's rare-outcome interval rule")
    pl.add_argument("--missing", choices=["raise", "drop"], default="raise",
                    help="the fit's --missing (default: %(default)s; with drop, auto leaves out theilsen, which does "
                         "not take null rows)")
    pl.add_argument("--correlation", default="0", metavar="R",
                    help="assumed common correlation between the design columns (default: %(default)s), or the "
                         "correlations of named pairs, the others independent: '{\"x1\": {\"x2\": 0.8}}'")
    pl.add_argument("--spread", metavar="JSON",
                    help="assumed sd of design columns by name, in their units, e.g. '{\"educ\": 3.0}' (default: "
                         "uniform on the declared range)")
    pl.add_argument("--level-shares", metavar="JSON",
                    help="assumed shares of factor levels by variable, e.g. '{\"income\": {\"lt $1000\": 0.012}}' "
                         "(from a codebook; the levels not named share the rest equally; default: equally common)")
    pl.add_argument("--rescale", choices=[c for c in RESCALE_CHOICES if c != "off"], default=DEFAULT_RESCALE,
                    help="the fit's --rescale (default: %(default)s, product and power columns centred at the "
                         "declared midpoints; columns plans them as written). In Python: rescale='centred' or True")
    pl.add_argument("--option", action="append", type=_option_arg, default=[], metavar="NAME=VALUE",
                    help="an option of the one method given by --method, as 'dpstats fit' takes it (its refusal "
                         "checks use it, e.g. --option m=2000 for tukey), repeatable")
    pl.add_argument("--format", choices=["text", "csv", "json"], default="text",
                    help="output format (default: %(default)s)")
    pl.set_defaults(func=_cmd_plan)

    ds = sub.add_parser("datasets", help="list the bundled data sets",
                        description="List the bundled real data sets (shipped inside the package).")
    ds.set_defaults(func=_cmd_datasets)

    me = sub.add_parser("methods", help="list the registered estimators",
                        description="List the estimators in the method registry.")
    me.set_defaults(func=_cmd_methods)

    bu = sub.add_parser("budget", help="inspect a persistent privacy budget file",
                        description="Inspect a budget file made by PrivacyAccountant(..., path=PATH).")
    bsub = bu.add_subparsers(dest="budget_command", metavar="ACTION")
    bsub.required = True
    show = bsub.add_parser("show", help="print the budget and the history of a budget file",
                           description="Print the budget, what is spent, held by running fits and left, and every "
                                       "reservation: who, when, which fit, how much, status. Read-only.")
    show.add_argument("path", metavar="PATH", help="the budget file")
    show.add_argument("--format", choices=["text", "json"], default="text",
                      help="output format (default: %(default)s)")
    show.set_defaults(func=_cmd_budget_show)
    return parser


# -- inputs -------------------------------------------------------------------------------------------------------

def _json_object(text: str, flag: str) -> dict[str, Any]:
    """A JSON object given inline or as the path of a JSON file."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")) or stripped in {"", "null"}:
        raw, where = stripped, "the inline value"
    else:
        path = Path(text).expanduser()
        if not path.is_file():
            raise CLIError(f"{flag}: {text!r} is neither a JSON object nor an existing JSON file")
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIError(f"{flag}: cannot read {text!r}: {exc}") from None
        where = f"file {text!r}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{flag}: invalid JSON in {where} ({exc.msg} at line {exc.lineno} column {exc.colno})") \
            from None
    if not isinstance(obj, dict):
        raise CLIError(f"{flag} must be a JSON object like {_FLAG_EXAMPLES.get(flag, '{...}')}, got "
                       f"{type(obj).__name__} in {where}")
    return obj


_FLAG_EXAMPLES = {
    "--bounds": '{"carat": [0, 5], "price": [0, 20000]}',
    "--levels": '{"cut": ["Fair", "Good"]}',
    "--dtypes": '{"y": "bool"}',
    "--spread": '{"x": 2.5}',
    "--correlation": '{"x1": {"x2": 0.8}}',
    "--level-shares": '{"g": {"rare": 0.02}}',
}


def _parse_bounds(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    obj = _json_object(text, "--bounds")
    # JSON has no tuples: a [lo, hi] list becomes the (lo, hi) pair the library expects; anything else is passed
    # through for the library to refuse with its own message.
    return {str(k): tuple(v) if isinstance(v, list) else v for k, v in obj.items()}


def _parse_levels(text: str | None) -> dict[str, list[Any]] | None:
    if text is None:
        return None
    obj = _json_object(text, "--levels")
    for var, lv in obj.items():
        if not isinstance(lv, list):
            raise CLIError(f"--levels: the levels of {var!r} must be a JSON list, e.g. "
                           f"{{\"{var}\": [\"a\", \"b\"]}}")
    return obj


def _parse_dtypes(text: str | None) -> dict[str, np.dtype] | None:
    if text is None:
        return None
    out = {}
    for var, name in _json_object(text, "--dtypes").items():
        try:
            out[str(var)] = np.dtype(name)
        except (TypeError, ValueError):  # numpy refuses "decimal128(10, 2)[pyarrow]" with a ValueError
            raise CLIError(f"--dtypes: the type of {var!r} must be a numpy type name such as \"bool\", \"int64\" or "
                           f"\"float64\"") from None
        try:  # a type no CSV field can always take (a date, a complex number): refused here, from the declaration,
            schema_type(str(var), out[str(var)])  # not as a file that cannot be read
        except DataTypeError:
            raise CLIError(f"--dtypes: column {var!r} is declared as {out[str(var)]}, which a CSV field cannot always "
                           "be read as: declare numbers (\"int64\", \"float64\", ...), \"bool\" or text (\"str\"), "
                           "and convert other types with the formula") from None
    return out


def _parse_spread(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    out = {}
    for var, value in _json_object(text, "--spread").items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CLIError(f"--spread: the sd of {var!r} must be a number")
        out[str(var)] = float(value)
    return out


def _parse_level_shares(text: str | None) -> dict[str, dict[str, float]] | None:
    """``--level-shares``: a JSON object of objects, each variable's levels to their assumed shares."""
    if text is None:
        return None
    out = {}
    for var, shares in _json_object(text, "--level-shares").items():
        if not isinstance(shares, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                   for v in shares.values()):
            raise CLIError(f"--level-shares: the shares of {var!r} must be a JSON object of numbers, e.g. "
                           f"{{\"{var}\": {{\"rare\": 0.02}}}}")
        out[str(var)] = {str(level): float(v) for level, v in shares.items()}
    return out


def _parse_correlation(text: str) -> float | dict[tuple[str, str], Any]:
    """A common correlation (a number), or named pairs as a JSON object of objects: {"x1": {"x2": 0.8}}."""
    try:
        return float(text)
    except ValueError:
        pass
    pairs: dict[tuple[str, str], Any] = {}
    for first, others in _json_object(text, "--correlation").items():
        if not isinstance(others, dict):
            raise CLIError(f"--correlation: the value of {first!r} must be an object of columns and correlations, "
                           f"e.g. {{\"{first}\": {{\"x2\": 0.8}}}}")
        pairs.update({(str(first), str(second)): value for second, value in others.items()})
    return pairs


def _load_data(args: argparse.Namespace, bounds: dict[str, Any] | None, levels: dict[str, list[Any]] | None
               ) -> pd.DataFrame:
    """A CSV file, or else a bundled data set by name.

    A CSV file's column types are public facts, as for :class:`~dpstats.rows.sources.CSVSource`: text for the
    columns with declared text levels, numbers for the others, never inferred from the rows (a rare text level
    in one row would otherwise change a column's type, and so whether the fit runs).  The formula's public checks
    (declared levels, bounds, transforms, unknown names: :func:`~dpstats.formula.public_design`) run on the
    header before any row is read, so that what the declarations decide is refused as such and never as a row
    that did not parse.  With ``--allow-data-levels`` (a leak the report names) pandas reads the types from the
    data.  A file that cannot be read this way is refused with a message that quotes no value and no line of the
    data.
    """
    spec = args.data
    path = Path(spec).expanduser()
    if path.exists():
        if path.is_dir():
            raise CLIError(f"--data: {spec!r} is a directory, not a CSV file")
        if not path.is_file():  # a pipe, a process substitution <(...), a device: the file is opened more than once
            raise CLIError(f"--data: {spec!r} is not a regular file (a pipe, a process substitution such as <(...) "
                           f"or a device), and a CSV file is read more than once (its header, then its rows): "
                           f"write the data to a file and pass its path")
        if args.allow_data_levels:
            return _read_csv(spec, lambda: pd.read_csv(path))
        dtypes = _parse_dtypes(getattr(args, "dtypes", None))
        source = _read_csv(spec, lambda: _public_source(str(path), args.formula, levels, dtypes))
        public_design(args.formula, source.schema(), bounds=bounds, levels=levels, missing=args.missing)
        columns = formula_columns(source.schema(), args.formula)
        return _read_csv(spec, lambda: pd.concat([source.schema()[columns], *source.frames(columns)],
                                                 ignore_index=True))
    if spec in datasets.list():
        if getattr(args, "dtypes", None) is not None:
            raise CLIError(f"--dtypes declares the column types of a CSV file; the bundled data set {spec!r} "
                           f"carries its own")
        return datasets.load(spec)
    raise CLIError(f"--data: {spec!r} is neither an existing CSV file nor a bundled data set "
                   f"(bundled: {', '.join(datasets.list())})")


def _header_columns(spec: str) -> list[str]:
    """The column names in a CSV file's header (public: the schema)."""
    return [str(c) for c in CSVSource(str(Path(spec).expanduser())).schema().columns]


def _read_csv(spec: str, read: Callable[[], _T]) -> _T:
    """``read()``, with a file that cannot be read as CSV refused in one message (no value, no line)."""
    try:
        return read()
    except OSError as exc:
        if exc.errno is None:  # a decompressor's refusal (BadGzipFile: "CRC check failed 0x... != 0x...", a
            # checksum of every row; bz2's "Invalid data stream"), not the system's: its message is withheld
            raise CLIError(f"--data: cannot read {spec!r} as CSV: {UNDECOMPRESSABLE_CSV}") from None
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CLIError(f"--data: cannot read {spec!r} as CSV: {reason}") from None
    except DECOMPRESSION_FAILURES:  # pandas' own reading (--allow-data-levels): a file cut short, damaged data
        raise CLIError(f"--data: cannot read {spec!r} as CSV: {UNDECOMPRESSABLE_CSV}") from None
    except DataTypeError as exc:
        reason = str(exc) if str(exc) == UNDECOMPRESSABLE_CSV else _UNREADABLE
        raise CLIError(f"--data: cannot read {spec!r} as CSV: {reason}") from None
    except ValueError:  # UnicodeDecodeError and pandas' ParserError are ValueErrors
        raise CLIError(f"--data: cannot read {spec!r} as CSV: {_UNREADABLE}") from None


#: why a CSV file was refused, the same whatever the file holds (a domain check)
_UNREADABLE = ("its header is not text, or the file cannot be split into lines and fields (for example, a quote "
               "that is never closed; no line is shown). Every other line is read as a row and every field as a "
               "value or a missing value: columns are numbers, except text columns whose levels are declared "
               "(--levels '{\"VAR\": [\"a\", \"b\"]}' or C(VAR, levels=[...]) in the formula)")


def _public_source(path: str, formula: str, levels: dict[str, list[Any]] | None,
                   dtypes: dict[str, np.dtype] | None = None) -> CSVSource:
    """The CSV file as a source with the public column types of :class:`~dpstats.rows.sources.CSVSource` (its
    header is read, no data row): ``dtypes`` (``--dtypes``) where declared."""
    if dtypes:
        header = _header_columns(path)
        unknown = [c for c in dtypes if c not in header]
        if unknown:
            raise CLIError(f"--dtypes names {', '.join(map(repr, unknown))}, not a column of the file; its columns "
                           f"are: {', '.join(header)}")
    source = CSVSource(path, dtype=dtypes or None)
    return source.with_text_columns(text_level_columns(source.schema(), formula, levels))


# -- commands -----------------------------------------------------------------------------------------------------

def _render(res: Any, fmt: str) -> str:
    if fmt == "json":
        return res.to_json()
    smry = res.summary()
    renderers = {"text": smry.as_text, "latex": lambda: smry.as_latex(privacy=True),  # coefficients + privacy
                 "html": smry.as_html}
    return renderers[fmt]()


def _cmd_fit(args: argparse.Namespace) -> int:
    bounds = _parse_bounds(args.bounds)
    levels = _parse_levels(args.levels)
    options = dict(args.option)
    _check_options(options)
    # the budget file is opened (and a missing or foreign one refused) before the data are loaded
    accountant = None if args.budget is None else PrivacyAccountant.open(Path(args.budget).expanduser())
    if accountant is not None:
        check_accountant_fit(accountant, args.epsilon, args.delta, args.method)
    data = _load_data(args, bounds, levels)
    csv_file = Path(args.data).expanduser().is_file() and not args.allow_data_levels  # types from declarations
    if bounds and csv_file:
        # only the formula's columns of the file are read; a bound for another column of the file is ignored,
        # as dp_ols ignores one for a column of a DataFrame the formula does not use (the header checked it)
        header = set(_header_columns(args.data))
        bounds = {k: v for k, v in bounds.items() if k in data.columns or k not in header}
    with source_hint(_CSV_TEXT_HINT) if csv_file else contextlib.nullcontext():
        res = dp_ols(args.formula, data, epsilon=args.epsilon, delta=args.delta, method=args.method, bounds=bounds,
                     random_state=args.seed, levels=levels, missing=args.missing,
                     allow_data_levels=args.allow_data_levels, rescale=RESCALE_CHOICES[args.rescale],
                     accountant=accountant, **options)
    if csv_file:  # after the fit: a refused one says what to declare in its one error line
        _note_undeclared_csv_response(args.formula, set(_header_columns(args.data)), bounds, levels,
                                      _parse_dtypes(getattr(args, "dtypes", None)))
    print(_render(res, args.format))
    return EXIT_OK


def _note_undeclared_csv_response(formula: str, header: set[str], bounds: dict[str, Any] | None,
                                  levels: dict[str, list[Any]] | None, dtypes: dict[str, np.dtype] | None) -> None:
    """Print a ``note:`` line on stderr, after a fit, where the response is a column of the CSV file with neither
    declared bounds, levels nor type.

    In Python a boolean response is two-valued, its range fixed by the design; a CSV file has no types, so its
    column (``True``/``False`` as ``DataFrame.to_csv`` writes it, or 0/1) is read as a number, and without bounds
    the fit releases a clipping domain for it, silently.  The note is decided by the formula and the declarations
    only (public facts), never by the file's rows.

    Parameters
    ----------
    formula : str
        The model formula (``FORMULA``).
    header : set of str
        The CSV file's column names (its schema).
    bounds, levels, dtypes : dict or None
        The declared ``--bounds``, ``--levels`` and ``--dtypes``.
    """
    response = formula.split("~", 1)[0].strip()
    if (response not in header or response in (bounds or {}) or response in (levels or {})
            or response in (dtypes or {})):
        return
    print(f"note: the response {response!r} has no declared bounds or type, so it is read from the CSV file as a "
          f"number without a public range and the fit releases a clipping domain for it; a two-valued response "
          f"(True/False or 0/1, as a boolean column is written to CSV) is two-valued as in Python with --dtypes "
          f"'{{\"{response}\": \"bool\"}}', and a response with a public range takes it from --bounds.",
          file=sys.stderr)


def _variables_in(formula: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", formula))


def _cmd_example(args: argparse.Namespace) -> int:
    info = datasets.describe(_EXAMPLE_DATASET)
    df = datasets.load(_EXAMPLE_DATASET)
    formula = info.example_formula
    used = _variables_in(formula)
    bounds = {k: v for k, v in info.documented_ranges.items() if k in used} if args.documented_bounds else {}
    res = dp_ols(formula, df, epsilon=args.epsilon, delta=args.delta, method=args.method, bounds=bounds or None,
                 random_state=args.seed)
    eps = "inf" if math.isinf(args.epsilon) else f"{args.epsilon:g}"
    lines = [
        f"dpstats example: differentially private linear regression on the bundled '{info.name}' data set",
        f"  data:    {info.title}; n={len(df)} rows",
        f"  source:  {info.source}; licence: {info.licence}",
        f"  formula: {formula}",
        f"  budget:  epsilon={eps}, delta={args.delta:g}, method={args.method}"
        + (f", seed={args.seed}" if args.seed is not None else ""),
        *(["  bounds:  " + ", ".join(f"{k} [{lo:g}, {hi:g}]" for k, (lo, hi) in bounds.items()),
           f"           taken from {info.ranges_source}: public knowledge about this public data set, not read "
           "from the data by dpstats.",
           "           With private data, declare bounds from domain knowledge (--bounds), never from the data."]
          if bounds else
          ["  bounds:  none declared; method=auto picks a method that needs no data bounds (see 'Method choice' "
           "below).",
           "           --documented-bounds declares the ranges published with the data set instead."]),
        "  levels:  " + "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in info.levels.items()),
        "           the public levels from the data set's documentation;",
        *wrap_note(info.example_note, 110, indent=" " * 11, first_indent=" " * 11),
        "",
        res.summary().as_text(),
        "",
        *_example_comparison(formula, df, res),
        "Fit your own: dpstats fit FORMULA --data CSV_OR_NAME --epsilon E --delta D --bounds JSON "
        "(see dpstats fit --help)",
    ]
    print("\n".join(lines))
    return EXIT_OK


def _example_comparison(formula: str, df: pd.DataFrame, res: Any) -> list[str]:
    """The private fit next to ordinary least squares on the same public data (none for a non-private fit)."""
    if not res.privacy.private:
        return []
    reference = dp_ols(formula, df, epsilon=math.inf, method="ols")
    tab = table({"OLS": reference, res.method: res}, statistic=None,
                stats=("nobs", "r.squared", "epsilon", "delta", "guarantee"))
    return ["The private coefficients next to ordinary least squares on the same data (NOT PRIVATE: shown only "
            "because this data set is public):", tab.as_text(), ""]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _plan_formula(args: argparse.Namespace, bounds: dict[str, Any]) -> str | None:
    """The formula of ``dpstats plan``: positional, as ``dpstats fit`` takes it, or ``--formula`` (both if equal);
    None (``y ~`` every other bounded variable) only where the bounds name a ``y``, since the command has no
    ``response=`` to name another response."""
    if args.formula_arg is not None and args.formula is not None and args.formula_arg != args.formula:
        raise FormulaError("dpstats plan was given two different formulas, one as FORMULA and one as --formula: "
                           "give one of them")
    formula = args.formula_arg if args.formula_arg is not None else args.formula
    if formula is None and "y" not in bounds:
        raise InvalidArgumentError("dpstats plan needs the model: give it as FORMULA or --formula, e.g. 'RESPONSE ~ "
                                   "x1 + x2' (without one it plans y ~ every other bounded variable, and --bounds "
                                   "declares no y)")
    return formula


def _plan_options(args: argparse.Namespace) -> dict[str, dict[str, Any]] | None:
    """The ``--option`` flags of ``dpstats plan`` as :func:`dpstats.plan`'s ``method_options``: for the one method
    that ``--method`` names (not auto, whose choice takes no options)."""
    options = dict(args.option)
    if not options:
        return None
    _check_options(options)
    if args.method is None or len(args.method) != 1 or args.method[0] == "auto":
        raise CLIError("dpstats plan --option needs exactly one method, named with --method (not auto): the options "
                       "are that method's")
    return {args.method[0]: options}


def _cmd_plan(args: argparse.Namespace) -> int:
    bounds = _parse_bounds(args.bounds) or {}
    result = plan(bounds=bounds, formula=_plan_formula(args, bounds), levels=_parse_levels(args.levels), n=args.n,
                  epsilon=args.epsilon, delta=args.delta, method=args.method, rsquared=args.rsquared,
                  residual_sd=args.residual_sd, dtypes=_parse_dtypes(args.dtypes), outcome_share=args.outcome_share,
                  missing=args.missing, correlation=_parse_correlation(args.correlation),
                  spread=_parse_spread(args.spread), rescale=RESCALE_CHOICES[args.rescale],
                  method_options=_plan_options(args), level_shares=_parse_level_shares(args.level_shares))
    frame = result.to_frame()
    if args.format == "csv":
        print(frame.to_csv(index=False), end="")
    elif args.format == "json":
        print(frame.to_json(orient="records", indent=2))
    else:
        print("\n".join(result.lines(spelling="cli")))  # the options it names as the flags: --method auto
    return EXIT_OK


def _cmd_datasets(args: argparse.Namespace) -> int:
    rows = []
    for name in datasets.list():
        info = datasets.describe(name)
        rows.append([name, str(info.n_rows), info.title, info.licence])
    print(_table(["name", "rows", "title", "licence"], rows))
    print("\nUse one with: dpstats fit FORMULA --data NAME ...  or  dpstats.datasets.load(NAME) in Python.")
    return EXIT_OK


def _cmd_methods(args: argparse.Namespace) -> int:
    rows = []
    for name, spec in sorted(available_methods().items()):
        guarantee = spec.guarantee if spec.private else "NOT PRIVATE"
        rows.append([name, spec.title, "yes" if spec.needs_bounds else "no", guarantee, spec.citation])
    rows.append(["auto", "chooses a method from public facts (n, d, declared bounds)", "", "", ""])
    print(_table(["name", "title", "needs bounds", "guarantee", "citation"], rows))
    return EXIT_OK


def _cmd_budget_show(args: argparse.Namespace) -> int:
    info = read_budget_file(args.path)
    rows = info["rows"]
    if args.format == "json":
        print(json.dumps(budget_document(info), indent=2))
        return EXIT_OK
    eps, dlt = info["epsilon"], info["delta"]
    left_e = max(0.0, eps - info["spent_epsilon"] - info["held_epsilon"])
    left_d = max(0.0, dlt - info["spent_delta"] - info["held_delta"])
    lines = [
        f"budget file: {info['path']}",
        f"created {info['meta'].get('created_at', '?')} by {info['meta'].get('created_by', '?')}",
        f"budget:    epsilon={eps:.6g}, delta={dlt:.3g}",
        f"spent:     epsilon={info['spent_epsilon']:.6g}, delta={info['spent_delta']:.3g}",
        f"held:      epsilon={info['held_epsilon']:.6g}, delta={info['held_delta']:.3g} (reservations of fits "
        "still running)",
        f"left:      epsilon={left_e:.6g}, delta={left_d:.3g}",
        "seeded fits: " + ("refused (refuse_seeded=True)" if info["meta"].get("seeded_fits") == "refuse"
                           else "allowed (fits with a fixed random_state draw reproducible noise)"),
        "",
    ]
    if rows:
        table = [[str(r.id), (r.settled_at or r.reserved_at)[:19].replace("T", " "), r.who, r.label,
                  f"{r.reserved_epsilon:.4g}/{r.reserved_delta:.3g}",
                  "-" if r.spent_epsilon is None else f"{r.spent_epsilon:.4g}/{r.spent_delta:.3g}", r.status]
                 for r in rows]
        lines.append(_table(["#", "when (UTC)", "who", "fit", "reserved eps/delta", "spent eps/delta", "status"],
                            table))
    else:
        lines.append("no reservations yet")
    if info["events"]:
        lines += ["", "events:"] + [f"  {at[:19].replace('T', ' ')}  {who}: {what}" for at, who, what in info["events"]]
    print("\n".join(lines))
    return EXIT_OK


# -- entry point --------------------------------------------------------------------------------------------------

_CARET_LINE = re.compile(r"^\s*\^[\s^~]*$")


def _one_line(exc: BaseException, example: bool = False) -> str:
    """The error message on one line (patsy's caret diagrams are dropped: their first line says it all), with the
    option that declares what is missing (for ``dpstats example``, which takes no ``--bounds``, its own)."""
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    if any(_CARET_LINE.match(ln) for ln in lines):
        lines = lines[:1]
    msg = " ".join(" ".join(ln.split()) for ln in lines)
    if isinstance(exc, UndeclaredLevelsError):
        msg += " On the command line: --levels '{\"VAR\": [\"a\", \"b\"]}' or C(VAR, levels=[...]) in the formula."
    elif isinstance(exc, MissingBoundsError) and example:
        msg += " With dpstats example: --documented-bounds declares the ranges published with the data set."
    elif isinstance(exc, MissingBoundsError):
        msg += (" On the command line: --bounds '{\"VAR\": [lo, hi]}' for a numeric column; a column of a CSV file "
                "that is a factor (text) needs --levels '{\"VAR\": [\"a\", \"b\"]}' instead: without declared "
                "levels it is read as numbers; a True/False column (a boolean, as pandas writes one to CSV) needs "
                "--dtypes '{\"VAR\": \"bool\"}' instead, and is then a factor as in Python.")
    elif isinstance(exc, UnknownColumnError) and exc.column is not None and msg.startswith("plan() has no data"):
        name = json.dumps(exc.column)  # plan's own spelling is Python's (bounds=..., dtypes=...)
        msg += (f" On the command line: --bounds '{{{name}: [lo, hi]}}', --levels '{{{name}: [\"a\", \"b\"]}}' or, "
                f"for a two-valued variable, --dtypes '{{{name}: \"bool\"}}'.")
    elif isinstance(exc, MissingDataError) and "missing='drop'" in msg:
        msg += " On the command line: --missing drop."
    elif "Drop accountant=" in msg:
        msg += " On the command line: leave out --budget."
    elif "refuses fits with a fixed random_state" in msg:
        msg += " On the command line: leave out --seed."
    if "pass missing='drop'" in msg and "--missing drop" not in msg:  # pgd's refusal without bounds offers it
        msg += " For missing='drop' on the command line: --missing drop."
    return msg


def _named_response(message: str) -> str:
    """The response's name as a warning's text quotes it ("response 'vote'"), or "VAR"."""
    found = re.search(r"response '([^']+)'", message)
    return found.group(1) if found else "VAR"


#: a dpstats warning's advice in Python spelling, and what says the same on the command line
_WARNING_FLAGS: dict[type[Warning], Callable[[str], str]] = {
    MissingValuesWarning: lambda msg: " On the command line: --missing drop." if "missing='drop'" in msg else "",
    FloatIndicatorWarning: lambda msg: (
        " On the command line, a CSV column of 0 and 1 only is declared with --dtypes '{\"" + _named_response(msg)
        + "\": \"int64\"}'; leave a proportion's column undeclared (a fraction in an int64 column is read as a "
        "missing value)."),
    ClippedRowsWarning: lambda msg: " On the command line: --bounds '{\"VAR\": [LO, HI]}' for each of them.",
}


def _cli_warnings(python: Callable[..., None]) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints a dpstats warning as one line ``warning: ...`` on stderr (no source
    path or code line; the options it names spelled as on the command line), and hands the others to
    ``python``."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if not getattr(category, "__module__", "").startswith("dpstats"):
            python(message, category, filename, lineno, file, line)
            return
        msg = " ".join(str(message).split())
        msg += "" if msg.endswith(".") else "."
        for kind, hint in _WARNING_FLAGS.items():
            if issubclass(category, kind):
                msg += hint(msg)
        print(f"warning: {msg}", file=sys.stderr if file is None else file)
    return show


def _run(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    with warnings.catch_warnings():
        warnings.showwarning = _cli_warnings(warnings.showwarning)
        try:
            return func(args)
        except DPStatsError as exc:
            print(f"error: {_one_line(exc, example=func is _cmd_example)}", file=sys.stderr)
            return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dpstats`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # --help / --version (0) or a usage error (2), already printed by argparse
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    try:
        return _run(args.func, args)
    except BrokenPipeError:  # the reader went away, e.g. `dpstats methods | head -1`
        try:  # silence the flush at interpreter exit (recipe from the Python docs on SIGPIPE)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
