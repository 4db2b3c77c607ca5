"""`rooflinec import`: profiler exports turned into `measured` entries of kernel specs,
(`hf_config`) a Hugging Face config.json turned into a model spec, and (`serving`) a
serving benchmark's results (vLLM, genai-perf, a plain CSV) turned into a model's
serving results.

Readers (`plain`, `ncu`, `rocprof`) turn one file, read line by line (`rows.Lines`),
into a stream of `Row`s, one per launch or line, each with the line it came from; every
number goes through `rows.number` (capped, finite, not negative, commas read as told).
`entries.resolve` maps them to cases (`--match`, time-bounded), checks them against the
catalog and sums the launches of one case into one `Entry` as they come. `render` prints
the entries as YAML; `write` adds them to the kernel specs in place, all files or none.
Every problem in a file is a `FILE:LINE[:COL]: error: ...` (`ExportError`), found before
any spec is touched.

It may import the core values, `assemble` (to read the catalog it imports into) and
the engine; it imports nothing from `outputs`, `site` or `cli`.
"""

from __future__ import annotations

from collections.abc import Iterator

from rooflinec.importing.entries import Entry, MatchTimeout, parse_matches, resolve
from rooflinec.importing.rows import Commas, ExportError, Lines, Problem, Row
from rooflinec.importing.sources import measurement_source

__all__ = [
    "Commas",
    "Entry",
    "ExportError",
    "Lines",
    "MatchTimeout",
    "Problem",
    "Row",
    "measurement_source",
    "parse_matches",
    "read_rows",
    "resolve",
]

KINDS = ("csv", "ncu", "rocprof")


def read_rows(kind: str, path: str, lines: Lines, commas: Commas = "ask") -> Iterator[Row]:
    """The rows of an export of `kind` (csv, ncu or rocprof), read as they are asked for;
    `ExportError` on problems, once the file has been read."""
    if kind == "ncu":
        from rooflinec.importing.ncu import read_ncu

        return read_ncu(path, lines, commas)
    if kind == "rocprof":
        from rooflinec.importing.rocprof import read_rocprof

        return read_rocprof(path, lines, commas)
    from rooflinec.importing.plain import read_plain

    return read_plain(path, lines, commas)
