"""Reading a click log file (the rules it is held to are
:mod:`rsrank.clicks.log`'s): blocks of whole lines, each at most
:data:`~rsrank.clicks.log.MAX_LINE` characters, split at their commas
until the first quote, from there on read by :mod:`csv`; ids stored once
each as codes into their names; every value checked as it is read, a
problem one line naming the file, the line and the fix.
"""

import bisect
import contextlib
import csv
import gc
import itertools
import operator

import numpy as np

from .._kernels import csvrows
from ..reading._text import LetorFormatError, open_text, reading
from .log import (AGGREGATED_COLUMNS, BATCH, DIGITS, MAX_LINE, NUMBER_BOUNDS, NUMBER_TYPES,
                  SESSION_COLUMNS,
                  ClickLog, Ids, LogError, allowed_values, check_log, checked_numbers,
                  first_bad_id, id_problem)

__all__ = ["read_click_log"]


class _LineNumbers:
    """The file line of each row read, kept as runs: a batch of rows on
    consecutive lines (the usual case) is its first row and first line, not
    a number per row."""

    def __init__(self):
        self.starts, self.firsts, self.numbers, self.rows = [], [], [], 0

    def append(self, numbers):
        numbers = np.asarray(numbers, dtype=np.int64)
        if not len(numbers):
            return
        consecutive = int(numbers[-1] - numbers[0]) == len(numbers) - 1
        self.starts.append(self.rows)
        self.firsts.append(int(numbers[0]))
        self.numbers.append(None if consecutive else numbers)
        self.rows += len(numbers)

    def __getitem__(self, row):
        """The line of row ``row``."""
        run = bisect.bisect_right(self.starts, row) - 1
        numbers = self.numbers[run]
        offset = row - self.starts[run]
        return self.firsts[run] + offset if numbers is None else int(numbers[offset])


class _Columns:
    """The columns of a log file's form, read a batch of rows at a time:
    ids as codes into their distinct names, numbers as int64 arrays, each
    checked as it is read."""

    def __init__(self, form, where):
        self.form, self.where = form, where
        self.tables = {column: {} for column in form if column not in NUMBER_BOUNDS}
        self.names = {column: [] for column in self.tables}
        self.parts = {column: [] for column in form}
        self.rows = 0

    def add(self, texts):
        """One batch: per column of the form, its rows' texts (stripped)."""
        self._add({column: (self._ids if column in self.tables else self._numbers,
                            (column, column_texts))
                   for column, column_texts in texts.items()},
                  len(next(iter(texts.values()))))

    def add_split(self, ids, numbers, rows):
        """One batch split as bytes (:func:`_split_bytes`): per id column,
        ``(names, first, inverse)`` (its distinct ids, the row where each
        is first, each row's), per number column its values."""
        self._add({**{column: (self._coded, (column, *found)) for column, found in ids.items()},
                   **{column: (checked_numbers, (column, values))
                      for column, values in numbers.items()}}, rows)

    def _add(self, readers, rows):
        for column, (read, arguments) in readers.items():
            try:
                values = read(*arguments)
            except LogError as error:
                raise LogError(self.rows + error.row, error.problem) from None
            self.parts[column].append(values.astype(NUMBER_TYPES.get(column, np.int32)))
        self.rows += rows

    def _coded(self, column, names, first, inverse):
        """Codes of a batch's ids given as distinct names (``first``: the
        row where each is first, ``inverse``: each row's name): a name seen
        before keeps its code, new ones take the next codes in the order
        the rows first show them, once :func:`first_bad_id` finds nothing
        wrong with any of them."""
        table, known = self.tables[column], self.names[column]
        codes = np.fromiter(map(table.get, names, itertools.repeat(-1)), np.int64, len(names))
        new = np.argsort(first, kind="stable")
        new = new[codes[new] < 0]
        if len(new):
            fresh = [names[i] for i in new]
            bad = first_bad_id(fresh)
            if bad is not None:
                raise LogError(int(first[new[bad]]), id_problem(column, fresh[bad]))
            start, room = len(known), _MAX_CODES - len(known)
            if len(new) > room:
                raise LogError(int(first[new[room]]), f"more than {_MAX_CODES:,} distinct "
                               f"{column} ids: split the log")
            codes[new] = np.arange(start, start + len(new))
            table.update(zip(fresh, range(start, start + len(new))))
            known.extend(fresh)
        return codes[inverse]

    def _ids(self, column, texts):
        """Codes of a batch's ids given as each row's text (as :meth:`_coded`)."""
        index = {}
        inverse = np.fromiter((index.setdefault(text, len(index)) for text in texts), np.int64,
                              len(texts))
        first = np.unique(inverse, return_index=True)[1]  # names numbered as first seen
        return self._coded(column, list(index), first, inverse)

    def _numbers(self, column, texts):
        joined = "\n".join(texts)
        if joined.count("\n") != len(texts) - 1 or not DIGITS.fullmatch(joined):
            row = next(row for row, text in enumerate(texts) if not DIGITS.fullmatch(text))
            text = texts[row]
            if not text:
                raise LogError(row, f"the {column} is empty: give {allowed_values(column)}")
            shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}..."
            raise LogError(row, f"{column} {shown} is not {allowed_values(column)}")
        return checked_numbers(column, np.array(texts, dtype=np.int64))

    def log(self):
        """The :class:`ClickLog` of the rows read, checked together."""
        columns, self.tables = {}, None  # each id's code is known: the lookups go
        for column in self.form:
            parts = self.parts.pop(column)  # each column's batches go once it is whole
            values = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            del parts
            if column in self.names:
                names = np.empty(len(self.names[column]), dtype=object)
                names[:] = self.names.pop(column)
                values = Ids(names, values)
            columns[column] = values
        check_log(self.form, columns, self.where)
        values = [columns.pop(column) for column in self.form]
        if self.form == SESSION_COLUMNS:
            return ClickLog.from_sessions(*values)
        return ClickLog.from_counts(*values)


