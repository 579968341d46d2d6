// preview.js — draws a puzzle (normalised form, cell lists) before solving:
// the board with fixed pieces in place, every piece in its colour, a legend;
// and finds pieces whose cells do not hang together (a warning, not an
// error: such a piece is legal, but rarely meant); reads a puzzle file
// (a BurrTools file inflated) and lets the user choose one of a BurrTools
// file's problems.

import { h, clear } from './dom.js';
import { colorMap } from './colors.js';
import { drawTiling, drawLayers, elide } from './render2d.js';
import { Viewer3D } from './render3d.js';
import { latticeOf, isPlane, geometry } from './lattice.js';

/** Legend of piece names with their colour swatches (long names elided,
 *  whole in the tooltip; fixed pieces hatched). */
export function legend(puzzlePieces) {
  const cm = colorMap(puzzlePieces);
  return h('ul', { class: 'legend', 'aria-label': 'Piece colours' },
    (puzzlePieces || []).map((p) => h('li', { title: p.name },
      h('span', { class: `swatch${p.fixed ? ' swatch-fixed' : ''}`, style: `background:${cm.color(p.name)}` }),
      h('span', { class: 'legend-name', text: elide(p.name, 12) }),
      p.count > 1 ? h('span', { class: 'muted', text: ` ×${p.count}` }) : null,
      p.fixed ? h('span', { class: 'muted', text: ' (fixed)' }) : null)));
}

/** Names of the pieces whose cells are not all connected face to face
 *  (side to side on the triangular and hexagonal lattices). */
export function disconnectedPieces(puzzlePieces, lattice = 'cubic') {
  if (isPlane(lattice)) return disconnectedPlane(puzzlePieces, geometry(lattice));
  const out = [];
  for (const p of puzzlePieces || []) {
    const cells = p.cells || [];
    if (cells.length < 2) continue;
    const key = (c) => `${c[0]},${c[1]},${c[2] || 0}`;
    const all = new Set(cells.map(key));
    const seen = new Set([key(cells[0])]);
    const todo = [cells[0]];
    while (todo.length) {
      const [x, y, z = 0] = todo.pop();
      for (const [dx, dy, dz] of [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]) {
        const n = [x + dx, y + dy, z + dz], k = key(n);
        if (all.has(k) && !seen.has(k)) { seen.add(k); todo.push(n); }
      }
    }
    if (seen.size < all.size) out.push(p.name);
  }
  return out;
}

function disconnectedPlane(puzzlePieces, geom) {
  const out = [];
  for (const p of puzzlePieces || []) {
    const cells = (p.cells || []).map(geom.cell);
    if (cells.length < 2) continue;
    const all = new Set(cells.map(geom.key));
    const seen = new Set([geom.key(cells[0])]);
    const todo = [cells[0]];
    while (todo.length) {
      for (const n of geom.neighbours(todo.pop())) {
        const k = geom.key(n);
        if (all.has(k) && !seen.has(k)) { seen.add(k); todo.push(n); }
      }
    }
    if (seen.size < all.size) out.push(p.name);
  }
  return out;
}

/**
 * Renders the preview into `area`; returns { destroy() } for 3D viewers.
 * puzzle: {board: {cells}, pieces: [{name, cells, count, fixed}]}, dims: 2|3
 */
