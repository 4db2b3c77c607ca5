"""What each command does once its options are parsed.

Each command imports what it runs inside itself, so parsing a command line (or asking
for `--help`) loads none of it; nothing below the command line imports this module.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, TextIO

from rooflinec.cli.extras import require_extra
from rooflinec.cli.options import DEFAULT_ADDRESS, DEFAULT_SITE, EXIT_OK, EXIT_SPEC, Options
from rooflinec.errors import UsageError, one_line
from rooflinec.pipeline import checked, compiled_or_raise, specs_folder

if TYPE_CHECKING:
    from pathlib import Path

    from rooflinec.catalog import Catalog, Deployment, Device, Model, RequestShape, Speculation
    from rooflinec.engine.cells import Result
    from rooflinec.engine.compiler import Compiled
    from rooflinec.importing.rows import ExportError
    from rooflinec.outputs.request_rows import RequestRow


def cmd_check(opts: Options, out: TextIO) -> int:
    from rooflinec.cli.reporters import REPORTERS
    from rooflinec.lints.disable import disabled_lints, without_disabled

    folder = specs_folder(opts.specs)
    # A bad `--disable` or [tool.rooflinec] table stops the check before it runs.
    disabled = disabled_lints(folder, opts.disable)
    _, diagnostics, files = checked(folder, strict=opts.strict)
    diagnostics = without_disabled(diagnostics, disabled)
    REPORTERS[opts.format](diagnostics, files, out)
    return EXIT_SPEC if any(d.severity == "error" for d in diagnostics) else EXIT_OK


def _unknown(kind: str, wanted: Iterable[str], known: Collection[str]) -> None:
    for item in wanted:
        if item not in known:
            names = ", ".join(sorted(known))
            raise UsageError(f"unknown {kind} '{item}' (known: {names})")


def cmd_compile(opts: Options, out: TextIO) -> int:
    from rooflinec.engine.grids import select
    from rooflinec.outputs.formats import FORMATS, taking
    from rooflinec.outputs.results import CsvHeader, write_results
    from rooflinec.progress import progress_line

    if _asks_request(opts):
        return _compile_requests(opts, out)
    fmt = FORMATS[opts.format]
    if fmt.needs_out and opts.out is None:
        raise UsageError(f"--format {fmt.name} writes a binary file: name it with --out FILE")
    if opts.partition is not None and opts.format != "parquet":
        raise UsageError("--partition needs --format parquet")
    if not fmt.takes("models") and opts.models:
        raise UsageError(
            f"--format {fmt.name} holds the results of kernel cases; model rows (--model) are "
            f"written by {taking('models')}"
        )
    _deployment_of(opts)  # a bad degree stops the command before any work
    folder = specs_folder(opts.specs)
    if opts.out is not None:  # a target that cannot be written fails now, not after the work
        from rooflinec.outputs.outfile import check_file_target, check_folder_target

        (check_folder_target if opts.partition else check_file_target)(opts.out, folder)
    compiled = compiled_or_raise(folder)
    catalog = compiled.catalog
    _unknown("device", opts.devices, catalog.devices)
    _unknown("case", opts.cases, catalog.cases)
    _unknown("precision", opts.precisions, catalog.precisions)
    _unknown("model", opts.models, catalog.models)
    if opts.phases and not opts.models:
        raise UsageError("--phase selects the phases of the models given with --model M")
    for phase in opts.phases:
        known = {p for m in opts.models for p in catalog.models[m].phases}
        _unknown("phase", [phase], known)
    # --case alone selects results only, --model alone model rows only; neither, both. A
    # format of one kind per stream (JSON Lines) takes the model rows with --model, else
    # the kernel cells alone.
    by_model = fmt.rows == "by-model"
    only_models = bool(opts.models) and (by_model or not opts.cases)
    deployment = _chosen_deployment(opts, compiled)
    devices = opts.devices
    if opts.deployment is not None and not devices:
        devices = (catalog.models[opts.models[0]].deployments[opts.deployment].device,)
    cells = select(
        compiled,
        devices=opts.devices or None,
        cases=(opts.cases or None) if not only_models else (),
        precisions=opts.precisions or None,
        declared_only=opts.declared_only,
    )
    models = (
        compiled.model_engine.rows(
            deployment,
            models=opts.models or None,
            phases=opts.phases or None,
            devices=devices or None,
            precisions=opts.precisions or None,
            declared_only=opts.declared_only,
        )
        if opts.models or not (opts.cases or by_model)
        else []
    )
    cells.check()  # a grid shape with a bad count stops the compile before any output
    header: CsvHeader = "plain" if opts.csv_header == "plain" else "units"
    # No progress line over rows printed to the same terminal (`--out /dev/stdout` too).
    if opts.out is None:
        shown = not _is_terminal(out)
    else:
        from rooflinec.outputs.outfile import same_file

        shown = not same_file(opts.out, sys.stderr)
    with progress_line(len(cells), "compile", enabled=shown) as progress:
        if opts.out is None:
            write_results(
                compiled,
                cells,
                opts.format,
                out,
                csv_header=header,
                models=models,
                progress=progress,
            )
            return EXIT_OK
        from rooflinec.outputs.outfile import atomic_file, atomic_folder

        if opts.format == "parquet":
            from rooflinec.outputs.results import write_parquet

            if opts.partition is not None:
                with atomic_folder(opts.out, folder) as written:
                    write_parquet(
                        compiled, cells, written, partition=opts.partition, progress=progress
                    )
            else:
                with atomic_file(opts.out, folder) as handle:
                    write_parquet(compiled, cells, handle, progress=progress)
            return EXIT_OK
        with atomic_file(opts.out, folder) as handle:
            text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            write_results(
                compiled,
                cells,
                opts.format,
                text,
                csv_header=header,
                models=models,
                progress=progress,
            )
            text.flush()
            text.detach()  # `atomic_file` closes the file itself
    return EXIT_OK


# ---------------------------------------------------------------------- requests

MAX_BATCH = 1 << 20  # more requests in one static batch than any chip holds: a typo


def _asks_request(opts: Options) -> bool:
    """Whether the command line asks for a request (`--input/--output`, `--request`,
    `--batch`) rather than a phase's pass."""
    return any(x is not None for x in (opts.input, opts.output, opts.request, opts.batch))