#: the most distinct ids of one column: their codes are int32
_MAX_CODES = np.iinfo(np.int32).max


def _blocks(handle, path):
    """``(number of the first line, lines)`` of a file, about 4 MB of whole
    lines at a time (without their line breaks), each line at most
    :data:`MAX_LINE` characters: a file without line breaks is refused, not
    read whole."""
    number, tail = 1, ""
    while True:
        chunk = handle.read(_BLOCK)
        lines = (tail + chunk).split("\n")
        tail = lines.pop() if chunk else ""
        if chunk and len(tail) > MAX_LINE + 1:
            raise LetorFormatError(path, number + len(lines), _too_long())
        if lines and max(map(len, lines)) > MAX_LINE:  # a CRLF line keeps its \r here
            too_long = next((i for i, line in enumerate(lines)
                             if len(line.rstrip("\r")) > MAX_LINE), None)
            if too_long is not None:
                raise LetorFormatError(path, number + too_long, _too_long())
        if not chunk:
            if lines and lines != [""]:
                yield number, lines
            return
        if lines:
            yield number, lines
            number += len(lines)


def _too_long():
    return f"longer than {MAX_LINE:,} characters: not a line of a click log (is it a CSV file?)"


#: characters read at a time
_BLOCK = 1 << 22


def read_click_log(path):
    """The :class:`ClickLog` of a CSV click log in either form (see the
    module's docstring), its header telling which; every value checked.
    Lines without a quote are split at their commas a block at a time;
    from the first quote on, the rows are read by :mod:`csv`."""
    lines = _LineNumbers()

    def where(row):
        return f"line {lines[row]}"

    with open_text(path) as handle, reading(path), _collecting_later():
        blocks = _blocks(handle, path)
        try:
            number, block = next(blocks, (1, []))
            if not block:
                _header(path, None)
            form, where_column, width = _header(path, next(csv.reader(block[:1]), []))
            columns = _Columns(form, where)
            rest = itertools.chain([(number + 1, block[1:])], blocks)
            for number, block in rest:
                if any(map(_HOLDS_QUOTE, block)):
                    _quoted(path, itertools.chain([(number, block)], rest), width,
                            where_column, columns, lines)
                    break
                _plain(path, number, block, width, where_column, columns, lines)
            return columns.log()
        except LogError as error:
            raise LetorFormatError(path, lines[error.row],
                                   error.problem) from None


_HOLDS_QUOTE = operator.methodcaller("__contains__", '"')


