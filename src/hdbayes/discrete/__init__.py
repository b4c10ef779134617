"""Generative models for discrete data (spec ``generative-discrete.md``; seed 004)."""
