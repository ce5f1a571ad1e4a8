"""The version of rsrank (one place, read by the package and its model files)."""

__version__ = "0.1.0"
