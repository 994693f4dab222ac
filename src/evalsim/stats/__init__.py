"""Exact statistics for binary trials: numba kernels behind validating functions."""