export function renderPreview(area, puzzle, dims) {
  const lattice = latticeOf(puzzle); // triangles and hexagons are drawn as such
  const cm = colorMap(puzzle.pieces);
  const board = puzzle.board?.cells || [];
  const fixed = puzzle.pieces.filter((p) => p.fixed).map((p) => ({ name: p.name, color: cm.color(p.name), cells: p.cells, fixed: true }));
  const viewers = [];

  const boardFig = h('figure', { class: 'preview-board' });
  if (dims === 2) {
    boardFig.append(drawTiling(fixed, { board, cell: 28, label: 'The board', lattice }));
  } else {
    boardFig.append(drawLayers(fixed, { board, cell: 22 }));
  }
  boardFig.append(h('figcaption', { text: fixed.length ? 'Board (fixed pieces in place)' : 'Board' }));

  const list = h('ul', { class: 'piece-grid', 'aria-label': 'Pieces' });
  for (const p of puzzle.pieces) {
    const piece = { name: p.name, color: cm.color(p.name), cells: p.cells, fixed: p.fixed };
    const item = h('li', { class: 'piece-card', title: p.name });
    if (dims === 2) {
      item.append(drawTiling([piece], { cell: 14, labels: false, label: `Piece ${p.name}`, lattice }));
    } else {
      const canvas = h('canvas', { class: 'piece-3d', role: 'img', tabindex: 0, 'aria-label': `Piece ${p.name} in 3D; drag or use the arrow keys to turn it` });
      item.append(canvas);
      viewers.push(() => new Viewer3D(canvas, [piece], { height: 96 }));
    }
    item.append(h('span', { class: 'piece-name' }, elide(p.name, 10),
      p.count > 1 ? h('span', { class: 'muted', text: ` ×${p.count}` }) : null,
      p.fixed ? h('span', { class: 'muted', text: ' (fixed)' }) : null));
    list.append(item);
  }
  area.append(boardFig, h('h3', { text: 'Pieces' }), list);
  // Canvases need to be in the document to know their size.
  const made = viewers.map((make) => make());
  return { destroy() { made.forEach((v) => v.destroy()); } };
}

/**
 * A puzzle file's text: JSON and polycube text as they are, a BurrTools
 * .xmpuzzle (gzip-compressed XML) inflated to its XML in the browser, which
 * the daemon reads as {"xmpuzzle": ...}.
 */
export async function readPuzzleFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The problems of a BurrTools file's XML, as the daemon and `--problem`
 * number them: [{number, name}], from 1 in the file's order (the
 * <problem>s of <puzzle><problems>).  [] when the text is no BurrTools
 * puzzle: the daemon says what is wrong with it.
 */
export function burrToolsProblems(text) {
  if (!String(text).trimStart().startsWith('<')) return [];
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const root = doc.documentElement;
  if (!root || root.nodeName !== 'puzzle' || doc.getElementsByTagName('parsererror').length) return [];
  const out = [];
  for (const list of root.children) {
    if (list.nodeName !== 'problems') continue;
    for (const p of list.children) if (p.nodeName === 'problem') out.push({ number: out.length + 1, name: p.getAttribute('name') || '' });
  }
  return out;
}

/**
 * A chooser of a BurrTools file's problem, shown only when the file has
 * several: "2: Square" (number from 1, then the name).  set(problems)
 * fills it (the choice kept when the list is the same), value() is the
 * chosen number, or undefined when hidden (the daemon's default: the
 * first).  onChange(number) may answer false (or a promise of it) to put
 * the previous choice back; `what` ends the note under it.
 */
export function problemChooser(testid, onChange, what = 'the one chosen is the one previewed, estimated and solved') {
  const select = h('select', { id: testid, 'data-testid': testid });
  const note = h('small', { class: 'help', 'data-testid': `${testid}-note` });
  const el = h('div', { class: 'field problem-chooser', hidden: true },
    h('label', { for: testid, text: 'Problem of the BurrTools file' }), select, note);
  let shown = '', last = '';
  select.addEventListener('change', async () => {
    const ok = await onChange?.(Number(select.value));
    if (ok === false) select.value = last; else last = select.value;
  });
  return {
    el,
    set(problems) {
      const sig = JSON.stringify(problems);
      if (sig === shown) return;
      shown = sig;
      clear(select);
      for (const p of problems) select.append(h('option', { value: String(p.number), text: `${p.number}: ${p.name || '(no name)'}` }));
      note.textContent = `The file holds ${problems.length} problems; ${what}.`;
      el.hidden = problems.length < 2;
      last = select.value;
    },
    value() { return el.hidden ? undefined : Number(select.value); },
  };
}
