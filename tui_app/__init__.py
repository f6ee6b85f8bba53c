"""Vigil: supervise an AI coding agent from your terminal."""

__version__ = "0.1.0"
