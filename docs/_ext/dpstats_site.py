"""Pages generated at build time from the package itself, so that they cannot go stale.

Connected to Sphinx's ``config-inited`` event (before Sphinx lists the source files, so that a fresh
checkout's first build finds the generated pages and autosummary writes their stubs), it writes, under
``docs/``:

* ``methods/index.md`` and ``methods/<name>.md``: one page per registered method, read from its
  :class:`~dpstats.methods.registry.MethodSpec` (title, citation, needs bounds, guarantee, options with
  their defaults and docs from the options dataclass, when ``method="auto"`` picks it, its proof page
  ``docs/proofs/<name>.md``, its theory rate, its measured accuracy from the real-data benchmark), so a
  new method gets a page as soon as it is registered;
* ``methods/auto.md``: what ``method="auto"`` does at a few sizes, decided by the real pipeline (a probe
  option that no method accepts stops every call right after the choice, before any data are read or any
  budget spent), checked against the rule stated from the registry;
* ``api/*.rst``: the API reference, autosummary tables over ``dpstats.__all__`` and the ``__all__`` of
  the public submodules (:data:`API_MODULES`), each object documented once, under its first public name;
* ``vignettes/``: a copy of the stored notebooks of ``vignettes/`` (rendered by myst-nb, never executed)
  and the gallery page with a thumbnail of each notebook's first figure.

These directories are in ``.gitignore``; a file is rewritten only when its content changes, so an
incremental build re-reads only what changed.  The page generators need the package and numpydoc, not
Sphinx: ``tests/test_docs_site.py`` runs them.
"""

from __future__ import annotations

import base64
import dataclasses
import inspect
import json
import math
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the generators run without Sphinx too (tests/test_docs_site.py)
    from sphinx.application import Sphinx

#: The public modules of the API reference, in page order: (module, page title, one-line introduction).
#: Their ``__all__`` is the public surface (``dpstats.errors``: every exception and warning class it defines).
API_MODULES: tuple[tuple[str, str, str], ...] = (
    ("dpstats", "dpstats", "The top-level names: fitting, results, budgets, methods, tables and planning."),
    ("dpstats.results", "dpstats.results", "The results of a fit."),
    ("dpstats.tables", "dpstats.tables", "Several fits side by side, for papers (text, Markdown, HTML, LaTeX)."),
    ("dpstats.inference", "dpstats.inference",
     "Standard errors, intervals and private R^2 from released values only."),
    ("dpstats.privacy", "dpstats.privacy", "Budgets, ledgers, reports and the calibration of Gaussian noise."),
    ("dpstats.privacy.audit", "dpstats.privacy.audit", "Statistical audits of a mechanism's privacy loss."),
    ("dpstats.theory", "dpstats.theory", "Minimax error bounds and the number of rows a target error needs."),
    ("dpstats.compare", "dpstats.compare", "Methods against epsilon on public or synthetic data."),
    ("dpstats.sklearn", "dpstats.sklearn", "A scikit-learn estimator (the ``sklearn`` extra)."),
    ("dpstats.datasets", "dpstats.datasets", "The bundled data sets."),
    ("dpstats.simulate", "dpstats.simulate", "Synthetic data from the papers' settings."),
    ("dpstats.plotting", "dpstats.plotting", "Figures (the ``plot`` extra)."),
    ("dpstats.errors", "dpstats.errors", "Every exception and warning the package raises."),
    ("dpstats.methods.registry", "dpstats.methods.registry",
     "For authors of a new method: the registry and the types a method receives and returns."),
    ("dpstats.rows", "dpstats.rows", "For authors of a new method: how a method reads the rows."),
    ("dpstats.numbers", "dpstats.numbers",
     "The public rule that reads each element of an input without a numeric type as a number or as missing."),
    ("dpstats.rows.csv_fields", "dpstats.rows.csv_fields",
     "The public rules that read each CSV line as a row and each field as a value or as missing."),
)

#: the benchmark whose per-method table the method pages quote (written by benchmarks/real_data.py)
REAL_DATA_SUMMARY = Path("benchmarks") / "results" / "real_data" / "summary.md"
#: the heading of that table in the summary
REAL_DATA_TABLE = "By method and epsilon"
#: the columns of that table the method pages show
REAL_DATA_COLUMNS = ("method", "epsilon", "fits", "median rel. error (headline)", "sign right", "refused",
                     "eps spent per refusal (share)", "interval reported")

#: sizes at which methods/auto.md shows what ``method="auto"`` does: rows and covariates (plus an intercept)
AUTO_ROWS = (200, 800, 2_000, 10_000, 50_000)
AUTO_COVARIATES = (3, 10)
#: the budget at which they show it (auto's choice may depend on n * mu(epsilon, delta))
AUTO_EPSILON, AUTO_DELTA = 1.0, 1e-6
#: an option name no method accepts: the pipeline refuses it right after ``auto`` has chosen, reading nothing
PROBE_OPTION = "docs_site_probe"


# -- small helpers --------------------------------------------------------------------------------------------------

