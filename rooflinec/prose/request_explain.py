"""The derivation of one request row, written for a reviewer to check by hand.

The request and its deployment; the prefill pass (the time to the first token); the
decode passes summed, piece by piece where the pass time is a polynomial in L; the
latency; the rates; the cost with its price's provenance; the energy at board power;
and the memory ledger at the request's peak. Figures are substituted in each formula.
"""

from __future__ import annotations

from fractions import Fraction

from rooflinec.catalog import ONE_CHIP, Catalog
from rooflinec.engine.requests import DecodeSum, Piece, RequestResult
from rooflinec.formatting import format_number, format_si
from rooflinec.outputs.model_rows import needs_text

__all__ = ["explain_request"]

#: The most pieces of a decode sum written out, one line each.
MAX_PIECES = 24


def _exact(value: Fraction) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{value.numerator:,}/{value.denominator:,} ≈ {format_number(value, 7)}"


def _poly(poly: tuple[Fraction, ...]) -> str:
    """`t(L) = 2.1 ms + 3.4 ns × L`: a piece's pass time, its coefficients in SI units."""
    if not poly:
        return "0 s"
    terms = []
    for k, c in enumerate(poly):
        if c == 0:
            continue
        power = "" if k == 0 else " × L" if k == 1 else f" × L^{k}"
        terms.append(f"{format_si(abs(c), 's')}{power}")
        if c < 0:
            terms[-1] = "-" + terms[-1]
    return " + ".join(terms).replace("+ -", "- ")


def _piece(p: Piece) -> str:
    passes = p.last - p.first + 1
    span = f"L = {p.first:,}" if passes == 1 else f"L = {p.first:,} .. {p.last:,}"
    many = "pass" if passes == 1 else "passes"
    return (
        f"     {span} ({passes:,} {many}): t(L) = {_poly(p.poly)};"
        f" sum = {format_si(p.total, 's', digits=6)}"
    )


def _decode_lines(r: RequestResult, decode: DecodeSum) -> list[str]:
    drafted = r.draft_tokens or 0
    first, last = r.input + 1 + drafted, r.input + r.output - 1 + drafted
    if r.speculation is None:
        out = [
            f"2. Decode passes: output - 1 = {r.output - 1:,}, pass j at b = {r.batch:,}, s = 1,"
            f" L = input + j = {first:,} .. {last:,}"
        ]
    else:
        out = [
            f"2. Decode by speculation: k = {drafted} drafted tokens, acceptance"
            f" {format_number(r.speculation.acceptance, 6)}; each verify pass yields"
            f" (1 - a^(k+1)) / (1 - a) = {format_number(r.tokens_per_pass, 6)} tokens",
            f"   output - 1 = {r.output - 1:,} verify passes' places, pass j at b ="
            f" {r.batch:,}, s = k + 1 = {drafted + 1}, L = input + j + k = {first:,} .."
            f" {last:,}; each token costs 1 / {format_number(r.tokens_per_pass, 6)} of the"
            " pass at its place (the draft's own work is not counted)",
        ]
    if decode.closed:
        out.append(
            "   closed form: on each piece every step keeps one ceiling, so the pass time is"
            " a polynomial in L, summed as a series (the pieces end beside the roots of the"
            " ceilings' differences, found exactly)"
        )
        for p in decode.pieces[:MAX_PIECES]:
            out.append(_piece(p))
        if len(decode.pieces) > MAX_PIECES:
            out.append(f"     ... {len(decode.pieces) - MAX_PIECES:,} more pieces")
    else:
        out.append(
            "   evaluated one by one: a formula is not a polynomial in L (a window min(L, W),"
            " a ceiling over L), so each pass is the engine's own"
        )
        if decode.pieces:
            out.append(f"     L = {first:,}: {format_si(decode.pieces[0].total, 's', digits=6)}")
            out.append(f"     L = {last:,}: {format_si(decode.pieces[-1].total, 's', digits=6)}")
    assert r.itl is not None
    out.append(f"   sum = {_exact(decode.total)} s")
    if r.speculation is None:
        out.append(
            f"   itl = sum / (output - 1) = {format_si(decode.total, 's', digits=6)}"
            f" / {r.output - 1:,} = {format_si(r.itl, 's', digits=6)}"
        )
    else:
        out.append(
            f"   itl = sum / tokens_per_pass / (output - 1) ="
            f" {format_si(decode.total, 's', digits=6)} / {format_number(r.tokens_per_pass, 6)}"
            f" / {r.output - 1:,} = {format_si(r.itl, 's', digits=6)}"
        )
    return out


def _cost_lines(catalog: Catalog, r: RequestResult, price: Fraction | None) -> list[str]:
    device = catalog.devices.get(r.device)
    quoted = None if device is None else device.price
    if r.usd_per_million_tokens is None:
        return ["6. Cost: no quoted price (a reader may supply one)"]
    if r.price_source == "reader":
        assert price is not None
        label, per_hour = "the reader's price", price
    else:
        assert quoted is not None
        label, per_hour = f"quoted, {quoted.date} ({quoted.source})", quoted.per_hour
    return [
        f"6. Cost ({label})",
        "   usd_per_million_tokens = price × chips / 3600 / tokens_per_second × 10^6"
        f" = {format_number(per_hour, 6)} USD/h × {r.chips:,} / 3600"
        f" / {format_number(r.tokens_per_second, 6)} × 10^6"
        f" = ${format_number(r.usd_per_million_tokens, 6)} per million tokens",
        "   (over the whole request's tokens per second, prefill included; llm-analysis"
        " divides by the decode rate alone)",
    ]


