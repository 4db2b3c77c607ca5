"""rooflinec's benchmarks: ratios against baselines measured in the same run.

Run them with `python -m benchmarks [--size tiny|full]`; see `benchmarks/README.md`.
"""
