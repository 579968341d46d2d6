// lattice.js — the geometry of the three lattices a puzzle lives on, in one
// place: which polygon a cell is on the screen, its sides and the cell
// across each, its neighbours, the cell under a point, and the motions of
// the plane lattices (turns and mirror images) with the normal form of a
// shape.  Every 2D drawing (render2d.js, the designer) asks this module.
//
// Coordinates are Polyform Puzzler's (include/tessera/lattice.h):
//  - cubic: [x, y, z] unit squares (z = 0) or cubes, drawn y down as the
//    text output prints them;
//  - triangular: [x, y, z] on axes 60 degrees apart, z = 0 the up triangle
//    with corners (x, y), (x+1, y), (x, y+1), z = 1 the down one with
//    corners (x+1, y), (x+1, y+1), (x, y+1);
//  - hexagonal: [x, y] axial (z = 0), neighbours (x±1, y), (x, y±1),
//    (x+1, y-1), (x-1, y+1).
// On the plane lattices a lattice point (u, v) is at (u + v/2, v·√3/2)
// with y up, as Polyform Puzzler draws them; screen units here are y down,
// so that point is at (u + v/2, -v·√3/2) times the lattice's scale.

const S3 = Math.sqrt(3);

/** The lattices, as the puzzle's "lattice" key names them. */
export const LATTICES = [
  { id: 'cubic', label: 'Squares (and cubes)' },
  { id: 'triangular', label: 'Triangles (polyiamonds)' },
  { id: 'hexagonal', label: 'Hexagons (polyhexes)' },
];

/** The lattice of a puzzle (normalised or as written): absent is cubic. */
export function latticeOf(puzzle) {
  const l = puzzle?.lattice;
  return l === 'triangular' || l === 'hexagonal' ? l : 'cubic';
}

/** True for the triangular and hexagonal lattices. */
export const isPlane = (lattice) => lattice === 'triangular' || lattice === 'hexagonal';

// ---- squares -----------------------------------------------------------------

const square = {
  id: 'cubic',
  scale: 1,
  key: (c) => `${c[0]},${c[1]}`,
  cell: (c) => [c[0], c[1], 0],
  polygon: ([x, y]) => [[x, y], [x + 1, y], [x + 1, y + 1], [x, y + 1]],
  centre: ([x, y]) => [x + 0.5, y + 0.5],
  sides: ([x, y]) => [
    { n: [x + 1, y, 0], a: [x + 1, y], b: [x + 1, y + 1] },
    { n: [x, y + 1, 0], a: [x, y + 1], b: [x + 1, y + 1] },
    { n: [x - 1, y, 0], a: [x, y], b: [x, y + 1] },
    { n: [x, y - 1, 0], a: [x, y], b: [x + 1, y] },
  ],
  neighbours: ([x, y]) => [[x + 1, y, 0], [x - 1, y, 0], [x, y + 1, 0], [x, y - 1, 0]],
  cellAt: (X, Y) => [Math.floor(X), Math.floor(Y), 0],
};

// ---- triangles ------------------------------------------------------------------

const TRI = 1.5; // side of a triangle in "cell" units: about a square's area
const tpt = (u, v) => [(u + v / 2) * TRI, (-v * S3 / 2) * TRI];

/** The corners of a triangle, as lattice points. */
export function triCorners([x, y, z]) {
  return z ? [[x + 1, y], [x + 1, y + 1], [x, y + 1]] : [[x, y], [x + 1, y], [x, y + 1]];
}

/** The triangle with these three corners (lattice points). */
function triFromCorners(pts) {
  const mx = Math.min(...pts.map((p) => p[0])), my = Math.min(...pts.map((p) => p[1]));
  return [mx, my, pts.some((p) => p[0] === mx && p[1] === my) ? 0 : 1];
}

