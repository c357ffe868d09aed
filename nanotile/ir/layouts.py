"""Layouts: where the elements of a tile value live in a CTA (language tile-layout).

A layout is part of a tile's type below the tile level (``TileType.layout``), printed
after the element type: ``tile<64x64xf32, #blocked<per_thread=[1, 4], ...>>``.

Distributed layouts are *linear layouts* (Triton's design, arXiv 2505.23819): every tile
dimension is a power of two, so an element is named by the bits of its row-major flat
index, and a thread's register is named by the bits of (register, lane, warp). A
distributed layout is a linear map over GF(2) from those hardware bits to the element's
bits, given by the image of each input bit (its *basis*): the element held in register r
of lane l of warp w is the XOR of the bases of the bits set in r, l and w. A zero basis
is a broadcast: flipping that bit reaches the same element (the lanes of a row that all
hold the row's sum, every thread holding a scalar). Because conversion, slicing and
reshaping are computed on these maps, nothing below special-cases a layout family:

- ``hardware_map()`` is the layout as a ``BitMap`` (hardware bits -> element bits),
  ``invert()`` the map back (where each element lives), and ``compose(move, shape)``
  moves a layout's elements by a linear map of element bits; ``BitMap`` composes and
  inverts any such map (``src.invert().compose(dst.hardware_map())`` says where each of
  dst's registers, lanes and warps finds its element in src);
- ``conversion(src, dst)`` says what moving a tile from one layout to another costs:
  nothing, a renaming of registers, warp shuffles, or a round trip through shared memory
  (``conversion_cost`` counts it, ``shuffle_plan`` solves the shuffles over GF(2));
- reshape is free (the flat index does not change) and permute relabels the bits (a
  composition);
- ``slice(dim)`` is what a reduction leaves; ``broadcast_source`` what a broadcast wants
  (compositions with a projection that drops coordinates).

Named constructors build the common ones and print in their own words:

- ``blocked``: ``#blocked<per_thread=[1, 4], lanes=[4, 8], warps=[4, 1], order=[1, 0]>``,
  a thread owns ``per_thread`` contiguous elements (a vector access), lanes then warps
  tile the rest, dimensions fastest first in ``order``; repeats go to registers;
- ``slice``: ``#slice<dim=1, size=64, parent=#blocked<...>>``;
- ``mma``: mma.sync fragments, ``#mma<acc, m16n8, warps=[2, 2]>`` (accumulator),
  ``#mma<a, m16n8k16, warps=[2, 2]>`` and ``#mma<b, ...>`` (operands);
- ``wgmma``: sm_90a's warpgroup MMA accumulator, ``#wgmma<acc, m64n128k16,
  warpgroups=[1, 1]>``;
- ``tmem``: sm_100a's tcgen05 accumulator as tcgen05.ld.32x32b reads it from tensor
  memory into registers, ``#tmem<acc, m128n128>`` (thread t of warp w: row 32 w + t);
- ``#replicated``: a one-element tile held by every thread;
- anything else prints as ``#linear<register=[[0, 1], ...], lane=[...], warp=[...]>``
  (one coordinate tuple per input bit).

``SharedLayout`` places a tile in the CTA's shared buffer: element -> offset (in elements)
is again linear (row-major, or XOR-swizzled in 16-byte units so that the 8 rows a warp
reads at once fall in different banks), optionally padded, from byte ``offset``
(``?`` until allocate-shared places it): ``#shared<offset=0, swizzle=[8, 1, 8]>``.
``wgmma_operand`` is the one wgmma's descriptors read (K-major, one swizzle atom per
row, ``align=`` the swizzle's period).

``RegisterArray`` (``#regs``) is the type marker of language simt: there a tile type is
one thread's registers (``tile<8xf32, #regs>``: eight registers), not a tile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LANES = 32          # threads of a warp
LANE_BITS = 5


# ======================================================================================
# Bits and flat indices


def log2(n: int) -> int:
    """log2 of a power of two (ValueError otherwise)."""
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def dim_offsets(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The lowest flat-index bit of each dimension (row-major: the last is bit 0)."""
    out, at = [], 0
    for d in reversed(shape):
        out.append(at)
        at += log2(d)
    return tuple(reversed(out))


def flat_index(coords: tuple[int, ...], shape: tuple[int, ...]) -> int:
    flat = 0
    for c, off in zip(coords, dim_offsets(shape)):
        flat |= c << off
    return flat