def _whole(flag: str, text: str, limit: int, what: str) -> int:
    """A whole number from 1 to `limit` as typed, or a usage error naming the flag."""
    digits = len(str(limit))
    if not re.fullmatch(rf"[1-9][0-9]{{0,{digits - 1}}}", text) or int(text) > limit:
        raise UsageError(f"{flag} {_shown(text)} is not {what}: a whole number from 1 to {limit:,}")
    return int(text)


def _request_of(opts: Options) -> tuple[str | None, RequestShape | None, int]:
    """What the command line asks of a request before any work: `--request ID` (its shape
    is the model's), or `--input I --output O`; and `--batch N` (default 1)."""
    from rooflinec.catalog import MAX_REQUEST_TOKENS, RequestShape

    if not opts.models:
        raise UsageError("--input/--output, --request and --batch ask for a request of --model M")
    if opts.phases:
        raise UsageError("a request runs passes of its own: leave out --phase")
    if opts.cases or opts.case:
        raise UsageError("a request is of a model: leave out the case")
    batch = 1 if opts.batch is None else _whole("--batch", opts.batch, MAX_BATCH, "a batch")
    if opts.request is not None:
        if opts.input is not None or opts.output is not None:
            raise UsageError("--request ID gives the shape: leave out --input and --output")
        _speculation(opts.speculate)  # checked before any work
        return opts.request, None, batch
    if opts.input is None or opts.output is None:
        raise UsageError("a request needs both --input N and --output N (or --request ID)")
    tokens = MAX_REQUEST_TOKENS
    shape = RequestShape(
        _whole("--input", opts.input, tokens, "a token count"),
        _whole("--output", opts.output, tokens, "a token count"),
        _speculation(opts.speculate),
    )
    return None, shape, batch


def _speculation(text: str | None) -> Speculation | None:
    """`--speculate k=3,acceptance=0.7` as typed: k from 1 to `MAX_DRAFT_TOKENS`, the
    acceptance a decimal or a ratio from 0 to 1."""
    from rooflinec.catalog import MAX_DRAFT_TOKENS, Speculation

    if text is None:
        return None
    fields = dict(part.partition("=")[::2] for part in text.split(","))
    usage = (
        f"--speculate {_shown(text)}: expected k=K,acceptance=A, as k=3,acceptance=0.7"
        f" (K drafted tokens from 1 to {MAX_DRAFT_TOKENS}, A a chance from 0 to 1)"
    )
    if sorted(fields) != ["acceptance", "k"] or text.count(",") != 1:
        raise UsageError(usage)
    k, acceptance = fields["k"], fields["acceptance"]
    if not re.fullmatch(r"[1-9][0-9]?", k) or int(k) > MAX_DRAFT_TOKENS:
        raise UsageError(usage)
    if not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,12})?|[0-9]{1,12}/[1-9][0-9]{0,11}", acceptance):
        raise UsageError(usage)
    chance = Fraction(acceptance)
    if chance > 1:
        raise UsageError(usage)
    return Speculation(int(k), chance)


def _named_shape(
    model: Model, name: str | None, given: RequestShape | None, speculate: str | None = None
) -> RequestShape:
    """The shape `--request ID` names in the model's spec (decoded as `--speculate`
    says), or the one given."""
    if given is not None:
        return given
    shape = model.requests.get(name or "")
    if shape is None:
        names = ", ".join(model.requests) or "none"
        raise UsageError(
            f"model '{model.id}' names no request {_shown(name or '')} (requests: {names})"
        )
    return replace(shape, speculation=_speculation(speculate))


def _compile_requests(opts: Options, out: TextIO) -> int:
    """`compile --model M --input I --output O` (or `--request ID`): one request row per
    model × device × precision selected, for the deployment given."""
    from rooflinec.engine.models import DeploymentError
    from rooflinec.engine.requests import evaluate_request
    from rooflinec.outputs.formats import FORMATS
    from rooflinec.outputs.request_rows import RequestRow

    fmt = FORMATS[opts.format]
    if fmt.needs_out and opts.out is None:
        raise UsageError(f"--format {fmt.name} writes a binary file: name it with --out FILE")
    if opts.partition is not None:
        raise UsageError("--partition splits kernel cells; request rows are one file")
    name, given, batch = _request_of(opts)
    _deployment_of(opts)  # a bad degree stops the command before any work
    folder = specs_folder(opts.specs)
    if opts.out is not None:
        from rooflinec.outputs.outfile import check_file_target

        check_file_target(opts.out, folder)
    compiled = compiled_or_raise(folder)
    catalog = compiled.catalog
    _unknown("device", opts.devices, catalog.devices)
    _unknown("precision", opts.precisions, catalog.precisions)
    _unknown("model", opts.models, catalog.models)
    shapes = {m: _named_shape(catalog.models[m], name, given, opts.speculate) for m in opts.models}
    deployment = _chosen_deployment(opts, compiled)
    devices = opts.devices
    if opts.deployment is not None and not devices:
        devices = (catalog.models[opts.models[0]].deployments[opts.deployment].device,)
    engine = compiled.model_engine
    rows: list[RequestRow] = []
    for model_id in dict.fromkeys(opts.models):
        model = catalog.models[model_id]
        keys = engine.keys(
            models=[model_id],
            phases=[next(iter(model.phases))],  # one key per device and precision
            devices=devices or None,
            precisions=opts.precisions or None,
            declared_only=opts.declared_only,
            deployment=deployment,
        )
        for _, _, device, precision in keys:
            try:
                result = evaluate_request(
                    engine, model_id, device, precision, deployment, batch, shapes[model_id]
                )
            except DeploymentError as exc:
                raise UsageError(f"{_degrees(deployment)}: {exc.message}") from None
            rows.append(RequestRow(result, name, precision == model.precision))
    _write_request_rows(opts, compiled, rows, folder, out)
    return EXIT_OK