def _energy_lines(catalog: Catalog, r: RequestResult) -> list[str]:
    device = catalog.devices.get(r.device)
    power = None if device is None else device.power
    if r.joules_per_token is None or power is None:
        return ["7. Energy: the device gives no board power"]
    tokens = r.batch * r.output * r.deployment.dp
    assert r.tokens_per_second_per_kw is not None
    return [
        "7. Energy (at board power: a reference figure, not a bound)",
        f"   power = {format_si(power.per_chip, 'W')} per chip ({power.kind})",
        "   joules_per_token = power × chips × latency / (b × output × dp)"
        f" = {format_si(power.per_chip, 'W')} × {r.chips:,}"
        f" × {format_si(r.latency, 's', digits=6)} / {tokens:,}"
        f" = {format_si(r.joules_per_token, 'J', digits=6)}",
        "   tokens_per_second_per_kw = tokens_per_second / (power × chips in kW)"
        f" = {format_number(r.tokens_per_second_per_kw, 6)} tokens/s per kW",
        "   (the power bounds the draw from above and the time the duration from below, so"
        " the product bounds neither)",
    ]


def explain_request(
    catalog: Catalog,
    r: RequestResult,
    prefill_time: Fraction,
    prefill_overlapped: Fraction | None,
    decode: DecodeSum,
    price: Fraction | None = None,
) -> str:
    """The derivation of `r`: its prefill pass's times (`time`, `time_overlapped`), the
    decode passes' sum `decode`, and the reader's `price` (USD per chip-hour) if given."""
    d = r.deployment
    lines = [
        f"Request of model {r.model} on {r.device} at {r.precision}",
        f"   batch b = {r.batch:,} requests of input {r.input:,} and output {r.output:,} tokens",
    ]
    if d != ONE_CHIP:
        lines.append(
            f"   deployment: tp = {d.tp:,}, pp = {d.pp:,}, ep = {d.ep:,}, dp = {d.dp:,};"
            f" chips = {d.total:,}"
        )
    lines += [
        "   each pass's time is its time overlapped (its time where it has no collective);"
        " a static batch: no micro-batching, pp adds capacity, not throughput",
        "",
        f"1. Time to first token: the prefill pass at b = {r.batch:,}, s = L = {r.input:,}",
        f"   time = {format_si(prefill_time, 's', digits=6)}",
    ]
    if prefill_overlapped is not None:
        lines.append(
            "   time overlapped = max(the steps on memory rooflines, the collectives)"
            f" = {format_si(prefill_overlapped, 's', digits=6)}"
        )
    lines += [f"   ttft = {format_si(r.ttft, 's', digits=6)}", ""]
    if r.itl is None:
        lines += ["2. Decode passes: none (output = 1: the prefill yields the only token)", ""]
    else:
        lines += [*_decode_lines(r, decode), ""]
    lines.append("3. Latency")
    if r.itl is None:
        lines.append(f"   latency = ttft = {format_si(r.latency, 's', digits=6)}")
    else:
        lines.append(
            f"   latency = ttft + (output - 1) × itl = {format_si(r.ttft, 's', digits=6)}"
            f" + {r.output - 1:,} × {format_si(r.itl, 's', digits=6)}"
            f" = {format_si(r.latency, 's', digits=6)}"
        )
    lines += ["", "4. Rates"]
    if r.tokens_per_second_per_user is not None:
        lines.append(
            "   tokens_per_second_per_user = 1 / itl"
            f" = {format_number(r.tokens_per_second_per_user, 6)} tokens/s"
        )
    lines += [
        "   tokens_per_second = b × output / latency × dp"
        f" = {r.batch:,} × {r.output:,} / {format_si(r.latency, 's', digits=6)} × {d.dp:,}"
        f" = {format_number(r.tokens_per_second, 6)} tokens/s",
        "   tokens_per_second_per_chip = tokens_per_second / chips"
        f" = {format_number(r.tokens_per_second, 6)} / {r.chips:,}"
        f" = {format_number(r.tokens_per_second_per_chip, 6)} tokens/s",
        "",
        "5. Memory at the request's peak (the prefill's activations, the last pass's"
        f" {r.input + r.output - 1 + (r.draft_tokens or 0):,} keys)",
    ]
    if r.fits is None:
        lines.append("   no ledger (or no capacity): the fit is unknown")
    elif r.fits:
        lines.append("   fits")
    else:
        lines.append(f"   {needs_text(r.needs_chips)}")
    lines += ["", *_cost_lines(catalog, r, price), "", *_energy_lines(catalog, r)]
    return "\n".join(lines) + "\n"
