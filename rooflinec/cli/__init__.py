"""The `rooflinec` command line.

It may import every room below it (the pipeline, `engine`, `outputs`, `prose`,
`importing`, `site`); nothing imports it but `rooflinec.__main__` and the console script."""
