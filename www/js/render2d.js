// render2d.js — SVG drawing of 2D tilings: coloured cells, thick borders
// between pieces, names at centroids (long ones elided, the whole name in
// the tooltip), fixed pieces hatched, pieces faded on request (the
// comparison), plus layer views of 3D puzzles and small piece thumbnails.
// Squares are drawn y down, like the text output, as rects; triangles and
// hexagons (opts.lattice) as polygons, y up as Polyform Puzzler draws them,
// their geometry from lattice.js.

import { s, h } from './dom.js';
import { BOARD_FILL, BOARD_STROKE, textColorFor } from './colors.js';
import { geometry, isPlane, screenBounds, insidePolygon } from './lattice.js';

// piece names in a face where l and I, O and 0 differ (the one-sided
// pentominoes are named I and l): a monospace one, also in exported SVGs
const FONT = '"DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", ui-monospace, monospace';
const MAX_LABEL = 4; // characters of a name drawn in a cell; the tooltip has all
let hatchSeq = 0;

/** "Hexomino-12" → "Hex…" when longer than n characters. */
/* Hatching for fixed pieces: one pattern per drawing (ids must be unique
 * in the page, and several drawings share it); its id, or null when no
 * piece is fixed. */
function hatchPattern(svg, pieces, cell) {
  if (!pieces.some((p) => p.fixed)) return null;
  const id = `hatch-${++hatchSeq}`;
  const step = Math.max(4, cell / 4);
  svg.append(s('defs', {}, s('pattern', {
    id, patternUnits: 'userSpaceOnUse', width: step, height: step, patternTransform: 'rotate(45)',
  }, s('line', { x1: 0, y1: 0, x2: 0, y2: step, stroke: '#4a525c', 'stroke-width': Math.max(1, step / 4), 'stroke-opacity': 0.55 }))));
  return id;
}

/* A piece's group: its colour, fixed and dimmed flags, and its name as a title. */
function pieceGroup(p) {
  const g = s('g', {
    'data-piece': p.name, fill: p.color, 'data-fixed': p.fixed ? '1' : null,
    'data-dim': p.dim ? '1' : null, opacity: p.dim ? 0.22 : null,
  });
  g.append(s('title', { text: p.fixed ? `${p.name} (fixed)` : p.name }));
  return g;
}

export function elide(name, n) {
  const chars = [...String(name)];
  return chars.length <= n ? String(name) : `${chars.slice(0, n - 1).join('')}…`;
}

function boundsOf(cellLists) {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const cells of cellLists) {
    for (const [x, y] of cells) {
      if (x < minX) minX = x; if (x > maxX) maxX = x;
      if (y < minY) minY = y; if (y > maxY) maxY = y;
    }
  }
  if (minX === Infinity) return { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  return { minX, minY, maxX, maxY };
}

/** The cell of the piece nearest its centroid (where the label goes). */
function labelSpot(cells) {
  let cx = 0, cy = 0;
  for (const [x, y] of cells) { cx += x + 0.5; cy += y + 0.5; }
  cx /= cells.length; cy /= cells.length;
  // Use the centroid when a label-sized box around it lies inside the piece.
  const own = new Set(cells.map(([x, y]) => `${x},${y}`));
  const m = 0.3;
  const inside = [[-m, -m], [m, -m], [-m, m], [m, m]]
    .every(([dx, dy]) => own.has(`${Math.floor(cx + dx)},${Math.floor(cy + dy)}`));
  if (inside) return [cx, cy];
  let best = cells[0], bd = Infinity;
  for (const c of cells) {
    const d = (c[0] + 0.5 - cx) ** 2 + (c[1] + 0.5 - cy) ** 2;
    if (d < bd) { bd = d; best = c; }
  }
  return [best[0] + 0.5, best[1] + 0.5];
}

/**
 * Draws a tiling as an SVG element.
 * pieces: [{name, color, cells: [[x,y,...]]}] (one entry per placed piece)
 * opts.board: cells drawn as empty board underneath (outlined)
 * opts.bounds: {minX,minY,maxX,maxY} to share a frame between drawings
 * opts.cell: cell size in px (viewBox units), opts.labels: draw names
 * opts.maxWidth: CSS max width in px (default: natural size)
 * A piece may carry fixed: true (drawn hatched: it does not move),
 * dim: true (drawn faded, as unchanged pieces of a comparison) and marks:
 * one entry per cell, null or {n, color}: the cell's puzzle colour n
 * (Puzzle JSON "colors"), drawn as a dot of that colour.
 */
