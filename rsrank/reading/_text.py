"""Reading text files: the error that names a file, its line and the
problem, and opening plain or gzipped text with a damaged file's errors
turned into that one."""

import contextlib
import gzip
import re
import zlib
from pathlib import Path

__all__ = ["LetorFormatError", "open_text", "reading", "whole_number"]

_INTEGER = re.compile(r"[-+]?[0-9]+")


class LetorFormatError(ValueError):
    """A LETOR/SVMlight file breaks the format; names the file and line."""

    def __init__(self, path, line, problem):
        self.path, self.line, self.problem = str(path), line, problem
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


def open_text(path):
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


@contextlib.contextmanager
def reading(path):
    """Turn what a damaged file raises while it is read into a
    :class:`LetorFormatError` that names it."""
    try:
        yield
    except EOFError:
        raise LetorFormatError(path, None, "the file ends in the middle of its compressed "
                               "data (a truncated .gz?)") from None
    except gzip.BadGzipFile as error:
        if str(error).startswith("Not a gzipped file"):
            raise LetorFormatError(path, None, "not gzip data, although the name ends in "
                                   ".gz") from None
        # a CRC or length check at the end of a member: the data is damaged
        raise LetorFormatError(path, None, f"corrupt gzip data ({error}); the file is damaged, "
                               "copy or download it again") from None
    except zlib.error as error:
        raise LetorFormatError(path, None, f"corrupt compressed data ({error})") from None


def whole_number(path, number, token, what):
    """``token`` as an int64, or a :class:`LetorFormatError` at line
    ``number`` that calls it ``what`` (a qid, a label)."""
    token = token.strip()
    if not _INTEGER.fullmatch(token) or not -2**63 <= int(token) < 2**63:
        raise LetorFormatError(path, number, f"{what} {token!r} is not a whole number within "
                               "64 bits")
    return int(token)
