"""The one shape of an injected clock: every read of the time comes in as an argument."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

Clock = Callable[[], datetime]
"""Gives the current moment, timezone-aware."""