export function drawTiling(pieces, opts = {}) {
  if (isPlane(opts.lattice)) return drawPlane(pieces, opts);
  const cell = opts.cell || 32;
  const pad = opts.pad ?? 3;
  const board = opts.board || [];
  const b = opts.bounds || boundsOf([board, ...pieces.map((p) => p.cells)]);
  const W = (b.maxX - b.minX + 1) * cell + 2 * pad;
  const H = (b.maxY - b.minY + 1) * cell + 2 * pad;
  const px = (x) => (x - b.minX) * cell + pad;
  const py = (y) => (y - b.minY) * cell + pad;

  const svg = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    viewBox: `0 0 ${W} ${H}`,
    width: W, height: H,
    role: 'img',
    'aria-label': opts.label || 'Puzzle drawing',
    class: 'tiling',
    'font-family': FONT,
  });
  if (opts.maxWidth) svg.style.maxWidth = `${opts.maxWidth}px`;

  // owner: "x,y" → piece index (or -1 for an uncovered board cell)
  const owner = new Map();
  for (const [x, y] of board) owner.set(`${x},${y}`, -1);
  pieces.forEach((p, i) => { for (const [x, y] of p.cells) owner.set(`${x},${y}`, i); });

  if (board.length) {
    const g = s('g', { class: 'board', fill: BOARD_FILL });
    for (const [x, y] of board) {
      if (owner.get(`${x},${y}`) !== -1) continue;
      g.append(s('rect', { x: px(x), y: py(y), width: cell, height: cell }));
    }
    svg.append(g);
  }

  const hatch = hatchPattern(svg, pieces, cell);

  // Cells and labels, one group per piece.
  const groups = pieces.map((p) => {
    const g = pieceGroup(p);
    for (const [x, y] of p.cells) g.append(s('rect', { x: px(x), y: py(y), width: cell, height: cell }));
    if (hatch) for (const [x, y] of p.fixed ? p.cells : []) g.append(s('rect', { x: px(x), y: py(y), width: cell, height: cell, fill: `url(#${hatch})` }));
    p.cells.forEach(([x, y], j) => { if (p.marks?.[j]) g.append(markDot(px(x) + cell / 2, py(y) + cell / 2, cell, p.marks[j])); });
    svg.append(g);
    return g;
  });

  // Edges: thin inside a piece, thick between pieces / at the outside.
  let thin = '', thick = '', boardEdge = '';
  const dirs = [[1, 0], [0, 1], [-1, 0], [0, -1]];
  for (const [key, o] of owner) {
    const [x, y] = key.split(',').map(Number);
    for (const [dx, dy] of dirs) {
      const nk = `${x + dx},${y + dy}`;
      const n = owner.has(nk) ? owner.get(nk) : undefined;
      // Draw each shared edge once (from the cell on the left/top side) unless it is an outside edge.
      if (n !== undefined && (dx < 0 || dy < 0)) continue;
      let seg;
      if (dx === 1) seg = `M${px(x + 1)} ${py(y)}V${py(y + 1)}`;
      else if (dx === -1) seg = `M${px(x)} ${py(y)}V${py(y + 1)}`;
      else if (dy === 1) seg = `M${px(x)} ${py(y + 1)}H${px(x + 1)}`;
      else seg = `M${px(x)} ${py(y)}H${px(x + 1)}`;
      if (n === o) { if (o === -1) boardEdge += seg; else thin += seg; }
      else if (o === -1 && n === undefined) boardEdge += seg;
      else thick += seg;
    }
  }
  const sw = Math.max(1.5, cell / 12);
  if (boardEdge) svg.append(s('path', { d: boardEdge, stroke: BOARD_STROKE, 'stroke-width': 1, fill: 'none' }));
  if (thin) svg.append(s('path', { d: thin, stroke: '#000', 'stroke-opacity': 0.18, 'stroke-width': 1, fill: 'none' }));
  if (thick) svg.append(s('path', { d: thick, stroke: '#1b1f24', 'stroke-width': sw, 'stroke-linecap': 'square', fill: 'none' }));

  if (opts.labels !== false) {
    pieces.forEach((p, i) => {
      if (!p.cells.length) return;
      const [lx, ly] = labelSpot(p.cells);
      const text = elide(p.name, MAX_LABEL);
      const len = [...text].length;
      const size = Math.min(cell * 0.55, (cell * 1.6) / Math.max(1, len));
      groups[i].append(s('text', {
        x: px(lx), y: py(ly), 'text-anchor': 'middle', 'dominant-baseline': 'central',
        'font-size': size.toFixed(1), 'font-weight': 600, fill: textColorFor(p.color),
        'pointer-events': 'none', text,
      }));
    });
  }
  return svg;
}

