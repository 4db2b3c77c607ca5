"""rooflinec: roofline results and a static report site from YAML specs of accelerators
and kernels."""

__version__ = "0.1.0"
