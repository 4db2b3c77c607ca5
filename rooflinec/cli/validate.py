"""`rooflinec validate`: compare bounds with measured serving results.

Every serving result of the catalog's models (or of `--model`, on `--device`) with its
bound, ratio, regime and calibrated estimate, the summaries per device, metric and regime,
and the estimate's leave-one-out error (`rooflinec.outputs.accuracy`)."""

from __future__ import annotations

import json
from typing import TextIO

from rooflinec.cli.options import EXIT_OK, Options
from rooflinec.errors import UsageError
from rooflinec.pipeline import compiled_or_raise, specs_folder


def cmd_validate(opts: Options, out: TextIO) -> int:
    from rooflinec.engine.serving import serving_points
    from rooflinec.outputs.accuracy import (
        accuracy,
        accuracy_csv,
        accuracy_data,
        accuracy_text,
    )

    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    for kind, wanted, known in (
        ("model", opts.models, catalog.models),
        ("device", opts.devices, catalog.devices),
    ):
        for item in wanted:
            if item not in known:
                raise UsageError(f"unknown {kind} '{item}'")
    points = [
        p
        for p in serving_points(compiled.model_engine)
        if (not opts.models or p.model in opts.models)
        and (not opts.devices or p.device in opts.devices)
    ]
    if not points:
        raise UsageError("no measured serving result matches: nothing to compare")
    found = accuracy(points)
    if opts.format == "json":
        out.write(json.dumps(accuracy_data(found), indent=2, ensure_ascii=False) + "\n")
    elif opts.format == "csv":
        out.write(accuracy_csv(found))
    else:
        out.write(accuracy_text(found))
    return EXIT_OK
