"""Inventory package."""
