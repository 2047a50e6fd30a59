"""Reading delimited text files row by row, with line numbers and clear messages."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from curation.ingest.limits import MAX_FIELD_CHARS
from curation.ingest.problems import Problems

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path, problems: Problems) -> bool:
    """Whether a file is gzip-compressed, by its magic bytes (a ".gz" already unpacked still reads).

    Raises (through ``problems.fail``) when the file is missing or unreadable.
    """
    try:
        with Path(path).open("rb") as probe:
            return probe.read(2) == GZIP_MAGIC
    except FileNotFoundError:
        raise problems.fail(None, None, "file not found") from None
    except OSError as exc:
        raise problems.fail(None, None, f"cannot read the file: {exc.strerror or exc}") from None


def open_text_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """Yield (line number, decoded line without newline), gzip-aware.

    Lines are decoded one by one so a non-UTF-8 byte is reported with its line number. A broken
    or truncated gzip stream fails the whole file (through ``problems.fail``), lenient or not.
    """
    compressed = is_gzip(path, problems)
    handle = gzip.open(path, "rb") if compressed else open(path, "rb")
    number = 0
    with handle:
        lines = iter(handle)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                return
            except (OSError, EOFError, zlib.error) as exc:
                what = "the gzip stream is broken or truncated" if compressed else "cannot read the file"
                raise problems.fail(number + 1, None, f"{what} ({exc}); download or compress it again") from None
            number += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.report(
                    number, None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "re-save the file as UTF-8"
                )
                continue
            yield number, line.rstrip("\r\n")


def read_tsv(path: Path, problems: Problems, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) for a tab-separated file with a header line.

    Raises (through ``problems.fail``) when the header lacks a required column, names a column
    twice, or the file is not tab-separated; reports rows whose field count differs from the
    header's and fields longer than :data:`~curation.ingest.limits.MAX_FIELD_CHARS`. Fields are
    split on tabs only (no quoting), as CIViC and UniProt export them.
    """
    lines = open_text_lines(path, problems)
    try:
        header_number, header_line = next(lines)
    except StopIteration:
        raise problems.fail(1, None, "the file is empty; expected a tab-separated header line") from None
    header_line = header_line.lstrip("\ufeff")
    header = header_line.split("\t")
    if len(header) == 1:
        guess = next((d for d in (",", ";", "|") if d in header_line), None)
        hint = f" (it looks '{guess}'-separated)" if guess else ""
        raise problems.fail(header_number, None, f"not tab-separated{hint}; export the file as TSV")
    missing = [c for c in required if c not in header]
    if missing:
        raise problems.fail(
            header_number, missing[0],
            f"missing required column(s) {missing}; the header has {header}. Check the format chosen for "
            "this file, or rename the columns",
        )
    repeated = next((c for position, c in enumerate(header) if c and c in header[:position]), None)
    if repeated is not None:
        first, second = [i + 1 for i, c in enumerate(header) if c == repeated][:2]
        raise problems.fail(
            header_number, repeated,
            f"the header names column '{repeated}' twice (columns {first} and {second}); rename or remove one",
        )
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            problems.report(
                number, None,
                f"has {len(fields)} fields but the header has {len(header)} (truncated line or stray tab); "
                "fix the line or export the file again",
            )
            continue
        long = next((i for i, f in enumerate(fields) if len(f) > MAX_FIELD_CHARS), None)
        if long is not None:
            problems.report(
                number, header[long],
                f"has {len(fields[long]):,} characters, more than the limit of {MAX_FIELD_CHARS:,} for one field "
                "(a missing line break or a stray quote in the export?)",
            )
            continue
        yield number, dict(zip(header, fields, strict=True))


def ascii_digits(value: str) -> bool:
    """Whether ``value`` is one or more of 0-9. ``str.isdigit`` alone also passes other scripts' digits
    ("١٢٣", "１２３") and superscripts ("²³", which ``int`` then refuses)."""
    return value.isascii() and value.isdigit()


def valid_pmid(value: str) -> bool:
    """A PubMed id is 1 to 9 ASCII digits (so "١٢٣" is not a second spelling of 123)."""
    return ascii_digits(value) and 0 < len(value) <= 9
