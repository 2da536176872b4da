"""Formula text -> patsy terms: ``y ~ .``, long sums, ``poly(x, k)``, and reading a factor's code.

Formulas are written the way R users write them: ``y ~ .`` is every column
but those of the response (public: the schema's names), and sums of many
terms are nested in parentheses (the same design) so that patsy's recursive
evaluation of a flat ``a + b + ...`` never runs out of stack
(:func:`expand_formula`).  ``poly(x, k)``, a term of its own, is R's
``poly(x, k, raw = TRUE)``: :func:`model_desc` writes it out as the terms
``x + I(x ** 2) + ... + I(x ** k)``, whose ranges interval arithmetic derives
from the bounds on x.  Orthogonal polynomials are computed from the data and
refused.

The other functions read a factor's code (its syntax tree) without
evaluating it: the columns it names (:func:`code_names`), the levels written
in ``C(var, levels=[...])`` (:func:`formula_literal_levels`), the part of a
formula a patsy error points at (:func:`origin_code`).  Whether the code may be
evaluated at all is decided by the allow-list, :mod:`dpstats.formula.language`.
Everything here reads the formula and the column names only (public).
"""

from __future__ import annotations

import ast
import contextlib
import io
import keyword
import math
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import patsy
from patsy.desc import Evaluator, ModelDesc, Term
from patsy.eval import EvalFactor, ast_names
from patsy.parse_formula import ParseNode, parse_formula

from dpstats.bounds.interval import call_name
from dpstats.errors import DisallowedExpressionError, FormulaError

__all__ = ["term", "join_terms", "expand_formula", "model_desc", "is_call", "literal_value", "finite_number",
           "factor_calls", "call_name", "quoted_names", "code_names", "declares_levels", "formula_literal_levels",
           "formula_first_levels", "check_formula_levels", "origin_code", "factor_of", "ComputedFactor",
           "formula_computed_levels"]

_GROUP = 64  # terms per parenthesised group: patsy's recursion depth stays O(64 * log_64 d)


# -- reading a factor's code ----------------------------------------------------------------------------------------