/** A cell's puzzle colour: a dot of it at (cx, cy), in a cell of size cell
 *  (relatively larger in small drawings), named in its title. */
export function markDot(cx, cy, cell, mark) {
  return s('circle', {
    cx: cx.toFixed(2), cy: cy.toFixed(2), r: Math.min(cell * 0.3, 2.5 + cell * 0.1).toFixed(2), fill: mark.color,
    stroke: '#1b1f24', 'stroke-width': Math.max(0.6, cell / 40).toFixed(2), class: 'cell-mark', 'data-color': mark.n,
    'pointer-events': 'none',
  }, s('title', { text: `colour ${mark.n}` }));
}

/** The drawing's frame, shared by both kinds of drawing. */
function tilingSvg(W, H, opts) {
  const svg = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    viewBox: `0 0 ${W} ${H}`,
    width: W, height: H,
    role: 'img',
    'aria-label': opts.label || 'Puzzle drawing',
    class: 'tiling',
    'font-family': FONT,
  });
  if (opts.maxWidth) svg.style.maxWidth = `${opts.maxWidth}px`;
  return svg;
}

/** Where a piece's name goes on a plane lattice: the centre of its cells
 *  when a label-sized box around it lies inside the piece, else the centre
 *  of the cell nearest to it (screen units). */
function planeLabelSpot(geom, cells) {
  const centres = cells.map((c) => geom.centre(c));
  const cx = centres.reduce((a, p) => a + p[0], 0) / centres.length;
  const cy = centres.reduce((a, p) => a + p[1], 0) / centres.length;
  const polys = cells.map((c) => geom.polygon(c));
  const inPiece = (X, Y) => polys.some((p) => insidePolygon(p, X, Y));
  const m = 0.22 * geom.scale;
  if ([[0, 0], [-m, -m], [m, -m], [-m, m], [m, m]].every(([dx, dy]) => inPiece(cx + dx, cy + dy))) return [cx, cy];
  let best = centres[0], bd = Infinity;
  for (const p of centres) {
    const d = (p[0] - cx) ** 2 + (p[1] - cy) ** 2;
    if (d < bd) { bd = d; best = p; }
  }
  return best;
}

/**
 * drawTiling on the triangular and hexagonal lattices (opts.lattice): the
 * same drawing with polygons; each cell's polygon carries data-x, data-y
 * and data-z.  opts.cell is the size of a square of about a cell's area.
 */
