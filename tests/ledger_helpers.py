"""Helpers for tests that read a fit's ledger."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SCREEN_STEP = "missing-value screen: rows with a missing value"


def method_steps(steps: Iterable[Any]) -> tuple[Any, ...]:
    """The ledger's steps without the missing-value screen's (charged first in a private fit with
    ``missing="raise"`` where a variable's dtype can hold a missing value): the method's own releases."""
    return tuple(s for s in steps if s.name != SCREEN_STEP)