@contextlib.contextmanager
def _collecting_later():
    """Python's cycle collector paused while a log's rows are split: it
    would scan the millions of short-lived lists and strings, which hold no
    cycles, many times over (the read took twice as long)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plain(path, number, block, width, where_column, columns, lines):
    """The rows of a block of lines without quotes, split at their commas."""
    if _split_bytes(number, block, width, where_column, columns, lines):
        return
    fields = [line.split(",") for line in block]
    numbers = number + np.arange(len(block), dtype=np.int64)
    widths = np.fromiter(map(len, fields), np.int64, len(fields))
    short = np.flatnonzero(widths < width)
    for row in short:
        if block[row].strip():
            raise LetorFormatError(path, int(numbers[row]), f"{widths[row]} fields where the "
                                   f"header has {width}")
    if len(short):
        kept = widths >= width
        fields = list(itertools.compress(fields, kept))
        numbers = numbers[kept]
    if fields:
        lines.append(numbers)
        columns.add(_batch_texts(fields, where_column))


def _split_bytes(number, block, width, where_column, columns, lines):
    """Read a block of lines without quotes as bytes
    (:func:`rsrank._kernels.csvrows.split_fields`), each id column's
    distinct ids found by hashing; whether it could (else nothing is
    read: the block holds a byte outside printable ASCII, a field that is
    not digits where a number is due, a line that is short or too long, or
    two ids of one hash, and is read as text, where each problem is
    named)."""
    text = "\n".join(block)
    if not text.isascii():
        return False
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    id_columns = [column for column in columns.form if column in columns.tables]
    number_columns = [column for column in columns.form if column not in columns.tables]
    kinds = np.full(max(where_column.values()) + 1, -1, dtype=np.int64)
    for k, column in enumerate(id_columns):
        kinds[where_column[column]] = 2 * k
    for k, column in enumerate(number_columns):
        kinds[where_column[column]] = 2 * k + 1
    n = len(block)
    line = np.empty(n, dtype=np.int64)
    starts = np.empty((len(id_columns), n), dtype=np.int64)
    ends = np.empty_like(starts)
    numbers = np.empty((len(number_columns), n), dtype=np.int64)
    status, rows = csvrows.split_fields(buf, width, kinds, MAX_LINE, line, starts.T, ends.T,
                                        numbers.T)
    if status != csvrows.READ:
        return False
    ids = {}
    for k, column in enumerate(id_columns):
        start, end = starts[k, :rows], ends[k, :rows]
        hashes = np.empty(rows, dtype=np.uint64)
        csvrows.hash_fields(buf, start, end, hashes)
        _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        if not csvrows.same_fields(buf, start, end, first[inverse]):
            return False  # two ids of one hash
        ids[column] = ([text[start[i]:end[i]] for i in first], first, inverse)
    lines.append(number + line[:rows])
    columns.add_split(ids, {column: numbers[k, :rows] for k, column in enumerate(number_columns)},
                      rows)
    return True


def _quoted(path, blocks, width, where_column, columns, lines):
    """The rows of the rest of a file, from a block with a quote on, read
    by :mod:`csv` (a quoted field may hold commas and line breaks)."""
    first = None

    def text():
        nonlocal first
        for number, block in blocks:
            first = number if first is None else first
            for line in block:
                yield line + "\n"

    reader = csv.reader(text())
    batch, numbers = [], []
    try:
        for row in reader:
            line = first + reader.line_num - 1
            if len(row) < width:
                if not row or not "".join(row).strip():
                    continue
                raise LetorFormatError(path, line, f"{len(row)} fields where the header has "
                                       f"{width}")
            batch.append(row)
            numbers.append(line)
            if len(batch) == BATCH:
                lines.append(np.array(numbers, dtype=np.int64))
                columns.add(_batch_texts(batch, where_column))
                batch, numbers = [], []
    except csv.Error as error:
        raise LetorFormatError(path, first + reader.line_num - 1, f"not CSV: {error}") from None
    if batch:
        lines.append(np.array(numbers, dtype=np.int64))
        columns.add(_batch_texts(batch, where_column))


def _header(path, header):
    """``(form, column of each of its names, width)`` of a log's header."""
    if header is None:
        raise LetorFormatError(path, None, "the file is empty: a click log starts with a "
                               "header, " + ",".join(SESSION_COLUMNS) + " or "
                               + ",".join(AGGREGATED_COLUMNS))
    names = [name.strip().lstrip("\ufeff").lower() for name in header]
    form = next((columns for columns in (SESSION_COLUMNS, AGGREGATED_COLUMNS)
                 if set(columns) <= set(names)), None)
    if form is None:
        lacking = min((sorted(set(columns) - set(names))
                       for columns in (SESSION_COLUMNS, AGGREGATED_COLUMNS)), key=len)
        raise LetorFormatError(path, 1, f"the header lacks {', '.join(lacking)}: a click log "
                               "has the columns " + ",".join(SESSION_COLUMNS) + " (one row "
                               "per document shown in a session) or "
                               + ",".join(AGGREGATED_COLUMNS))
    return form, {column: names.index(column) for column in form}, len(names)


def _batch_texts(batch, where_column):
    return {column: list(map(str.strip, map(operator.itemgetter(index), batch)))
            for column, index in where_column.items()}
