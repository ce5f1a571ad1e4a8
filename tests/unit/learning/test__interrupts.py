"""rsrank.learning._interrupts: a KeyboardInterrupt, bare or wrapped by the
code it landed in."""

from rsrank.learning._interrupts import interruption


def wrapped(outer, *, cause=True):
    """``outer`` raised while a KeyboardInterrupt is handled, from it or not."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            if cause:
                raise outer from inner
            raise outer
    except Exception as error:
        return error


def test_a_bare_or_wrapped_interrupt_is_found_and_nothing_else():
    bare = KeyboardInterrupt()
    assert interruption(bare) is bare
    for cause in (True, False):  # raised from it, or while it was handled
        error = wrapped(RuntimeError("Error calling __set_name__"), cause=cause)
        assert isinstance(interruption(error), KeyboardInterrupt)
    assert interruption(None) is None
    assert interruption(ValueError("no interrupt here")) is None


def test_a_chain_that_loops_ends():
    first, second = ValueError("a"), ValueError("b")
    first.__context__, second.__context__ = second, first
    assert interruption(first) is None
