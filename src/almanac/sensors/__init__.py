"""Almanac sensors."""
