"""Helpers of the Python tests: the float64 reference and harness, native builds, and the child-process programs."""
