"""Hints to the memory system: prefetches of the rows a loop reads next, and
of the span another loop reads after it (:func:`prefetch_plan`)."""

import numpy as np
from llvmlite import ir
from numba import types as nbtypes
from numba.extending import intrinsic

from .build import njit, python_twin


def _prefetch_call(builder, pointer, locality):
    """Emit ``llvm.prefetch`` of the byte at ``pointer`` (an ``i8*``): a read
    (0) into the data cache (1), kept in every level (``locality`` 3) or
    in all but the first (2)."""
    byte = ir.IntType(8).as_pointer()
    int32 = ir.IntType(32)
    function = builder.module.declare_intrinsic(
        "llvm.prefetch", [byte], ir.FunctionType(ir.VoidType(), [byte, int32, int32, int32]))
    builder.call(function, [pointer, int32(0), int32(locality), int32(1)])


def _byte_pointer(context, builder, array_type, array, offset):
    """The ``i8*`` to byte ``offset`` of an array's data."""
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(builder.bitcast(data, ir.IntType(8).as_pointer()), [offset])


@python_twin(lambda array, offset: None)  # a hint only
@intrinsic
def prefetch(typingctx, array, offset):
    """Ask the CPU to bring the cache line at byte ``offset`` of ``array``'s
    data into every level of cache (LLVM's ``llvm.prefetch``). Only a hint:
    it never faults, whatever the address."""
    if not isinstance(array, nbtypes.Array) or not isinstance(offset, nbtypes.Integer):
        return None

    def codegen(context, builder, signature, args):
        _prefetch_call(builder, _byte_pointer(context, builder, signature.args[0], *args), 3)
        return context.get_dummy_value()

    return nbtypes.void(array, offset), codegen


@python_twin(lambda array, offset: np.int64(array.ctypes.data) + np.int64(offset))
@intrinsic
def address(typingctx, array, offset):
    """The address of byte ``offset`` of ``array``'s data, as an int64: a
    span to prefetch whatever the array's type (:func:`rows_span`)."""
    if not isinstance(array, nbtypes.Array) or not isinstance(offset, nbtypes.Integer):
        return None

    def codegen(context, builder, signature, args):
        pointer = _byte_pointer(context, builder, signature.args[0], *args)
        return builder.ptrtoint(pointer, ir.IntType(64))

    return nbtypes.int64(array, offset), codegen


@python_twin(lambda at: None)
@intrinsic
def prefetch_address(typingctx, at):
    """Ask the CPU to bring the cache line at the address ``at`` (an int64,
    :func:`address`) into cache, all but its first level: a loop that
    prefetches what another reads later keeps its own data there."""
    if not isinstance(at, nbtypes.Integer):
        return None

    def codegen(context, builder, signature, args):
        _prefetch_call(builder, builder.inttoptr(args[0], ir.IntType(8).as_pointer()), 2)
        return context.get_dummy_value()

    return nbtypes.void(at), codegen


#: How many rows ahead of the one it reads a pass over a dense X prefetches.
#: A row of 136 float32 is 8.5 cache lines; the hardware prefetcher alone
#: left the scores of 468,598 such rows at 1.5x a BLAS ``X @ w`` (28.8 ms
#: against 19.2), eight rows ahead at 1.13x (21.8 ms).
PREFETCH_ROWS = 8


@njit(cache=True, inline="always")
def prefetch_rows(X, start, stop):
    """:func:`prefetch` rows ``start:stop`` of the 2-D ``X``, a cache line at
    a time; nothing unless X's rows are contiguous (C order, ascending)."""
    row, column = X.strides[0], X.strides[1]
    if start >= stop or column != X.itemsize or row <= 0:
        return
    first = start * row
    end = (stop - 1) * row + X.shape[1] * column
    for offset in range(first, end, 64):
        prefetch(X, offset)


#: A span of memory to prefetch: ``(address, bytes)``; this one is empty
NOTHING_AHEAD = (0, 0)


#: The fixed-point fraction of a :func:`prefetch_plan`'s lines per share
_SHARE_BITS = 24


#: A :func:`prefetch_plan` covers this many bytes of a longer span, its
#: start: prefetched whole, a query of a million rows would push its own
#: first rows out of cache (1 MB, half of a 2 MB L2 cache per core) before
#: its scores read them, and the scores prefetch their rows anyway.
PREFETCH_SPAN_BYTES = 1 << 20


@njit(cache=True, inline="always")
def prefetch_plan(ahead, parts):
    """How :func:`prefetch_part` brings the span ``ahead = (address,
    bytes)`` (its first :data:`PREFETCH_SPAN_BYTES`) into cache in ``parts``
    even shares of its cache lines:
    ``(first line's address, lines, lines per share)``, the last a fixed-point
    fraction (the division is here, once: a share costs a multiplication).
    A loop of ``parts`` steps that prefetches a share a step has the span in
    cache as it ends, without a burst of misses at any one step."""
    start, size = ahead
    if size <= 0 or parts <= 0:
        return 0, 0, 0
    size = min(size, PREFETCH_SPAN_BYTES)
    first = start - start % 64
    lines = (start + size - first + 63) // 64
    return first, lines, ((lines << _SHARE_BITS) + parts - 1) // parts


@njit(cache=True, inline="always")
def share_lines(plan, part):
    """The lines ``(start, stop)`` of share ``part`` of a
    :func:`prefetch_plan`, counted from its first (from part 0 to
    ``parts - 1`` the shares cover its lines once, in order)."""
    _, lines, share = plan
    return min((part * share) >> _SHARE_BITS, lines), min(((part + 1) * share) >> _SHARE_BITS,
                                                           lines)


@njit(cache=True, inline="always")
def prefetch_part(plan, part):
    """Prefetch share ``part`` of a :func:`prefetch_plan`."""
    start, stop = share_lines(plan, part)
    for line in range(start, stop):
        prefetch_address(plan[0] + 64 * line)


@njit(cache=True, inline="always")
def rows_span(X, start, stop):
    """The span ``(address, bytes)`` of rows ``start:stop`` of the 2-D
    ``X`` (C-ordered, ascending), for :func:`prefetch_plan`; empty when
    they are not contiguous or there are none."""
    row, column = X.strides[0], X.strides[1]
    if start >= stop or column != X.itemsize or row <= 0:
        return NOTHING_AHEAD
    return address(X, start * row), (stop - start - 1) * row + X.shape[1] * column


@njit(cache=True, inline="always")
def items_span(a, start, stop):
    """The span ``(address, bytes)`` of items ``start:stop`` of the 1-D
    ``a`` (contiguous), as :func:`rows_span`."""
    if start >= stop or a.strides[0] != a.itemsize:
        return NOTHING_AHEAD
    return address(a, start * a.itemsize), (stop - start) * a.itemsize
