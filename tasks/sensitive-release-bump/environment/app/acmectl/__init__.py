"""acmectl: command-line client for the ACME deployment service."""

__version__ = "1.3.2"
