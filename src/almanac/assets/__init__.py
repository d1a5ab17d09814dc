"""Almanac assets."""
