"""Aerie: an onboard agent runtime for drones and robots."""

__version__ = "0.1.0"
