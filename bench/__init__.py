"""Benchmarks (not tests): each module measures against a floor taken in the same run."""
