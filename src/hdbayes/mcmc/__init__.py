"""Inference engines that know nothing about a particular model."""

from hdbayes.mcmc.slice import slice_sample

__all__ = ["slice_sample"]
