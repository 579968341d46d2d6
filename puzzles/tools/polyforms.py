"""Shared helpers for the puzzle-library tools (make_puzzles.py, check_puzzles.py).

Cells are (x, y, z) integer triples.  A *shape* is a frozenset of cells
translated so that its minimum x, y and z are 0.  Nothing here depends on
the Tessera C code: it is an independent model used to build and to check
the files under puzzles/.
"""

import itertools
import json


# ---- geometry -------------------------------------------------------------

def normalize(cells):
    cells = [tuple(c) + (0,) * (3 - len(c)) for c in cells]
    mx = min(c[0] for c in cells)
    my = min(c[1] for c in cells)
    mz = min(c[2] for c in cells)
    return frozenset((x - mx, y - my, z - mz) for x, y, z in cells)


def _matrices(proper):
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = [[0] * 3 for _ in range(3)]
            for i in range(3):
                m[i][perm[i]] = signs[i]
            det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                   - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                   + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
            if det == 1 or not proper:
                out.append(tuple(tuple(r) for r in m))
    return out


ROT24 = _matrices(True)       # proper rotations of 3D space
ISO48 = _matrices(False)      # rotations and reflections
# the 4 rotations about the z axis
ROTZ4 = [m for m in ROT24 if m[2] == (0, 0, 1)]
# the 8 symmetries of the plane (rotations about z plus turning the plane over)
PLANE8 = [m for m in ROT24 if m[2][2] in (1, -1)]


def apply(m, c):
    return tuple(sum(m[i][j] * c[j] for j in range(3)) for i in range(3))


def transform(m, cells):
    return [apply(m, c) for c in cells]


def canon(cells, group):
    """Smallest normalized image of `cells` under `group` (a canonical key)."""
    return min(tuple(sorted(normalize(transform(m, cells)))) for m in group)


def orientations(cells, group):
    return {normalize(transform(m, cells)) for m in group}


def mirror_x(cells):
    return normalize([(-x, y, z) for x, y, z in cells])


# ---- enumeration -----------------------------------------------------------

def free_polyominoes(n, group=None):
    """All n-cell polyominoes (z = 0) up to `group` (default: the 8 plane
    symmetries, i.e. free polyominoes).  Returns sorted canonical tuples."""
    group = group or PLANE8
    level = {canon([(0, 0, 0)], group)}
    for _ in range(n - 1):
        nxt = set()
        for shape in level:
            s = set(shape)
            for (x, y, z) in shape:
                for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    c = (x + dx, y + dy, 0)
                    if c not in s:
                        nxt.add(canon(list(s | {c}), group))
        level = nxt
    return sorted(level)


# ---- the triangular and hexagonal lattices ------------------------------------
# Polyform Puzzler's coordinates: a triangle (x, y, z), z = 0 the up triangle
# with corners (x, y), (x+1, y), (x, y+1), z = 1 the down one with corners
# (x+1, y), (x+1, y+1), (x, y+1), on axes 60 degrees apart; a hexagon (x, y, 0)
# axial.  The 12 motions: 6 turns of a lattice point (u, v) -> (-v, u + v),
# each with or without the mirror image (u, v) -> (v, u) first.

HEX_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))


def plane_neighbours(lattice, c):
    x, y, z = c
    if lattice == "hexagonal":
        return [(x + dx, y + dy, 0) for dx, dy in HEX_DIRS]
    if z == 0:
        return [(x, y - 1, 1), (x, y, 1), (x - 1, y, 1)]
    return [(x + 1, y, 0), (x, y + 1, 0), (x, y, 0)]


def _tri_corners(c):
    x, y, z = c
    return [(x + 1, y), (x + 1, y + 1), (x, y + 1)] if z else [(x, y), (x + 1, y), (x, y + 1)]


def _plane_move(lattice, f, c):
    if lattice == "hexagonal":
        u, v = f((c[0], c[1]))
        return (u, v, 0)
    pts = [f(p) for p in _tri_corners(c)]
    mx, my = min(p[0] for p in pts), min(p[1] for p in pts)
    return (mx, my, 0 if (mx, my) in pts else 1)