def _write_request_rows(
    opts: Options, compiled: Compiled, rows: list[RequestRow], folder: Path, out: TextIO
) -> None:
    """The rows in `--format`, to stdout or whole to `--out` (or not at all)."""
    from rooflinec.outputs.request_rows import (
        write_request_csv,
        write_request_jsonl,
        write_request_parquet,
        write_request_table,
    )
    from rooflinec.outputs.results import write_json_requests

    def text(stream: TextIO) -> None:
        if opts.format == "json":
            write_json_requests(compiled, rows, stream)
        elif opts.format == "jsonl":
            write_request_jsonl(rows, stream)
        elif opts.format == "csv":
            write_request_csv(rows, stream, plain=opts.csv_header == "plain")
        else:
            write_request_table(compiled.catalog, rows, stream)

    if opts.out is None:
        text(out)
        return
    from rooflinec.outputs.outfile import atomic_file

    with atomic_file(opts.out, folder) as handle:
        if opts.format == "parquet":
            write_request_parquet(rows, handle)
            return
        wrapper = io.TextIOWrapper(handle, encoding="utf-8", newline="")
        text(wrapper)
        wrapper.flush()
        wrapper.detach()  # `atomic_file` closes the file itself


def _deployment_of(opts: Options) -> Deployment:
    """The deployment `--tp/--pp/--ep/--chips` name (one chip without them); a usage
    error when the degrees are not one."""
    from rooflinec.catalog import Deployment

    deployment = Deployment(
        _degree("--tp", opts.tp) or 1,
        _degree("--pp", opts.pp) or 1,
        _degree("--ep", opts.ep) or 1,
        _degree("--chips", opts.chips),
    )
    problem = deployment.problem()
    if problem is not None:
        raise UsageError(f"not a deployment: {problem}")
    return deployment


MAX_DEGREE = 1 << 20  # more chips than any fabric joins: a typo


def _degree(flag: str, text: str | None) -> int | None:
    """A degree or chip count as typed: a whole number from 1 (None when not given)."""
    if text is None:
        return None
    if not re.fullmatch(r"[1-9][0-9]{0,6}", text) or int(text) > MAX_DEGREE:
        raise UsageError(
            f"{flag} {_shown(text)} is not a degree: a whole number from 1 to {MAX_DEGREE:,}"
        )
    return int(text)


def _shown(text: str) -> str:
    """A value as typed, quoted and cut to 40 characters: an error line stays one short line."""
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


def _chosen_deployment(opts: Options, compiled: Compiled) -> Deployment:
    """The deployment of `compile`'s model rows. A model named with `--model` that cannot
    run it, or a device named with `--device` without the fabric its collectives cross,
    is a usage error; in a whole-catalog run such models and devices are left out and
    named on stderr."""
    from rooflinec.catalog import ONE_CHIP

    deployment = _deployment_of(opts)
    if opts.deployment is not None:
        deployment = _named(opts, compiled, deployment)
    if deployment == ONE_CHIP:
        return deployment
    engine = compiled.model_engine
    catalog = compiled.catalog
    models = [catalog.models[m] for m in opts.models] or list(catalog.models.values())
    kept = []
    for model in models:
        problem = engine.deployment_problem(model, deployment)
        if problem is None:
            kept.append(model)
        elif opts.models:
            raise UsageError(f"{_degrees(deployment)} is not a deployment of {problem}")
        else:
            sys.stderr.write(f"rooflinec: skipped model '{model.id}': {problem}\n")
    devices = opts.devices or tuple(compiled.devices)
    if opts.deployment is not None and not opts.devices:
        devices = (catalog.models[opts.models[0]].deployments[opts.deployment].device,)
    skipped: dict[str, str] = {}  # one note per device: the first model's reason
    for model in kept:
        for device in devices:
            problem = engine.fabric_problem(model, device, deployment)
            if problem is None:
                continue
            if opts.devices or opts.deployment is not None:
                raise UsageError(f"{_degrees(deployment)}: {problem}")
            skipped.setdefault(device, problem)
    for problem in skipped.values():
        sys.stderr.write(f"rooflinec: skipped under {_degrees(deployment)}: {problem}\n")
    return deployment


def _named(opts: Options, compiled: Compiled, given: Deployment) -> Deployment:
    """`--deployment NAME`: the split a model's spec names, on its device (which becomes
    the `--device` selection when none is given)."""
    from rooflinec.catalog import ONE_CHIP

    if len(opts.models) != 1:
        raise UsageError("--deployment NAME names a deployment of one model: give one --model M")
    if given != ONE_CHIP:
        raise UsageError("--deployment NAME gives the split: leave out --tp, --pp, --ep, --chips")
    model = compiled.catalog.models[opts.models[0]]
    named = model.deployments.get(opts.deployment or "")
    if named is None:
        names = ", ".join(sorted(model.deployments)) or "none"
        raise UsageError(
            f"model '{model.id}' names no deployment {_shown(opts.deployment or '')}"
            f" (deployments: {names})"
        )
    if opts.devices and named.device not in opts.devices:
        raise UsageError(
            f"deployment '{named.name}' runs on device '{named.device}', not on the devices"
            " --device names"
        )
    return named.deployment


def _degrees(deployment: Deployment) -> str:
    return f"tp={deployment.tp}, pp={deployment.pp}, ep={deployment.ep}, chips={deployment.total}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _one_result(opts: Options) -> tuple[Catalog, Result]:
    """The catalog and the result of `CASE --device D [--precision P]` (default: the
    case's declared precision); a usage error for an unknown id or a missing peak."""
    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    _unknown("case", [opts.case], catalog.cases)
    _unknown("device", opts.devices, catalog.devices)
    case = catalog.cases[opts.case]
    device = catalog.devices[opts.devices[0]]
    precision = opts.precisions[0] if opts.precisions else case.precision
    _unknown("precision", [precision], catalog.precisions)
    if case.grid is not None or opts.shape:
        from rooflinec.engine.grids import grid_result

        shape = grid_shape(catalog, case.id, opts.shape, required=True)
        result = grid_result(compiled, case, shape, device.id, precision)
    else:
        result = compiled.result(case.id, device.id, precision)
    if result is None:
        raise UsageError(
            f"device '{device.id}' has no peak for precision '{precision}'"
            f" (it has: {', '.join(device.peaks)})"
        )
    return catalog, result


