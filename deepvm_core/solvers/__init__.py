"""Solvers of the DeepVM model: the PuLP integer program and the exact enumeration."""