function drawPlane(pieces, opts) {
  const geom = geometry(opts.lattice);
  const cell = opts.cell || 32;
  const pad = opts.pad ?? 3;
  const board = (opts.board || []).map(geom.cell);
  const placed = pieces.map((p) => ({ ...p, cells: p.cells.map(geom.cell) }));
  const b = screenBounds(geom, [board, ...placed.map((p) => p.cells)]);
  const W = +((b.maxX - b.minX) * cell + 2 * pad).toFixed(2);
  const H = +((b.maxY - b.minY) * cell + 2 * pad).toFixed(2);
  const pt = ([X, Y]) => `${((X - b.minX) * cell + pad).toFixed(2)} ${((Y - b.minY) * cell + pad).toFixed(2)}`;
  const points = (c) => geom.polygon(c).map(pt).join(' ');
  const poly = (c, extra = {}) => s('polygon', { points: points(c), 'data-x': c[0], 'data-y': c[1], 'data-z': c[2], ...extra });
  const svg = tilingSvg(W, H, opts);
  svg.dataset.lattice = geom.id;

  // owner: key → piece index (or -1 for an uncovered board cell)
  const owner = new Map();
  const cellOf = new Map();
  for (const c of board) { owner.set(geom.key(c), -1); cellOf.set(geom.key(c), c); }
  placed.forEach((p, i) => { for (const c of p.cells) { owner.set(geom.key(c), i); cellOf.set(geom.key(c), c); } });

  if (board.length) {
    const g = s('g', { class: 'board', fill: BOARD_FILL });
    for (const c of board) if (owner.get(geom.key(c)) === -1) g.append(poly(c));
    svg.append(g);
  }
  const hatch = hatchPattern(svg, placed, cell);
  const groups = placed.map((p) => {
    const g = pieceGroup(p);
    // a hairline of the cell's own colour closes the seams between polygons
    for (const c of p.cells) g.append(poly(c, { stroke: p.color, 'stroke-width': 0.5 }));
    if (hatch && p.fixed) for (const c of p.cells) g.append(s('polygon', { points: points(c), fill: `url(#${hatch})` }));
    p.cells.forEach((c, j) => {
      if (!p.marks?.[j]) return;
      const [X, Y] = geom.centre(c);
      g.append(markDot((X - b.minX) * cell + pad, (Y - b.minY) * cell + pad, cell * (geom.id === 'triangular' ? 0.7 : 1), p.marks[j]));
    });
    svg.append(g);
    return g;
  });

  // Sides: thin inside a piece, thick between pieces and at the outside;
  // a side between two cells is drawn once, from the cell whose key is less.
  let thin = '', thick = '', boardEdge = '';
  for (const [k, o] of owner) {
    const c = cellOf.get(k);
    for (const side of geom.sides(c)) {
      const nk = geom.key(side.n);
      const n = owner.has(nk) ? owner.get(nk) : undefined;
      if (n !== undefined && nk < k) continue;
      const seg = `M${pt(side.a)}L${pt(side.b)}`;
      if (n === o) { if (o === -1) boardEdge += seg; else thin += seg; }
      else if (o === -1 && n === undefined) boardEdge += seg;
      else thick += seg;
    }
  }
  const sw = Math.max(1.5, cell / 12);
  if (boardEdge) svg.append(s('path', { d: boardEdge, stroke: BOARD_STROKE, 'stroke-width': 1, fill: 'none' }));
  if (thin) svg.append(s('path', { d: thin, stroke: '#000', 'stroke-opacity': 0.18, 'stroke-width': 1, fill: 'none' }));
  if (thick) svg.append(s('path', { d: thick, stroke: '#1b1f24', 'stroke-width': sw, 'stroke-linecap': 'round', 'stroke-linejoin': 'round', fill: 'none' }));

  if (opts.labels !== false) {
    placed.forEach((p, i) => {
      if (!p.cells.length) return;
      const [lx, ly] = planeLabelSpot(geom, p.cells);
      const text = elide(p.name, MAX_LABEL);
      const len = [...text].length;
      const size = Math.min(cell * 0.5, (cell * 1.4) / Math.max(1, len));
      groups[i].append(s('text', {
        x: ((lx - b.minX) * cell + pad).toFixed(2), y: ((ly - b.minY) * cell + pad).toFixed(2),
        'text-anchor': 'middle', 'dominant-baseline': 'central',
        'font-size': size.toFixed(1), 'font-weight': 600, fill: textColorFor(p.color),
        'pointer-events': 'none', text,
      }));
    });
  }
  return svg;
}

/** Layer view of a 3D arrangement: one small grid per z, like the text output. */
export function drawLayers(pieces, opts = {}) {
  const board = opts.board || [];
  const all = [board, ...pieces.map((p) => p.cells)];
  let minZ = Infinity, maxZ = -Infinity;
  for (const cells of all) for (const c of cells) { const z = c[2] || 0; minZ = Math.min(minZ, z); maxZ = Math.max(maxZ, z); }
  if (minZ === Infinity) { minZ = 0; maxZ = 0; }
  const bounds = boundsOf(all);
  const wrap = h('div', { class: 'layers', 'data-testid': opts.testid || null });
  for (let z = minZ; z <= maxZ; z++) {
    const onZ = (cells) => cells.filter((c) => (c[2] || 0) === z);
    const lp = pieces.map((p) => ({
      ...p, cells: onZ(p.cells), marks: p.marks?.filter((_, j) => (p.cells[j][2] || 0) === z),
    })).filter((p) => p.cells.length);
    const svg = drawTiling(lp, {
      board: onZ(board), bounds, cell: opts.cell || 26, labels: opts.labels,
      label: `Layer z = ${z}`, pad: opts.pad,
    });
    wrap.append(h('figure', { class: 'layer', 'data-testid': 'layer' }, svg, h('figcaption', { text: `z = ${z}` })));
  }
  return wrap;
}

/** Serialises an SVG element into a standalone SVG document string. */
export function svgToString(svg) {
  const clone = svg.cloneNode(true);
  clone.removeAttribute('style');
  clone.removeAttribute('class');
  const bg = s('rect', { x: 0, y: 0, width: '100%', height: '100%', fill: '#ffffff' });
  clone.insertBefore(bg, clone.firstChild);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(clone)}`;
}

/** Renders an SVG element into a PNG Blob at the given scale. */
export function svgToPng(svg, scale = 2) {
  return new Promise((resolve, reject) => {
    const text = svgToString(svg);
    const w = Number(svg.getAttribute('width')), hgt = Number(svg.getAttribute('height'));
    const img = new Image();
    img.onload = () => {
      const c = document.createElement('canvas');
      c.width = Math.round(w * scale); c.height = Math.round(hgt * scale);
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0, c.width, c.height);
      c.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
    };
    img.onerror = () => reject(new Error('could not render the SVG'));
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  });
}