def grid_shape(catalog: Catalog, case_id: str, text: str, *, required: bool) -> dict[str, int]:
    """The shape `--shape M=1,N=2,..` names in a grid case, checked against its grid; the
    grid's first shape when none is given and none is `required`."""
    case = catalog.cases[case_id]
    grid = case.grid
    if grid is None:
        raise UsageError(f"case '{case_id}' has one shape; --shape is for grid cases")
    example = ",".join(f"{k}={v}" for k, v in grid.first.items())
    if not text:
        if not required:
            return grid.first
        raise UsageError(
            f"case '{case_id}' is a grid of {grid.size:,} shapes: pick one with --shape"
            f" {example} (every symbol, each a value of the grid)"
        )
    shape: dict[str, int] = {}
    for item in text.split(","):
        name, _, value = item.strip().partition("=")
        name, value = name.strip(), value.strip().replace("_", "")
        if name not in grid.symbols or not value.isdigit() or name in shape:
            raise UsageError(
                f"--shape {text!r}: expected SYMBOL=VALUE for each of"
                f" {', '.join(grid.symbols)} once, such as --shape {example}"
            )
        shape[name] = int(value)
    missing = [s for s in grid.symbols if s not in shape]
    if missing:
        raise UsageError(f"--shape {text!r}: no value for {', '.join(missing)}")
    outside = [a for a in grid.axes if not a.contains(shape[a.symbol])]
    if outside:
        axis = outside[0]
        raise UsageError(
            f"--shape: {axis.symbol}={shape[axis.symbol]} is not a value of the grid"
            f" of case '{case_id}' ({axis.symbol}: {axis.text})"
        )
    return {s: shape[s] for s in grid.symbols}


def cmd_explain(opts: Options, out: TextIO) -> int:
    from rooflinec.prose.explain import explain, explain_symbolic

    if _asks_request(opts):
        return _explain_request(opts, out)
    if opts.models or opts.phases:
        return _explain_model(opts, out)
    if not opts.case:
        raise UsageError("explain needs a CASE, or --model M --phase PH")
    if opts.deployment is not None:
        raise UsageError("--deployment NAME explains a model's pass: give --model M --phase PH")
    if not opts.devices:
        raise UsageError("explain CASE needs --device D")
    if opts.symbolic:
        require_extra("rooflinec explain --symbolic", "symbolic")
    catalog, result = _one_result(opts)
    out.write(explain(catalog, result))
    if opts.symbolic:
        plain, latex = explain_symbolic(catalog, result)
        out.write("\nSymbolic (shape free, device constants folded in)\n")
        out.write(f"   {plain}\n   LaTeX: {latex}\n")
    return EXIT_OK


def _explain_model(opts: Options, out: TextIO) -> int:
    """`explain --model M --phase PH --device D [--precision P]` (default: the model's), or
    `--deployment NAME` for the device and the split a model's spec names."""
    from rooflinec.prose.model_explain import explain_model

    _model_usage(opts, "explain")
    if opts.symbolic:
        raise UsageError("--symbolic explains a case, not a model")
    deployment = _deployment_of(opts)  # a bad degree stops the command before any work
    compiled, model = _model_of(opts)
    device, precision, deployment = _explained_at(opts, compiled, model, deployment)
    row = compiled.model_result(model.id, opts.phases[0], device.id, precision, deployment)
    if row is None:
        raise _no_peak(model, device, precision)
    out.write(explain_model(compiled, row))
    return EXIT_OK


def _explained_at(
    opts: Options, compiled: Compiled, model: Model, deployment: Deployment
) -> tuple[Device, str, Deployment]:
    """The device, precision and deployment `explain --model` derives a row at: a named
    deployment's (checked as `compile --deployment NAME` checks it) or `--device`'s."""
    catalog = compiled.catalog
    if opts.deployment is not None:
        deployment = _named(opts, compiled, deployment)
        device = catalog.devices[model.deployments[opts.deployment].device]
    elif opts.devices:
        device = catalog.devices[opts.devices[0]]
    else:
        raise UsageError("explain --model M needs --device D (or --deployment NAME)")
    precision = opts.precisions[0] if opts.precisions else model.precision
    _unknown("precision", [precision], catalog.precisions)
    _check_deployment(compiled, model, device.id, deployment)
    return device, precision, deployment


def _explain_request(opts: Options, out: TextIO) -> int:
    """`explain --model M --input I --output O --device D [--batch N]` (or `--request ID`,
    `--deployment NAME`): one request row's derivation."""
    from rooflinec.engine.models import DeploymentError
    from rooflinec.engine.requests import RequestBatch, decode_sum, evaluate_request
    from rooflinec.prose.request_explain import explain_request

    if opts.symbolic:
        raise UsageError("--symbolic explains a case, not a request")
    name, given, batch = _request_of(opts)
    deployment = _deployment_of(opts)  # a bad degree stops the command before any work
    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    _unknown("model", opts.models, catalog.models)
    model = catalog.models[opts.models[0]]
    _unknown("device", opts.devices, catalog.devices)
    shape = _named_shape(model, name, given, opts.speculate)
    device, precision, deployment = _explained_at(opts, compiled, model, deployment)
    engine = compiled.model_engine
    figures = engine.devices.get(device.id)
    own = {s.precision for s in model.steps if s.precision}
    if figures is None or not {precision, *own} <= figures.peaks.keys():
        raise _no_peak(model, device, precision)
    try:
        result = evaluate_request(engine, model.id, device.id, precision, deployment, batch, shape)
        at = RequestBatch(model, precision, deployment, batch, shape)
        prefill = at.run(engine, at.prefill(), figures)
        decode = decode_sum(engine, figures, at)
    except DeploymentError as exc:
        raise UsageError(f"{_degrees(deployment)}: {exc.message}") from None
    talks = prefill.plan is not None and bool(prefill.plan.collectives)
    overlapped = prefill.time_overlapped if talks else None
    out.write(explain_request(catalog, result, prefill.time, overlapped, decode))
    return EXIT_OK


def _model_usage(opts: Options, command: str) -> None:
    """What `explain` and `solve` ask of a model pass before any work: no CASE beside it,
    and a phase with it."""
    if opts.case:
        raise UsageError(f"{command} takes a CASE or --model M --phase PH, not both")
    if not opts.models or not opts.phases:
        raise UsageError(f"{command} --model M needs --phase PH (and --phase needs --model)")