def coordinates(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple((flat >> off) & (d - 1) for d, off in zip(shape, dim_offsets(shape)))


class Span:
    """The GF(2) span of some bit vectors, kept in echelon form (pivot bit -> vector)."""

    def __init__(self, vectors: tuple[int, ...] | list[int] = ()) -> None:
        self.pivots: dict[int, int] = {}
        for v in vectors:
            self.add(v)

    def reduce(self, v: int) -> int:
        """``v`` minus everything the span can cancel: 0 exactly when v is in the span."""
        while v:
            top = v.bit_length() - 1
            if top not in self.pivots:
                return v
            v ^= self.pivots[top]
        return 0

    def add(self, v: int) -> bool:
        """Add ``v``; False when it was already in the span."""
        v = self.reduce(v)
        if not v:
            return False
        self.pivots[v.bit_length() - 1] = v
        return True

    def contains(self, v: int) -> bool:
        return self.reduce(v) == 0

    def __len__(self) -> int:
        return len(self.pivots)

    def includes(self, other: Span) -> bool:
        return all(self.contains(v) for v in other.pivots.values())


def solve(bases: tuple[int, ...], target: int) -> int | None:
    """The set of ``bases`` (a bit mask of their indices) whose XOR is ``target``, or
    None when no subset gives it (Gaussian elimination over GF(2))."""
    pivots: dict[int, tuple[int, int]] = {}  # pivot bit -> (vector, which bases)
    for i, b in enumerate(bases):
        v, combo = b, 1 << i
        while v:
            top = v.bit_length() - 1
            if top not in pivots:
                pivots[top] = (v, combo)
                break
            pv, pc = pivots[top]
            v, combo = v ^ pv, combo ^ pc
    combo = 0
    while target:
        top = target.bit_length() - 1
        if top not in pivots:
            return None
        pv, pc = pivots[top]
        target, combo = target ^ pv, combo ^ pc
    return combo


@dataclass(frozen=True)
class BitMap:
    """A linear map over GF(2) between bit vectors: input bit i goes to ``columns[i]``
    (an ``output_bits``-bit vector); an input is mapped to the XOR of the columns of its
    set bits. Layouts are such maps (hardware bits -> element bits), and so are the
    element moves of reshape (the identity), permute and slice; ``compose`` chains them and
    ``invert`` runs one backwards."""

    columns: tuple[int, ...]
    output_bits: int

    @staticmethod
    def of_elements(shape: tuple[int, ...], new_shape: tuple[int, ...], move) -> BitMap:
        """The map from the flat-index bits of a ``shape`` tile to those of a
        ``new_shape`` tile that sends each element's index to ``move(index)`` (``move``
        must be linear, as permute's relabelling and slice's projection are)."""
        bits = sum(log2(d) for d in shape)
        return BitMap(tuple(move(1 << i) for i in range(bits)), sum(log2(d) for d in new_shape))

    def __call__(self, bits: int) -> int:
        return _combine(self.columns, bits)

    def compose(self, inner: BitMap) -> BitMap:
        """``self`` after ``inner``: x -> self(inner(x))."""
        return BitMap(tuple(self(c) for c in inner.columns), self.output_bits)

    def preimage(self, target: int) -> int | None:
        """An input that maps to ``target`` (the one Gaussian elimination finds first:
        fewest high input bits), or None when ``target`` is outside the image."""
        return solve(self.columns, target)

    def invert(self) -> BitMap:
        """A right inverse: output bit j -> ``preimage(1 << j)``, so that
        ``self.compose(self.invert())`` is the identity on the outputs. For a bijection it
        is the inverse; where inputs repeat outputs (broadcast copies) it picks one of
        them. ValueError when the map does not reach every output bit."""
        columns = []
        for j in range(self.output_bits):
            found = self.preimage(1 << j)
            if found is None:
                raise ValueError(f"output bit {j} is not reached: the map is not onto")
            columns.append(found)
        return BitMap(tuple(columns), len(self.columns))


# ======================================================================================
# Distributed layouts


@dataclass(frozen=True)
class LinearLayout:
    """A distributed layout of a tile of ``shape``: the flat index of the element each
    register, lane and warp input bit selects (see the module docstring).

    Lane and warp bits past the last listed basis are broadcasts (so ``#replicated``
    lists none, and a layout fits any CTA with at least as many warps as it names);
    register bases are non-zero and independent (a thread never holds an element twice).
    """

    shape: tuple[int, ...]
    register: tuple[int, ...] = ()
    lane: tuple[int, ...] = ()
    warp: tuple[int, ...] = ()
    # how it prints: a named constructor's words, else the #linear form (not compared)
    spelling: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lane", _strip(self.lane))
        object.__setattr__(self, "warp", _strip(self.warp))
        object.__setattr__(self, "_bits", sum(log2(d) for d in self.shape))  # bits, asked often
        if len(self.lane) > LANE_BITS:
            raise ValueError(f"a warp has {LANES} lanes: at most {LANE_BITS} lane bases")
        size = 1 << self.bits
        span = Span()
        for b in (*self.register, *self.lane, *self.warp):
            if b < 0 or b >= size:
                raise ValueError(f"basis {b} is outside a tile of {size} elements")
        for b in self.register:
            if not span.add(b):
                raise ValueError("register bases must be non-zero and independent")
        # layouts key the layout choice's cost tables (assign-layouts{strategy=eqsat}):
        # hash the bases once
        object.__setattr__(self, "_hash", hash((self.shape, self.register, self.lane,
                                                self.warp)))
        # and remember the layouts broadcast_source derives (pure: the choice asks
        # the same ones of every candidate many times)
        object.__setattr__(self, "_sources", {})

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        # the generated __eq__ builds two tuples per comparison; hashes differ mostly
        if self is other:
            return True
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._hash == other._hash and self.shape == other.shape and \
            self.register == other.register and self.lane == other.lane and \
            self.warp == other.warp

    # ---- sizes -----------------------------------------------------------------------
    @property
    def bits(self) -> int:
        """Bits of the flat index: log2 of the element count."""
        return self._bits

    @property
    def elements(self) -> int:
        return 1 << self.bits

    @property
    def registers(self) -> int:
        """Registers each thread holds."""
        return 1 << len(self.register)

    @property
    def warps(self) -> int:
        """Warps the layout names (more warps in the CTA hold copies)."""
        return 1 << len(self.warp)

    @property
    def kind(self) -> str:
        return "replicated" if self.elements == 1 else "distributed"

    @property
    def in_registers(self) -> bool:
        return True

    # ---- evaluation --------------------------------------------------------------------
    def register_part(self, register: int) -> int:
        """The flat-index bits register ``register`` contributes (XOR of its bases)."""
        return _combine(self.register, register)

    def thread_part(self, lane: int, warp: int) -> int:
        return _combine(self.lane, lane) ^ _combine(self.warp, warp)

    def element(self, register: int, lane: int, warp: int) -> int:
        """Flat index of the element in ``register`` of ``lane`` of ``warp``."""
        return self.register_part(register) ^ self.thread_part(lane, warp)

    def register_of(self, register_part: int) -> int:
        """The register whose bases XOR to ``register_part`` (ValueError if none)."""
        found = BitMap(self.register, self.bits).preimage(register_part)
        if found is None:
            raise ValueError(f"no register of this layout holds element bits {register_part}")
        return found

    def thread_elements(self, lane: int, warp: int) -> list[int]:
        """Flat indices of one thread's registers, in register order."""
        t = self.thread_part(lane, warp)
        return [self.register_part(r) ^ t for r in range(self.registers)]

    def covers(self) -> bool:
        """Every element is held by some thread (the bases span the flat index)."""
        return len(Span((*self.register, *self.lane, *self.warp))) == self.bits

    def owner_bits(self, cta_warps: int = 1) -> tuple[int, int]:
        """(lane mask, warp mask): the lane/warp bits whose basis only repeats elements
        other bits reach (broadcast copies), in a CTA of ``cta_warps`` warps (the warps
        past the layout's warp bases hold copies too). The thread with those bits clear
        is the owner of its elements: the one that stores them or applies an atomic."""
        span = Span(self.register)
        lanes = warps = 0
        for i, b in enumerate(self.lane):
            if not span.add(b):
                lanes |= 1 << i
        for i, b in enumerate(self.warp):
            if not span.add(b):
                warps |= 1 << i
        lanes |= ((1 << LANE_BITS) - 1) & ~((1 << len(self.lane)) - 1)
        warps |= (max(cta_warps, 1) - 1) & ~((1 << len(self.warp)) - 1)
        return lanes, warps

    # ---- algebra ----------------------------------------------------------------------
    def reshape(self, shape: tuple[int, ...]) -> LinearLayout:
        """The same elements viewed in ``shape`` (same flat index: free)."""
        if _product(shape) != self.elements:
            raise ValueError(f"cannot reshape {self.shape} to {shape}")
        if tuple(shape) == self.shape:
            return self
        return LinearLayout(tuple(shape), self.register, self.lane, self.warp)

    def permute(self, permutation: tuple[int, ...]) -> LinearLayout:
        """The layout of ``permute(x, permutation)`` (result dim i is source dim p[i])."""
        new_shape = tuple(self.shape[p] for p in permutation)

        def move(b: int) -> int:
            c = coordinates(b, self.shape)
            return flat_index(tuple(c[p] for p in permutation), new_shape)

        return self.compose(BitMap.of_elements(self.shape, new_shape, move), new_shape)

    def slice(self, dim: int) -> LinearLayout:
        """The layout of a tile with ``dim`` removed (what reducing along it leaves): the
        bases lose that coordinate; register bases that become zero or repeat others go
        (the thread keeps one copy), lanes and warps that do become broadcasts."""
        shape = self.shape[:dim] + self.shape[dim + 1:]

        def drop(b: int) -> int:
            c = coordinates(b, self.shape)
            return flat_index(c[:dim] + c[dim + 1:], shape)

        layout = self.compose(BitMap.of_elements(self.shape, shape, drop), shape)
        parent = self.spelling or format_linear(self)
        return layout.named(f"#slice<dim={dim}, size={self.shape[dim]}, parent={parent}>")

    def broadcast_source(self, source_shape: tuple[int, ...]) -> LinearLayout:
        """The layout a broadcast from ``source_shape`` (1 where this shape grows) wants
        for its operand so that every thread already holds what it copies: this layout
        with the coordinates of the broadcast dimensions dropped (their register bases
        go, their lanes and warps become broadcasts)."""
        if tuple(source_shape) == self.shape:
            return self
        source = self._sources.get(tuple(source_shape))
        if source is None:
            source = self._sources[tuple(source_shape)] = self._broadcast_source(
                tuple(source_shape))
        return source

    def _broadcast_source(self, source_shape: tuple[int, ...]) -> LinearLayout:
        grown = [d for d, (a, b) in enumerate(zip(source_shape, self.shape)) if a != b]

        def drop(b: int) -> int:
            c = list(coordinates(b, self.shape))
            for d in grown:
                c[d] = 0
            return flat_index(tuple(c), source_shape)

        return self.compose(BitMap.of_elements(self.shape, source_shape, drop),
                            tuple(source_shape))

    # ---- as a map over GF(2) --------------------------------------------------------------
    def hardware_map(self) -> BitMap:
        """The layout as a BitMap from hardware bits to element bits. Hardware bits are
        numbered register bits first, then the 5 lane bits, then the warp bits it names
        (``hardware`` splits such a number back)."""
        return BitMap((*self.register, *_pad(self.lane, LANE_BITS), *self.warp), self.bits)

    def hardware(self, bits: int) -> tuple[int, int, int]:
        """(register, lane, warp) of a number in hardware_map's bit order."""
        registers = len(self.register)
        return (bits & ((1 << registers) - 1), bits >> registers & (LANES - 1),
                bits >> (registers + LANE_BITS))

    def invert(self) -> BitMap:
        """Element bits -> hardware bits: where each element lives (``hardware`` reads the
        register, lane and warp). Where threads hold copies, the one with the lowest
        bits is named. ValueError when some element is held by no thread."""
        return self.hardware_map().invert()

    def compose(self, move: BitMap, shape: tuple[int, ...]) -> LinearLayout:
        """The layout of the tile of ``shape`` whose element ``move(e)`` is this tile's
        element e, held where e is held: every basis is moved. Register bases that
        ``move`` sends to zero or onto others' span go (the thread keeps one copy); lane and
        warp bases that do become broadcasts."""
        span, register = Span(), []
        for b in self.register:
            if span.add(move(b)):
                register.append(move(b))
        return LinearLayout(tuple(shape), tuple(register), tuple(map(move, self.lane)),
                            tuple(map(move, self.warp)))

    def dim_bases(self, dim: int) -> dict[str, list[int]]:
        """For each input ("register"/"lane"/"warp"), the indices of its bits whose basis
        has a non-zero coordinate along ``dim``."""
        mask = (self.shape[dim] - 1) << dim_offsets(self.shape)[dim]
        return {name: [i for i, b in enumerate(bases) if b & mask]
                for name, bases in (("register", self.register), ("lane", self.lane),
                                    ("warp", self.warp))}

    def contiguous_registers(self, dim: int = -1) -> int:
        """How many consecutive registers (from register 0) hold consecutive elements
        along ``dim`` (the last dimension unless told): the widest vector one thread can
        access at once where that dimension is contiguous in memory."""
        if not self.shape:
            return 1
        dim %= len(self.shape)
        low = dim_offsets(self.shape)[dim]
        width = 1
        for i, b in enumerate(self.register):
            if b != 1 << (low + i) or (1 << (i + 1)) > self.shape[dim]:
                break
            width <<= 1
        return width

    def run_dim(self) -> int:
        """The dimension the first register basis steps along (the last when there is
        none): where a thread's run of consecutive registers lies."""
        if not self.register or not self.shape:
            return len(self.shape) - 1
        low = (self.register[0] & -self.register[0]).bit_length() - 1
        offsets = dim_offsets(self.shape)
        return next(d for d, (at, size) in enumerate(zip(offsets, self.shape))
                    if at <= low < at + log2(size))

    def named(self, spelling: str) -> LinearLayout:
        return LinearLayout(self.shape, self.register, self.lane, self.warp, spelling)

    def __str__(self) -> str:
        if self.elements == 1 and not self.register and not self.lane and not self.warp:
            return "#replicated"
        return self.spelling or format_linear(self)


def _strip(bases: tuple[int, ...]) -> tuple[int, ...]:
    bases = tuple(bases)
    while bases and bases[-1] == 0:
        bases = bases[:-1]
    return bases


def _combine(bases: tuple[int, ...], bits: int) -> int:
    out, i = 0, 0
    while bits:
        if bits & 1 and i < len(bases):
            out ^= bases[i]
        bits >>= 1
        i += 1
    return out


def _product(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def format_linear(layout: LinearLayout) -> str:
    def group(bases: tuple[int, ...]) -> str:
        return "[" + ", ".join("[" + ", ".join(map(str, coordinates(b, layout.shape))) + "]"
                               for b in bases) + "]"

    return (f"#linear<register={group(layout.register)}, lane={group(layout.lane)}, "
            f"warp={group(layout.warp)}>")


# ---- named constructors ----------------------------------------------------------------


def replicated(shape: tuple[int, ...] = ()) -> LinearLayout:
    """A one-element tile held by every thread."""
    if _product(shape) != 1:
        raise ValueError(f"#replicated is the layout of one-element tiles, not of {shape}")
    return LinearLayout(tuple(shape))


def blocked(shape: tuple[int, ...], per_thread: tuple[int, ...], lanes: tuple[int, ...],
            warps: tuple[int, ...], order: tuple[int, ...]) -> LinearLayout:
    """Triton's blocked layout: along each dimension (fastest first, as ``order`` lists
    them) a thread holds ``per_thread`` contiguous elements, ``lanes`` threads of a warp
    and then ``warps`` warps hold the next ones; what the shape has beyond that repeats
    in more registers, and lanes or warps beyond the shape hold copies."""
    rank = len(shape)
    if not (len(per_thread) == len(lanes) == len(warps) == len(order) == rank):
        raise ValueError("per_thread, lanes, warps and order need one entry per dimension")
    if sorted(order) != list(range(rank)):
        raise ValueError(f"order {list(order)} is not a permutation of the dimensions")
    if _product(lanes) != LANES:
        raise ValueError(f"lanes must multiply to {LANES}, not {_product(lanes)}")
    offsets = dim_offsets(shape)
    next_bit = [0] * rank  # the next coordinate bit of each dimension to hand out

    def take(dim: int, count: int) -> list[int]:
        out = []
        for _ in range(count):
            bit = next_bit[dim]
            next_bit[dim] += 1
            out.append(1 << (offsets[dim] + bit) if (1 << bit) < shape[dim] else 0)
        return out

    register = [b for d in order for b in take(d, log2(per_thread[d]))]
    lane = [b for d in order for b in take(d, log2(lanes[d]))]
    warp = [b for d in order for b in take(d, log2(warps[d]))]
    for d in order:  # repeats
        while (1 << next_bit[d]) < shape[d]:
            register += take(d, 1)
    register = [b for b in register if b]
    spelling = (f"#blocked<per_thread={list(per_thread)}, lanes={list(lanes)}, "
                f"warps={list(warps)}, order={list(order)}>")
    return LinearLayout(tuple(shape), tuple(register), tuple(lane), tuple(warp), spelling)


def default_blocked(shape: tuple[int, ...], num_warps: int, vector: int = 1,
                    fastest: int = -1) -> LinearLayout:
    """The blocked layout of a tile over ``num_warps`` warps: ``vector`` contiguous elements
    per thread along the dimension ``fastest`` (the last unless told: the one contiguous
    in memory), lanes and then warps along it first and then along the others, last
    first (consecutive threads hold consecutive elements, so warps access memory in
    whole lines). With ``vector=1`` and the last dimension fastest, thread t holds flat
    index t + T*k."""
    if not shape or _product(shape) == 1:
        return replicated(shape)
    rank = len(shape)
    fastest %= rank
    order = (fastest, *(d for d in range(rank - 1, -1, -1) if d != fastest))
    per_thread = [1] * rank
    per_thread[fastest] = min(vector, shape[fastest])
    room = [shape[d] // per_thread[d] for d in range(rank)]
    lanes, warps = [1] * rank, [1] * rank
    left = LANES
    for d in order:
        take = min(left, room[d])
        lanes[d], left, room[d] = take, left // take, room[d] // take
    lanes[order[0]] *= left  # lanes beyond the tile hold copies
    left = num_warps
    for d in order:
        take = min(left, room[d])
        warps[d], left, room[d] = take, left // take, room[d] // take
    warps[order[-1]] *= left
    for d in order[1:]:  # the slower dimensions: what lanes and warps leave, per thread
        per_thread[d] = max(1, room[d])
    return blocked(shape, tuple(per_thread), tuple(lanes), tuple(warps), order)


# mma.sync fragments (PTX ISA, "Matrix Fragments for mma.m16n8k*"), with g = lane / 4 and
# t = lane % 4, as (register bases, lane bases) of one instruction tile, each basis a
# (row, column) step. Accumulator (16 x 8): c0, c1 at (g, 2t), (g, 2t+1); c2, c3 at row
# g + 8. Operand A (16 x K, row x k) and B (K x 8, k x column) of one K step: 16-bit
# operands (K = 16) pair two k in a 32-bit register, 8-bit ones (K = 32) pack four,
# tf32 (K = 8) holds one element per register.
_FRAGMENTS = {
    ("acc", 0): (((0, 1), (8, 0)), ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))),
    ("a", 16): (((0, 1), (8, 0), (0, 8)), ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))),
    ("b", 16): (((1, 0), (8, 0)), ((2, 0), (4, 0), (0, 1), (0, 2), (0, 4))),
    ("a", 32): (((0, 1), (0, 2), (8, 0), (0, 16)), ((0, 4), (0, 8), (1, 0), (2, 0), (4, 0))),
    ("b", 32): (((1, 0), (2, 0), (16, 0)), ((4, 0), (8, 0), (0, 1), (0, 2), (0, 4))),
    ("a", 8): (((8, 0), (0, 4)), ((0, 1), (0, 2), (1, 0), (2, 0), (4, 0))),
    ("b", 8): (((4, 0),), ((1, 0), (2, 0), (0, 1), (0, 2), (0, 4))),
}