def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it already holds exactly that (keeps incremental builds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def remove_stale(directory: Path, keep: Iterable[Path], pattern: str) -> None:
    """Delete the generated files in ``directory`` matching ``pattern`` that were not written this time."""
    keep = {p.resolve() for p in keep}
    for path in directory.glob(pattern):
        if path.resolve() not in keep:
            path.unlink()


_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc):`~?([^`]+)`")
_MATH = re.compile(r":math:`([^`]+)`")


def rst_to_myst(text: str) -> str:
    """Docstring text (reStructuredText) as MyST Markdown for a generated page.

    Roles become literals (the objects they name need not be on the site), ````x```` becomes ```x```,
    ``:math:`` becomes dollar math, and lines are joined into one paragraph.
    """
    text = _ROLE.sub(lambda m: f"``{m.group(1).split('.')[-1] if '.' in m.group(1) else m.group(1)}``", text)
    text = _MATH.sub(lambda m: f"${m.group(1)}$", text)
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


# -- one page per method --------------------------------------------------------------------------------------------

def attribute_docs(cls: type) -> dict[str, tuple[str, str]]:
    """{option name: (type, description)} from the numpydoc ``Attributes``/``Parameters`` of an options class.

    An entry may name several options (``inference, bootstrap``); a description "As for :class:`X`"
    is replaced by the entry of X for the same name.
    """
    from numpydoc.docscrape import NumpyDocString  # noqa: PLC0415

    doc = NumpyDocString(inspect.getdoc(cls) or "")
    out: dict[str, tuple[str, str]] = {}
    for param in [*doc["Parameters"], *doc["Attributes"]]:
        desc = "\n".join(param.desc)
        for name in (n.strip() for n in param.name.split(",")):
            out[name] = (param.type, desc)
    for name, (typ, desc) in list(out.items()):
        m = re.fullmatch(r"\s*As for :class:`~?([\w.]+)`\.?\s*", desc)
        if m:
            other = _import(m.group(1))
            if isinstance(other, type):
                out[name] = attribute_docs(other).get(name, (typ, desc))
    return out


def _import(dotted: str) -> Any:
    """The object at a dotted path (module attribute), or None."""
    import importlib  # noqa: PLC0415

    module, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError):
        return None


def option_entries(spec: Any) -> list[tuple[str, str, str, str]]:
    """(name, type, default, description) of each option of a method, in declaration order."""
    cls = spec.options
    docs = attribute_docs(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    entries = []
    for name in spec.option_names:
        field = fields.get(name)
        typ, desc = docs.get(name, ("", ""))
        if field is not None:
            desc = field.metadata.get("doc", desc)
            if field.default is not dataclasses.MISSING:
                default = f"`{field.default!r}`"
            elif field.default_factory is not dataclasses.MISSING:
                default = f"`{field.default_factory()!r}`"
            else:
                default = "required"
        else:
            default = "not declared in an options dataclass yet"
        entries.append((name, typ, default, rst_to_myst(desc) or "(no description in the options class yet)"))
    return entries


def read_markdown_table(path: Path, heading: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the first Markdown table after the heading containing ``heading``."""
    if not path.exists():
        return [], []
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("#") and heading in ln), None)
    if start is None:
        return [], []
    table = []
    for ln in lines[start + 1:]:
        if ln.startswith("|"):
            table.append([c.strip() for c in ln.strip().strip("|").split("|")])
        elif table:
            break
    if len(table) < 2:
        return [], []
    return table[0], table[2:]


def accuracy_section(name: str, root: Path) -> str:
    """The method's rows of the real-data benchmark (measured accuracy), or a sentence saying there are none."""
    header, rows = read_markdown_table(root / REAL_DATA_SUMMARY, REAL_DATA_TABLE)
    mine = [r for r in rows if r and (r[0] == name or r[0].startswith(name + " ("))]
    if not mine:
        return (f"The real-data benchmark ([Benchmarks](../benchmarks.md)) has no run of `{name}` yet; "
                "`python benchmarks/real_data.py` adds it.\n")
    cols = [header.index(c) for c in REAL_DATA_COLUMNS if c in header]
    head = "| " + " | ".join(header[c] for c in cols) + " |"
    sep = "|" + "---|" * len(cols)
    body = ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in mine]
    return "\n".join([
        "Measured on 23 real published regressions at their papers' sizes (n from about 160 to 43,000 "
        "training rows), 5 noise seeds each, against ordinary least squares on the same rows: the "
        "median relative error of each study's headline coefficient, how often its sign is right, how "
        "often the method refused (and what a refusal spent), and how often it reported a 95% interval. "
        "\"(no bounds)\" rows ran without declared bounds. Definitions, the data sets and every other "
        "method: [Benchmarks](../benchmarks.md) (\"Real published regressions at paper sizes\").",
        "", head, sep, *body, ""])


def yes_no(flag: bool) -> str:
    """"yes" or "no"."""
    return "yes" if flag else "no"


def guarantee_text(spec: Any) -> str:
    """The method's guarantee in words, with links to the privacy model."""
    if not spec.private:
        return "none: **NOT PRIVATE** (the non-private reference; runs only with `epsilon=float('inf')`)"
    kind = {"worst-case": "worst-case (epsilon, delta)-DP: holds for every pair of neighbouring data sets "
                          "in the declared domain",
            "conditional": "conditional: holds with high probability under the paper's assumptions"}
    return (f"{kind.get(spec.guarantee, spec.guarantee)}; neighbours: {spec.relation} with n public "
            "([privacy model](../privacy.md))")


def rows_text(spec: Any) -> str:
    """The public minimum number of rows, evaluated at a few d."""
    ds = (2, 5, 10, 50)
    return ", ".join(f"d = {d}: n >= {spec.min_rows(d):,}" for d in ds)


@dataclasses.dataclass(frozen=True)
class _RankRule:
    """The one regime that ``auto_rank``/``auto_min_rows`` stand for (a registry without ``AutoRule``)."""

    rank: int
    min_rows: Any = None


def auto_rules_of(spec: Any) -> list[Any]:
    """The regimes in which ``method="auto"`` may choose the method, best rank first.

    The registry's rules (``spec.effective_auto_rules``, :class:`AutoRule` objects with a rank and the
    public facts they need) where the registry has them; otherwise the one rule of ``auto_rank`` and
    ``auto_min_rows``.  Empty: ``auto`` never chooses the method.
    """
    rules = getattr(spec, "effective_auto_rules", None)
    if rules is None:
        rules = [] if getattr(spec, "auto_rank", None) is None else [_RankRule(spec.auto_rank, spec.auto_min_rows)]
    return sorted(rules, key=lambda r: r.rank)


def _example_mu() -> float:
    """mu(epsilon, delta) of the budget the auto pages use (AUTO_EPSILON, AUTO_DELTA)."""
    from dpstats.privacy.calibration import gaussian_mu  # noqa: PLC0415

    return float(gaussian_mu(AUTO_EPSILON, AUTO_DELTA))


def rule_conditions(rule: Any, spec: Any) -> list[str]:
    """One regime of ``auto`` in words: the public facts it needs (attributes a rule lacks are unlimited)."""
    conditions = []
    bounds = getattr(rule, "bounds", "any")
    if bounds == "all" and not spec.needs_bounds:
        conditions.append("bounds are declared for every variable")
    elif bounds == "missing":
        conditions.append("some variable has no declared bounds")
    min_rows = getattr(rule, "min_rows", None) or spec.min_rows
    conditions.append("n >= " + ", ".join(f"{min_rows(d):,} at d = {d}" for d in (2, 5, 10)))
    max_rows = getattr(rule, "max_rows", math.inf)
    if max_rows < math.inf:
        conditions.append(f"n < {max_rows:,.0f}")
    lo, hi = getattr(rule, "min_n_mu", 0.0), getattr(rule, "max_n_mu", math.inf)
    if lo > 0 or hi < math.inf:
        span = (f"n mu >= {lo:g}" if hi == math.inf else f"n mu < {hi:g}" if lo <= 0
                else f"{lo:g} <= n mu < {hi:g}")
        conditions.append(f"{span}, where mu is the Gaussian-DP parameter of (epsilon, delta) (mu = "
                          f"{_example_mu():.3f} at epsilon = {AUTO_EPSILON:g}, delta = {AUTO_DELTA:g})")
    min_d, max_d = getattr(rule, "min_d", 1), getattr(rule, "max_d", 1 << 30)
    if min_d > 1 or max_d < 1 << 30:
        conditions.append(f"{min_d} <= d <= {max_d}" if max_d < 1 << 30 else f"d >= {min_d}")
    text = "; ".join(conditions)
    if getattr(rule, "intervals", False):
        text += " (it reports intervals there)"
    why = getattr(rule, "why", "")
    return [text + (f". Evidence: {rst_to_myst(why)}" if why else "")]


def auto_text(spec: Any, all_specs: dict[str, Any]) -> str:
    """When ``method="auto"`` picks the method, from its registered regimes (:func:`auto_rules_of`)."""
    if not spec.private:
        return ("Never: `method=\"auto\"` chooses among private methods (with `epsilon=float('inf')` it refuses); "
                "name this non-private reference with `method=\"ols\"` and `epsilon=float('inf')`.")
    rules = auto_rules_of(spec)
    if not rules:
        return (f"Never: `method=\"auto\"` does not consider `{spec.name}`; name it with "
                f"`method=\"{spec.name}\"`.")
    always = []
    if spec.needs_bounds:
        always.append("bounds are declared for every design column and the response")
    if not spec.allows_wide:
        always.append("d <= n")
    always.append("also with `missing=\"drop\"` (its releases ignore the null rows)" if spec.null_rows
                  else "not with `missing=\"drop\"`, which it refuses")
    if getattr(spec, "auto_refusal", None) is not None:
        always.append("the method's own check of the public facts (the reason it would refuse with) passes")
    ranks = [r.rank for r in rules]
    better = sorted((s for s in all_specs.values() if s is not spec and s.private and auto_rules_of(s)
                     and min(r.rank for r in auto_rules_of(s)) < max(ranks)),
                    key=lambda s: (min(r.rank for r in auto_rules_of(s)), s.name))
    pref = ("No other method ranks ahead of it." if not better else
            "Where the regime of one of these, ranked ahead of it, matches too, that method is chosen: "
            + ", ".join(f"[`{s.name}`]({s.name}.md)" for s in better) + ".")
    if len(rules) == 1:
        regimes = (f"(rank {rules[0].rank}; among the methods whose regime matches, the lowest rank wins) when "
                   + "; ".join(always + rule_conditions(rules[0], spec)) + ".")
    else:
        regimes = ("when " + "; ".join(always) + ", in any of these regimes (among the methods whose regime "
                   "matches, the lowest rank wins):\n\n"
                   + "\n".join(f"- rank {r.rank}: {rule_conditions(r, spec)[0]}" for r in rules) + "\n\n")
    return ("`method=\"auto\"` considers it " + regimes + " " + pref + " See [Choosing a method]"
            "(../guide/choosing-a-method.md) and [what `auto` does at a few sizes](auto.md).")


def inference_text(spec: Any) -> str:
    """What standard errors and intervals the method gives (its registered inference rule)."""
    rule = spec.inference_rule
    kinds = {"bootstrap": "parametric bootstrap on released values (basic bootstrap intervals)",
             "normal": "normal intervals from the released noise scale",
             "t": "t intervals from released values",
             "classical": "classical OLS standard errors (not private)"}
    if rule.kind == "none":
        return "none: the summary shows \"—\" with the reason ([Intervals](../guide/intervals.md))"
    text = kinds.get(rule.kind, rule.kind)
    if rule.withhold_above is not None:
        text += (f"; withheld when the released noise-to-signal ratio of X^T X exceeds {rule.withhold_above:g}, "
                 "where they were measured to cover less than 90%")
    return text + " ([Intervals](../guide/intervals.md))"


def theory_text(spec: Any) -> str:
    """The method's registered upper rate, or why it has none."""
    if spec.theory_rate is None:
        return "no rate registered"
    upper = spec.theory_rate(spec.guarantee)
    if upper.rate is None:
        return f"none proved: {upper.why_none}"
    rate = upper.rate
    return f"{rate.formula} ({rate.source}; in units of sigma, up to constants)"


def further_reading(name: str, docs: Path) -> list[str]:
    """Guide pages whose title names the method (in backticks)."""
    pages = []
    for path in sorted([*docs.glob("*.md"), *docs.glob("guide/*.md")]):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        if first.startswith("# ") and re.search(rf"`(method=\"?)?{re.escape(name)}\"?`", first):
            rel = path.relative_to(docs).as_posix()
            pages.append(f"[{first[2:].strip()}](../{rel})")
    return pages


def method_page(spec: Any, all_specs: dict[str, Any], docs: Path, root: Path) -> str:
    """The Markdown page of one method."""
    proof = root / spec.proof
    proof_link = (f"[{spec.proof}](../proofs/{spec.name}.md)" if proof.exists()
                  else f"not written yet (`{spec.proof}`)" + ("; the module's own argument is under \"Privacy "
                                                              "argument\" below" if interim_proof(spec) else ""))
    facts = [
        ("Use it", f"`dpstats.dp_ols(formula, data, epsilon, delta, method=\"{spec.name}\", ...)`"),
        ("Paper", spec.citation),
        ("Needs declared bounds", yes_no(spec.needs_bounds) + (" (the data are clipped to them)"
                                                               if spec.needs_bounds else "")),
        ("Guarantee", guarantee_text(spec)),
        ("Privacy proof", proof_link),
        ("Suits", spec.regimes or "-"),
        ("Minimum rows (public)", rows_text(spec)),
        ("More columns than rows", yes_no(spec.allows_wide)),
        ("`missing=\"drop\"`", "accepted (incomplete rows become public null rows)" if spec.null_rows
         else "refused"),
        ("Standard errors and intervals", inference_text(spec)),
        ("Error rate (theory)", theory_text(spec)),
    ]
    lines = [f"({spec.name}-method)=", f"# `{spec.name}`: {spec.title}", "",
             "<!-- generated by docs/_ext/dpstats_site.py from the method registry: do not edit -->", "",
             "| | |", "|---|---|", *[f"| {k} | {cell(v)} |" for k, v in facts], ""]
    if spec.raw_units_warning:
        lines += [f"```{{note}}\n{spec.raw_units_warning}\n```", ""]
    if not proof.exists() and spec.private:
        lines += interim_proof(spec)
    lines += ["## Options", ""]
    entries = option_entries(spec)
    if not entries:
        lines += [f"`{spec.name}` has no options.", ""]
    for opt, typ, default, desc in entries:
        lines += [f"`{opt}`" + (f" ({cell(typ)}; default: {default})" if typ else f" (default: {default})"),
                  f": {desc}", ""]
    lines += ["Pass options by keyword to `dp_ols`; an unknown name or a value out of range is refused "
              "before anything is read or spent (`MethodOptionError`).", ""]
    lines += ["## When `method=\"auto\"` picks it", "", auto_text(spec, all_specs), ""]
    lines += ["## Measured accuracy", "", accuracy_section(spec.name, root)]
    lines += ["## How to cite", "",
              f"Cite the paper the method implements, {spec.citation}, and the software: "
              f"dpstats {_version()}, `method=\"{spec.name}\"`. The privacy report of every fit "
              "(`print(res.privacy)`) names the method, the budget spent and the guarantee, for a paper's "
              "methods section.", ""]
    more = further_reading(spec.name, docs)
    if more:
        lines += ["## Further reading", "", *[f"- {p}" for p in more], ""]
    return "\n".join(lines)


def method_module(spec: Any) -> Any:
    """The module that implements a method: ``dpstats.methods.<name>`` (a module or a subpackage), else the
    module of its fit function; None when neither can be imported."""
    import importlib  # noqa: PLC0415

    for name in (f"dpstats.methods.{spec.name}", getattr(spec.fit, "__module__", None)):
        if name and name.startswith("dpstats."):
            try:
                return importlib.import_module(name)
            except ImportError:
                continue
    return None


def interim_proof(spec: Any) -> list[str]:
    """Until ``docs/proofs/<name>.md`` exists: the privacy argument as the method's module docstring states it."""
    module = method_module(spec)
    doc = inspect.getdoc(module) if module is not None else None
    if not doc:
        return []
    fence = "`" * max(4, 1 + max((len(m) for m in re.findall(r"`+", doc)), default=0))
    return ["## Privacy argument", "",
            f"The proof page `{spec.proof}` is not written yet. Until it is, here is the method's description and "
            f"privacy argument as its module (`{module.__name__}`) states them:", "",
            f"{fence}text", doc, fence, ""]


def _version() -> str:
    import dpstats  # noqa: PLC0415

    return dpstats.__version__


def methods_index(specs: dict[str, Any], root: Path) -> str:
    """The table of every registered method."""
    header, rows = read_markdown_table(root / REAL_DATA_SUMMARY, REAL_DATA_TABLE)
    err = {}
    if header:
        i_m, i_e = header.index("method"), header.index("epsilon")
        i_r = header.index("median rel. error (headline)")
        i_f = header.index("refused")
        err = {r[i_m]: (r[i_r], r[i_f]) for r in rows if r[i_e] == "1"}
    lines = ["# Methods", "",
             "<!-- generated by docs/_ext/dpstats_site.py from the method registry: do not edit -->", "",
             "Every estimator registered in dpstats, one page each, generated from the method registry "
             "(`dpstats.available_methods()`; `dpstats methods` on the command line). \"auto rank\": the "
             "preference of `method=\"auto\"` among eligible methods (lowest wins; \"-\": never chosen by "
             "`auto`). The last two columns are measured at epsilon = 1 on 23 real regressions with "
             "declared bounds ([Benchmarks](../benchmarks.md)); \"-\" where the method was not run or "
             "always refused. See [Choosing a method](../guide/choosing-a-method.md).", "",
             "| method | estimator | needs bounds | guarantee | auto rank | median rel. error, eps = 1 | "
             "refused, eps = 1 |",
             "|---|---|---|---|---|---|---|"]
    for name, spec in sorted(specs.items()):
        guarantee = spec.guarantee if spec.private else "none: NOT PRIVATE"
        rel, ref = err.get(name, ("-", "-"))
        lines.append(f"| [`{name}`]({name}.md) | {cell(spec.title)} | {yes_no(spec.needs_bounds)} | {guarantee} "
                     f"| {', '.join(str(r.rank) for r in auto_rules_of(spec)) or '-'} | {rel} | {ref} |")
    lines += ["", "```{toctree}", ":hidden:", "", *sorted(specs), "auto", "```", ""]
    return "\n".join(lines)


# -- what auto does -------------------------------------------------------------------------------------------------

def auto_probe(n: int, k: int, bounds: bool) -> tuple[str, str]:
    """What ``method="auto"`` does for a formula with k covariates on n rows: ("chose", name) or
    ("refused", "ErrorType: message").  The probe option stops the call right after the choice."""
    import numpy as np  # noqa: PLC0415
    import pandas as pd  # noqa: PLC0415

    import dpstats  # noqa: PLC0415
    from dpstats.errors import MethodOptionError  # noqa: PLC0415

    cols = [f"x{j + 1}" for j in range(k)]
    frame = pd.DataFrame(np.zeros((n, k)), columns=cols).assign(y=0.0)
    declared = {**{c: (0.0, 1.0) for c in cols}, "y": (-1.0, 1.0)} if bounds else None
    try:
        dpstats.dp_ols("y ~ " + " + ".join(cols), frame, AUTO_EPSILON, AUTO_DELTA, bounds=declared, random_state=0,
                       **{PROBE_OPTION: 1})
    except MethodOptionError as err:
        m = re.search(r"method '(\w+)' does not accept", str(err))
        if m:
            return "chose", m.group(1)
        raise
    except dpstats.errors.DPStatsError as err:
        return "refused", f"{type(err).__name__}: {err}"
    raise RuntimeError("the auto probe was not refused: the pipeline no longer checks options after choosing")


def _auto_facts(registry: Any, n: int, d: int, bounds: bool) -> Any:
    """The registry's ``AutoFacts`` for a design of d columns on n rows at the pages' budget (the fields that
    class declares; without bounds, every covariate and the response are unbounded)."""
    values = {"n": n, "d": d, "epsilon": AUTO_EPSILON, "delta": AUTO_DELTA, "bounds": bounds,
              "unbounded": 0 if bounds else d, "null_rows": False}
    names = {f.name for f in dataclasses.fields(registry.AutoFacts)}
    return registry.AutoFacts(**{k: v for k, v in values.items() if k in names})


def auto_rule(specs: dict[str, Any], n: int, d: int, bounds: bool) -> str | None:
    """The method ``auto`` should choose by the rule the method pages state (None: no method).

    With a registry of regimes (``choose_auto``), the registry's own rule; otherwise the lowest ``auto_rank``
    among the eligible methods.
    """
    from dpstats.methods import registry  # noqa: PLC0415

    if hasattr(registry, "choose_auto") and hasattr(registry, "AutoFacts"):
        chosen = registry.choose_auto(_auto_facts(registry, n, d, bounds))
        return None if chosen is None else chosen[0].name
    eligible = [s for s in specs.values() if s.private and s.auto_rank is not None
                and (bounds or not s.needs_bounds) and (d <= n or s.allows_wide)
                and n >= (s.auto_min_rows or s.min_rows)(d)]
    return min(eligible, key=lambda s: s.auto_rank).name if eligible else None


def bound_free_at(specs: dict[str, Any], n: int, d: int) -> list[str]:
    """The private methods that need no bounds and accept n rows at d columns when named."""
    return [s.name for s in sorted(specs.values(), key=lambda s: s.name)
            if s.private and not s.needs_bounds and n >= s.min_rows(d) and (d <= n or s.allows_wide)]


def auto_page(specs: dict[str, Any]) -> tuple[str, list[str]]:
    """What ``auto`` does at a few sizes (from the pipeline), and which bound-free methods could run instead.

    Returns the page and the sizes at which the pipeline's choice differs from :func:`auto_rule`, the rule
    the method pages state (a build error: the pages must be updated).
    """
    lines = ["# What `method=\"auto\"` does at a few sizes", "",
             "<!-- generated by docs/_ext/dpstats_site.py: do not edit -->", "",
             "Decided by the pipeline itself when the site was built (with every size and every declared "
             "bound public; nothing is read or spent to decide), for `y ~ x1 + ... + xk` (d = k + 1 with the "
             f"intercept) at epsilon = {AUTO_EPSILON:g}, delta = {AUTO_DELTA:g}. \"named, without bounds\": "
             "the private methods that need no bounds and accept "
             "this n when named with `method=...` (their minimum rows); `auto` considers only some of them, "
             "at larger n (see each method's page).", "",
             "| n | d | bounds declared for every column | `auto` | named, without bounds |", "|---|---|---|---|---|"]
    mismatches = []
    for k in AUTO_COVARIATES:
        d = k + 1
        for n in AUTO_ROWS:
            for bounds in (True, False):
                outcome, what = auto_probe(n, k, bounds)
                expected = auto_rule(specs, n, d, bounds)
                got = what if outcome == "chose" else None
                if got != expected:
                    mismatches.append(f"n={n}, d={d}, bounds={bounds}: pipeline {got}, stated rule {expected}")
                shown = f"[`{what}`]({what}.md)" if outcome == "chose" else f"refuses: `{what.split(':')[0]}`"
                named = ", ".join(f"[`{m}`]({m}.md)" for m in bound_free_at(specs, n, d)) or "none"
                lines.append(f"| {n:,} | {d} | {yes_no(bounds)} | {shown} | {named if not bounds else ''} |")
    lines += ["", "A refusal of `auto` is public and spends nothing: `MissingBoundsError` names the columns to "
              "bound. Its message, at n = 800 with three covariates:", "", "```text",
              auto_probe(800, 3, False)[1], "```", ""]
    return "\n".join(lines), mismatches


#: the worked example of guide/choosing-a-method.md: rows and covariates (plus an intercept), no bounds
EXAMPLE_ROWS = 800
EXAMPLE_COVARIATES = 3
#: the benchmark table of auto's fits per data set, and the range of training rows "about this size" spans
PER_DATASET_TABLE = "`auto` with bounds, per data set"
EXAMPLE_NEAR = (0.5, 2.0)


def benchmark_rows(root: Path, label: str, epsilon: str = "1") -> dict[str, str]:
    """The row of the per-method benchmark table for a configuration at one epsilon (empty if none)."""
    header, rows = read_markdown_table(root / REAL_DATA_SUMMARY, REAL_DATA_TABLE)
    for r in rows:
        if r and r[0] == label and r[header.index("epsilon")] == epsilon:
            return dict(zip(header, r, strict=False))
    return {}


def auto_start_without_bounds(spec: Any, d: int) -> int | None:
    """The smallest n from which a regime of ``auto`` that needs no bounds admits the method at d columns and
    the pages' budget (its minimum rows and its n * mu floor), or None when no such regime exists."""
    if spec.needs_bounds:
        return None
    starts = []
    for rule in auto_rules_of(spec):
        if getattr(rule, "bounds", "any") == "all":
            continue
        n = (getattr(rule, "min_rows", None) or spec.min_rows)(d)
        floor = getattr(rule, "min_n_mu", 0.0)
        if floor > 0:
            n = max(n, math.ceil(floor / _example_mu()))
        if n < getattr(rule, "max_rows", math.inf):
            starts.append(n)
    return min(starts) if starts else None


def example_snippet(specs: dict[str, Any], root: Path) -> str:
    """The generated part of the worked example "n rows without bounds" (included by
    ``guide/choosing-a-method.md``, so its links are relative to ``guide/``)."""
    n, k = EXAMPLE_ROWS, EXAMPLE_COVARIATES
    d = k + 1
    without, with_bounds = auto_probe(n, k, False), auto_probe(n, k, True)
    lines = ["<!-- generated by docs/_ext/dpstats_site.py from the registry and the pipeline: do not edit -->", ""]
    if without[0] == "chose":
        lines.append(f"- **`method=\"auto\"` without bounds** picks [`{without[1]}`](../methods/{without[1]}.md), "
                     f"decided from n = {n:,} and d = {d} alone.")
    else:
        kind, _, message = without[1].partition(": ")
        lines.append(f"- **`method=\"auto\"` without bounds refuses**, before reading anything or spending "
                     f"anything, with `{kind}`: \"{message}\"")
    if with_bounds[0] == "chose":
        lines.append(f"- **With bounds declared** for every column and the response, `auto` picks "
                     f"[`{with_bounds[1]}`](../methods/{with_bounds[1]}.md).")
    named = bound_free_at(specs, n, d)
    if named:
        lines.append(f"- **Private methods that need no bounds and accept n = {n:,} when you name them:**")
        for name in named:
            spec = specs[name]
            bench = benchmark_rows(root, f"{name} (no bounds)") or benchmark_rows(root, name)
            measured = (f"; on the real-data benchmark at epsilon = 1 it refused {bench['refused']} of fits, "
                        f"with a median relative error of {bench['median rel. error (headline)']} over the fits "
                        "it released" if bench else "")
            start = auto_start_without_bounds(spec, d)
            auto = ("; `auto` does not consider it without bounds" if start is None else
                    f"; `auto` may consider it without bounds from n = {start:,} at epsilon = {AUTO_EPSILON:g}, "
                    f"delta = {AUTO_DELTA:g} (its page has the other conditions)")
            lines.append(f"  - [`{name}`](../methods/{name}.md) ({spec.citation}): minimum n = {spec.min_rows(d):,}"
                         f"{auto}; {spec.regimes}{measured}.")
    else:
        lines.append(f"- **No private method that needs no bounds accepts n = {n:,}** at d = {d}.")
    header, rows = read_markdown_table(root / REAL_DATA_SUMMARY, PER_DATASET_TABLE)
    if header:
        i_n = header.index("n (train)")
        lo, hi = EXAMPLE_NEAR
        near = [r for r in rows if lo * n <= float(r[i_n].replace(",", "")) <= hi * n]
        if near:
            lines += ["", f"Measured on the real published regressions of the benchmark with {int(lo * n):,} to "
                      f"{int(hi * n):,} training rows, `auto` with their documented bounds "
                      "(relative error of each study's headline coefficient against OLS, median of 5 noise "
                      "seeds; [Benchmarks](../benchmarks.md)):", "",
                      "| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *["| " + " | ".join(cell(c) for c in r) + " |" for r in near]]
    return "\n".join(lines) + "\n"


def needs_snippet(specs: dict[str, Any]) -> str:
    """What each registered method needs, one row each (included by ``guide/choosing-a-method.md``, so its
    links are relative to ``guide/``): bound-needing methods first, then bound-free, then the non-private
    reference."""
    order = sorted(specs.values(), key=lambda s: (not s.private, not s.needs_bounds, s.name))
    d = EXAMPLE_COVARIATES + 1
    lines = ["<!-- generated by docs/_ext/dpstats_site.py from the method registry: do not edit -->", "",
             f"| method | needs bounds | minimum n at d = {d} | standard errors | guarantee | suits |",
             "|---|---|---|---|---|---|"]
    for spec in order:
        guarantee = spec.guarantee if spec.private else "NOT PRIVATE"
        rule = spec.inference_rule.kind
        lines.append(f"| [`{spec.name}`](../methods/{spec.name}.md) | {yes_no(spec.needs_bounds)} | "
                     f"{spec.min_rows(d):,} | {'none' if rule == 'none' else rule} | {guarantee} | "
                     f"{cell(spec.regimes or '-')} |")
    return "\n".join(lines) + "\n"


# -- the API reference ----------------------------------------------------------------------------------------------

#: id(object) -> the name it is documented under (classes and functions), filled by :func:`api_pages`
_DOCUMENTED: dict[int, str] = {}


def documented_ids() -> dict[int, str]:
    """id(object) -> documented public name, for the functions and classes of the API reference."""
    return _DOCUMENTED


def documented_names() -> set[str]:
    """The public names under which functions and classes are documented (the API reference's entries)."""
    return set(_DOCUMENTED.values())


#: the public names of the documented constants, filled by :func:`api_pages`
_CONSTANTS: set[str] = set()


def documented_constants() -> set[str]:
    """The public names under which constants are documented."""
    return _CONSTANTS


def public_names(module: Any) -> list[str]:
    """The public names of a module: its ``__all__``; for ``dpstats.errors``, its exception and warning classes."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if isinstance(obj, type) and issubclass(obj, BaseException)
                 and obj.__module__ == module.__name__]
    return [n for n in names if not n.startswith("_")]


def importlib_module(name: str) -> Any:
    """The module of that dotted name (``sys.modules``: ``dpstats.compare`` is also a function's name)."""
    import importlib  # noqa: PLC0415
    import sys  # noqa: PLC0415

    importlib.import_module(name)
    return sys.modules[name]


def kind_of(obj: Any) -> str:
    """``module``, ``class``, ``function`` or ``data``."""
    if inspect.ismodule(obj):
        return "module"
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def api_pages(api_dir: Path) -> list[Path]:
    """Write the API reference; returns the files written.  Each object is documented once, under its first
    public name in :data:`API_MODULES` order; later modules link to it."""
    documented: dict[object, str] = {}  # by id of the object; a constant by (module, name), never shared
    _DOCUMENTED.clear()
    _CONSTANTS.clear()
    written = []
    toc = []
    for modname, title, intro in API_MODULES:
        module = importlib_module(modname)
        groups: dict[str, list[str]] = {"function": [], "class": [], "data": []}
        elsewhere: list[tuple[str, str]] = []
        submodules: list[str] = []
        for name in public_names(module):
            obj = getattr(module, name)
            kind = kind_of(obj)
            if kind == "module":
                submodules.append(obj.__name__)
                continue
            key: object = id(obj) if kind != "data" else (modname, name)
            if key in documented:
                elsewhere.append((name, documented[key]))
                continue
            documented[key] = f"{modname}.{name}"
            if kind != "data":
                _DOCUMENTED[id(obj)] = f"{modname}.{name}"
            else:
                _CONSTANTS.add(f"{modname}.{name}")
            groups[kind].append(name)
        # a module named like a documented object (``dpstats.compare``, the module and the function) is
        # described without an index entry, so that ``dpstats.compare`` names the function
        no_index = ["   :no-index:"] if any(v == modname for v in _DOCUMENTED.values()) else []
        lines = [title, "=" * len(title), "", f".. automodule:: {modname}", "   :no-members:", *no_index, "",
                 f".. currentmodule:: {modname}", ""]
        labels = {"function": "Functions", "class": "Classes", "data": "Constants"}
        for kind, names in groups.items():
            if not names:
                continue
            lines += [labels[kind], "-" * len(labels[kind]), "", ".. autosummary::", "   :toctree: generated",
                      "   :nosignatures:", "", *[f"   {n}" for n in names], ""]
        if elsewhere:
            lines += ["Also available here", "-------------------", "",
                      *[f"- ``{modname}.{n}``: :py:obj:`{target}`" for n, target in elsewhere], ""]
        if submodules:
            lines += ["Public submodules", "-----------------", "",
                      *[f"- :doc:`{m}`" for m in submodules if any(m == a[0] for a in API_MODULES)], ""]
        path = api_dir / f"{modname}.rst"
        write_if_changed(path, "\n".join(lines))
        written.append(path)
        toc.append((modname, intro))
    write_if_changed(api_dir / "cli.md", cli_page())
    written.append(api_dir / "cli.md")
    index = ["API reference", "=============", "",
             "Every public name of dpstats, generated from the docstrings: ``dpstats.__all__`` and the "
             "``__all__`` of the public submodules below.  Each object is documented once, under its "
             "first public name; other modules that export it link there.  The command line: "
             ":doc:`cli`.", "",
             ".. toctree::", "   :hidden:", "", *[f"   {m}" for m, _ in toc], "   cli", "",
             *[f"- :doc:`{m}`: {intro}" for m, intro in toc], ""]
    write_if_changed(api_dir / "index.rst", "\n".join(index))
    written.append(api_dir / "index.rst")
    return written


# -- the command line -----------------------------------------------------------------------------------------------

def _subcommands(parser: Any) -> list[tuple[str, Any]]:
    """(name, parser) of a parser's subcommands, recursively, in declaration order."""
    import argparse  # noqa: PLC0415

    out = []
    for action in parser._actions:  # argparse keeps subparsers here; no public accessor exists
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((name, sub))
                out += [(f"{name} {n}", p) for n, p in _subcommands(sub)]
    return out


def cli_page() -> str:
    """The command-line reference: the ``--help`` of ``dpstats`` and of every subcommand."""
    import os  # noqa: PLC0415

    from dpstats.cli import build_parser  # noqa: PLC0415

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "110"  # argparse wraps to the terminal width: fix it for a stable page
    try:
        parser = build_parser()
        lines = ["# Command line reference", "",
                 "<!-- generated by docs/_ext/dpstats_site.py from dpstats.cli.build_parser(): do not edit -->", "",
                 "The `dpstats` command (also `python -m dpstats`), as its `--help` prints it. Task by task: "
                 "[The dpstats command](../guide/cli.md).", "", "```text", parser.format_help().rstrip(), "```", ""]
        for name, sub in _subcommands(parser):
            lines += [f"## `dpstats {name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(lines)


# -- the vignettes gallery ------------------------------------------------------------------------------------------

def notebook_summary(path: Path) -> tuple[str, str, bytes | None]:
    """A stored notebook's title, first paragraph and first PNG figure."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    markdown = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    lines = markdown.strip().splitlines()
    title = lines[0].lstrip("#").strip()
    paragraph = []
    for line in lines[1:]:
        if line.strip():
            paragraph.append(line.strip())
        elif paragraph:
            break
    png = next((o["data"]["image/png"] for c in nb["cells"] if c["cell_type"] == "code"
                for o in c.get("outputs", []) if "image/png" in o.get("data", {})), None)
    image = base64.b64decode("".join(png) if isinstance(png, list) else png) if png else None
    return title, " ".join(paragraph), image


def vignettes(root: Path, out: Path) -> list[Path]:
    """Copy the stored notebooks into the site and write the gallery page; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)  # docs/vignettes/ is generated: absent from a fresh clone
    written = []
    entries = []
    for nb in sorted((root / "vignettes").glob("[0-9][0-9]-*.ipynb")):
        target = out / nb.name
        if not target.exists() or target.read_bytes() != nb.read_bytes():
            shutil.copyfile(nb, target)
        written.append(target)
        title, paragraph, image = notebook_summary(nb)
        block = [f"## [{title.replace('`', '')}]({nb.name})", ""]
        if image is not None:
            thumb = out / "_thumbs" / f"{nb.stem}.png"
            thumb.parent.mkdir(parents=True, exist_ok=True)
            if not thumb.exists() or thumb.read_bytes() != image:
                thumb.write_bytes(image)
            written.append(thumb)
            block += [f"```{{image}} _thumbs/{nb.stem}.png", ":width: 360px", f":target: {nb.stem}.html",
                      f":alt: {title.replace('`', '')}", "```", ""]
        block += [paragraph, "", f"Notebook: `vignettes/{nb.name}`.", ""]
        entries.append((nb.stem, block))
    page = ["# Vignettes", "", "<!-- generated by docs/_ext/dpstats_site.py from vignettes/: do not edit -->", "",
            "Worked examples, stored in `vignettes/` with their outputs (seeded, so the figures are "
            "reproducible) and shown here as stored: the site never runs them. "
            "`python vignettes/build.py` re-runs them; `tests/test_vignettes.py` checks that the stored outputs "
            "are current.", "", "```{toctree}", ":hidden:", "", *[stem for stem, _ in entries], "```", ""]
    for _, block in entries:
        page += block
    write_if_changed(out / "index.md", "\n".join(page))
    written.append(out / "index.md")
    return written


# -- Sphinx hooks ---------------------------------------------------------------------------------------------------

def generate(app: Sphinx, config: Any = None) -> None:
    """Write every generated page (``config-inited``)."""
    from sphinx.util import logging  # noqa: PLC0415

    import dpstats  # noqa: F401, PLC0415  (registers the methods)

    logger = logging.getLogger(__name__)
    from dpstats.methods.registry import available_methods  # noqa: PLC0415

    docs = Path(app.srcdir)
    root = docs.parent
    specs = dict(available_methods())
    methods_dir = docs / "methods"
    written = []
    for name, spec in specs.items():
        path = methods_dir / f"{name}.md"
        write_if_changed(path, method_page(spec, specs, docs, root))
        written.append(path)
    auto, mismatches = auto_page(specs)
    if mismatches:
        logger.warning("the method pages state an auto rule that the pipeline no longer follows; update "
                       "auto_text/auto_rule in docs/_ext/dpstats_site.py: %s", "; ".join(mismatches))
    for path, text in ((methods_dir / "index.md", methods_index(specs, root)), (methods_dir / "auto.md", auto)):
        write_if_changed(path, text)
        written.append(path)
    for snippet, text in (("_example.md", example_snippet(specs, root)), ("_needs.md", needs_snippet(specs))):
        write_if_changed(methods_dir / snippet, text)
        written.append(methods_dir / snippet)
    remove_stale(methods_dir, written, "*.md")
    api = api_pages(docs / "api")
    remove_stale(docs / "api", api, "*.rst")
    remove_stale(docs / "api", api, "*.md")
    # autosummary's stubs of names no longer public (it writes stubs, it never deletes them)
    stubs = docs / "api" / "generated"
    remove_stale(stubs, [stubs / f"{name}.rst" for name in documented_names() | documented_constants()], "*.rst")
    vig = vignettes(root, docs / "vignettes")
    remove_stale(docs / "vignettes", vig, "*.ipynb")


class _EmptyProofsGlob:
    """A logging filter that drops one warning: the glob of ``proofs/index`` matching no page yet.

    The proof pages are written one per method; until the first exists, the glob is legitimately empty.
    Sphinx gives that warning no type, so ``suppress_warnings`` cannot select it.  Any other empty glob
    still warns.
    """

    def filter(self, record: Any) -> bool:
        """False for the empty-glob warning of ``proofs/index``."""
        location = str(getattr(record, "location", "") or "")
        message = record.getMessage() if hasattr(record, "getMessage") else str(record.msg)
        return not ("didn't match any documents" in message and "proofs" in location)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator with Sphinx."""
    import logging as std_logging  # noqa: PLC0415

    std_logging.getLogger("sphinx.sphinx.directives.other").addFilter(_EmptyProofsGlob())
    # config-inited: before the source files are listed (at builder-inited they already are, and autosummary,
    # which writes its stubs then, would miss the API pages of a fresh checkout)
    app.connect("config-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