const triangle = {
  id: 'triangular',
  scale: TRI,
  key: (c) => `${c[0]},${c[1]},${c[2] ? 1 : 0}`,
  cell: (c) => [c[0], c[1], c[2] ? 1 : 0],
  polygon: (c) => triCorners(c).map(([u, v]) => tpt(u, v)),
  centre: (c) => {
    const p = triCorners(c).map(([u, v]) => tpt(u, v));
    return [(p[0][0] + p[1][0] + p[2][0]) / 3, (p[0][1] + p[1][1] + p[2][1]) / 3];
  },
  sides: ([x, y, z]) => (z
    ? [
      { n: [x + 1, y, 0], a: tpt(x + 1, y), b: tpt(x + 1, y + 1) },
      { n: [x, y + 1, 0], a: tpt(x + 1, y + 1), b: tpt(x, y + 1) },
      { n: [x, y, 0], a: tpt(x, y + 1), b: tpt(x + 1, y) },
    ]
    : [
      { n: [x, y - 1, 1], a: tpt(x, y), b: tpt(x + 1, y) },
      { n: [x, y, 1], a: tpt(x + 1, y), b: tpt(x, y + 1) },
      { n: [x - 1, y, 1], a: tpt(x, y + 1), b: tpt(x, y) },
    ]),
  neighbours: ([x, y, z]) => (z ? [[x + 1, y, 0], [x, y + 1, 0], [x, y, 0]] : [[x, y - 1, 1], [x, y, 1], [x - 1, y, 1]]),
  cellAt: (X, Y) => {
    const v = -Y / TRI / (S3 / 2), u = X / TRI - v / 2;
    const x = Math.floor(u), y = Math.floor(v);
    return [x, y, (u - x) + (v - y) >= 1 ? 1 : 0];
  },
};

// ---- hexagons ---------------------------------------------------------------------

const HEX = 1.05; // distance between centres in "cell" units: about a square's area
const hpt = (u, v) => [(u + v / 2) * HEX, (-v * S3 / 2) * HEX];
// the six directions, counterclockwise from +x, and the corners between
// them (in thirds of lattice units): side k lies between corners k and k+1
const HEX_DIRS = [[1, 0], [0, 1], [-1, 1], [-1, 0], [0, -1], [1, -1]];
const HEX_CORNERS = [[2, -1], [1, 1], [-1, 2], [-2, 1], [-1, -1], [1, -2]];
const hcorner = ([x, y], k) => hpt(x + HEX_CORNERS[k % 6][0] / 3, y + HEX_CORNERS[k % 6][1] / 3);

const hexagon = {
  id: 'hexagonal',
  scale: HEX,
  key: (c) => `${c[0]},${c[1]}`,
  cell: (c) => [c[0], c[1], 0],
  polygon: (c) => HEX_CORNERS.map((_, k) => hcorner(c, k)),
  centre: ([x, y]) => hpt(x, y),
  sides: (c) => HEX_DIRS.map(([dx, dy], k) => ({ n: [c[0] + dx, c[1] + dy, 0], a: hcorner(c, k), b: hcorner(c, k + 1) })),
  neighbours: ([x, y]) => HEX_DIRS.map(([dx, dy]) => [x + dx, y + dy, 0]),
  cellAt: (X, Y) => {
    // axial rounding through cube coordinates
    const v = -Y / HEX / (S3 / 2), u = X / HEX - v / 2, w = -u - v;
    let ru = Math.round(u), rv = Math.round(v);
    const rw = Math.round(w);
    const du = Math.abs(ru - u), dv = Math.abs(rv - v), dw = Math.abs(rw - w);
    if (du > dv && du > dw) ru = -rv - rw;
    else if (dv > dw) rv = -ru - rw;
    return [ru, rv, 0];
  },
};

const GEOMETRIES = { cubic: square, triangular: triangle, hexagonal: hexagon };