def plane_normalize(cells):
    mx = min(c[0] for c in cells)
    my = min(c[1] for c in cells)
    return tuple(sorted((x - mx, y - my, z) for x, y, z in cells))


def plane_images(lattice, cells, one_sided=False):
    """The normalized images of a plane shape under its lattice's motions."""
    out = set()
    for flip in ((False,) if one_sided else (False, True)):
        cur = [_plane_move(lattice, lambda p: (p[1], p[0]), c) if flip else tuple(c) for c in cells]
        for _ in range(6):
            out.add(plane_normalize(cur))
            cur = [_plane_move(lattice, lambda p: (-p[1], p[0] + p[1]), c) for c in cur]
    return out


def plane_canon(lattice, cells, one_sided=False):
    return min(plane_images(lattice, cells, one_sided))


def free_plane(lattice, n, one_sided=False):
    """All n-cell polyiamonds or polyhexes up to the lattice's motions."""
    level = {plane_canon(lattice, [(0, 0, 0)], one_sided)}
    for _ in range(n - 1):
        nxt = set()
        for shape in level:
            s = set(shape)
            for c in shape:
                for d in plane_neighbours(lattice, c):
                    if d not in s:
                        nxt.add(plane_canon(lattice, list(s | {d}), one_sided))
        level = nxt
    return sorted(level)


def free_polycubes(n, group=None):
    """All n-cell polycubes up to `group` (default: the 24 rotations)."""
    group = group or ROT24
    level = {canon([(0, 0, 0)], group)}
    for _ in range(n - 1):
        nxt = set()
        for shape in level:
            s = set(shape)
            for (x, y, z) in shape:
                for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                    c = (x + d[0], y + d[1], z + d[2])
                    if c not in s:
                        nxt.add(canon(list(s | {c}), group))
        level = nxt
    return sorted(level)


def connected(cells, lattice="cubic"):
    cells = set(cells)
    if not cells:
        return False
    start = next(iter(cells))
    seen, todo = {start}, [start]
    while todo:
        x, y, z = todo.pop()
        if lattice != "cubic":
            near = plane_neighbours(lattice, (x, y, z))
        else:
            near = [(x + d[0], y + d[1], z + d[2])
                    for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))]
        for c in near:
            if c in cells and c not in seen:
                seen.add(c)
                todo.append(c)
    return len(seen) == len(cells)


# ---- art -------------------------------------------------------------------

def rows_to_cells(rows, on):
    """Cells of 2D art; the first string is y = 0."""
    return [(x, y, 0) for y, row in enumerate(rows) for x, ch in enumerate(row) if ch in on]


def cells_to_rows(cells, on='#', off='.'):
    s = normalize(cells)
    assert all(z == 0 for _, _, z in s)
    w = max(x for x, _, _ in s) + 1
    h = max(y for _, y, _ in s) + 1
    return [''.join(on if (x, y, 0) in s else off for x in range(w)) for y in range(h)]


def digits_to_cells(text):
    """'000 010 100' (puzzles/README.md notation, one digit per axis) -> cells."""
    return [tuple(int(ch) for ch in t) for t in text.split()]


# ---- JSON puzzle reading (an independent reading of format version 1) ------

TOP_KEYS = {"version", "name", "description", "lattice", "board", "pieces", "rotations", "mirror", "expected"}
LATTICES = ("cubic", "triangular", "hexagonal")
BOARD_KEYS = {"size", "rows", "layers", "cells"}  # one of them, and "optional" beside
PIECE_KEYS = {"name", "cells", "rows", "layers", "count", "fixed"}
EXPECTED_KEYS = {"raw", "rotations", "mirror"}


class FormatError(Exception):
    pass


def _need(cond, msg):
    if not cond:
        raise FormatError(msg)


def _cells_list(v, what):
    _need(isinstance(v, list) and v, f"{what}: non-empty list expected")
    out = []
    for c in v:
        _need(isinstance(c, list) and len(c) in (2, 3) and all(type(i) is int for i in c),
              f"{what}: bad cell {c!r}")
        out.append(tuple(c) + (0,) * (3 - len(c)))
    _need(len(set(out)) == len(out), f"{what}: duplicate cells")
    return out