def is_call(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is a call of the bare name ``name``.

    Parameters
    ----------
    node : ast.AST
        A node of a factor's syntax tree.
    name : str
        The function's name.

    Returns
    -------
    bool
        ``node`` is ``name(...)``.
    """
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def literal_value(node: ast.AST) -> Any:
    """The value of a Python literal.

    Parameters
    ----------
    node : ast.AST
        A node of a factor's syntax tree.

    Returns
    -------
    Any
        Its value (``ast.literal_eval``).

    Raises
    ------
    ValueError
        ``node`` is not a literal.
    """
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a literal") from None


def finite_number(node: ast.AST) -> float | None:
    """The value of a (signed) finite numeric literal.

    Parameters
    ----------
    node : ast.AST
        A node of a factor's syntax tree.

    Returns
    -------
    float or None
        Its value, or None when it is not a finite number (booleans are not numbers here).
    """
    try:
        v = literal_value(node)
    except ValueError:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def factor_calls(code: str) -> list[ast.Call]:
    """The calls in a factor's code.

    Parameters
    ----------
    code : str
        The factor's code as patsy writes it.

    Returns
    -------
    list of ast.Call
        Its calls, outermost first (``ast.walk`` order); none when it does not parse.
    """
    node = _expression(code)
    return [] if node is None else [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _expression(code: str) -> ast.expr | None:
    """The expression a factor's code parses to, or None when it does not parse."""
    try:
        return ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None


def quoted_names(code: str) -> list[str]:
    """Column names quoted with patsy's Q("name") (for names that are not Python identifiers).

    Parameters
    ----------
    code : str
        The factor's code.

    Returns
    -------
    list of str
        The quoted names, in ``ast.walk`` order.
    """
    return [c.args[0].value for c in factor_calls(code)
            if call_name(c) == "Q" and len(c.args) == 1 and isinstance(c.args[0], ast.Constant)
            and isinstance(c.args[0].value, str)]


def code_names(code: str) -> list[str]:
    """The names a factor's code reads (columns, and the functions it calls).

    Parameters
    ----------
    code : str
        The factor's code.

    Returns
    -------
    list of str
        Its bare names (patsy's ``ast_names`` order), then the names quoted with Q().
    """
    return [*ast_names(code), *quoted_names(code)]


def declares_levels(code: str) -> bool:
    """Whether a factor's code declares its levels.

    Parameters
    ----------
    code : str
        The factor's code.

    Returns
    -------
    bool
        ``code`` holds a ``C(..., levels=...)``.
    """
    return any(call_name(c) == "C" and any(k.arg == "levels" for k in c.keywords) for c in factor_calls(code))


def _literal_levels(call: ast.Call) -> tuple[Any, ...] | None:
    """The levels a ``C()`` call writes as a literal (``levels=[...]``), else None (no such keyword, or one that is
    not a literal: the formula language refuses it)."""
    for kw in call.keywords:
        if kw.arg == "levels":
            try:
                return tuple(ast.literal_eval(kw.value))
            except (ValueError, TypeError, SyntaxError):
                return None
    return None


def formula_literal_levels(codes: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Levels written as literals in ``C(var, levels=[...])`` where ``var`` is a bare (or quoted) name.

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Returns
    -------
    dict of str to tuple
        The declared levels by variable (the first declaration of a variable wins).
    """
    out: dict[str, tuple[Any, ...]] = {}
    for code in codes:
        for call in factor_calls(code):
            if call_name(call) != "C" or not call.args:
                continue
            var, levels = _c_variable(call.args[0]), _literal_levels(call)
            if var is not None and levels is not None:
                out.setdefault(var, levels)
    return out


@dataclass(frozen=True)
class ComputedFactor:
    """A factor ``C(expression, levels=[...])`` whose values patsy computes from an expression (not a bare or quoted
    column), with literal levels: public facts of the formula.

    Attributes
    ----------
    code : str
        The factor's code as patsy writes it (how messages name it).
    expression : str
        The expression inside ``C()``, as Python source.
    levels : tuple
        The declared levels.
    """

    code: str
    expression: str
    levels: tuple[Any, ...]

    def _inner(self) -> ast.expr | None:
        """The expression with every ``I()`` around it taken off (``I()`` returns its argument)."""
        node = _expression(self.expression)
        while isinstance(node, ast.Call) and call_name(node) == "I" and len(node.args) == 1:
            node = node.args[0]
        return node

    @property
    def comparison(self) -> bool:
        """The expression is a comparison (inside any number of ``I()``): False or True on every row."""
        return isinstance(self._inner(), ast.Compare)

    @property
    def column(self) -> str | None:
        """The column the expression is (a bare or quoted column inside ``I()``), else None."""
        node = self._inner()
        return None if node is None else _c_variable(node)


def formula_computed_levels(codes: Sequence[str]) -> list[ComputedFactor]:
    """The factors ``C(expression, levels=[...])`` whose first argument is an expression rather than a column, with
    literal levels (``C(I(x > 3), levels=[False, True])``, ``C(np.abs(k), levels=[0, 1, 2])``).

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Returns
    -------
    list of ComputedFactor
        One per such code, in the order given.
    """
    out: list[ComputedFactor] = []
    for code in codes:
        node = _expression(code)
        if not (isinstance(node, ast.Call) and call_name(node) == "C" and node.args) \
                or _c_variable(node.args[0]) is not None:
            continue
        levels = _literal_levels(node)
        if levels is not None:
            out.append(ComputedFactor(code, ast.unparse(node.args[0]), levels))
    return out


def factor_of(code: str) -> str | None:
    """The column that a factor's code is wholly a ``C()`` of (``C(g, ...)``, ``C(Q('g'), ...)``), else None.

    Parameters
    ----------
    code : str
        The factor's code as patsy writes it.

    Returns
    -------
    str or None
        The column's name, when the whole code is one ``C()`` call on a bare or quoted column.
    """
    node = _expression(code)
    if isinstance(node, ast.Call) and call_name(node) == "C" and node.args:
        return _c_variable(node.args[0])
    return None


def _c_variable(arg: ast.AST) -> str | None:
    """The column named by C()'s first argument (bare or Q('...')), else None."""
    if isinstance(arg, ast.Name):
        return arg.id
    if (isinstance(arg, ast.Call) and call_name(arg) == "Q" and arg.args and isinstance(arg.args[0], ast.Constant)
            and isinstance(arg.args[0].value, str)):
        return arg.args[0].value
    return None


def _is_comparison(arg: ast.AST) -> bool:
    """Whether C()'s first argument is one comparison, bare or in I() (``C(x > 5)``, ``C(I(x > 5))``): a factor
    whose levels are False and True whatever the data."""
    if isinstance(arg, ast.Call) and call_name(arg) == "I" and len(arg.args) == 1 and not arg.keywords:
        arg = arg.args[0]
    return isinstance(arg, ast.Compare) and len(arg.ops) == 1


def is_comparison_code(code: str) -> bool:
    """Whether ``code`` is one comparison, bare or in I(), such as the factor ``C(I(x > 5))`` takes.

    Parameters
    ----------
    code : str
        An expression's code.

    Returns
    -------
    bool
        True for a comparison, whose levels are False and True.
    """
    node = _expression(code)
    return node is not None and _is_comparison(node)


def formula_first_levels(codes: Sequence[str]) -> dict[str, Any]:
    """The first level of ``C(var, levels=[...])`` calls whose levels are literals, by variable.

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Returns
    -------
    dict of str to Any
        The first declared level of each variable.
    """
    return {v: lv[0] for v, lv in formula_literal_levels(codes).items() if lv}


def treatment_references(codes: Sequence[str]) -> list[tuple[str, str, Any, str]]:
    """The literal levels that contrasts name: the reference of ``C(var, Treatment(ref))`` (or
    ``Treatment(reference=ref)``, or ``contrast=Treatment(...)``) and the level ``C(var, Sum(omit))`` omits, where
    ``var`` is a bare (or quoted) name.

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Returns
    -------
    list of (str, str, Any, str)
        The factor code, the variable, the level and its role ("reference level" or "omitted level"), for each
        such call.
    """
    roles = {"Treatment": "reference level", "Sum": "omitted level"}
    out: list[tuple[str, str, Any, str]] = []
    for code, var, name, given in _contrast_arguments(codes, {"Treatment": "reference", "Sum": "omit"}):
        with contextlib.suppress(ValueError, TypeError, SyntaxError):
            out.append((code, var, ast.literal_eval(given), roles[name]))
    return out


def _contrast_arguments(codes: Sequence[str], keywords: dict[str, str]) -> Iterator[tuple[str, str, str, ast.expr]]:
    """(factor code, variable, contrast, its first argument) of every ``C(var, Contrast(arg))`` (or
    ``Contrast(keyword=arg)``, ``contrast=Contrast(...)``) whose contrast ``keywords`` names (contrast -> the keyword
    of its argument), where ``var`` is a bare (or quoted) name or, for a comparison, its code."""
    for code in codes:
        for call in factor_calls(code):
            arg = call.args[0] if call_name(call) == "C" and call.args else None
            var = None if arg is None else _c_variable(arg) or (ast.unparse(arg) if _is_comparison(arg) else None)
            if var is None:
                continue
            for c in [*call.args[1:], *(k.value for k in call.keywords if k.arg == "contrast")]:
                name = call_name(c) if isinstance(c, ast.Call) else None
                if isinstance(c, ast.Call) and name in keywords:
                    given = [*c.args, *(k.value for k in c.keywords if k.arg == keywords[name])]
                    if given:
                        yield code, var, name, given[0]


def poly_scores(codes: Sequence[str]) -> list[tuple[str, str, tuple[Any, ...]]]:
    """The literal scores of ``C(var, Poly(scores))`` (or ``Poly(scores=...)``, ``contrast=Poly(...)``) where
    ``var`` is a bare (or quoted) name.

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Returns
    -------
    list of (str, str, tuple)
        The factor code, the variable and the scores, for each such call.
    """
    out: list[tuple[str, str, tuple[Any, ...]]] = []
    for code, var, _, given in _contrast_arguments(codes, {"Poly": "scores"}):
        with contextlib.suppress(ValueError, TypeError, SyntaxError):
            if isinstance(scores := ast.literal_eval(given), (list, tuple)):
                out.append((code, var, tuple(scores)))
    return out


def check_formula_levels(codes: Sequence[str]) -> None:
    """Refuse ``C(var, levels=[...])`` declarations that list a level twice.

    Parameters
    ----------
    codes : sequence of str
        The formula's factor codes.

    Raises
    ------
    FormulaError
        A level listed twice (levels written in the formula are public, so the message names them).
    """
    for code in codes:
        for call in factor_calls(code):
            levels = _literal_levels(call) if call_name(call) == "C" else None
            if levels is not None:
                twice = [v for i, v in enumerate(levels) if v in levels[:i]]
                if twice:
                    raise FormulaError(
                        f"'{code}' declares the level{'s' if len(twice) > 1 else ''} "
                        f"{', '.join(map(repr, twice))} more than once; list each level once. No budget was spent.")


def origin_code(exc: BaseException) -> str:
    """The part of the formula a patsy error points at.

    Parameters
    ----------
    exc : BaseException
        An exception raised by patsy (a ``PatsyError`` has an ``origin``).

    Returns
    -------
    str
        The formula text it points at (public), or "".
    """
    origin = getattr(exc, "origin", None)
    try:
        return str(origin.code[origin.start:origin.end]) if origin is not None else ""
    except (AttributeError, TypeError):
        return ""


# -- formulas: y ~ ., long sums, poly -------------------------------------------------------------------------------

def term(name: str, reserved: frozenset[str] = frozenset()) -> str:
    """A column name as a patsy factor.

    Parameters
    ----------
    name : str
        The column's name.
    reserved : frozenset of str, optional
        Further names to quote (``Intercept`` where a design adds its own intercept column).

    Returns
    -------
    str
        The name bare when it is a plain identifier (and not a keyword, I, C, Q or reserved), else ``Q('...')``.
    """
    if name.isidentifier() and not keyword.iskeyword(name) and name not in {"C", "I", "Q"} | reserved:
        return name
    return f"Q({name!r})"


def join_terms(terms: Sequence[str]) -> str:
    """Join terms with '+', nesting groups of at most 64 in parentheses (the same design as the flat sum).

    Parameters
    ----------
    terms : sequence of str
        The terms, in order.

    Returns
    -------
    str
        Their sum, nested so that patsy's recursion depth stays logarithmic in the number of terms.
    """
    terms = list(terms)
    while len(terms) > _GROUP:
        terms = ["(" + " + ".join(terms[i:i + _GROUP]) + ")" for i in range(0, len(terms), _GROUP)]
    return " + ".join(terms)


@dataclass
class _Token:
    kind: int
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    """Python tokens of ``text`` with absolute offsets (a formula is tokenised as Python, as patsy does)."""
    text = text.replace("\r", " ").replace("\n", " ")  # one logical line (same offsets)
    out: list[_Token] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.COMMENT):
                continue
            out.append(_Token(tok.type, tok.string, tok.start[1], tok.end[1]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        raise FormulaError(f"cannot parse formula {text!r}: unbalanced brackets or quotes") from None
    return out


def _response_columns(lhs: str, columns: Sequence[str]) -> set[str]:
    """The columns named on the left of '~' (bare names or Q('...'))."""
    names: set[str] = set()
    toks = _tokens(lhs)
    for i, t in enumerate(toks):
        if t.kind == tokenize.NAME and t.text in columns:
            names.add(t.text)
        if t.kind == tokenize.STRING and i >= 2 and toks[i - 2].text == "Q":
            with contextlib.suppress(ValueError, SyntaxError):
                names.add(str(ast.literal_eval(t.text)))
    return names


_OPERATOR_BEFORE = {"~", "+", "-", "*", "/", ":", "(", "**", "^", "%", ","}


def _standalone_dots(toks: Sequence[_Token]) -> list[_Token]:
    """The tokens of R's '.' (every column but the response) among a right-hand side's tokens: a '.' that is not
    part of a number or a name (``x.y``, ``.5``, ``np.log``)."""
    dots = []
    for i, t in enumerate(toks):
        if t.kind != tokenize.OP or t.text != ".":
            continue
        before = toks[i - 1] if i > 0 else None
        after = toks[i + 1] if i + 1 < len(toks) else None
        if (before is None or (before.kind == tokenize.OP and before.text in _OPERATOR_BEFORE)) and (
                after is None or (after.kind == tokenize.OP and after.text not in {"(", "."})):
            dots.append(t)
    return dots


def _expand_dot(rhs: str, dot_terms: Sequence[str]) -> str:
    """``rhs`` with every standalone '.' replaced by the parenthesised sum of ``dot_terms``."""
    pieces, last = [], 0
    for t in _standalone_dots(_tokens(rhs)):
        if not dot_terms:
            raise FormulaError("'.' stands for every column but the response, and there are none left")
        pieces += [rhs[last:t.start], "(" + join_terms(dot_terms) + ")"]
        last = t.end
    return "".join(pieces) + rhs[last:] if pieces else rhs


def _uses_dot(formula: str) -> bool:
    """Whether the right-hand side of a formula (as the user wrote it) uses R's '.'; False where it does not parse
    (the parser then reports why)."""
    try:
        tilde = _split_top_level(formula, {"~"})
        return len(tilde) == 2 and bool(_standalone_dots(_tokens(tilde[1][1])))
    except FormulaError:
        return False


def _split_top_level(text: str, separators: set[str]) -> list[tuple[str, str]]:
    """``text`` cut at top-level binary operators in ``separators``: [(operator before, piece), ...]."""
    out: list[tuple[str, str]] = []
    depth, op, start, prev = 0, "", 0, None
    for t in _tokens(text):
        if t.kind == tokenize.OP and t.text in "([{":
            depth += 1
        elif t.kind == tokenize.OP and t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.kind == tokenize.OP and t.text in separators and prev is not None and not (
                prev.kind == tokenize.OP and prev.text in _OPERATOR_BEFORE):
            out.append((op, text[start:t.start].strip()))
            op, start = t.text, t.end
        prev = t
    out.append((op, text[start:].strip()))
    return out


def _nest_sums(rhs: str) -> str:
    """``rhs`` with long runs of '+'-joined terms nested in parentheses (the same terms, in the same order).

    patsy evaluates ``a + b + c`` recursively, one level per term.  A run of
    terms joined by '+' is an ordered union, so grouping it is exact; the
    intercept literals (0, 1, -1) and the operands of '-' stay outside the
    groups, where patsy's rules for them apply unchanged.
    """
    parts = _split_top_level(rhs, {"+", "-"})
    if len(parts) <= _GROUP:
        return rhs
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(("+ " if out else "") + "(" + join_terms(run) + ")")
            run.clear()

    for op, piece in parts:
        if op in {"", "+"} and piece not in {"0", "1", "-1", "+1", "-0", "+0"} and piece:
            run.append(piece)
        else:
            flush()
            out.append(f"{op} {piece}".strip() if out or op else piece)
    flush()
    return " ".join(out)


def expand_formula(formula: str, columns: Sequence[str]) -> str:
    """The formula with R's '.' expanded to every column but the response's, and long sums nested.

    Decided from the formula and the column names only (public).  The result
    is what patsy parses (:func:`model_desc`); for data read in chunks the
    workers parse this same string.

    Parameters
    ----------
    formula : str
        The formula as the user wrote it.
    columns : sequence of str
        The data's column names.

    Returns
    -------
    str
        The expanded formula.

    Raises
    ------
    FormulaError
        No '~', more than one, or a '.' with no column left for it.
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    names = tuple(columns)
    if all(type(c) is str for c in names):  # (a function of public strings: kept for the next fit)
        return _expanded(formula, names)
    return _expand(formula, names)


#: formulas (and their column names) whose expansion and model description are kept: a session refits a few formulas
PARSED_FORMULAS = 64


@lru_cache(maxsize=PARSED_FORMULAS)
def _expanded(formula: str, columns: tuple[str, ...]) -> str:
    """:func:`_expand`, kept for formulas and column names met before (both public strings)."""
    return _expand(formula, columns)


def _expand(formula: str, columns: Sequence[str]) -> str:
    """:func:`expand_formula` of a string formula."""
    tilde = _split_top_level(formula, {"~"})
    if len(tilde) != 2:
        raise FormulaError("the formula needs exactly one '~', with a response on its left, e.g. 'y ~ x'")
    lhs, rhs = tilde[0][1], tilde[1][1]
    response = _response_columns(lhs, columns)
    rhs = _expand_dot(rhs, [term(c) for c in columns if c not in response])
    return f"{lhs} ~ {_nest_sums(rhs)}"


def model_desc(expanded: str, shown: str | None = None) -> ModelDesc:
    """patsy's model description of an expanded formula (:func:`expand_formula`), with ``poly(x, k)`` written out.

    Parameters
    ----------
    expanded : str
        The expanded formula.
    shown : str or None
        The formula as the user wrote it, for messages (``expanded`` when None).

    Returns
    -------
    patsy.desc.ModelDesc
        Its terms, each ``poly(x, k)`` written out as the powers of x.

    Raises
    ------
    FormulaError
        A formula patsy cannot parse, or nested too deeply; ``poly`` as the response.
    DisallowedExpressionError
        A ``poly`` call that is not raw powers of a literal degree.
    """
    desc = _model_desc(expanded, expanded if shown is None else shown)
    return ModelDesc(list(desc.lhs_termlist), list(desc.rhs_termlist))  # (the terms are values; the lists are new)


@lru_cache(maxsize=PARSED_FORMULAS)
def _model_desc(expanded: str, shown: str) -> ModelDesc:
    """:func:`model_desc`, kept for the formulas met before (a function of the two public strings; a formula refused
    raises every time, as exceptions are not kept)."""
    try:
        desc = ModelDesc.from_formula(expanded)
        tree = parse_formula(expanded)
        _check_removals(tree, shown, response_removable=_uses_dot(shown))
        if not _uses_dot(shown):  # (y ~ .**2 is the pairs of whatever columns the data have, one column or more)
            _check_powers(tree, shown)
    except patsy.PatsyError as exc:
        raise FormulaError(f"cannot parse formula {shown!r}: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise FormulaError(f"cannot parse formula {shown[:200]!r}: it nests too deeply") from None
    for t in desc.lhs_termlist:
        for f in t.factors:
            if _poly_call(f.code) is not None:
                raise FormulaError("poly() cannot be the response; the response is a single column")
    return ModelDesc(desc.lhs_termlist, _expand_poly(desc.rhs_termlist))


def _check_removals(tree: ParseNode, shown: str, response_removable: bool = False) -> None:
    """Refuse a ``-`` whose right side names a term its left side lacks.

    In Wilkinson-Rogers notation (R's and patsy's) ``a - b`` removes the terms of b from those of a; a term that
    a does not have is ignored without a word, so ``y ~ x - np.mean(x)``, written to centre x, fits ``y ~ x``.
    Read from the formula only (public), before any data.  ``response_removable``: the formula uses R's '.', which
    leaves the response out already, so removing the response (``y ~ . - y``, R's idiom) is accepted as the no-op
    it is in R.

    Raises
    ------
    FormulaError
        A removed term that is not among the terms it is removed from.
    """
    response: list[Any] = []
    if response_removable and tree.type == "~" and len(tree.args) == 2:
        response = Evaluator().eval(tree.args[0], require_evalexpr=False).terms
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.args)
        if node.type != "-" or len(node.args) != 2:
            continue
        evaluator = Evaluator()
        kept = evaluator.eval(node.args[0], require_evalexpr=False).terms
        absent = [t.name() for t in evaluator.eval(node.args[1], require_evalexpr=False).terms
                  if t not in kept and t not in response]
        if absent:
            raise FormulaError(
                f"the formula {shown!r} removes {', '.join(repr(a) for a in absent)} with '-', but the terms "
                f"before that '-' do not include it, so it would do nothing: in a formula '-' removes a term (as in "
                "'y ~ x - 1'), it does not subtract. To centre or shift a variable write I(x - c) with a public "
                "constant c (never a statistic of the data); to drop a term, name one the formula has. Nothing was "
                "read or spent.")


def _check_powers(tree: ParseNode, shown: str) -> None:
    """Refuse a formula power ``a ** k`` that adds no term to ``a``, and a term's interaction with itself
    (``x:x``, ``x*x``, which are ``x``).

    In Wilkinson-Rogers notation (R's ``^``, patsy's ``**``) ``(a + b) ** 2`` is the terms of a + b and their
    interactions up to order 2; a single term has no interaction with another, so ``x ** 2`` is ``x`` itself and
    ``y ~ x + x ** 2``, written for a square, fits ``y ~ x`` without a word (as statsmodels and R do).  Read from
    the formula only (public), before any data.  (A formula with R's '.' is not checked: ``y ~ .**2`` stands for
    the pairs of whatever columns the data have, and with one column it is that column, as written.)

    Raises
    ------
    FormulaError
        A power whose terms are those of its base, or an interaction of a term with itself.
    """
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.args)
        if node.type in {":", "*"} and len(node.args) == 2 and all(a.type == "PYTHON_EXPR" for a in node.args) \
                and len({"".join(_written(a, "").split()) for a in node.args}) == 1:
            term = _written(node.args[0], "x")
            raise FormulaError(
                f"the formula {shown!r} has {_written(node, 'x:x')!r}: the interaction of a term with itself is the "
                f"term, so it is the same as {term!r}, with no square. For the square of a number write "
                f"I({term} ** 2). Nothing was read or spent.")
        if node.type != "**" or len(node.args) != 2 or _written(node.args[1], "").strip() == "1":
            continue  # (x ** 1 is x, as written)
        base = Evaluator().eval(node.args[0], require_evalexpr=False).terms
        powered = Evaluator().eval(node, require_evalexpr=False).terms
        if set(powered) != set(base):
            continue
        written = _written(node, "a ** k")
        inner = _written(node.args[0], "x")
        single = node.args[0].type == "PYTHON_EXPR" and not _written(node.args[0], "").startswith("C(")
        k = _written(node.args[1], "2").strip()
        raise FormulaError(
            f"the formula {shown!r} has {written!r}: outside I(), '**' is the formula's power, the terms of its base "
            f"and their interactions up to that order, and {inner!r} "
            f"{'is one term' if node.args[0].type == 'PYTHON_EXPR' else 'has every interaction of its terms already'}, "
            "so the power adds "
            f"nothing: it is the same as {inner!r}, with no power of a number. For the power of a number write "
            f"I({inner if single else 'x'} ** {k}) (or poly(x, k) for x and its powers); for the interactions of "
            "several terms, (a + b) ** 2. Nothing was read or spent.")


def _written(node: ParseNode, default: str) -> str:
    """The formula's text of a node of patsy's parse tree, as written."""
    return node.origin.relevant_code() if node.origin is not None else default


def _poly_call(code: str) -> ast.Call | None:
    node = _expression(code)
    return node if node is not None and is_call(node, "poly") else None  # type: ignore[return-value]


def _poly_powers(code: str, call: ast.Call) -> list[str]:
    """The factor codes of ``poly(x, k)``: x, I(x ** 2), ..., I(x ** k) (raw powers, as R's raw = TRUE)."""
    why = ("poly(x, k) takes a variable or expression and a literal degree k >= 1 (raw powers x, x^2, ..., x^k, "
           "as R's poly(x, k, raw = TRUE))")
    degree = call.args[1] if len(call.args) == 2 else None
    for kw in call.keywords:
        if kw.arg == "degree" and degree is None:
            degree = kw.value
        elif kw.arg == "raw":
            raw = kw.value.value if isinstance(kw.value, ast.Constant) else None
            if raw is False:
                raise DisallowedExpressionError(
                    f"'{code}': orthogonal polynomials (raw=False, R's default) are computed from the data (every "
                    "row's value depends on all rows); dpstats evaluates raw powers: poly(x, k) or poly(x, k, "
                    "raw=True). Nothing was spent.")
            if raw is not True:
                raise DisallowedExpressionError(f"'{code}': raw= must be the literal True (or be left out)")
        else:
            raise DisallowedExpressionError(f"'{code}': {why}")
    k = finite_number(degree) if degree is not None else None
    if len(call.args) not in (1, 2) or k is None or not float(k).is_integer() or k < 1:
        raise DisallowedExpressionError(f"'{code}': {why}")
    arg = call.args[0]
    base = ast.unparse(arg)
    compound = isinstance(arg, (ast.BinOp, ast.UnaryOp, ast.Compare))
    first = f"I({base})" if compound else base
    base = f"({base})" if compound else base
    return [first] + [f"I({base} ** {j})" for j in range(2, int(k) + 1)]


def _expand_poly(terms: Sequence[Term]) -> list[Term]:
    """The terms with every ``poly(x, k)`` factor written out as its powers (one term per power), deduplicated."""
    out: dict[Term, None] = {}
    for t in terms:
        calls = [_poly_call(f.code) if "poly" in f.code else None for f in t.factors]
        if all(c is None for c in calls):
            out.setdefault(t)
            continue
        alternatives = [[f] if c is None else [EvalFactor(p) for p in _poly_powers(f.code, c)]
                        for f, c in zip(t.factors, calls, strict=True)]
        for combo in _products(alternatives):
            out.setdefault(Term(list(dict.fromkeys(combo))))
    return list(out)


def _products(alternatives: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Cartesian product with the first factor varying slowest (the order R writes poly(x, 2):z in)."""
    combos: list[tuple[Any, ...]] = [()]
    for options in alternatives:
        combos = [c + (o,) for c in combos for o in options]
    return combos