def _model_of(opts: Options) -> tuple[Compiled, Model]:
    """The compiled catalog and the model `--model` names, its `--phase` and any
    `--device` checked to exist."""
    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    _unknown("model", opts.models, catalog.models)
    model = catalog.models[opts.models[0]]
    _unknown(f"phase of model '{model.id}'", opts.phases, model.phases)
    _unknown("device", opts.devices, catalog.devices)
    return compiled, model


def _check_deployment(compiled: Compiled, model: Model, device: str, d: Deployment) -> None:
    """A usage error when the model cannot be split so, or the device cannot host it."""
    engine = compiled.model_engine
    problem = engine.deployment_problem(model, d)
    if problem is not None:
        raise UsageError(f"{_degrees(d)} is not a deployment of {problem}")
    problem = engine.fabric_problem(model, device, d)
    if problem is not None:
        raise UsageError(f"{_degrees(d)}: {problem}")


def _no_peak(model: Model, device: Device, precision: str) -> UsageError:
    needed = sorted({precision, *(s.precision for s in model.steps if s.precision)})
    return UsageError(
        f"device '{device.id}' has no peak for precision {', '.join(needed)}"
        f" (it has: {', '.join(device.peaks)})"
    )


def cmd_report(opts: Options, out: TextIO) -> int:
    from rooflinec.prose.report import NotMeasured, report

    catalog, result = _one_result(opts)
    try:
        out.write(report(catalog, result))
    except NotMeasured as exc:
        raise UsageError(str(exc)) from exc
    return EXIT_OK


def cmd_import(opts: Options, out: TextIO) -> int:
    if opts.kind == "serving":
        return _import_serving(opts, out)
    given = _serving_flags(opts)
    if given:
        raise UsageError(f"{given[0]} is a flag of `import serving`")
    if opts.kind == "hf-config":
        return _import_hf_config(opts, out)
    if opts.model_id is not None or opts.url is not None:
        raise UsageError("--id and --url name the model of `import hf-config`")
    return _import_measured(opts, out)


def _serving_flags(opts: Options) -> list[str]:
    """The flags only `import serving` takes that the command line gives."""
    flags = {
        "--model": opts.models,
        "--format": opts.serving_format,
        "--tp": opts.tp,
        "--pp": opts.pp,
        "--ep": opts.ep,
        "--chips": opts.chips,
        "--kv": opts.kv,
        "--input": opts.input,
        "--output": opts.output,
        "--concurrency": opts.concurrency,
        "--batch": opts.batch,
        "--engine": opts.engine,
    }
    return [flag for flag, value in flags.items() if value]


def _recovered(folder: Path) -> int | None:
    """Finish or undo the import a run killed while replacing files left (its journal),
    before the specs are read, so they are read whole: None when done (said on stderr),
    else the exit code of a journal that cannot be finished."""
    from rooflinec.importing.write import recover

    try:
        done = recover(folder)
    except OSError as exc:
        where = exc.filename or folder
        sys.stderr.write(
            one_line(f"{where}: error: cannot finish or roll back a killed import"
                     f" ({exc.strerror}): check the spec files") + "\n"
        )  # fmt: skip
        return EXIT_SPEC
    if done is not None:
        sys.stderr.write(done + "\n")
    return None


def _import_measured(opts: Options, out: TextIO) -> int:
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.importing import (
        Commas,
        ExportError,
        Lines,
        measurement_source,
        parse_matches,
        read_rows,
        resolve,
    )
    from rooflinec.importing.render import render
    from rooflinec.importing.sources import TOOLS
    from rooflinec.lints import current_date

    folder = specs_folder(opts.specs)
    if opts.write and (code := _recovered(folder)) is not None:
        return code
    catalog = catalog_or_raise(folder)
    matches = parse_matches(opts.matches)
    if opts.file is None or not opts.file.is_file():
        raise UsageError(f"export file not found: {opts.file}")
    path = str(opts.file)
    commas: Commas = (
        "decimal" if opts.decimal_comma else "thousands" if opts.thousands_comma else "ask"
    )
    skipped: dict[str, int] = {}
    try:
        # Read line by line: a long export is summed as it is read, never held whole.
        with open(opts.file, "rb") as handle:
            lines = Lines(handle, path)
            entries = resolve(
                read_rows(opts.kind, path, lines, commas),
                catalog,
                path,
                tool=TOOLS[opts.kind],
                device=opts.devices[0] if opts.devices else None,
                precision=opts.precisions[0] if opts.precisions else None,
                matches=matches if opts.kind != "csv" else None,
                skipped=skipped,
            )
    except ExportError as exc:
        for problem in exc.problems:
            sys.stderr.write(f"{problem}\n")
        return EXIT_SPEC
    except OSError as exc:
        sys.stderr.write(one_line(f"{path}: error: cannot read it ({exc.strerror})") + "\n")
        return EXIT_SPEC
    for name, launches in list(skipped.items())[:_NOTES]:
        sys.stderr.write(
            one_line(
                f"rooflinec: note: kernel {_cut(name)!r} ({launches} launch(es)) matches no"
                " --match: skipped"
            )
            + "\n"
        )
    if len(skipped) > _NOTES:
        sys.stderr.write(
            f"rooflinec: note: and {len(skipped) - _NOTES} more kernel(s) matching no --match\n"
        )
    if not entries:
        raise UsageError(f"{path}: no launch matched a case: nothing to import")
    sid, fields = measurement_source(opts.kind, path, current_date())
    source = (opts.source or sid, fields)
    if not opts.write:
        units = {e.case: catalog.precisions[e.precision].unit for e in entries}
        out.write(render(entries, source, units))
        return EXIT_OK
    from rooflinec.importing.write import write_entries

    return _written(
        lambda: write_entries(catalog, folder, entries, source),
        folder,
        out,
        f"measured entries added (source {source[0]})",
    )


def _written(write: Callable[[], list[Path]], folder: Path, out: TextIO, done: str) -> int:
    """Runs an import's `--write`; each file it changed on a line with `done`, or the one
    line of an OS error (nothing changed: the writes are all or nothing)."""
    try:
        changed = write()
    except OSError as exc:
        where = exc.filename or folder
        sys.stderr.write(
            one_line(f"{where}: error: cannot write ({exc.strerror}): no spec was changed") + "\n"
        )
        return EXIT_SPEC
    for file in changed:
        out.write(f"{file}: {done}\n")
    return EXIT_OK


