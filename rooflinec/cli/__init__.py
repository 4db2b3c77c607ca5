"""The `rooflinec` command line."""
