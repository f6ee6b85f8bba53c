"""A tiny statistics package (the sample project of Vigil's demo)."""

from calc.stats import mean, median, total

__all__ = ["mean", "median", "total"]