_NOTES = 20  # kernels skipped by --match named one by one; the rest are counted

MAX_CONCURRENCY = 10**15  # the schema's largest whole number


def _import_serving(opts: Options, out: TextIO) -> int:
    """`import serving FILE --model M`: a model's serving results from a benchmark's
    output, printed as YAML or (`--write`) added to the model's spec in place."""
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.catalog import Deployment
    from rooflinec.importing.rows import ExportError
    from rooflinec.importing.serving import (
        MAX_BYTES,
        MAX_TEXT,
        ServingDefaults,
        default_source_id,
        detect_format,
        read_serving,
        render_serving,
        serving_source,
        text_problem,
    )
    from rooflinec.lints import current_date

    if opts.matches or opts.model_id is not None or opts.url is not None:
        raise UsageError("--match, --id and --url are not flags of `import serving`")
    if not opts.models:
        raise UsageError("import serving needs --model M: the model spec the results are for")
    typed = (("--tp", opts.tp), ("--pp", opts.pp), ("--ep", opts.ep), ("--chips", opts.chips))
    degrees = {flag: _degree(flag, text) for flag, text in typed}
    problem = Deployment(
        degrees["--tp"] or 1, degrees["--pp"] or 1, degrees["--ep"] or 1, degrees["--chips"]
    ).problem()
    if problem is not None:
        raise UsageError(f"not a deployment: {problem}")
    if opts.concurrency is not None and opts.batch is not None:
        raise UsageError(
            "--concurrency and --batch: a run keeps requests in flight or serves a static"
            " batch, not both"
        )
    engine = opts.engine
    if engine is not None and (wrong := text_problem(engine, MAX_TEXT)) is not None:
        raise UsageError(f"--engine {_shown(engine)} {wrong}")
    defaults = ServingDefaults(
        model=opts.models[0],
        device=opts.devices[0] if opts.devices else None,
        tp=degrees["--tp"],
        pp=degrees["--pp"],
        ep=degrees["--ep"],
        chips=degrees["--chips"],
        precision=opts.precisions[0] if opts.precisions else None,
        kv=opts.kv,
        input=None if opts.input is None else _tokens("--input", opts.input, 1),
        output=None if opts.output is None else _tokens("--output", opts.output, 1),
        concurrency=None
        if opts.concurrency is None
        else _whole("--concurrency", opts.concurrency, MAX_CONCURRENCY, "a concurrency"),
        batch=None
        if opts.batch is None
        else _whole("--batch", opts.batch, MAX_CONCURRENCY, "a batch"),
        engine=engine,
        source=opts.source,
        commas="decimal" if opts.decimal_comma else "thousands" if opts.thousands_comma else "ask",
    )
    if opts.file is None or not opts.file.is_file():
        raise UsageError(f"results file not found: {opts.file}")
    path = str(opts.file)
    try:
        with open(opts.file, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)  # a larger file is refused, never read whole
        fmt = detect_format(path, data, opts.serving_format)
        read_serving(path, data, fmt, defaults)  # the file's own problems, before the specs
    except ExportError as exc:
        return _problems(exc)
    except OSError as exc:
        sys.stderr.write(one_line(f"{path}: error: cannot read it ({exc.strerror})") + "\n")
        return EXIT_SPEC
    folder = specs_folder(opts.specs)
    if opts.write and (code := _recovered(folder)) is not None:
        return code
    catalog = catalog_or_raise(folder)
    _known("model", opts.models, catalog.models)
    _known("device", opts.devices, catalog.devices)
    _known("precision", [*opts.precisions, *([opts.kv] if opts.kv else [])], catalog.precisions)
    model = catalog.models[defaults.model]
    try:  # again, the ids a plain CSV names checked against the catalog
        entries = read_serving(path, data, fmt, defaults, catalog)
    except ExportError as exc:
        return _problems(exc)
    sid = opts.source or default_source_id(fmt, path)
    # The source to add: none when --source names one of the spec's (cited as it is), or
    # when no entry cites it (a plain CSV's lines may each name one of the spec's).
    cited = opts.source is not None and sid in model.sources
    source = None
    if not cited and any(e["source"] == sid for e in entries):
        source = serving_source(fmt, path, current_date(), sid)
    if not opts.write:
        out.write(render_serving(entries, source))
        return EXIT_OK
    from rooflinec.importing.serving import write_serving

    return _written(
        lambda: write_serving(catalog, folder, model.id, entries, source),
        folder,
        out,
        f"serving results added (source {sid})",
    )


def _problems(exc: ExportError) -> int:
    """Each problem of an export on its line of stderr: exit 1."""
    for problem in exc.problems:
        sys.stderr.write(f"{problem}\n")
    return EXIT_SPEC


def _cut(name: str, limit: int = 120) -> str:
    """A kernel name as a note shows it: C++ template names run to thousands of characters."""
    return name if len(name) <= limit else name[:limit] + "…"


