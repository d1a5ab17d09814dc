"""Almanac api."""
