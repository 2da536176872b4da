"""Docstring checks of the public names, and resolution of cross-references to their other import paths.

Checks (numpydoc's validation, :mod:`numpydoc.validate`, on every object autodoc documents under
``dpstats``; each failure is a Sphinx warning, an error with ``-W``):

* on every documented object (module, class, function, method, property, exception):
  :data:`ALL_CHECKS`;
* on the functions and classes listed in the API reference (the public names themselves, not their
  methods, nor the exception and warning classes, whose use the privacy model's table of refusals
  documents): also :data:`ENTRY_CHECKS` (an ``Examples`` section, and a ``Raises`` section when the
  function, or the class's constructor, raises in its own body: ``RS01``, a check of dpstats).

A check on a class accepts parameters documented under ``Attributes`` (the dataclasses document their
fields there), ``RT01`` is not asked of properties, and ``PR01`` ignores ``*args``/``**kwargs`` of
exceptions.  ``dpstats_docstring_exclusions`` in ``conf.py`` ({name: [checks]}) skips exactly those
checks for exactly those names, and ``dpstats_docstring_module_exclusions`` ({module: [checks]}) skips
those checks for every documented object that module defines (for the files that several branches are
changing at once, so that one branch's new or fixed docstrings do not break another's build); an exclusion
that no longer matches a failure is itself a warning, so the lists can only shrink.  The pseudo-check ``RST``
(a docstring that docutils cannot parse because the bars of ``|x|`` read as substitutions) escapes those bars
instead; it is not checked for staleness.

Cross-references: an object is documented once, under its first public name (``dpstats.dp_ols``), but
docstrings may name it by another import path (``dpstats.api.dp_ols``).  A reference that Sphinx cannot
resolve is retried under the documented name of the same object (``missing-reference``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: numpydoc checks for every documented object
ALL_CHECKS = frozenset({
    "GL08",  # the object has no docstring
    "GL06",  # unknown section (the docstring does not parse as numpydoc)
    "GL07",  # sections in the wrong order
    "SS01",  # no one-line summary
    "PR01",  # a parameter is not documented
    "PR02",  # a documented parameter does not exist
    "PR04",  # a parameter has no type (numpydoc form is `name : type`)
    "PR07",  # a parameter has no description
    "RT01",  # no Returns section, for a callable that returns something
})
#: further checks for the public functions and classes themselves (the entries of the API reference)
ENTRY_CHECKS = frozenset({
    "EX01",  # no Examples section
    "RS01",  # (dpstats) raises an exception in its own body but has no Raises section
})

_seen: set[str] = set()


def _store(env: Any) -> dict[str, dict[str, set[str]]]:
    """{docname: {name: failing checks}}, kept in the build environment across incremental builds."""
    if not hasattr(env, "dpstats_docstring_failures"):
        env.dpstats_docstring_failures = {}
    return env.dpstats_docstring_failures


def _modules(env: Any) -> dict[str, str]:
    """{name: the module that defines the object}, for the module exclusions' check."""
    if not hasattr(env, "dpstats_docstring_modules"):
        env.dpstats_docstring_modules = {}
    return env.dpstats_docstring_modules


def _entries(app: Sphinx) -> set[str]:
    """Names of the functions and classes listed in the API reference (documented under that name)."""
    from dpstats_site import documented_names  # noqa: PLC0415

    return documented_names()


def _errors(obj: Any, what: str) -> list[tuple[str, str]]:
    """numpydoc's validation errors of one object, with dpstats' adjustments (module docstring)."""
    from numpydoc.docscrape import get_doc_object  # noqa: PLC0415
    from numpydoc.validate import validate  # noqa: PLC0415

    report = validate(get_doc_object(obj))
    errors = report["errors"]
    if what == "class" and any(code == "PR01" for code, _ in errors):
        doc = get_doc_object(obj)
        documented = {n.strip() for p in doc["Attributes"] for n in p.name.split(",")}
        documented |= {n.strip() for p in doc["Parameters"] for n in p.name.split(",")}
        params = [p for p in _init_parameters(obj) if p not in documented]
        errors = [(c, m) for c, m in errors if c != "PR01"]
        if params:
            errors.append(("PR01", f"Parameters {{{', '.join(params)}}} not documented"))
    if what == "property" or isinstance(obj, property):
        errors = [(c, m) for c, m in errors if c != "RT01"]
    if what in ("function", "class") and _raises_without_section(obj):
        errors.append(("RS01", "raises an exception in its own body but has no Raises section"))
    return errors


