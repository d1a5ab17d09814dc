"""Almanac sandbox."""
