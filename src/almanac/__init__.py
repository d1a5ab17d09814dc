"""Almanac: dated records from public sources on the calendar days of their readers."""

__version__ = "0.1.0"