def _raises_without_section(obj: Any) -> bool:
    """True when a function (a class: its ``__init__``/``__post_init__``) of dpstats has a ``raise`` statement
    of its own and its docstring no ``Raises`` section (exceptions raised by the functions it calls are not
    seen: this catches the refusals a public function states itself)."""
    import ast  # noqa: PLC0415
    import textwrap  # noqa: PLC0415

    from numpydoc.docscrape import get_doc_object  # noqa: PLC0415

    if isinstance(obj, type):
        targets = [vars(obj)[m] for m in ("__init__", "__post_init__") if m in vars(obj)]
    else:
        targets = [obj]
    raises = False
    for target in targets:
        if not inspect.isfunction(target) or not getattr(target, "__module__", "").startswith("dpstats"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
        except (OSError, TypeError, SyntaxError):
            continue
        raises = raises or any(isinstance(node, ast.Raise) for node in ast.walk(tree))
    return raises and not get_doc_object(obj)["Raises"]


def _init_parameters(cls: type) -> list[str]:
    """The public named parameters of a class's constructor (not ``self``, ``_private``, ``*args``, ``**kwargs``)."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if not p.name.startswith("_")
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]


def _undocumented_members(cls: type) -> list[str]:
    """Public methods and properties a class defines without a docstring (autodoc would leave them out)."""
    import dataclasses  # noqa: PLC0415

    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    missing = []
    for member_name, member in vars(cls).items():
        if member_name.startswith("_") or member_name in fields:  # a field's default is not a member
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if (inspect.isfunction(member) or isinstance(member, property)) and not (member.__doc__ or "").strip():
            missing.append(member_name)
    return missing


def _defining_module(obj: Any) -> str:
    """The module that defines an object (a property's getter's module for a property)."""
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "fget", None), "__module__", None)
    return module or ""


def _report(app: Sphinx, name: str, errors: list[tuple[str, str]], module: str = "") -> None:
    """Record an object's failures (for the exclusions' check) and warn about those not excluded."""
    excluded = set(app.config.dpstats_docstring_exclusions.get(name, ()))
    by_module = set(app.config.dpstats_docstring_module_exclusions.get(module, ()))
    excluded |= by_module - {"GL08"} if name in _entries(app) else by_module  # a public name needs a docstring
    _store(app.env).setdefault(app.env.docname, {})[name] = {c for c, _ in errors}
    _modules(app.env)[name] = module
    shown = [(c, m) for c, m in errors if c not in excluded]
    if shown:
        detail = "; ".join(f"{c}: {m}" for c, m in shown)
        logger.warning("docstring of %s fails numpydoc checks: %s", name, detail, type="dpstats",
                       subtype="docstring")


def check_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """``autodoc-process-docstring``: run the checks on a documented dpstats object (once per name).

    For a class, its public methods and properties without a docstring, which autodoc leaves out, fail
    ``GL08`` under their own names.
    """
    if not name.startswith("dpstats") or name in _seen or what in ("data", "attribute"):
        return
    _seen.add(name)
    if what == "module":
        errors = [] if inspect.getdoc(obj) else [("GL08", "The object does not have a docstring")]
    else:
        entry = name in _entries(app) and not (isinstance(obj, type) and issubclass(obj, BaseException))
        checks = ALL_CHECKS | (ENTRY_CHECKS if entry else frozenset())
        errors = [(c, m) for c, m in _errors(obj, what) if c in checks]
    module = obj.__name__ if what == "module" else _defining_module(obj)
    _report(app, name, errors, module)
    if what in ("class", "exception"):
        for member in _undocumented_members(obj):
            full = f"{name}.{member}"
            if full not in _seen:
                _seen.add(full)
                _report(app, full, [("GL08", "The object does not have a docstring")], _defining_module(obj))


def escape_unparsable(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """``autodoc-process-docstring``, after numpydoc: in a docstring excluded with ``RST``, escape the bars
    of ``|x|`` (absolute values), which reStructuredText reads as substitution references."""
    if "RST" in app.config.dpstats_docstring_exclusions.get(name, ()):
        lines[:] = [re.sub(r"(?<!\\)\|", r"\\|", line) for line in lines]


def purge_doc(app: Sphinx, env: Any, docname: str) -> None:
    """``env-purge-doc``: forget the failures recorded while reading a page that is read again."""
    _store(env).pop(docname, None)


def check_exclusions(app: Sphinx, env: Any) -> None:
    """``env-check-consistency``: every TEMPORARY exclusion must still match a failure of a documented name
    (a module's exclusion: of some documented object that module defines)."""
    failures = {name: checks for per_doc in _store(env).values() for name, checks in per_doc.items()}
    by_module: dict[str, set[str]] = {}
    for name, checks in failures.items():
        by_module.setdefault(_modules(env).get(name, ""), set()).update(checks)
    for module, checks in app.config.dpstats_docstring_module_exclusions.items():
        stale = sorted(set(checks) - by_module.get(module, set()))
        if stale:
            logger.warning("docstring exclusion for the objects of %s: %s now pass (remove them from conf.py)",
                           module, ", ".join(stale), type="dpstats", subtype="exclusion")
    for name, checks in app.config.dpstats_docstring_exclusions.items():
        if name not in failures:
            logger.warning("docstring exclusion for %s: no such documented name (remove it from conf.py)", name,
                           type="dpstats", subtype="exclusion")
            continue
        stale = sorted(set(checks) - failures[name] - {"RST"})
        if stale:
            logger.warning("docstring exclusion for %s: %s now pass (remove them from conf.py)", name,
                           ", ".join(stale), type="dpstats", subtype="exclusion")


def _resolve_object(target: str) -> tuple[Any, str] | None:
    """The object named by the longest importable prefix of a dotted path, and the rest of the path."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        module_path = ".".join(parts[:i])
        try:
            obj: Any = importlib.import_module(module_path)
            rest = parts[i:]
        except ImportError:
            continue
        for j, attr in enumerate(rest):
            if not hasattr(obj, attr):
                return obj, ".".join(rest[j:])
            obj = getattr(obj, attr)
        return obj, ""
    return None


def _home_modules(node: nodes.Element) -> list[str]:
    """Modules a bare reference may be relative to: the module that defines the object documented on the
    page (``api/generated/<public name>``), the page's module (``api/<module>``), the reference's context."""
    from dpstats_site import documented_ids  # noqa: PLC0415

    homes = []
    page = node.get("refdoc", "")
    public = page.rpartition("/")[2]
    if page.startswith("api/generated/"):
        found = _resolve_object(public)
        if found is not None and not found[1] and id(found[0]) in documented_ids():
            homes.append(getattr(found[0], "__module__", None))
    elif page.startswith("api/"):
        homes.append(public)
    homes.append(node.get("py:module"))
    return [h for h in homes if h and h.startswith("dpstats")]


def _documented_target(target: str) -> str | None:
    """The documented name of the object a dotted path names (or of its longest documented prefix, with the
    rest appended), or None."""
    from dpstats_site import documented_ids  # noqa: PLC0415

    parts = target.split(".")
    for i in range(len(parts), 1, -1):
        found = _resolve_object(".".join(parts[:i]))
        if found is None or found[1]:
            continue
        public = documented_ids().get(id(found[0]))
        if public is not None:
            return ".".join([public, *parts[i:]])
    return None


def _exists(target: str) -> bool:
    """True when a dotted path names an object of the package (documented or not)."""
    found = _resolve_object(target)
    return found is not None and not found[1]


def resolve_alias(app: Sphinx, env: Any, node: nodes.Element, contnode: nodes.Element) -> nodes.Element | None:
    """``missing-reference``: resolve a Python reference that names a dpstats object by another path.

    1. A dotted target (``dpstats.api.dp_ols``), or a bare one (``MethodSpec`` in the docstring of
       ``dpstats.available_methods``) taken relative to the module that defines the page's object, is
       looked up by importing it and linked to the documented name of the same object.
    2. A bare target that is the last part of exactly one documented name is linked to it.
    3. A target that names an existing object of the package that the site does not document (an internal
       module or helper) is shown as code without a link.
    Anything else stays unresolved: a warning, an error with ``-W`` (a broken reference).
    """
    from dpstats_site import documented_constants, documented_names  # noqa: PLC0415

    if node.get("refdomain") != "py":
        return None
    raw = node.get("reftarget", "").lstrip("~.")
    candidates = [raw] if raw.startswith("dpstats") else [f"{h}.{raw}" for h in _home_modules(node)]
    domain = env.get_domain("py")
    for target in candidates:
        public = _documented_target(target)
        if public is not None and public != node["reftarget"]:
            ref = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], public, node, contnode)
            if ref is not None:
                return ref
    if not raw.startswith("dpstats"):
        matches = [n for n in documented_names() | documented_constants() if n.endswith("." + raw)]
        if len(matches) == 1:
            ref = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], matches[0], node, contnode)
            if ref is not None:
                return ref
    if any(_exists(t) for t in candidates):
        return contnode
    return None


def skip_foreign_member(app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """``autodoc-skip-member``: leave out members that another library defines on a dpstats class (for
    example scikit-learn's ``set_fit_request``); they are documented by that library."""
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "fget", None), "__module__", None)
    if module is not None and not module.startswith("dpstats") and callable(obj):
        return True
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the checks and the alias resolution with Sphinx."""
    app.add_config_value("dpstats_docstring_exclusions", {}, "env", types=[dict])
    app.add_config_value("dpstats_docstring_module_exclusions", {}, "env", types=[dict])
    app.connect("autodoc-process-docstring", check_docstring, priority=400)
    app.connect("autodoc-process-docstring", escape_unparsable, priority=600)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-check-consistency", check_exclusions)
    app.connect("missing-reference", resolve_alias)
    app.connect("autodoc-skip-member", skip_foreign_member)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