def mma_layout(role: str, shape: tuple[int, ...], warps: tuple[int, int],
               k: int = 16) -> LinearLayout:
    """The mma.sync fragment layout of a (batch x) M x N accumulator (``role="acc"``) or
    of an M x K (``"a"``) / K x N (``"b"``) operand, for ``k`` = the instruction's K
    (16: f16/bf16, 32: 8-bit, 8: tf32). Warps form a ``warps[0] x warps[1]`` grid over
    the instruction tiles (warp w = i * warps[1] + j: j picks a block of the 8-column
    tiles, i a block of the 16-row tiles); A is copied across the j warps and B across
    the i warps. Within its block a warp's registers repeat over the column tiles (or
    K steps of A) first, then the row tiles (K steps of B), then the batch."""
    if len(shape) < 2:
        raise ValueError(f"an mma {role} fragment needs a 2-D (or batched) tile, not "
                         f"{len(shape)}-D")
    wm, wn = warps
    rows, cols = shape[-2], shape[-1]
    batch = tuple(shape[:-2])
    regs, lanes = _FRAGMENTS[(role, 0 if role == "acc" else k)]
    tile = {"acc": (16, 8), "a": (16, k), "b": (k, 8)}[role]
    if rows % tile[0] or cols % tile[1]:
        raise ValueError(f"an mma {role} fragment tiles {tile[0]}x{tile[1]}, not "
                         f"{rows}x{cols}")
    full = tuple(shape)

    def at(r: int, c: int) -> int:
        return 0 if r >= rows or c >= cols else flat_index((0,) * len(batch) + (r, c), full)

    row_regs, row_warps = _tile_bits(rows // tile[0], wm if role != "b" else 1)
    col_regs, col_warps = _tile_bits(cols // tile[1], wn if role != "a" else 1)
    j_bits = [(0, tile[1] * t) for t in col_warps] if role != "a" else [(0, 0)] * log2(wn)
    i_bits = [(tile[0] * t, 0) for t in row_warps] if role != "b" else [(0, 0)] * log2(wm)
    warp = [at(*rc) for rc in j_bits + i_bits]
    register = [at(*rc) for rc in regs]
    register += [at(0, tile[1] * t) for t in col_regs]
    register += [at(tile[0] * t, 0) for t in row_regs]
    for i, d in enumerate(batch):
        register += [flat_index(tuple(1 << bit if j == i else 0 for j in range(len(batch)))
                                + (0, 0), full) for bit in range(log2(d))]
    layout = LinearLayout(full, tuple(b for b in register if b),
                          tuple(at(*rc) for rc in lanes), tuple(warp))
    name = "acc, m16n8" if role == "acc" else f"{role}, m16n8k{k}"
    return layout.named(f"#mma<{name}, warps=[{wm}, {wn}]>")


def _tile_bits(tiles: int, warps: int) -> tuple[list[int], list[int]]:
    """How ``tiles`` instruction tiles along a dimension split between a warp's
    registers (the low tile bits: consecutive tiles) and ``warps`` warps (the high bits:
    each warp a block), as tile steps; warps beyond the tiles hold copies (step 0)."""
    bits, wbits = log2(tiles), log2(warps)
    taken = min(bits, wbits)
    registers = [1 << b for b in range(bits - taken)]
    warp_steps = [1 << b for b in range(bits - taken, bits)] + [0] * (wbits - taken)
    return registers, warp_steps


# wgmma (sm_90a warpgroup MMA, PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
# Accumulate"): a warpgroup of 4 warps computes a 64 x n tile per instruction, warp w of
# the group its rows 16w..16w+15, each warp's registers laid out as mma.sync's m16n8
# accumulator repeated over the n/8 column tiles (register j: row g + 8 (j/2 % 2),
# column 8 (j/4) + 2t + j % 2, with g = lane / 4, t = lane % 4).
WGMMA_M = 64
WGMMA_MAX_N = 256


def wgmma_accumulator(shape: tuple[int, ...], warpgroups: tuple[int, int] = (1, 1),
                      n: int | None = None) -> LinearLayout:
    """The accumulator of wgmma.mma_async m64n``n``k16 on an M x N tile spread over a
    ``warpgroups[0] x warpgroups[1]`` grid of warpgroups (group g = i * gn + j holds the
    i-th block of M / gm rows and the j-th block of N / gn columns). Within its block a
    warpgroup issues one instruction per 64-row block and n-column block; registers are
    ordered so that instruction (row block b, column block c) takes the n/2 consecutive
    registers from ``(b * column blocks + c) * n / 2`` in the instruction's own order.
    ``n`` defaults to the block's columns, at most 256. The layout is the same whatever
    the operands (m64nNk8 tf32, m64nNk32 f8): its name's k16 is the f16 form's."""
    if len(shape) != 2:
        raise ValueError(f"a wgmma accumulator is a 2-D tile, not {len(shape)}-D")
    gm, gn = warpgroups
    rows, cols = shape[0] // gm, shape[1] // gn
    n = n if n is not None else min(cols, WGMMA_MAX_N)
    if rows * gm != shape[0] or cols * gn != shape[1] or rows % WGMMA_M or cols % n or \
            n % 8 or n > WGMMA_MAX_N:
        raise ValueError(f"wgmma m64n{n} over {gm}x{gn} warpgroups does not tile "
                         f"{shape[0]}x{shape[1]}")
    full = tuple(shape)

    def at(r: int, c: int) -> int:
        return flat_index((r, c), full)

    register = [at(0, 1), at(8, 0)] + [at(0, 8 << b) for b in range(log2(n // 8))]
    register += [at(0, n << b) for b in range(log2(cols // n))]
    register += [at(WGMMA_M << b, 0) for b in range(log2(rows // WGMMA_M))]
    lane = [at(0, 2), at(0, 4), at(1, 0), at(2, 0), at(4, 0)]
    warp = [at(16, 0), at(32, 0)] + [at(0, cols << b) for b in range(log2(gn))] + \
        [at(rows << b, 0) for b in range(log2(gm))]
    layout = LinearLayout(full, tuple(register), tuple(lane), tuple(warp))
    return layout.named(f"#wgmma<acc, m64n{n}k16, warpgroups=[{gm}, {gn}]>")


def wgmma_params(layout: object) -> tuple[int, tuple[int, int]] | None:
    """(n, warpgroups) of a ``wgmma_accumulator`` layout; None for any other layout."""
    spelling = getattr(layout, "spelling", None) or ""
    m = re.fullmatch(r"#wgmma<acc, m64n(\d+)k16, warpgroups=\[(\d+), (\d+)\]>", spelling)
    if m is None or not isinstance(layout, LinearLayout):
        return None
    n, grid = int(m.group(1)), (int(m.group(2)), int(m.group(3)))
    return (n, grid) if wgmma_accumulator(layout.shape, grid, n) == layout else None


WGMMA_SWIZZLE_BYTES = (32, 64, 128)  # the widths of wgmma's swizzle modes


def wgmma_operand(shape: tuple[int, ...], element_bytes: int, role: str,
                  mn_major: bool = False) -> SharedLayout:
    """The shared layout wgmma reads operand ``role`` from through a descriptor (PTX ISA,
    "Shared Memory Matrix Layout"): rows of 32, 64 or 128 bytes (one swizzle atom each,
    longer rows cut into 128-byte atoms side by side: ``block``), XOR-swizzled in 16-byte
    units as the hardware swizzles addresses (the 16-byte chunk c of row r at chunk
    c xor (r / (128 / width)) % (width / 16): ``swizzle_for``'s swizzle), and aligned to
    the pattern's period (8 rows) so that the two agree. The rows run along K (*K-major*:
    A (M x K) as it is, B (K x N) transposed, ``order=[0, 1]``) or, for B with
    ``mn_major``, along N (B as it is: wgmma's transposed B). ValueError when a row is
    shorter than 32 bytes or not a swizzle width."""
    if len(shape) != 2 or role not in ("a", "b") or (mn_major and role == "a"):
        raise ValueError(f"wgmma operand {role} of shape {shape}")
    order = (0, 1) if role == "b" and not mn_major else None
    length = shape[0] if order is not None else shape[1]
    width = min(length * element_bytes, WGMMA_SWIZZLE_BYTES[-1])
    if width not in WGMMA_SWIZZLE_BYTES or (length * element_bytes) % width:
        raise ValueError(f"a wgmma operand row of {length * element_bytes} bytes is not "
                         "made of swizzle atoms")
    atom = width // element_bytes
    return SharedLayout(tuple(shape), None, swizzle_for((8, atom), element_bytes), None,
                        order, 8 * width, atom if atom < length else None)


# tcgen05 (sm_100a's fifth-generation tensor cores, PTX ISA "TensorCore 5th Generation
# Family Instructions"): tcgen05.mma accumulates D in tensor memory (TMEM: 128 lanes x 512
# columns of 32 bits per CTA). With M = 128 and cta_group::1, row i of D is TMEM lane i and
# column j of an f32 D is column j of its columns (PTX ISA, "Data path layout
# organization", layout D: M = 128). Warp w of a warpgroup may access lanes 32 (w % 4) ..
# 32 (w % 4) + 31 only ("Access restrictions"), and tcgen05.ld.32x32b.xN gives thread t of
# warp w lane 32 w + t's N consecutive columns, one per register. The accumulator's layout
# in registers (``#tmem<acc, m128nN>``) is that: thread (w, t) holds row 32 w + t,
# register j its column j. A tile of 256 rows (``#tmem<acc, m256nN>``) is two such
# blocks, rows 128 b + i at columns b N + j: thread (w, t) holds rows 32 w + t and
# 128 + 32 w + t, register b N + j the column j of block b (its TMEM column, from the
# first). Between the instructions of a K loop the accumulator stays in TMEM
# (lower-tcgen05); the layout is what an epilogue reads (and what a tcgen05.st of the
# initial value writes from).
# With M = 64 (cta_group::1, "Data path layout organization", layout F) row i of D is
# lane 32 (i / 16) + i % 16: each warp's first 16 lanes, N columns; tcgen05.ld.16x32bx2
# with a half-split offset of N / 2 gives thread t < 16 of warp w row 16 w + t's columns
# j < N / 2 in register j, and thread t + 16 the same row's columns N / 2 + j
# (``#tmem<acc, m64nN>``).
TMEM_M = 128
TMEM_HALF_M = 64
TMEM_LANES = 128
TMEM_COLUMNS = 512


def tmem_accumulator(shape: tuple[int, ...]) -> LinearLayout:
    """The registers of an M x N f32 accumulator (M = 128 or 256) read from TMEM by
    tcgen05.ld.32x32b in a CTA of 4 warps: row 128 b + 32 w + t in thread t of warp w,
    column j in its register b N + j; M = 64 (N at least 2): as tcgen05.ld.16x32bx2
    reads it (above). ValueError for any other shape."""
    if len(shape) != 2 or shape[0] not in (TMEM_HALF_M, TMEM_M, 2 * TMEM_M) or \
            shape[1] < (2 if shape[0] == TMEM_HALF_M else 1) or \
            max(1, shape[0] // TMEM_M) * shape[1] > TMEM_COLUMNS:
        raise ValueError(f"a tensor-memory accumulator is 64, 128 or 256 x N (at most "
                         f"{TMEM_COLUMNS} columns in all), not {shape}")
    full = tuple(shape)

    def at(r: int, c: int) -> int:
        return flat_index((r, c), full)

    if shape[0] == TMEM_HALF_M:
        half = shape[1] // 2
        register = [at(0, 1 << b) for b in range(log2(half))]
        lane = [at(1 << b, 0) for b in range(LANE_BITS - 1)] + [at(0, half)]
        layout = LinearLayout(full, tuple(register), tuple(lane), (at(16, 0), at(32, 0)))
        return layout.named(f"#tmem<acc, m{shape[0]}n{shape[1]}>")
    register = [at(0, 1 << b) for b in range(log2(shape[1]))]
    register += [at(TMEM_M, 0)] if shape[0] > TMEM_M else []
    lane = [at(1 << b, 0) for b in range(LANE_BITS)]
    warp = [at(32, 0), at(64, 0)]
    layout = LinearLayout(full, tuple(register), tuple(lane), tuple(warp))
    return layout.named(f"#tmem<acc, m{shape[0]}n{shape[1]}>")


def tmem_scales(shape: tuple[int, ...], role: str) -> LinearLayout:
    """The registers of block-scaled MMA's scale factors (role "a": an M x Kb tile, "b":
    Kb x N; M, N and Kb powers of two) as every warp stores them to its quarter of
    tensor memory: lane t of each warp holds the scales of rows (a) or columns (b)
    t + 32 j, all Kb of each, in register kb + Kb j; warps hold copies (the ISA wants
    them duplicated in all four lane quarters: lower_tcgen05.py)."""
    full = tuple(shape)
    mn_dim = 0 if role == "a" else 1
    mn, blocks = full[mn_dim], full[1 - mn_dim]

    def at(mn_index: int, block: int) -> int:
        return flat_index((mn_index, block) if role == "a" else (block, mn_index), full)

    register = [at(0, 1 << b) for b in range(log2(blocks))]
    register += [at(32 << b, 0) for b in range(max(0, log2(mn) - LANE_BITS))]
    lane = [at(1 << b, 0) for b in range(min(LANE_BITS, log2(mn)))]
    return LinearLayout(full, tuple(register), tuple(lane), ())


def tmem_params(layout: object) -> tuple[int, int] | None:
    """(M, N) of a ``tmem_accumulator`` layout; None for any other layout."""
    spelling = getattr(layout, "spelling", None) or ""
    m = re.fullmatch(r"#tmem<acc, m(\d+)n(\d+)>", spelling)
    if m is None or not isinstance(layout, LinearLayout) or \
            (int(m.group(1)), int(m.group(2))) != tuple(layout.shape):
        return None
    try:
        return tuple(layout.shape) if tmem_accumulator(layout.shape) == layout else None
    except ValueError:
        return None


def tma_box_layout(shape: tuple[int, ...], element_bytes: int) -> SharedLayout:
    """The shared layout TMA boxes of one swizzle atom of columns (32, 64 or 128 bytes)
    and all rows write and read: rows of atoms, swizzled in 16-byte units as the copy
    swizzles addresses, atoms side by side (wgmma's K-major operand layout is the same;
    ValueError when a row is not made of atoms)."""
    return wgmma_operand(shape, element_bytes, "a")


# ======================================================================================
# Conversions


def conversion(src: LinearLayout, dst: LinearLayout) -> str:
    """What moving a tile from ``src`` to ``dst`` takes (same shape):

    - ``"none"``: the same layout;
    - ``"registers"``: every thread already holds the elements it needs, in registers
      whose numbers do not depend on the thread (a renaming);
    - ``"warp"``: each warp holds them (lanes exchange values: warp shuffles);
    - ``"shared"``: elements cross warps (a round trip through shared memory).
    """
    if src.shape != dst.shape:
        raise ValueError(f"conversion between shapes {src.shape} and {dst.shape}")
    if src == dst:
        return "none"
    in_thread = Span(src.register)
    same_threads = _pad(src.lane, LANE_BITS) == _pad(dst.lane, LANE_BITS) and \
        _pad(src.warp, 8) == _pad(dst.warp, 8)
    if same_threads and all(in_thread.contains(b) for b in dst.register):
        return "registers"
    in_warp = Span((*src.register, *src.lane))
    if _moves_within(in_warp, src, dst, include_lanes=True):
        return "warp"
    return "shared"


def _moves_within(held: Span, src: LinearLayout, dst: LinearLayout,
                  include_lanes: bool) -> bool:
    """Each thread (or warp, ``include_lanes``) of ``dst`` needs only elements that the
    same thread (warp) holds in ``src``: dst's own span lies in what src holds, and the
    two differ, thread to thread (warp to warp), by an element src holds."""
    needed = dst.register + (dst.lane if include_lanes else ())
    if not all(held.contains(b) for b in needed):
        return False
    pairs = [] if include_lanes else list(zip(_pad(src.lane, LANE_BITS),
                                              _pad(dst.lane, LANE_BITS)))
    width = max(len(src.warp), len(dst.warp))
    pairs += list(zip(_pad(src.warp, width), _pad(dst.warp, width)))
    return all(held.contains(a ^ b) for a, b in pairs)


def _pad(bases: tuple[int, ...], n: int) -> tuple[int, ...]:
    return bases + (0,) * (n - len(bases))


@dataclass(frozen=True)
class ShufflePlan:
    """How a ``"warp"`` conversion src -> dst is done with ``shfl.sync.idx``.

    Destination register ``r`` of the thread with %tid.x bits ``t`` (lane bits 0-4, then
    the warp bits) holds the element that source register
    ``registers[r] ^ XOR(register_map[i] for the bits i set in t)`` holds in lane
    ``lanes[r] ^ XOR(lane_map[i] for the bits i set in t)`` of the same warp. Both are
    linear (over GF(2)) in the thread bits, plus a constant per destination register.

    With ``register_map`` all zero (the common case: a transpose inside a warp, blocked
    <-> mma fragments, a change of vector width) every lane sends the same register, and
    one shuffle per destination register does: the thread sends ``registers[r]`` and
    reads lane ``lanes[r] ^ lane_map(t)``. Otherwise the source register depends on the
    reading thread through ``len(Span(register_map))`` = k bits: 2^k shuffles per
    destination register (one per candidate register) and a select among them.
    """

    registers: tuple[int, ...]
    lanes: tuple[int, ...]
    lane_map: tuple[int, ...]
    register_map: tuple[int, ...]

    @property
    def select_bits(self) -> int:
        """k: the thread bits the source register depends on (in rank)."""
        return len(Span(self.register_map))

    def candidates(self, r: int) -> list[int]:
        """The source registers destination register ``r`` may read from (one shuffle
        each): ``registers[r]`` XOR each combination of ``register_map``."""
        out = [self.registers[r]]
        for b in Span(self.register_map).pivots.values():
            out += [c ^ b for c in out]
        return out

    def source(self, r: int, tid: int) -> tuple[int, int]:
        """(source register, source lane) of destination register ``r`` in thread
        ``tid``."""
        return (self.registers[r] ^ _combine(self.register_map, tid),
                self.lanes[r] ^ _combine(self.lane_map, tid))

    @property
    def shuffles(self) -> int:
        """shfl.sync instructions per 32-bit word of the element, per thread."""
        return len(self.registers) << self.select_bits


MAX_SELECT_BITS = 2  # a shuffle plan makes at most 2^2 shuffles per destination register


def shuffle_plan(src: LinearLayout, dst: LinearLayout,
                 max_select_bits: int = MAX_SELECT_BITS) -> ShufflePlan | None:
    """The warp-shuffle plan of a conversion src -> dst (see ShufflePlan), or None when
    some thread needs an element its warp does not hold in ``src`` (not a ``"warp"``
    conversion), or when the source register depends on more than ``max_select_bits``
    thread bits (the caller goes through shared memory).

    Solved over GF(2): the elements a warp holds in ``src`` are
    ``src.register_part(r_s) ^ src.lane_part(l_s)`` plus the warp's part, so for each
    input bit of ``dst`` (register bits, lane bits, and for the warp bits the difference
    between dst's and src's warp basis) a pair (r_s, l_s) reaching that element
    difference is found with ``solve``; the plan XORs them. Lane and warp bits take a
    solution by lanes alone when there is one, so that the source register does not
    depend on the thread.
    """
    if src.shape != dst.shape:
        raise ValueError(f"conversion between shapes {src.shape} and {dst.shape}")
    nr = len(src.register)
    lanes = _pad(src.lane, LANE_BITS)
    held = (*src.register, *lanes)

    def by_lanes(b: int) -> tuple[int, int] | None:
        found = solve(lanes, b)
        return None if found is None else (0, found)

    def by_anything(b: int) -> tuple[int, int] | None:
        found = solve(held, b)
        return None if found is None else (found & ((1 << nr) - 1), found >> nr)

    per_register = [by_anything(b) for b in dst.register]
    width = max(len(src.warp), len(dst.warp))
    thread = [*_pad(dst.lane, LANE_BITS),
              *(a ^ b for a, b in zip(_pad(src.warp, width), _pad(dst.warp, width)))]
    per_thread = [by_lanes(b) or by_anything(b) for b in thread]
    if any(p is None for p in (*per_register, *per_thread)):
        return None
    register_map = tuple(r for r, _ in per_thread)
    if len(Span(register_map)) > max_select_bits:
        return None
    registers, sources = [], []
    for k in range(dst.registers):
        r = lane = 0
        for i, (rb, lb) in enumerate(per_register):
            if k >> i & 1:
                r, lane = r ^ rb, lane ^ lb
        registers.append(r)
        sources.append(lane)
    return ShufflePlan(tuple(registers), tuple(sources), tuple(l for _, l in per_thread),
                       register_map)


# The unit of conversion_cost: one 32-bit transfer per thread, i.e. one shfl.sync of a b32
# register, or 4 bytes a thread stores to or loads from shared memory.
BARRIER_COST = 16  # a bar.sync, in those units (the whole CTA waits)
SELECT_COST = 1    # a selp choosing among shuffled candidates


def conversion_cost(src: LinearLayout, dst: LinearLayout, element_bytes: int) -> int:
    """What converting a tile from ``src`` to ``dst`` costs each thread, in 32-bit
    transfers (see BARRIER_COST), as lower-convert-layout will lower it:

    - ``none`` and ``registers``: 0 (a renaming: no instruction);
    - ``warp`` with a shuffle plan: its shuffles, each of ``ceil(element_bytes / 4)``
      words, plus a select per extra candidate;
    - otherwise (``shared``, or a ``warp`` conversion with no plan): the words each thread
      stores (src's registers) and loads (dst's registers) plus two barriers.
    """
    kind = conversion(src, dst)
    if kind in ("none", "registers"):
        return 0
    words = max(1, -(-element_bytes // 4))
    plan = shuffle_plan(src, dst) if kind == "warp" else None
    if plan is not None:
        selects = len(plan.registers) * ((1 << plan.select_bits) - 1)
        return plan.shuffles * words + selects * SELECT_COST * words
    return (src.registers + dst.registers) * words + 2 * BARRIER_COST


# A rough ranking by kind alone (conversion_cost counts the work for given layouts).
CONVERSION_COST = {"none": 0, "registers": 0, "warp": 1, "shared": 4}


# ======================================================================================
# Shared memory


@dataclass(frozen=True)
class SharedLayout:
    """A tile in the CTA's shared buffer from byte ``offset`` (None: not placed yet).
    Element e (flat index) sits at element offset ``swizzled(e)`` plus padding:

    - ``swizzle=(vec, per_phase, max_phase)`` (None: row-major): in row r of the last two
      dimensions, the group of ``vec`` elements at column c is stored at group
      ``(c / vec) xor ((r / per_phase) % max_phase)``; with vec elements = 16 bytes and
      max_phase 8, the 8 rows an ldmatrix or a transposed read touches hit 8 banks;
    - ``padding=(interval, amount)``: ``amount`` elements of padding after every
      ``interval`` elements;
    - ``block``: the fastest dimension is cut into blocks of ``block`` elements, stored
      one after the other, each whole (every row of the tile, ``block`` elements a row)
      and swizzled on its own: wgmma's swizzle atoms side by side (``wgmma_operand``);
    - ``align``: the byte alignment the buffer's start needs (None: 16). A swizzle that
      hardware applies to shared *addresses* (wgmma's descriptors, TMA) equals this
      layout's only when the buffer starts at a multiple of the swizzle's period
      (``wgmma_operand``).
    """

    shape: tuple[int, ...]
    offset: int | None = None
    swizzle: tuple[int, int, int] | None = None
    padding: tuple[int, int] | None = None
    order: tuple[int, ...] | None = None  # dimensions fastest first (None: row-major)
    align: int | None = None
    block: int | None = None

    kind = "shared"
    in_registers = False

    @property
    def elements(self) -> int:
        return _product(self.shape)

    def element_offset(self, flat: int) -> int:
        """Where element ``flat`` lies, in elements from the buffer's start."""
        at = flat
        if self.order is not None:
            c, at, stride = coordinates(flat, self.shape), 0, 1
            for d in self.order:
                at += c[d] * stride
                stride *= self.shape[d]
        cols = self.shape[self.order[0] if self.order is not None else -1]
        if self.block is not None and self.block < cols:
            row, col = divmod(at, cols)
            rows = self.elements // cols
            at = (col // self.block) * rows * self.block + row * self.block + col % self.block
            cols = self.block
        if self.swizzle is not None and len(self.shape) >= 2:
            vec, per_phase, max_phase = self.swizzle
            row, col = at // cols, at % cols
            phase = (row // per_phase) % max_phase
            group = (col // vec) ^ phase
            at = row * cols + (group % (cols // vec)) * vec + col % vec
        if self.padding is not None:
            interval, amount = self.padding
            at += (at // interval) * amount
        return at

    def linear_bases(self) -> tuple[int, ...] | None:
        """The offset of each flat-index bit alone when the map is linear: offset(e) = XOR
        of the bases of e's bits. None for a padded layout, and for one whose sizes or
        swizzle are not powers of two (its divisions and remainders then mix bits)."""
        sizes = self.shape + (self.swizzle or ()) + ((self.block,) if self.block else ())
        if self.padding is not None or any(n <= 0 or n & (n - 1) for n in sizes):
            return None
        return tuple(self.element_offset(1 << i) for i in range(log2(self.elements)))

    def is_row_major(self) -> bool:
        """Whether element e lies at offset e, for every e."""
        bases = self.linear_bases()
        if bases is not None:
            return all(base == 1 << i for i, base in enumerate(bases))
        return all(self.element_offset(e) == e for e in range(self.elements))

    def size_elements(self) -> int:
        """Elements of room the tile takes (padding included): the swizzle permutes
        offsets 0..N-1, the padding then spreads them."""
        last = self.elements - 1
        if self.padding is not None:
            interval, amount = self.padding
            last += (last // interval) * amount
        return last + 1

    def placed(self, offset: int) -> SharedLayout:
        return SharedLayout(self.shape, offset, self.swizzle, self.padding, self.order,
                            self.align, self.block)

    def __str__(self) -> str:
        parts = [f"offset={'?' if self.offset is None else self.offset}"]
        if self.swizzle is not None:
            parts.append(f"swizzle=[{', '.join(map(str, self.swizzle))}]")
        if self.padding is not None:
            parts.append(f"pad=[{', '.join(map(str, self.padding))}]")
        if self.order is not None:
            parts.append(f"order=[{', '.join(map(str, self.order))}]")
        if self.block is not None:
            parts.append(f"block={self.block}")
        if self.align is not None:
            parts.append(f"align={self.align}")
        return f"#shared<{', '.join(parts)}>"


def swizzle_for(shape: tuple[int, ...], element_bytes: int,
                order: tuple[int, ...] | None = None) -> tuple[int, int, int] | None:
    """The XOR swizzle of 16-byte groups for a tile of ``shape`` stored in ``order``
    (fastest dimension first; None: row-major), or None when a row (along the fastest
    dimension) is shorter than one group, or for a 1-D tile: rows of 128 bytes or more
    swizzle with 8 phases, shorter rows with fewer, so that 8 consecutive rows' groups
    hit 8 banks."""
    if len(shape) < 2:
        return None
    vec = max(1, 16 // element_bytes)
    groups = shape[order[0] if order is not None else -1] // vec
    if groups < 2:
        return None
    per_phase = max(1, 8 // groups)           # rows sharing a phase in 128 bytes
    return vec, per_phase, min(8, groups)


# ======================================================================================
# simt: a thread's registers


@dataclass(frozen=True)
class RegisterArray:
    """The layout marker of language simt: the tile is one thread's registers."""

    kind = "registers"
    in_registers = True

    def __str__(self) -> str:
        return "#regs"


REGS = RegisterArray()


AnyLayout = LinearLayout | SharedLayout | RegisterArray
# the type a TileType's layout has (any of them)
Layout = AnyLayout


# ======================================================================================
# Text


_NAMED = re.compile(r"#([a-z_]+)\s*(?:<(.*)>)?\s*$", re.DOTALL)


def parse_layout(text: str, shape: tuple[int, ...]) -> AnyLayout:
    """The layout written ``text`` (``#name<...>``) for a tile of ``shape``;
    ValueError with a readable message when it is malformed or does not fit."""
    m = _NAMED.match(text.strip())
    if m is None:
        raise ValueError(f"cannot read the layout '{text}'")
    name, body = m.group(1), (m.group(2) or "").strip()
    if name == "replicated" and not body:
        return replicated(shape)
    if name == "regs" and not body:
        return REGS
    fields = _fields(body)
    if name == "blocked":
        return blocked(shape, *(tuple(_int_list(fields[k])) for k in
                                ("per_thread", "lanes", "warps", "order")))
    if name == "slice":
        dim, size = int(fields["dim"]), int(fields["size"])
        parent_shape = shape[:dim] + (size,) + shape[dim:]
        parent = parse_layout(fields["parent"], parent_shape)
        if not isinstance(parent, LinearLayout):
            raise ValueError("#slice needs a distributed parent layout")
        return parent.slice(dim)
    if name == "mma":
        return _parse_mma(fields, shape)
    if name == "wgmma":
        return _parse_wgmma(fields, shape)
    if name == "tmem":
        return _parse_tmem(fields, shape)
    if name == "linear":
        def bases(key: str) -> tuple[int, ...]:
            return tuple(flat_index(tuple(c), shape) for c in _nested(fields.get(key, "[]")))
        return LinearLayout(tuple(shape), bases("register"), bases("lane"), bases("warp"))
    if name == "shared":
        offset = fields.get("offset", "?")
        swizzle = tuple(_int_list(fields["swizzle"])) if "swizzle" in fields else None
        padding = tuple(_int_list(fields["pad"])) if "pad" in fields else None
        order = tuple(_int_list(fields["order"])) if "order" in fields else None
        align = int(fields["align"]) if "align" in fields else None
        block = int(fields["block"]) if "block" in fields else None
        if align is not None and (align < 16 or align & (align - 1)):
            raise ValueError(f"align={align} is not a power of two of at least 16")
        if order is not None and sorted(order) != list(range(len(shape))):
            raise ValueError(f"order {list(order)} is not a permutation of the dimensions")
        fastest = shape[order[0] if order is not None else -1] if shape else 1
        if block is not None and (block < 1 or block & (block - 1) or fastest % block):
            raise ValueError(f"block={block} does not cut a dimension of {fastest}")
        if swizzle is not None and len(swizzle) != 3:
            raise ValueError("swizzle=[vec, per_phase, max_phase] needs three numbers")
        if padding is not None and len(padding) != 2:
            raise ValueError("pad=[interval, amount] needs two numbers")
        unknown = set(fields) - {"offset", "swizzle", "pad", "order", "align", "block"}
        if unknown:
            raise ValueError(f"unknown field of #shared: {sorted(unknown)}")
        return SharedLayout(tuple(shape), None if offset == "?" else int(offset), swizzle,
                            padding, order, align, block)
    raise ValueError(f"unknown layout '#{name}'")


def _parse_mma(fields: dict[str, str], shape: tuple[int, ...]) -> LinearLayout:
    role = fields.get("", "")
    words = [w.strip() for w in role.split(",") if w.strip()] if role else []
    if len(words) != 2:
        raise ValueError("#mma<role, shape, warps=[m, n]>: role acc, a or b")
    role, instr = words
    warps = tuple(_int_list(fields["warps"]))
    if role == "acc":
        if instr != "m16n8":
            raise ValueError(f"the accumulator fragment is m16n8, not {instr}")
        return mma_layout("acc", shape, warps)  # type: ignore[arg-type]
    m = re.fullmatch(r"m16n8k(8|16|32)", instr)
    if role not in ("a", "b") or m is None:
        raise ValueError(f"unknown mma fragment '{role}, {instr}'")
    return mma_layout(role, shape, warps, int(m.group(1)))  # type: ignore[arg-type]


def _parse_wgmma(fields: dict[str, str], shape: tuple[int, ...]) -> LinearLayout:
    words = [w.strip() for w in fields.get("", "").split(",") if w.strip()]
    m = re.fullmatch(r"m64n(\d+)k16", words[1]) if len(words) == 2 else None
    if m is None or words[0] != "acc" or "warpgroups" not in fields:
        raise ValueError("#wgmma<acc, m64nNk16, warpgroups=[m, n]>")
    grid = tuple(_int_list(fields["warpgroups"]))
    if len(grid) != 2:
        raise ValueError("warpgroups=[m, n] needs two numbers")
    return wgmma_accumulator(shape, grid, int(m.group(1)))  # type: ignore[arg-type]


def _parse_tmem(fields: dict[str, str], shape: tuple[int, ...]) -> LinearLayout:
    words = [w.strip() for w in fields.get("", "").split(",") if w.strip()]
    m = re.fullmatch(r"m(\d+)n(\d+)", words[1]) if len(words) == 2 else None
    if m is None or words[0] != "acc" or set(fields) != {""}:
        raise ValueError("#tmem<acc, mMnN>")
    if (int(m.group(1)), int(m.group(2))) != tuple(shape):
        raise ValueError(f"#tmem<acc, {words[1]}> does not describe a tile of {tuple(shape)}")
    return tmem_accumulator(shape)


def _fields(body: str) -> dict[str, str]:
    """``a=1, b=[1, 2], parent=#x<...>`` -> {"a": "1", ...}; leading words without ``=``
    go under "" (``#mma<acc, m16n8, warps=[1, 2]>``)."""
    out: dict[str, str] = {}
    loose = []
    for part in _split_top(body):
        key, eq, value = part.partition("=")
        if eq and re.fullmatch(r"\s*[a-z_]+\s*", key):
            out[key.strip()] = value.strip()
        elif part.strip():
            loose.append(part.strip())
    if loose:
        out[""] = ", ".join(loose)
    return out


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "[<(":
            depth += 1
        elif c in "]>)":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _int_list(text: str) -> list[int]:
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"expected a list of integers, got '{text}'")
    return [int(x) for x in text[1:-1].split(",") if x.strip()]


def _nested(text: str) -> list[list[int]]:
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"expected a list of coordinate lists, got '{text}'")
    return [_int_list("[" + inner + "]") for inner in re.findall(r"\[([^\[\]]*)\]",
                                                                  text[1:-1])]
