"""Reading delimited text files row by row, with line numbers and clear messages."""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator
from pathlib import Path

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

    Lines are decoded one by one so a non-UTF-8 byte is reported with its line number.
    """
    handle = gzip.open(path, "rb") if is_gzip(path, problems) else open(path, "rb")
    with handle:
        for number, raw in enumerate(handle, start=1):
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

    Raises (through ``problems.fail``) when the header lacks a required column or the file is
    not tab-separated; reports rows whose field count differs from the header's.
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
            header_number, missing[0], f"missing required column(s) {missing}; the header has {header}"
        )
    for number, line in lines:
        if not line.strip():
            continue
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(fields) != len(header):
            problems.report(
                number, None,
                f"has {len(fields)} fields but the header has {len(header)} (truncated line or stray tab)",
            )
            continue
        yield number, dict(zip(header, fields, strict=True))


def valid_pmid(value: str) -> bool:
    """A PubMed id is 1 to 9 digits."""
    return value.isdigit() and 0 < len(value) <= 9