def cmd_solve(opts: Options, out: TextIO) -> int:
    from rooflinec.engine.solve_case import solve_case, to_data, to_text

    if opts.models or opts.phases:
        return _solve_model(opts, out)
    if not opts.case:
        raise UsageError("solve needs a CASE, or --model M --phase PH")
    given = [f for f, v in _DEGREE_FLAGS.items() if getattr(opts, v) is not None]
    if given:
        raise UsageError(f"{given[0]} is a degree of a model's deployment: solve --model M")
    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    precision = opts.precisions[0] if opts.precisions else None
    shape = None
    case = catalog.cases.get(opts.case)
    if case is not None and (case.grid is not None or opts.shape):
        shape = grid_shape(catalog, opts.case, opts.shape, required=False)
    answer = solve_case(catalog, opts.case, opts.devices[0], precision, opts.vary, shape=shape)
    if opts.format == "json":
        import json

        out.write(json.dumps(to_data(answer), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(to_text(catalog, answer))
    return EXIT_OK


_DEGREE_FLAGS = {"--tp": "tp", "--pp": "pp", "--ep": "ep", "--chips": "chips"}
_MODEL_VARY = ("tp", "b")


def _solve_model(opts: Options, out: TextIO) -> int:
    """`solve --model M --phase PH --device D [--precision P] --vary tp|b`, the rest of
    the deployment held (`--vary tp`) or given (`--vary b`)."""
    from rooflinec.catalog import Deployment

    _model_usage(opts, "solve")
    if opts.shape:
        raise UsageError("--shape picks a shape of a grid case, not of a model")
    if opts.vary not in _MODEL_VARY:
        raise UsageError(
            f"solve --model varies tp (the tensor-parallel degree) or b (the batch),"
            f" not {opts.vary[:40]!r}"
        )
    if opts.vary == "tp" and opts.tp is not None:
        raise UsageError("--vary tp varies the degree --tp gives: leave --tp out")
    deployment = _deployment_of(opts)  # a bad degree stops the command before any work
    compiled, model = _model_of(opts)
    catalog = compiled.catalog
    device = catalog.devices[opts.devices[0]]
    precision = opts.precisions[0] if opts.precisions else model.precision
    _unknown("precision", [precision], catalog.precisions)
    needed = {precision, *(s.precision for s in model.steps if s.precision)}
    if not needed <= device.peaks.keys():
        raise _no_peak(model, device, precision)
    phase = opts.phases[0]
    if opts.vary == "tp":
        from rooflinec.engine.solve_model import sweep_tp
        from rooflinec.outputs.solve_model import sweep_data, sweep_text

        held = Deployment(1, deployment.pp, deployment.ep, deployment.chips)
        sweep = sweep_tp(compiled, model.id, phase, device.id, precision, held)
        return _answer(opts, out, sweep_data(sweep), lambda: sweep_text(catalog, sweep))
    from rooflinec.engine.solve_model import batch_limit
    from rooflinec.outputs.solve_model import batch_data, batch_text

    if "b" not in model.phases[phase]:
        raise UsageError(f"phase '{phase}' of model '{model.id}' binds no batch b to vary")
    _check_deployment(compiled, model, device.id, deployment)
    limit = batch_limit(compiled, model.id, phase, device.id, precision, deployment)
    return _answer(opts, out, batch_data(limit), lambda: batch_text(catalog, limit))


def _answer(opts: Options, out: TextIO, data: dict[str, object], text: Callable[[], str]) -> int:
    if opts.format == "json":
        import json

        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(text())
    return EXIT_OK


def cmd_diff(opts: Options, out: TextIO) -> int:
    from rooflinec.pipeline import compiled_at, default_base, repo_root
    from rooflinec.prose import diff

    folder = specs_folder(opts.specs)
    base = opts.base or default_base(repo_root(folder))
    new = compiled_or_raise(folder)
    past = compiled_at(folder, base)
    commit = past.commit
    label = base if base == commit[:12] else f"{base} ({commit[:12]})"
    old = past.compiled
    if not past.builds:
        sys.stderr.write(
            f"rooflinec: note: the specs at {label} do not build; every spec is shown as added\n"
        )
    result = diff.diff_compiled(old, new, label)
    if opts.format == "json":
        import json

        out.write(json.dumps(diff.to_data(result), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(diff.to_markdown(result))
    if opts.require_bump:
        problems = diff.version_bumps(old.catalog if old else None, new.catalog)
        for problem in problems:
            sys.stderr.write(f"{problem}\n")
        if problems:
            return EXIT_SPEC
    return EXIT_OK


def cmd_publish(opts: Options, out: TextIO) -> int:
    require_extra("rooflinec publish", "site")
    from rooflinec.site.publish import publish

    previous = publish(
        opts.config, opts.version, list(opts.aliases), branch=opts.branch, push=opts.push
    )
    if previous is None:
        since = " (first version)"
    elif previous.commit:
        since = f" (changes since {previous.version})"
    else:
        since = f" (the commit of {previous.version} is unknown: no changes listed)"
    out.write(f"published {opts.version} to {opts.branch}{since}\n")
    return EXIT_OK


def cmd_export(opts: Options, out: TextIO) -> int:
    from rooflinec.assemble import catalog_or_raise
    from rooflinec.outputs.catalog import catalog_csv, catalog_json

    catalog = catalog_or_raise(specs_folder(opts.specs))
    writer = catalog_json if opts.format == "json" else catalog_csv
    out.write(writer(catalog))
    return EXIT_OK


def cmd_build(opts: Options, out: TextIO) -> int:
    require_extra("rooflinec build", "site")
    from rooflinec.site.build import build_site

    folder = specs_folder(opts.specs)
    target = opts.out if opts.out is not None else DEFAULT_SITE
    seconds = build_site(folder, target, verbose=opts.verbose)
    out.write(f"site of {folder} written to {target} in {seconds:.1f} s\n")
    return EXIT_OK


def cmd_serve(opts: Options, out: TextIO) -> int:
    require_extra("rooflinec serve", "site")
    from rooflinec.site.build import serve_site

    serve_site(specs_folder(opts.specs), opts.dev_addr or DEFAULT_ADDRESS)
    return EXIT_OK


MAX_RATE = 10**9  # tokens/s per user


def _tokens(flag: str, text: str, least: int) -> int:
    """A request's token count as typed: a whole number from `least`."""
    from rooflinec.catalog import MAX_REQUEST_TOKENS

    most = MAX_REQUEST_TOKENS
    if not re.fullmatch(r"[1-9][0-9]{0,8}", text) or not least <= int(text) <= most:
        raise UsageError(
            f"{flag} {_shown(text)} is not a token count: a whole number from {least} to {most:,}"
        )
    return int(text)


def _user_rate(text: str) -> Fraction:
    """`--min-user-rate` as typed: tokens/s per user, a plain decimal number above 0."""
    if not re.fullmatch(r"[0-9]{1,10}(\.[0-9]{1,10})?", text) or Fraction(text) == 0:
        raise UsageError(
            f"--min-user-rate {_shown(text)} is not a rate: tokens/s per user, a number"
            f" above 0 (as 20 or 12.5)"
        )
    rate = Fraction(text)
    if rate > MAX_RATE:
        raise UsageError(f"--min-user-rate {_shown(text)}: at most {MAX_RATE:,} tokens/s")
    return rate


def _time_target(flag: str, text: str | None) -> Fraction | None:
    from rooflinec.quantities import Dimension, QuantityError, parse_cli_quantity

    if text is None:
        return None
    try:
        return parse_cli_quantity(text, Dimension.TIME).value
    except QuantityError as exc:
        raise UsageError(f"{flag} {_shown(text)}: {exc.message}") from None


def _prices(opts: Options, devices: Collection[str]) -> dict[str, Fraction]:
    """`--price D=2.5USD/h`, each a known device once: USD per chip-hour."""
    from rooflinec.quantities import Dimension, QuantityError, parse_cli_quantity

    prices: dict[str, Fraction] = {}
    for text in opts.prices:
        device, sep, price = text.partition("=")
        if not sep or not device or not price:
            raise UsageError(
                f"--price {_shown(text)}: expected DEVICE=PRICE per chip-hour, as"
                " nvidia-h100-sxm=2.5USD/h"
            )
        if device not in devices:
            raise UsageError(f"--price {_shown(text)}: unknown device {_shown(device)}")
        if device in prices:
            raise UsageError(f"--price: device '{device}' is priced twice")
        try:
            value = parse_cli_quantity(price, Dimension.PRICE).value
        except QuantityError as exc:
            raise UsageError(f"--price {_shown(text)}: {exc.message}") from None
        prices[device] = value * 3600
    return prices


def _known(kind: str, wanted: Iterable[str], known: Collection[str]) -> None:
    """`_unknown`, for names typed on `plan`'s command line: the name cut short, and the
    known names a few at most, so the error stays one short line."""
    for item in wanted:
        if item not in known:
            names = sorted(known)
            shown = ", ".join(names[:6]) + (f", … ({len(names)} in all)" if len(names) > 6 else "")
            raise UsageError(f"unknown {kind} {_shown(item)} (known: {shown or 'none'})")


def _plan_checks(opts: Options) -> None:
    """What `plan` checks of its options before it loads anything."""
    if opts.request is not None and (opts.input is not None or opts.output is not None):
        raise UsageError("plan takes --request ID or --input I --output O, not both")
    if opts.request is None and (opts.input is None or opts.output is None):
        raise UsageError("plan needs --input I and --output O (or --request ID)")
    if opts.input is not None:
        _tokens("--input", opts.input, 1)
    if opts.output is not None:
        # Tokens per user are 1 / itl: a request of one output token has no decode pass.
        _tokens("--output", opts.output, 2)
    _speculation(opts.speculate)


def cmd_plan(opts: Options, out: TextIO) -> int:
    from rooflinec.catalog import RequestShape
    from rooflinec.engine.frontier import Targets, plan
    from rooflinec.outputs.plan import plan_csv, plan_json, plan_text

    _plan_checks(opts)
    targets = Targets(
        None if opts.min_user_rate is None else _user_rate(opts.min_user_rate),
        _time_target("--max-ttft", opts.max_ttft),
        _time_target("--max-latency", opts.max_latency),
        _degree("--max-chips", opts.max_chips),
    )
    compiled = compiled_or_raise(specs_folder(opts.specs))
    catalog = compiled.catalog
    _known("model", opts.models, catalog.models)
    model = catalog.models[opts.models[0]]
    _known("device", opts.devices, catalog.devices)
    prices = _prices(opts, catalog.devices)
    precision = opts.precisions[0] if opts.precisions else model.precision
    _known("precision", [precision], catalog.precisions)
    if opts.request is not None:
        shape = _named_shape(model, opts.request, None, opts.speculate)
        if shape.output < 2:
            raise UsageError(
                f"request '{opts.request}' has {shape.output} output token: tokens/s per user"
                " need a decode pass (2 or more)"
            )
    else:
        assert opts.input is not None and opts.output is not None
        shape = RequestShape(int(opts.input), int(opts.output), _speculation(opts.speculate))
    devices = list(dict.fromkeys(opts.devices)) or list(catalog.devices)
    objective = opts.objective
    assert objective in ("tokens-per-chip", "cost", "energy")
    answer = plan(
        compiled.model_engine,
        model.id,
        shape,
        devices,
        precision,
        targets,
        objective,  # type: ignore[arg-type]
        prices,
    )
    specs = None if opts.specs is None else str(opts.specs)
    if opts.format == "json":
        out.write(plan_json(answer, specs))
    elif opts.format == "csv":
        out.write(plan_csv(answer, specs))
    else:
        out.write(plan_text(catalog, answer, specs))
    return EXIT_OK


def _import_hf_config(opts: Options, out: TextIO) -> int:
    """A model spec from a Hugging Face config.json: printed, or written to models/ID.yaml."""
    from rooflinec.importing import hf_config
    from rooflinec.lints import current_date

    if opts.model_id is None or opts.url is None:
        raise UsageError("import hf-config needs --id ID and --url URL (the config's address)")
    if opts.matches or opts.source or opts.devices or opts.precisions:
        raise UsageError("import hf-config takes FILE, --id, --url, --specs and --write")
    if opts.file is None or not opts.file.is_file():
        raise UsageError(f"config file not found: {opts.file}")
    folder = specs_folder(opts.specs)
    target = folder / "models" / f"{opts.model_id}.yaml"
    if opts.write and (target.exists() or target.is_symlink()):
        raise UsageError(f"{target} exists: import hf-config never writes over a spec")
    try:
        imported = hf_config.interpret(opts.file)
    except hf_config.ConfigError as exc:
        sys.stderr.write(one_line(str(exc)) + "\n")
        return EXIT_SPEC
    text = hf_config.render(imported, opts.model_id, opts.url, current_date().isoformat())
    problem = hf_config.checked_spec(folder, opts.model_id, text)
    if problem is not None:
        sys.stderr.write(
            one_line(f"{opts.file}:1: error: the spec written from it does not check: {problem}")
            + "\n"
        )
        return EXIT_SPEC
    if not opts.write:
        out.write(text)
        return EXIT_OK
    try:
        hf_config.write_spec(target, text)
    except FileExistsError:
        raise UsageError(f"{target} exists: import hf-config never writes over a spec") from None
    except OSError as exc:
        sys.stderr.write(one_line(f"{target}: error: cannot write it ({exc.strerror})") + "\n")
        return EXIT_SPEC
    sys.stderr.write(f"wrote {target}\n")
    return EXIT_OK
