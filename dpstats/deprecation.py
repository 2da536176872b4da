"""Deprecated names whose new home is a module above their old one (kept for one release).

A module cannot import the layers above it, not even inside a function (an import cycle;
``tests/test_imports.py``), so an old name there cannot fetch an object that moved up.  Instead the new
home hands the object down when it is imported: the old module holds a :class:`MovedUp` table, its
module-level ``__getattr__`` reads the table (with a DeprecationWarning), and the new home calls
:meth:`MovedUp.add` once it has defined the object.  ``dpstats/__init__.py`` imports every new home, and
Python runs it before any submodule of the package, so the names are in place before any user code reads
them.  This module imports nothing from dpstats.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["MovedUp"]


class MovedUp:
    """The deprecated names of one module that moved to a module above it.

    Parameters
    ----------
    module : str
        The old module's dotted name (for the messages).

    Examples
    --------
    >>> moved = MovedUp("pkg.low")
    >>> moved.add("f", "pkg.high.f", len)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     moved.get("f") is len, str(caught[0].message)
    (True, 'pkg.low.f is deprecated: use pkg.high.f')
    """

    def __init__(self, module: str) -> None:
        self.module = module
        self._names: dict[str, tuple[str, Any]] = {}

    def add(self, name: str, new_path: str, obj: Any) -> None:
        """Keep ``<module>.<name>`` working as ``obj``, with a DeprecationWarning that points at ``new_path``.

        Parameters
        ----------
        name : str
            The old name.
        new_path : str
            The new dotted path, for the warning.
        obj : object
            What the old name returns.
        """
        self._names[name] = (new_path, obj)

    def get(self, name: str) -> Any:
        """The object of a moved name, with a DeprecationWarning (for the old module's ``__getattr__``).

        Parameters
        ----------
        name : str
            The name looked up.

        Returns
        -------
        object
            The object its new home registered.

        Raises
        ------
        AttributeError
            When ``name`` is not a moved name of the module (the usual error of a missing attribute).
        """
        if name not in self._names:
            raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
        new_path, obj = self._names[name]
        warnings.warn(f"{self.module}.{name} is deprecated: use {new_path}", DeprecationWarning, stacklevel=3)
        return obj
