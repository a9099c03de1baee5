"""Line alignment that grows with the number of lines: the diff of a big cell.

``difflib`` finds the longest match and recurses on both sides, so a big cell with many
hunks (or many repeated lines) took minutes to align. :class:`LineMatcher` gives the same
answer on small input and anchors big input first; :func:`unified_diff` is
``difflib.unified_diff`` on top of it. A leaf module: it imports nothing of msmagic, so
the result classes (plain data) and the renderers can both use it.
"""

from __future__ import annotations

import bisect
import difflib

#: Below this many lines (both sides together) and this many pairs of equal lines to
#: consider, a plain ``SequenceMatcher`` aligns the lines (its cost grows with lines x
#: repeats x hunks); above, :class:`LineMatcher` anchors on the lines that occur once.
PLAIN_MATCH_LINES = 2000
PLAIN_MATCH_PAIRS = 20_000


def _pairs_cost(a: list, b: list) -> int:
    """How many (i, j) with ``a[i] == b[j]``: the work of one longest-match scan."""
    count_a: dict = {}
    for x in a:
        count_a[x] = count_a.get(x, 0) + 1
    count_b: dict = {}
    for x in b:
        count_b[x] = count_b.get(x, 0) + 1
    return sum(n * count_a.get(x, 0) for x, n in count_b.items())


class LineMatcher(difflib.SequenceMatcher):
    """A ``SequenceMatcher`` of lines whose cost grows with the number of lines, not
    with its square: ``difflib`` finds the longest match and recurses on both sides, so
    a big cell with many hunks (or many repeated lines, without autojunk) took minutes.

    Small inputs are matched exactly as ``SequenceMatcher`` matches them. Big ones are
    anchored first (patience diff): the common prefix and suffix, then the lines that
    occur exactly once on each side, in increasing order on both (longest increasing
    subsequence); only the gaps between anchors go to ``SequenceMatcher``, with
    ``autojunk`` forced on for a gap whose repeated lines would make it slow."""

    def get_matching_blocks(self):
        if self.matching_blocks is not None:
            return self.matching_blocks
        a, b = self.a, self.b
        if len(a) + len(b) <= PLAIN_MATCH_LINES and (
            self.autojunk or _pairs_cost(a, b) <= PLAIN_MATCH_PAIRS
        ):
            return super().get_matching_blocks()
        blocks: list = []
        for alo, ahi, blo, bhi in self._gaps():
            blocks.extend(_gap_blocks(a, b, alo, ahi, blo, bhi, self.autojunk))
        merged: list = []
        for i, j, k in sorted(blocks):
            if k and merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
                merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + k)
            elif k:
                merged.append((i, j, k))
        merged.append((len(a), len(b), 0))
        self.matching_blocks = [difflib.Match._make(m) for m in merged]
        return self.matching_blocks

    def _gaps(self):
        """(alo, ahi, blo, bhi) between anchors, anchors included as 1-line gaps that
        match themselves."""
        a, b = self.a, self.b
        where_a: dict = {}
        for i, x in enumerate(a):
            where_a[x] = -1 if x in where_a else i
        where_b: dict = {}
        for j, x in enumerate(b):
            where_b[x] = -1 if x in where_b else j
        pairs = [
            (i, where_b[x]) for i, x in enumerate(a) if where_a[x] == i and where_b.get(x, -1) >= 0
        ]
        anchors = _increasing(pairs)
        prev_i = prev_j = 0
        for i, j in anchors:
            yield prev_i, i, prev_j, j
            yield i, i + 1, j, j + 1
            prev_i, prev_j = i + 1, j + 1
        yield prev_i, len(a), prev_j, len(b)


def _increasing(pairs: list) -> list:
    """The longest subsequence of ``pairs`` (sorted by i) increasing in j (patience
    sorting, n log n)."""
    tails: list = []  # j of the last pair of the best run of each length
    tail_at: list = []  # index into pairs of that pair
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[n] = j
            tail_at[n] = k
        back[k] = tail_at[n - 1] if n else -1
    out = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


def _gap_blocks(a, b, alo, ahi, blo, bhi, autojunk: bool) -> list:
    """Matching blocks (absolute positions) of ``a[alo:ahi]`` and ``b[blo:bhi]``."""
    out = []
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        out.append((alo, blo, 1))
        alo, blo = alo + 1, blo + 1
    tail = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
        tail.append((ahi, bhi, 1))
    if alo < ahi and blo < bhi:
        sub_a, sub_b = a[alo:ahi], b[blo:bhi]
        junk = autojunk or _pairs_cost(sub_a, sub_b) > PLAIN_MATCH_PAIRS
        sm = difflib.SequenceMatcher(None, sub_a, sub_b, autojunk=junk)
        out.extend((alo + i, blo + j, k) for i, j, k in sm.get_matching_blocks() if k)
    return out + tail[::-1]


def unified_diff(a: list, b: list, fromfile: str = "", tofile: str = "", n: int = 3):
    """``difflib.unified_diff(a, b, fromfile, tofile, n=n)`` (no dates, lines ending in
    their own line ends), aligned by :class:`LineMatcher`."""
    started = False
    for group in LineMatcher(None, a, b).get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        yield group_header(group) + "\n"
        yield from group_body(a, b, group)


def group_header(group: list) -> str:
    """The ``@@ -a,n +b,m @@`` line of one group of opcodes, as difflib writes it."""
    first, last = group[0], group[-1]
    return f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"


def group_body(a: list, b: list, group: list):
    """The `` ``/``-``/``+`` lines of one group of opcodes (each line as it is in ``a``
    or ``b``)."""
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for line in a[i1:i2]:
                yield " " + line
            continue
        for line in a[i1:i2]:
            yield "-" + line
        for line in b[j1:j2]:
            yield "+" + line


def _range(start: int, stop: int) -> str:
    """A unified diff's range, as difflib writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1  # an empty range starts before the line
    return f"{beginning},{length}"