def _art(v, what, on):
    _need(isinstance(v, list) and v and all(isinstance(r, str) for r in v), f"{what}: list of strings expected")
    return rows_to_cells(v, on)


def _layers(v, what, on):
    _need(isinstance(v, list) and v, f"{what}: list of layers expected")
    out = []
    for z, layer in enumerate(v):
        out += [(x, y, z) for (x, y, _) in _art(layer, f"{what}[{z}]", on)]
    return out


def read_puzzle(path):
    """Parse a puzzle file strictly.  Returns a dict with board (list of
    cells), optional (the set of optional board cells), pieces (list of dicts
    name/cells/count/count_min/fixed: count is the largest number of copies),
    rotations, mirror, expected, and the raw JSON."""
    with open(path) as f:
        raw = json.load(f, object_pairs_hook=_no_dup_keys)
    _need(isinstance(raw, dict), "top level: object expected")
    extra = set(raw) - TOP_KEYS
    _need(not extra, f"unknown keys {sorted(extra)}")
    _need(raw.get("version") == 1, "version must be 1")
    for k in ("name", "description"):
        if k in raw:
            _need(isinstance(raw[k], str), f"{k}: string expected")
    lattice = raw.get("lattice", "cubic")
    _need(lattice in LATTICES, f"lattice: one of {', '.join(LATTICES)}")
    b = raw.get("board")
    _need(isinstance(b, dict), "board: object expected")
    b = dict(b)
    optional = set(_cells_list(b.pop("optional"), "board.optional")) if "optional" in b else set()
    _need(len(b) == 1 and set(b) <= BOARD_KEYS, "board: exactly one of size/rows/layers/cells")
    if "size" in b:
        s = b["size"]
        _need(isinstance(s, list) and len(s) in (2, 3) and all(type(i) is int and i > 0 for i in s), "board.size")
        s = list(s) + [1] * (3 - len(s))
        board = [(x, y, z) for z in range(s[2]) for y in range(s[1]) for x in range(s[0])]
    elif "rows" in b:
        _need(all(ch in ".+# " for r in b["rows"] for ch in r), "board.rows: only '.', '+', '#', ' '")
        board = _art(b["rows"], "board.rows", ".+")
        optional |= set(_art(b["rows"], "board.rows", "+"))
    elif "layers" in b:
        _need(all(ch in ".+# " for l in b["layers"] for r in l for ch in r),
              "board.layers: only '.', '+', '#', ' '")
        board = _layers(b["layers"], "board.layers", ".+")
        optional |= set(_layers(b["layers"], "board.layers", "+"))
    else:
        board = _cells_list(b["cells"], "board.cells")
    _need(board and len(set(board)) == len(board), "board: empty or duplicate cells")
    _need(optional <= set(board), "board.optional: a cell off the board")

    pieces = []
    _need(isinstance(raw.get("pieces"), list) and raw["pieces"], "pieces: non-empty list expected")
    for i, p in enumerate(raw["pieces"]):
        what = f"pieces[{i}]"
        _need(isinstance(p, dict), f"{what}: object expected")
        extra = set(p) - PIECE_KEYS
        _need(not extra, f"{what}: unknown keys {sorted(extra)}")
        _need(isinstance(p.get("name"), str) and 0 < len(p["name"].encode()) <= 64, f"{what}: name")
        shapes = [k for k in ("cells", "rows", "layers") if k in p]
        _need(len(shapes) == 1, f"{what}: exactly one of cells/rows/layers")
        k = shapes[0]
        if k == "cells":
            cells = _cells_list(p["cells"], what)
        elif k == "rows":
            _need(all(ch in "#. " for r in p["rows"] for ch in r), f"{what}: rows only '#', '.', ' '")
            cells = _art(p["rows"], what, "#")
        else:
            _need(all(ch in "#. " for l in p["layers"] for r in l for ch in r), f"{what}: layers only '#', '.', ' '")
            cells = _layers(p["layers"], what, "#")
        _need(cells, f"{what}: no cells")
        count = p.get("count", 1)
        if isinstance(count, list):  # a range [min, max]
            _need(len(count) == 2 and all(type(c) is int for c in count) and 0 <= count[0] <= count[1]
                  and count[1] >= 1, f"{what}: count range")
            count_min, count = count
        else:
            _need(type(count) is int and count >= 1, f"{what}: count")
            count_min = count
        fixed = p.get("fixed", False)
        _need(isinstance(fixed, bool), f"{what}: fixed")
        _need(not (fixed and count != 1), f"{what}: fixed pieces have count 1")
        pieces.append({"name": p["name"], "cells": cells, "count": count, "count_min": count_min,
                       "fixed": fixed})
    names = [p["name"] for p in pieces]
    _need(len(set(names)) == len(names), "piece names not unique")
    rot = raw.get("rotations", "all")
    _need(rot in ("all", "one-sided", "none"), "rotations")
    mirror = raw.get("mirror", False)
    _need(isinstance(mirror, bool), "mirror")
    exp = raw.get("expected", {})
    _need(isinstance(exp, dict) and set(exp) <= EXPECTED_KEYS, "expected: only raw/rotations/mirror")
    _need(all(type(v) is int and v >= 0 for v in exp.values()), "expected: non-negative integers")
    if lattice != "cubic":
        _need("cells" in raw["board"] and all("cells" in p for p in raw["pieces"]),
              "the plane lattices: board and pieces as cell lists")
        kinds = (0, 1) if lattice == "triangular" else (0,)
        _need(all(c[2] in kinds for c in board) and all(c[2] in kinds for p in pieces for c in p["cells"]),
              f"a cell off the {lattice} lattice")
    return {"board": board, "optional": optional, "pieces": pieces, "rotations": rot, "mirror": mirror,
            "expected": exp, "json": raw, "lattice": lattice}