/**
 * The geometry of a lattice: {id, scale, key(c), cell(c) (the cell as
 * [x, y, z]), polygon(c) (screen-unit points), centre(c), sides(c)
 * ([{n: the cell across, a, b: the side's ends}]), neighbours(c),
 * cellAt(X, Y) (the cell under a screen-unit point)}.
 */
export function geometry(lattice) {
  return GEOMETRIES[lattice] || square;
}

/** The screen-unit box of cells: {minX, minY, maxX, maxY}. */
export function screenBounds(geom, cellLists) {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const cells of cellLists) {
    for (const c of cells) {
      for (const [X, Y] of geom.polygon(c)) {
        if (X < minX) minX = X; if (X > maxX) maxX = X;
        if (Y < minY) minY = Y; if (Y > maxY) maxY = Y;
      }
    }
  }
  if (minX === Infinity) return { minX: 0, minY: 0, maxX: 1, maxY: 1 };
  return { minX, minY, maxX, maxY };
}

/** How many cell widths a set of cells spans across the screen (squares:
 *  the columns), to choose a drawing's cell size. */
export function widthUnits(lattice, cells) {
  if (!cells.length) return 1;
  if (!isPlane(lattice)) {
    const xs = cells.map((c) => c[0]);
    return Math.max(...xs) - Math.min(...xs) + 1;
  }
  const b = screenBounds(geometry(lattice), [cells]);
  return b.maxX - b.minX;
}

/** Is the screen-unit point (X, Y) inside the polygon? */
export function insidePolygon(poly, X, Y) {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i], [xj, yj] = poly[j];
    if ((yi > Y) !== (yj > Y) && X < ((xj - xi) * (Y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

// ---- motions of the plane lattices ------------------------------------------------

/** A sixth of a turn counterclockwise about the origin, of a lattice point. */
const turnPoint = ([u, v]) => [-v, u + v];
/** The mirror image in the line u = v (the axes swapped), of a lattice point. */
const mirrorPoint = ([u, v]) => [v, u];

/** A cell of the plane lattice moved by a motion of its points. */
function moveCell(lattice, f, c) {
  if (lattice === 'triangular') return triFromCorners(triCorners(c).map(f));
  const [u, v] = f([c[0], c[1]]);
  return [u, v, 0];
}

/** A sixth of a turn (counterclockwise, y up) of a cell. */
export const turnCell = (lattice, c) => moveCell(lattice, turnPoint, c);
/** The mirror image of a cell. */
export const mirrorCell = (lattice, c) => moveCell(lattice, mirrorPoint, c);

/**
 * The 12 motions of a plane lattice (6 turns, each with or without the
 * mirror image first) as functions on a cell; one-sided: the 6 turns.
 */
export function planeMotions(lattice, oneSided = false) {
  const out = [];
  for (const flip of oneSided ? [false] : [false, true]) {
    for (let k = 0; k < 6; k++) {
      out.push((c) => {
        let d = flip ? mirrorCell(lattice, c) : [c[0], c[1], c[2] || 0];
        for (let i = 0; i < k; i++) d = turnCell(lattice, d);
        return d;
      });
    }
  }
  return out;
}

/**
 * A plane shape translated so that its least x and y are 0 (a lattice
 * translation: a triangle keeps its kind), sorted by y, x, z; hexagons as
 * [x, y, 0].
 */
export function normalizePlane(lattice, cells) {
  const mx = Math.min(...cells.map((c) => c[0])), my = Math.min(...cells.map((c) => c[1]));
  return cells.map((c) => [c[0] - mx, c[1] - my, lattice === 'triangular' ? (c[2] ? 1 : 0) : 0])
    .sort((a, b) => a[1] - b[1] || a[0] - b[0] || a[2] - b[2]);
}

/** A cell as the puzzle JSON writes it: hexagons [x, y], others [x, y, z]. */
export const jsonCell = (lattice, c) => (lattice === 'hexagonal' ? [c[0], c[1]] : [c[0], c[1], c[2] || 0]);
