"""What counts as an interrupt: a KeyboardInterrupt, bare or wrapped in
another error by the code it landed in. Python raises a RuntimeError from it
when it lands in a class's ``__set_name__`` (as in a library's imports), and
a SystemError when it lands in compiled code; code that catches errors
broadly must let such an error through, as the command line's edge must
take it for a Ctrl-C. This module imports no numerical library."""

__all__ = ["interruption"]


def interruption(error):
    """The KeyboardInterrupt (or a subclass: the command line's
    ``Terminated``) that ``error`` is or chains from, or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None