def _no_dup_keys(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise FormatError(f"duplicate key {k!r}")
        d[k] = v
    return d


# ---- polycube definition files (the subset used in puzzles/polycube/) ------

def read_polycube(path):
    """Returns (dims, pieces) where pieces is a list of (name, type, cells).
    Handles C: lines with layout= and L ... ~L art blocks (mobile pieces) and
    L:stationary=<name> blocks.  Art rows: first row is y = 0 (for the files
    here, which are symmetric or 2D, the direction of y does not matter)."""
    dims = None
    pieces = []
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].split('#', 1)[0].strip()   # '#' starts a comment
        i += 1
        if not line:
            continue
        if line.startswith('D:'):
            kv = dict(f.split('=') for f in line[2:].split(':'))
            dims = (int(kv['xDim']), int(kv['yDim']), int(kv['zDim']))
        elif line.startswith('C:'):
            fields = {}
            for f in line[2:].split(':'):
                k, v = f.split('=', 1)
                fields[k] = v.strip()
            cells = [tuple(int(t) for t in c.split()) for c in fields['layout'].split(',')]
            pieces.append((fields['name'], fields.get('type', 'M'), cells))
        elif line == 'L' or line.startswith('L:'):
            stationary = None
            if line.startswith('L:'):
                k, v = line[2:].split('=')
                assert k == 'stationary'
                stationary = v
            art = []
            while lines[i].strip() != '~L':
                art.append(lines[i].split())
                i += 1
            i += 1
            found = {}
            for y, row in enumerate(art):
                for x, ch in enumerate(row):
                    if ch != '.':
                        found.setdefault(ch, []).append((x, y, 0))
            for name, cells in found.items():
                pieces.append((name, 'S' if name == stationary else 'M', cells))
            if stationary is not None:
                pieces.append(('<open>', 'open', [(x, y, 0) for y, row in enumerate(art)
                                                  for x, ch in enumerate(row) if ch == '.']))
        elif line == '~D':
            break
        else:
            raise FormatError(f"{path}: unexpected line {line!r}")
    return dims, pieces

