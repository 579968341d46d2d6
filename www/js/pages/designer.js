// pages/designer.js — the puzzle designer (#/designer, and #/designer/job/{id}
// to start from a job's puzzle): on squares and cubes, triangles or hexagons
// (the lattice chooser; lattice.js draws and hit-tests the plane lattices),
// draw the board cell by cell, by rectangle (a parallelogram on the plane
// lattices) or by flood fill, required or optional, as one layer or stacked
// layers; pick pieces from the generated sets (shapes.js), the Soma, Tetris and
// Bedlam sets and any library puzzle, or draw one; set each piece's count or
// range and see the balance live; save and load the design as puzzle JSON,
// open any puzzle file (a BurrTools file's problem chosen when it has
// several) and save it as a BurrTools file (the daemon writes it: POST
// /api/v1/convert); then validate, estimate, submit it as a job, or submit
// a batch of its hole variants (POST /api/v1/batches), counting as the job
// options' fields say (built from the daemon's list, options.js).
// Colours (Puzzle JSON "colors"): each board cell and piece cell may carry
// one (1..63, shown in the puzzle's palette or a fixed one), painted with
// the colour brush; the allowed pairs (piece colour -> board colour) are
// edited in a list; all of it is read from and written back to the JSON.

import { h, s, clear, downloadBlob, slug } from '../dom.js';
import { api, postJSON } from '../api.js';
import { pieceColor, cellColor, BOARD_FILL, BOARD_STROKE } from '../colors.js';
import { SETS, setPieces, NAME_SOURCES, canonical, GROUPS, balance, PLANE_SETS, planeSetPieces, canonicalPlane } from '../shapes.js';
import { LATTICES, latticeOf, isPlane, geometry, screenBounds, planeMotions, jsonCell } from '../lattice.js';
import { drawTiling, markDot } from '../render2d.js';
import { optionsList, optionField, fieldValues } from '../options.js';
import { disconnectedPieces, readPuzzleFile, burrToolsProblems, problemChooser } from '../preview.js';
import { pieceEditor, isoPiece, normalizeColoured } from '../pieceeditor.js';

const MAX_SIDE = 40;   // board width and height in the editor
const MAX_LAYERS = 8;
const MAX_COLOUR = 63;  // Puzzle JSON's colours are 1..63 (0 neutral)
const OPTIONS_SHOWN = ['unique', 'limit']; // of the daemon's list: how to count
const LIBRARY_SETS = [
  { file: 'soma-cube.json', label: 'Soma (7)' },
  { file: 'tetris-cube.json', label: 'Tetris Cube (12)' },
  { file: 'bedlam-cube.json', label: 'Bedlam (13)' },
];

const key = (x, y, z) => `${x},${y},${z}`;

/** A small drawing of a piece on the triangular or hexagonal lattice
 *  (marks: its cells' colours, as drawTiling takes them). */
function planeThumb(lattice, cells, color, size = 44, marks = null) {
  const geom = geometry(lattice);
  const b = screenBounds(geom, [cells.map(geom.cell)]);
  const cell = Math.min(12, size / Math.max(b.maxX - b.minX, b.maxY - b.minY, 1));
  const svg = drawTiling([{ name: '', color, cells, marks }], { lattice, cell, labels: false, pad: 1, label: 'Piece' });
  svg.setAttribute('class', 'piece-thumb');
  svg.setAttribute('aria-hidden', 'true');
  return svg;
}

/** A small drawing of a piece: its cells from above, layers side by side
 *  (marks: its cells' colours, a dot on each coloured cell). */
function pieceThumb(cellsIn, color, size = 44, marks = null) {
  const n = cellsIn;
  const w = Math.max(...n.map((c) => c[0])) + 1;
  const hgt = Math.max(...n.map((c) => c[1])) + 1;
  const layers = Math.max(...n.map((c) => c[2])) + 1;
  const cols = w * layers + (layers - 1) * 0.5;
  const u = Math.min(size / Math.max(cols, hgt), 12);
  return s('svg', { class: 'piece-thumb', width: cols * u + 2, height: hgt * u + 2, viewBox: `-1 -1 ${cols * u + 2} ${hgt * u + 2}`, 'aria-hidden': 'true' },
    n.map((c) => s('rect', { x: (c[0] + c[2] * (w + 0.5)) * u, y: c[1] * u, width: u, height: u, fill: color, stroke: '#33404f', 'stroke-width': 0.8 })),
    n.map((c, i) => (marks?.[i] ? markDot((c[0] + c[2] * (w + 0.5)) * u + u / 2, c[1] * u + u / 2, u * 1.5, marks[i]) : null)));
}

export function mount(root, params = {}) {
  document.title = 'Designer · Tessera';
  let destroyed = false;
  const st = {
    lattice: 'cubic',          // cubic, triangular or hexagonal (lattice.js)
    name: 'My puzzle',
    w: 6, h: 6, layers: 1,
    cells: new Map(),          // key -> 'req' | 'opt' | 'fix' (a fixed piece's cell)
    fixedNames: new Map(),     // a fixed piece's cells (keys, sorted) -> its name, kept from a loaded puzzle
    pieces: [],                // {name, cells, colors (one per cell, or null), min, max}
    rotations: 'all',
    tool: 'paint', brush: 'req', // brush 'color' paints st.paintColor on board cells
    colors: new Map(),         // key -> a board cell's colour 1..63 (a fixed cell's: its fixed piece's)
    underFix: new Map(),       // key -> the board's colour under a fixed piece's cell, when a loaded puzzle gave one
    palette: null,             // the puzzle's "colors.palette" ('#rrggbb' for colours 1, 2, ...), or null
    allow: [],                 // the allowed pairs [piece colour, board colour], in order
    paintColor: 1,             // the colour brush's colour (0: neutral)
    library: [],               // GET /api/v1/puzzles
    names: null,               // canonical key -> conventional name
    fits: null,                // piece name -> {placements, usable}, from the daemon
    dirty: false,              // changed since it was opened, downloaded or submitted
  };

  // ---- the board editor ----------------------------------------------------
  const num = (testid, value, min, max, label) => h('input', {
    type: 'number', 'data-testid': testid, value: String(value), min: String(min), max: String(max),
    step: '1', inputmode: 'numeric', 'aria-label': label, class: 'num-small',
  });
  const nameInput = h('input', { type: 'text', 'data-testid': 'design-name', value: st.name, 'aria-label': 'Puzzle name' });
  nameInput.addEventListener('change', () => edited());
  const latticeSelect = h('select', { 'data-testid': 'design-lattice', 'aria-label': 'Lattice' },
    LATTICES.map((l) => h('option', { value: l.id, text: l.label })));
  const wInput = num('board-width', st.w, 1, MAX_SIDE, 'Board width');
  const hInput = num('board-height', st.h, 1, MAX_SIDE, 'Board height');
  const lInput = num('board-layers', st.layers, 1, MAX_LAYERS, 'Layers');
  const toolButtons = {};
  const brushButtons = {};
  const choice = (group, id, label, testid, title) => {
    const b = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': testid, text: label, title, 'aria-pressed': 'false',
      onclick: () => { st[group] = id; markChoices(); } });
    (group === 'tool' ? toolButtons : brushButtons)[id] = b;
    return b;
  };
  const markChoices = () => {
    for (const [id, b] of Object.entries(toolButtons)) b.setAttribute('aria-pressed', String(st.tool === id));
    for (const [id, b] of Object.entries(brushButtons)) b.setAttribute('aria-pressed', String(st.brush === id));
    drawSwatches();
  };
  const boardArea = h('div', { class: 'designer-board', 'data-testid': 'design-board' });

  // ---- colours ----------------------------------------------------------------
  const colourOf = (n) => cellColor(n, st.palette);
  const STATE_NAMES = { req: 'required', opt: 'optional', fix: 'a fixed piece\'s cell' };
  const cellTitle = (v, n) => `colour ${n}, ${STATE_NAMES[v] || v}`;
  /* A board cell's colour: a dot of it (the cell keeps its state's look). */
  const cellMark = (cx, cy, u, n) => markDot(cx, cy, u * 1.3, { n, color: colourOf(n) });
  /* The highest colour the design uses (cells, pieces, pairs). */
  function maxColourUsed() {
    let m = 0;
    for (const n of st.colors.values()) m = Math.max(m, n);
    for (const n of st.underFix.values()) m = Math.max(m, n);
    for (const p of st.pieces) for (const n of p.colors || []) m = Math.max(m, n);
    for (const [a, b] of st.allow) m = Math.max(m, a, b);
    return m;
  }
  let extraColours = 9; // colours offered without a palette (0..9, more with +)
  /* How many colours the swatches offer: the palette's, else 9 or more. */
  const colourCount = () => (st.palette ? st.palette.length : Math.max(extraColours, maxColourUsed()));
  const isColoured = () => maxColourUsed() > 0 || Boolean(st.palette);
  const swatchRows = [];
  /* A row of colour swatches 0..N and a + for one more: pick(n) chooses. */
  function swatchRow(testid, get, pick) {
    const el = h('span', { class: 'swatches', role: 'group', 'aria-label': 'Colours (0: neutral)' });
    const draw = () => {
      clear(el);
      for (let n = 0; n <= colourCount(); n++) {
        el.append(h('button', {
          type: 'button', class: 'swatch-btn', 'data-testid': testid, 'data-color': String(n), 'aria-pressed': String(get() === n),
          title: n ? `Colour ${n}${st.palette ? ` (${st.palette[n - 1]})` : ''}` : 'Neutral (0): no colour, fits any colour',
          onclick: () => pick(n),
        }, h('span', { class: `swatch-dot${n ? '' : ' swatch-neutral'}`, style: n ? `background:${colourOf(n)}` : null }), h('span', { text: String(n) })));
      }
      el.append(h('button', {
        type: 'button', class: 'swatch-btn', 'data-testid': `${testid}-add`, text: '+', title: 'One more colour',
        disabled: colourCount() >= MAX_COLOUR, onclick: () => {
          if (st.palette) st.palette.push(cellColor(st.palette.length + 1, null));
          else extraColours = Math.min(MAX_COLOUR, Math.max(extraColours, maxColourUsed()) + 1);
          pick(colourCount());
          if (st.palette) edited();
        },
      }));
    };
    swatchRows.push(draw);
    draw();
    return el;
  }
  const drawSwatches = () => { for (const d of swatchRows) d(); };
  const boardSwatches = swatchRow('color-swatch', () => (st.brush === 'color' ? st.paintColor : -1), (n) => {
    st.paintColor = n; st.brush = 'color'; markChoices();
  });
  let editColour = 1; // the piece editor's colour brush
  const editSwatches = swatchRow('edit-swatch', () => editColour, (n) => {
    editColour = n; drawSwatches(); editor.useColour();
  });

  // the allowed pairs: piece colour -> board colour
  const pairList = h('ul', { class: 'designer-pairs', 'data-testid': 'pair-list' });
  const pairPiece = h('input', { type: 'number', min: '1', max: String(MAX_COLOUR), step: '1', value: '1', class: 'num-tiny', 'data-testid': 'pair-piece', 'aria-label': 'Piece colour' });
  const pairBoard = h('input', { type: 'number', min: '1', max: String(MAX_COLOUR), step: '1', value: '1', class: 'num-tiny', 'data-testid': 'pair-board', 'aria-label': 'Board colour' });
  const pairNote = h('small', { class: 'muted', 'data-testid': 'pair-note', 'aria-live': 'polite' });
  const swatchOf = (n) => h('span', { class: 'swatch-dot', style: `background:${colourOf(n)}` });
  function drawPairs() {
    clear(pairList);
    if (st.allow.length === 0) pairList.append(h('li', { class: 'muted', text: 'No pairs: coloured cells go on neutral cells only (neutral fits anything).' }));
    st.allow.forEach(([a, b], i) => pairList.append(h('li', { 'data-testid': 'pair-row', 'data-piece': String(a), 'data-board': String(b) },
      'piece ', swatchOf(a), ` ${a} → board `, swatchOf(b), ` ${b} `,
      h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'data-testid': 'pair-remove', 'aria-label': `Remove the pair ${a} → ${b}`, text: '✕',
        onclick: () => { st.allow.splice(i, 1); pairNote.textContent = `Removed ${a} → ${b}.`; changed(); } }))));
  }
  const pairAdd = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'pair-add', text: 'Add pair',
    onclick: () => {
      const v = (i) => Math.round(Number(i.value));
      const a = v(pairPiece), b = v(pairBoard);
      if (!(a >= 1 && a <= MAX_COLOUR && b >= 1 && b <= MAX_COLOUR)) { pairNote.textContent = `Colours are 1 to ${MAX_COLOUR}.`; return; }
      if (st.palette && Math.max(a, b) > st.palette.length) { pairNote.textContent = `The palette has ${st.palette.length} colours (+ adds one).`; return; }
      if (st.allow.some(([x, y]) => x === a && y === b)) { pairNote.textContent = `${a} → ${b} is listed already.`; return; }
      st.allow.push([a, b]);
      pairNote.textContent = `Added ${a} → ${b}.`;
      changed();
    } });

  // on the triangular lattice z is the kind of triangle (0 up, 1 down)
  const zLimit = () => (st.lattice === 'triangular' ? 2 : isPlane(st.lattice) ? 1 : st.layers);
  function inBounds(x, y, z) { return x >= 0 && y >= 0 && z >= 0 && x < st.w && y < st.h && z < zLimit(); }
  /** Every cell of the editor's box (a parallelogram on the plane lattices). */
  function boxCells() {
    const out = [];
    for (let z = 0; z < zLimit(); z++) for (let y = 0; y < st.h; y++) for (let x = 0; x < st.w; x++) out.push([x, y, z]);
    return out;
  }
  /* v: a state ('req', 'opt', 'fix', 'empty') or a colour 'cN' (painted
   * on a cell of the board only; c0 is neutral). */
  function setCell(x, y, z, v) {
    if (!inBounds(x, y, z)) return;
    const k = key(x, y, z);
    if (v[0] === 'c') {
      if (!st.cells.has(k)) return;
      const n = Number(v.slice(1));
      if (n) st.colors.set(k, n); else st.colors.delete(k);
      st.underFix.delete(k);
      return;
    }
    if (v === 'empty') { st.cells.delete(k); st.colors.delete(k); } else st.cells.set(k, v);
    if (v !== 'fix') st.underFix.delete(k);
  }
  /* What the brush paints, and what a cell is in the brush's terms (its
   * state, or its colour when the brush paints colours). */
  const brushValue = () => (st.brush === 'color' ? `c${st.paintColor}` : st.brush);
  const kindAt = (k) => (st.brush === 'color' ? (st.cells.has(k) ? `c${st.colors.get(k) || 0}` : 'empty') : st.cells.get(k) || 'empty');
  /* A click with the paint tool: the brush's value, or (on a cell already
   * of it) empty, or neutral for the colour brush. */
  const toggled = (k) => (kindAt(k) === brushValue() ? (st.brush === 'color' ? 'c0' : 'empty') : brushValue());
  function fill(x, y, z, v) {
    const from = kindAt(key(x, y, z));
    if (from === v || (v[0] === 'c' && from === 'empty')) return;
    const kindOf = (k) => kindAt(k);
    if (isPlane(st.lattice)) {
      const geom = geometry(st.lattice);
      const todo = [[x, y, z]];
      const seen = new Set();
      while (todo.length) {
        const c = todo.pop();
        const k = key(...c);
        if (seen.has(k) || !inBounds(...c) || kindOf(k) !== from) continue;
        seen.add(k);
        setCell(...c, v);
        todo.push(...geom.neighbours(c));
      }
      return;
    }
    const stack = [[x, y]];
    const seen = new Set();
    while (stack.length) {
      const [cx, cy] = stack.pop();
      const k = key(cx, cy, z);
      if (seen.has(k) || !inBounds(cx, cy, z) || kindOf(k) !== from) continue;
      seen.add(k);
      setCell(cx, cy, z, v);
      stack.push([cx + 1, cy], [cx - 1, cy], [cx, cy + 1], [cx, cy - 1]);
    }
  }

  let drag = null; // {z, x0, y0, x1, y1, before}
  function drawBoard() {
    clear(boardArea);
    if (isPlane(st.lattice)) { drawPlaneBoard(); return; }
    const avail = Math.max(200, Math.min(boardArea.clientWidth || 600, 900));
    const perRow = st.layers > 1 ? Math.min(st.layers, Math.max(1, Math.floor(avail / (st.w * 18 + 16)))) : 1;
    const u = Math.max(14, Math.min(40, Math.floor((avail - 16 * perRow) / (perRow * st.w))));
    for (let z = 0; z < st.layers; z++) {
      const svg = s('svg', {
        class: 'designer-grid', width: st.w * u + 2, height: st.h * u + 2, viewBox: `-1 -1 ${st.w * u + 2} ${st.h * u + 2}`,
        'data-testid': 'design-layer', 'data-z': z, role: 'grid', 'aria-label': `Layer ${z + 1} of the board`,
      });
      for (let y = 0; y < st.h; y++) {
        for (let x = 0; x < st.w; x++) {
          const k = key(x, y, z);
          let v = st.cells.get(k) || 'empty', n = v === 'empty' ? 0 : st.colors.get(k) || 0;
          if (drag && drag.z === z && st.tool === 'rect' &&
              x >= Math.min(drag.x0, drag.x1) && x <= Math.max(drag.x0, drag.x1) &&
              y >= Math.min(drag.y0, drag.y1) && y <= Math.max(drag.y0, drag.y1)) {
            if (st.brush !== 'color') v = st.brush; else if (v !== 'empty') n = st.paintColor;
          }
          svg.append(s('rect', {
            x: x * u, y: y * u, width: u, height: u, 'data-x': x, 'data-y': y, 'data-z': z, 'data-state': v,
            'data-color': n || null,
            class: `dcell dcell-${v}`, fill: v === 'req' ? '#7fa7e0' : v === 'opt' ? '#fff' : v === 'fix' ? '#6b7685' : BOARD_FILL,
            stroke: v === 'empty' ? '#d5dbe3' : BOARD_STROKE, 'stroke-width': 1,
            'stroke-dasharray': v === 'opt' ? '3 2' : null,
          }, n ? s('title', { text: cellTitle(v, n) }) : null));
          if (v === 'opt') svg.append(s('text', { x: x * u + u / 2, y: y * u + u / 2 + 4, 'text-anchor': 'middle', class: 'dcell-plus', 'pointer-events': 'none', text: '+' }));
          if (n) svg.append(cellMark(x * u + u / 2, y * u + u / 2, u, n, v));
        }
      }
      const cellAt = (ev) => {
        const r = svg.getBoundingClientRect();
        const scale = (st.w * u + 2) / r.width;
        return [Math.floor(((ev.clientX - r.left) * scale - 1) / u), Math.floor(((ev.clientY - r.top) * scale - 1) / u)];
      };
      svg.addEventListener('pointerdown', (ev) => {
        ev.preventDefault();
        const [x, y] = cellAt(ev);
        if (!inBounds(x, y, z)) return;
        svg.setPointerCapture?.(ev.pointerId);
        if (st.tool === 'fill') { fill(x, y, z, brushValue()); changed(); return; }
        drag = { z, x0: x, y0: y, x1: x, y1: y };
        if (st.tool === 'paint') {
          // a click on a cell already of the brush's kind empties it
          drag.value = toggled(key(x, y, z));
          setCell(x, y, z, drag.value);
        }
        drawBoard();
      });
      svg.addEventListener('pointermove', (ev) => {
        if (!drag || drag.z !== z) return;
        const [x, y] = cellAt(ev);
        if (!inBounds(x, y, z) || (x === drag.x1 && y === drag.y1)) return;
        drag.x1 = x; drag.y1 = y;
        if (st.tool === 'paint') setCell(x, y, z, drag.value);
        drawBoard();
      });
      const end = () => {
        if (!drag || drag.z !== z) return;
        if (st.tool === 'rect') {
          for (let y = Math.min(drag.y0, drag.y1); y <= Math.max(drag.y0, drag.y1); y++)
            for (let x = Math.min(drag.x0, drag.x1); x <= Math.max(drag.x0, drag.x1); x++) setCell(x, y, z, brushValue());
        }
        drag = null;
        changed();
      };
      svg.addEventListener('pointerup', end);
      svg.addEventListener('pointercancel', end);
      boardArea.append(st.layers > 1
        ? h('figure', { class: 'designer-layer' }, svg, h('figcaption', { class: 'muted', text: `z = ${z}` }))
        : svg);
    }
  }

  /* The board on the triangular or hexagonal lattice: one drawing, y up,
   * each cell a polygon; the rectangle tool spans a parallelogram of x
   * and y (both triangles of each rhombus). */
  function drawPlaneBoard() {
    const geom = geometry(st.lattice);
    const cells = boxCells();
    const b = screenBounds(geom, [cells]);
    const avail = Math.max(200, Math.min(boardArea.clientWidth || 600, 900));
    const u = Math.max(12, Math.min(40, Math.floor((avail - 4) / (b.maxX - b.minX))));
    const W = Math.ceil((b.maxX - b.minX) * u + 2), H = Math.ceil((b.maxY - b.minY) * u + 2);
    const P = ([X, Y]) => [(X - b.minX) * u, (Y - b.minY) * u];
    const svg = s('svg', {
      class: 'designer-grid', width: W, height: H, viewBox: `-1 -1 ${W} ${H}`,
      'data-testid': 'design-layer', 'data-z': 0, 'data-lattice': st.lattice, role: 'grid', 'aria-label': 'The board',
    });
    const inDrag = (x, y) => drag && st.tool === 'rect' &&
      x >= Math.min(drag.x0, drag.x1) && x <= Math.max(drag.x0, drag.x1) &&
      y >= Math.min(drag.y0, drag.y1) && y <= Math.max(drag.y0, drag.y1);
    for (const c of cells) {
      const [x, y, z] = c;
      const k = key(x, y, z);
      let v = st.cells.get(k) || 'empty', n = v === 'empty' ? 0 : st.colors.get(k) || 0;
      if (inDrag(x, y)) { if (st.brush !== 'color') v = st.brush; else if (v !== 'empty') n = st.paintColor; }
      svg.append(s('polygon', {
        points: geom.polygon(c).map(P).map((p) => p.map((q) => q.toFixed(1)).join(',')).join(' '),
        'data-x': x, 'data-y': y, 'data-z': z, 'data-state': v, 'data-color': n || null,
        class: `dcell dcell-${v}`, fill: v === 'req' ? '#7fa7e0' : v === 'opt' ? '#fff' : v === 'fix' ? '#6b7685' : BOARD_FILL,
        stroke: v === 'empty' ? '#d5dbe3' : BOARD_STROKE, 'stroke-width': 1, 'stroke-linejoin': 'round',
        'stroke-dasharray': v === 'opt' ? '3 2' : null,
      }, n ? s('title', { text: cellTitle(v, n) }) : null));
      const [cx, cy] = P(geom.centre(c));
      if (v === 'opt') {
        // beside the colour's dot when there is one
        svg.append(s('text', { x: (cx + (n ? u * 0.22 : 0)).toFixed(1), y: (cy + 4).toFixed(1), 'text-anchor': 'middle', class: 'dcell-plus', 'pointer-events': 'none', text: '+' }));
      }
      if (n) svg.append(cellMark(cx - (v === 'opt' ? u * 0.12 : 0), cy, st.lattice === 'triangular' ? u * 0.75 : u, n, v));
    }
    const cellAt = (ev) => {
      const r = svg.getBoundingClientRect();
      const scale = W / r.width;
      return geom.cellAt(((ev.clientX - r.left) * scale - 1) / u + b.minX, ((ev.clientY - r.top) * scale - 1) / u + b.minY);
    };
    svg.addEventListener('pointerdown', (ev) => {
      ev.preventDefault();
      const c = cellAt(ev);
      if (!inBounds(...c)) return;
      svg.setPointerCapture?.(ev.pointerId);
      if (st.tool === 'fill') { fill(...c, brushValue()); changed(); return; }
      drag = { x0: c[0], y0: c[1], x1: c[0], y1: c[1], last: key(...c) };
      if (st.tool === 'paint') {
        // a click on a cell already of the brush's kind empties it
        drag.value = toggled(key(...c));
        setCell(...c, drag.value);
      }
      drawBoard();
    });
    svg.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const c = cellAt(ev);
      if (!inBounds(...c) || key(...c) === drag.last) return;
      drag.last = key(...c);
      drag.x1 = c[0]; drag.y1 = c[1];
      if (st.tool === 'paint') setCell(...c, drag.value);
      drawBoard();
    });
    const end = () => {
      if (!drag) return;
      if (st.tool === 'rect') for (const [x, y, z] of cells) if (inDrag(x, y)) setCell(x, y, z, brushValue());
      drag = null;
      changed();
    };
    svg.addEventListener('pointerup', end);
    svg.addEventListener('pointercancel', end);
    boardArea.append(svg);
  }

  // a board made larger gets its new rows, columns and layers as required
  // cells (the usual wish; the eraser takes back what is not wanted)
  function resize() {
    const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(Number(v)) || lo));
    const [w0, h0, l0] = [st.w, st.h, st.layers];
    st.w = clamp(wInput.value, 1, MAX_SIDE);
    st.h = clamp(hInput.value, 1, MAX_SIDE);
    st.layers = clamp(lInput.value, 1, MAX_LAYERS);
    for (const k of [...st.cells.keys()]) {
      const [x, y, z] = k.split(',').map(Number);
      if (!inBounds(x, y, z)) { st.cells.delete(k); st.colors.delete(k); st.underFix.delete(k); }
    }
    if (isPlane(st.lattice)) st.layers = 1;
    for (const [x, y, z] of boxCells())
      if (x >= w0 || y >= h0 || (!isPlane(st.lattice) && z >= l0)) st.cells.set(key(x, y, z), 'req');
    changed();
  }
  for (const i of [wInput, hInput, lInput]) i.addEventListener('change', resize);

  /* The controls that follow the lattice: layers (none on the plane
   * lattices), the piece sets, the piece editor, hole batches (cubic only). */
  function setLatticeUi(lattice) {
    st.lattice = lattice;
    latticeSelect.value = lattice;
    lInput.disabled = isPlane(lattice);
    lInput.title = isPlane(lattice) ? 'Triangles and hexagons lie in one plane' : '';
    fillSetSelect();
    editor.setLattice(lattice);
    batchNote.hidden = !isPlane(lattice);
  }
  latticeSelect.addEventListener('change', () => {
    const next = latticeSelect.value;
    const label = LATTICES.find((l) => l.id === next).label.toLowerCase();
    if (!mayReplace(`a new design on ${label}`)) { latticeSelect.value = st.lattice; return; }
    const name = nameInput.value;
    fresh(next);
    forgetFile();
    nameInput.value = name;
    edited();
    result.textContent = `A new design on ${label}: a ${st.w}×${st.h} board${isPlane(next) ? ' (a parallelogram, y up)' : ''}, no pieces.`;
  });

  // ---- pieces ---------------------------------------------------------------
  const pieceList = h('div', { class: 'designer-pieces', 'data-testid': 'design-pieces' });
  const setSelect = h('select', { 'data-testid': 'set-select', 'aria-label': 'Piece set' });
  const libGroup = h('optgroup', { label: 'Pieces of a library puzzle' });
  /* The sets offered: those of the design's lattice (the library's puzzles
   * are all listed: the listing does not say their lattice, adding one
   * from another lattice is refused with a message). */
  function fillSetSelect() {
    const plane = isPlane(st.lattice);
    clear(setSelect).append(h('option', { value: '', text: 'Add a set of pieces…' }),
      h('optgroup', { label: 'Generated' }, plane
        ? PLANE_SETS[st.lattice].map((x) => h('option', { value: `plane:${x.id}`, text: x.label }))
        : SETS.map((x) => h('option', { value: `gen:${x.id}`, text: x.label }))),
      plane ? null : h('optgroup', { label: 'Sets' }, LIBRARY_SETS.map((x) => h('option', { value: `lib:${x.file}`, text: x.label }))),
      libGroup);
    // the library's puzzles of this design's lattice (the listing names each one's)
    for (const o of libGroup.children) o.hidden = (o.dataset.lattice || 'cubic') !== st.lattice;
    setSelect.value = ''; // libGroup, moved, may keep a selected option
  }
  fillSetSelect();
  const setNote = h('span', { class: 'muted', 'aria-live': 'polite' });

  async function libraryPieces(file) {
    const text = await api.libraryFile(file);
    let body;
    try { body = JSON.parse(text); } catch { body = { polycube: text }; }
    const v = await api.validate(body);
    const lat = latticeOf(v.puzzle);
    if (lat !== st.lattice) {
      const name = (l) => LATTICES.find((x) => x.id === l).label.replace(/ \(.*/, '').toLowerCase();
      throw new Error(`${v.puzzle.name || file} is drawn in ${name(lat)}, and this design in ${name(st.lattice)}`);
    }
    return v.puzzle;
  }
  async function conventionalNames() {
    if (st.names) return st.names;
    const names = new Map();
    for (const file of NAME_SOURCES) {
      if (!st.library.some((p) => p.file === file)) continue;
      try {
        const pz = await libraryPieces(file);
        const solid = pz.pieces.some((p) => p.cells.some((c) => c[2]));
        for (const p of pz.pieces) {
          if (p.fixed) continue;
          const flat = !p.cells.some((c) => c[2]);
          names.set(canonical(p.cells, flat && !solid ? GROUPS.free2 : GROUPS.rot3).key, p.name);
          if (flat) names.set(canonical(p.cells, GROUPS.free2).key, p.name);
        }
      } catch { /* a missing file only costs the names */ }
    }
    st.names = names;
    return names;
  }
  /* The key under which two pieces are the same piece: their shapes up to
   * the turns the puzzle allows. */
  const shapeKey = (cells, rotations) => (isPlane(st.lattice)
    ? canonicalPlane(st.lattice, cells, rotations === 'none' ? [(c) => c] : planeMotions(st.lattice, rotations === 'one-sided')).key
    : canonical(cells, rotations === 'one-sided' ? GROUPS.onesided2 : rotations === 'none' ? [(c) => c] : GROUPS.rot3).key);
  /* A piece's cells in normal form (lattice.js on the plane lattices: a
   * triangle keeps its kind). */
  const normalized = (cells, colors) => normalizeColoured(st.lattice, cells, colors);
  /* Add pieces; one whose shape is already in the list (before this add)
   * raises that piece's count instead.  Returns the names raised. */
  function addPieces(list, onesided) {
    if (onesided) st.rotations = 'one-sided';
    // a coloured piece is the same piece only with the same colours as they lie
    const pieceKey = (p) => {
      const n = normalized(p.cells, p.colors);
      return n.colors ? `coloured:${JSON.stringify(n)}` : shapeKey(p.cells, st.rotations);
    };
    const had = new Map(st.pieces.map((p) => [pieceKey(p), p]));
    const taken = new Set(st.pieces.map((p) => p.name));
    const raised = [];
    for (const p of list) {
      const same = had.get(pieceKey(p));
      if (same) {
        same.min += p.min ?? 1;
        same.max += p.max ?? 1;
        raised.push(same.name);
        continue;
      }
      let name = p.name;
      for (let i = 2; taken.has(name); i++) name = `${p.name}${i}`;
      taken.add(name);
      st.pieces.push({ name, ...normalized(p.cells, p.colors), min: p.min ?? 1, max: p.max ?? 1 });
    }
    changed();
    return raised;
  }
  const raisedNote = (raised) => raised.length === 0 ? ''
    : ` Already in the list, so their counts went up: ${raised.join(', ')}.`;
  setSelect.addEventListener('change', async () => {
    const v = setSelect.value;
    setSelect.value = '';
    if (!v) return;
    setNote.textContent = 'Adding…';
    try {
      if (v.startsWith('plane:')) {
        const set = PLANE_SETS[st.lattice].find((x) => `plane:${x.id}` === v);
        const raised = addPieces(planeSetPieces(st.lattice, set), set.oneSided);
        setNote.textContent = `Added ${set.label}${set.oneSided ? '; pieces may not be turned over' : ''}.${raisedNote(raised)}`;
      } else if (v.startsWith('gen:')) {
        const set = SETS.find((x) => `gen:${x.id}` === v);
        const raised = addPieces(setPieces(set, await conventionalNames()), set.group === 'onesided2');
        setNote.textContent = `Added ${set.label}${set.group === 'onesided2' ? '; pieces may not be turned over' : ''}.${raisedNote(raised)}`;
      } else {
        const pz = await libraryPieces(v.slice(4));
        const raised = addPieces(pz.pieces.filter((p) => !p.fixed).map((p) => {
          const [lo, hi] = Array.isArray(p.count) ? p.count : [p.count ?? 1, p.count ?? 1];
          return { name: p.name, cells: p.cells, colors: p.colors, min: lo, max: hi };
        }), pz.rotations === 'one-sided');
        setNote.textContent = `Added the pieces of ${pz.name || v.slice(4)}.${raisedNote(raised)}`;
      }
    } catch (e) {
      setNote.textContent = `Could not add the set: ${e.message}`;
    }
  });

  const marks = (p) => (p.colors ? p.colors.map((n) => (n ? { n, color: colourOf(n) } : null)) : null);
  function drawPieces() {
    clear(pieceList);
    if (st.pieces.length === 0) {
      pieceList.append(h('p', { class: 'muted', text: 'No pieces yet: add a set above or draw one below.' }));
      markActions();
      return;
    }
    st.pieces.forEach((p, i) => {
      const color = pieceColor(i);
      const lo = h('input', { type: 'number', min: '0', max: '8191', step: '1', value: String(p.min), class: 'num-small', 'data-testid': 'piece-min', 'aria-label': `${p.name}: fewest copies` });
      const hi = h('input', { type: 'number', min: '0', max: '8191', step: '1', value: String(p.max), class: 'num-small', 'data-testid': 'piece-max', 'aria-label': `${p.name}: most copies` });
      const upd = () => {
        p.min = Math.max(0, Math.min(8191, Math.round(Number(lo.value)) || 0));
        p.max = Math.max(p.min, Math.min(8191, Math.round(Number(hi.value)) || 0));
        if (p.max === 0) p.max = Math.max(1, p.min);
        hi.value = String(p.max);
        updateBalance();
      };
      lo.addEventListener('change', () => { upd(); edited(); askFits(); });
      hi.addEventListener('change', () => { upd(); edited(); });
      pieceList.append(h('div', { class: 'designer-piece', 'data-testid': 'design-piece', 'data-name': p.name, 'data-colors': p.colors ? p.colors.join(',') : null },
        // a coloured solid piece is drawn in layers, so that every cell's colour shows
        isPlane(st.lattice) ? planeThumb(st.lattice, p.cells, color, 44, marks(p))
          : p.cells.some((c) => c[2]) && !p.colors ? isoPiece(p.cells, color) : pieceThumb(p.cells, color, 44, marks(p)),
        h('span', { class: 'designer-piece-name', title: `${p.cells.length} cells${p.colors ? `, colours ${[...new Set(p.colors)].sort((a, b) => a - b).join(', ')}` : ''}`, text: p.name }),
        h('span', { class: 'muted designer-piece-size', text: `${p.cells.length}` }),
        h('span', { class: 'designer-piece-fits', 'data-testid': 'piece-fits' }),
        h('label', { class: 'designer-count' }, lo, h('span', { text: '–' }), hi),
        h('span', { class: 'designer-piece-buttons' },
          h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'data-testid': 'piece-edit', 'aria-label': `Edit ${p.name}`, text: '✎',
            onclick: () => {
              if (!editor.edit(p)) { setNote.textContent = `${p.name} is larger than the editor's ${isPlane(st.lattice) ? '8×8' : '8×8×8'}.`; return; }
              editorBox.open = true;
              editorBox.scrollIntoView({ block: 'nearest' });
            } }),
          h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': `Remove ${p.name}`, text: '✕',
            onclick: () => { st.pieces.splice(i, 1); changed(); } }))));
    });
    drawFits();
    markActions();
  }
  /* Each piece's placements, in place (the list is not redrawn under a
   * count being typed). */
  function drawFits() {
    for (const row of pieceList.querySelectorAll('[data-testid=design-piece]')) {
      const f = st.fits?.get(row.dataset.name), span = row.querySelector('[data-testid=piece-fits]');
      row.classList.toggle('fits-none', Boolean(f && f.placements === 0));
      span.textContent = !f ? '' : f.placements === 0 ? 'fits nowhere' : `${f.placements} place${f.placements === 1 ? '' : 's'}`;
      span.title = f ? `placements on this board${f.usable !== undefined ? `; ${f.usable} searched after the root filters` : ''}` : '';
    }
  }

  // a piece drawn or edited in layers (pieceeditor.js)
  const editorBox = h('details', { class: 'designer-custom' }, h('summary', { text: 'Draw or edit a piece' }));
  const editor = pieceEditor({
    colours: { el: editSwatches, current: () => editColour, color: (n) => colourOf(n) },
    onNote: (t) => { setNote.textContent = t; },
    onSave: (piece, replacing) => {
      const loose = disconnectedPieces([piece], st.lattice).length > 0;
      const warn = loose ? ` Warning: the cells of piece "${piece.name}" are not all connected (side to side). The puzzle can be solved as it is, but such a piece is rarely meant.` : '';
      const old = replacing ? st.pieces.find((p) => p.name === replacing) : null;
      if (old) {
        old.cells = piece.cells;
        old.colors = piece.colors;
        if (piece.name !== old.name && !st.pieces.some((p) => p.name === piece.name)) old.name = piece.name;
        changed();
        setNote.textContent = `Saved ${old.name}.${warn}`;
        return;
      }
      const raised = addPieces([piece]);
      setNote.textContent = raised.length ? `That shape is ${raised[0]}, already in the list: its count went up.` : warn.trim();
    },
  });
  editorBox.append(editor.el);

  // ---- balance ----------------------------------------------------------------
  const balanceBox = h('div', { class: 'designer-balance', 'data-testid': 'balance', 'aria-live': 'polite' });
  function counts() {
    let req = 0, opt = 0;
    for (const v of st.cells.values()) if (v === 'req') req++; else if (v === 'opt') opt++;
    return { req, opt };
  }
  function updateBalance() {
    const { req, opt } = counts();
    const b = balance(req, opt, st.pieces.map((p) => ({ size: p.cells.length, min: p.min, max: p.max })));
    clear(balanceBox);
    balanceBox.dataset.ok = String(b.ok);
    balanceBox.append(
      h('div', { class: 'balance-figures' },
        h('span', { 'data-testid': 'balance-required' }, h('b', { text: String(req) }), ' required'),
        h('span', { 'data-testid': 'balance-optional' }, h('b', { text: String(opt) }), ' optional'),
        h('span', { 'data-testid': 'balance-pieces' }, 'pieces cover ', h('b', { text: b.min === b.max ? `${b.min}` : `${b.min}–${b.max}` }), ' cells')),
      h('div', { class: b.ok ? 'balance-ok' : 'balance-bad', 'data-testid': 'balance-verdict',
        text: b.ok ? `✓ balanced: e.g. ${b.total} cells covered${b.total > req ? `, ${b.total - req} of the optional` : ''}` : `✗ ${b.reason}` }));
  }

  // Where each piece fits, asked of the daemon (validate) a moment after
  // the design last changed and balances: each piece's placements beside
  // it, and a piece that fits nowhere named before anything is submitted.
  const fitsNote = h('p', { class: 'designer-fits-note', 'data-testid': 'design-fits-note', 'aria-live': 'polite', hidden: true });
  let fitsTimer = 0, fitsAsked = 0;
  function showFits(fits) {
    st.fits = fits ? new Map(fits.pieces.map((p) => [p.piece, p])) : null;
    const warnings = fits?.warnings || [];
    fitsNote.textContent = warnings.join(' ');
    fitsNote.hidden = warnings.length === 0;
    drawFits();
  }
  function askFits() {
    clearTimeout(fitsTimer);
    fitsTimer = setTimeout(async () => {
      const { req, opt } = counts();
      const b = balance(req, opt, st.pieces.map((p) => ({ size: p.cells.length, min: p.min, max: p.max })));
      if (destroyed || !b.ok) return;
      const asked = ++fitsAsked;
      try {
        const v = await api.validate({ puzzle: puzzle(), options: options() });
        if (asked === fitsAsked && !destroyed) showFits(v.summary.fits);
      } catch (e) {
        if (asked !== fitsAsked || destroyed) return;
        showFits(null);
        if (e.status !== 422) return;
        fitsNote.textContent = e.message.replace(/^\$\.puzzle: /, '');
        fitsNote.hidden = false;
        const nowhere = /^piece (.+) fits nowhere on /.exec(fitsNote.textContent);
        if (nowhere) { st.fits = new Map([[nowhere[1], { placements: 0 }]]); drawFits(); }
      }
    }, 400);
  }

  // ---- nothing lost: the design is kept in the browser at every change -------
  const SAVE_KEY = 'tessera.designer';
  function save() {
    try {
      localStorage.setItem(SAVE_KEY, JSON.stringify({ w: st.w, h: st.h, layers: st.layers, dirty: st.dirty, puzzle: puzzle() }));
    } catch { /* no storage (private mode, full): the design lives in this page only */ }
  }
  function saved() {
    try { return JSON.parse(localStorage.getItem(SAVE_KEY) || 'null'); } catch { return null; }
  }
  /* A change the user made: kept, and worth a question before it is lost. */
  function edited() { st.dirty = true; save(); }
  /* Ask before the design is replaced (a file, a job's puzzle, a new one). */
  const mayReplace = (what) => !st.dirty ||
    window.confirm(`Replace your design "${nameInput.value.trim() || 'My puzzle'}" (changed since it was last downloaded or submitted) with ${what}?`);
  const onBeforeUnload = (ev) => { if (st.dirty) { ev.preventDefault(); ev.returnValue = ''; } };
  window.addEventListener('beforeunload', onBeforeUnload);

  function changed(how = 'edit') {
    if (destroyed) return;
    if (how === 'edit') st.dirty = true;
    save();
    st.fits = null; /* stale until the daemon answers again */
    fitsNote.hidden = true;
    drawBoard();
    drawPieces();
    drawPairs();
    drawSwatches();
    editor.redraw();
    updateBalance();
    askFits();
    rotNote.textContent = st.rotations === 'one-sided' ? 'Pieces may not be turned over (one-sided).' : '';
    rotSelect.value = st.rotations;
  }
  const rotNote = h('small', { class: 'muted' });
  const rotSelect = h('select', { 'data-testid': 'design-rotations', 'aria-label': 'How pieces may turn' },
    h('option', { value: 'all', text: 'Pieces turn in space (and over)' }),
    h('option', { value: 'one-sided', text: 'One-sided: turned in the plane only' }),
    h('option', { value: 'none', text: 'Fixed orientation: moved only' }));
  rotSelect.addEventListener('change', () => { st.rotations = rotSelect.value; changed(); });

  // ---- the puzzle JSON, in and out ------------------------------------------------
  function puzzle() {
    const cells = [], optional = [];
    for (const [k, v] of st.cells) {
      const c = k.split(',').map(Number);
      cells.push(c);
      if (v === 'opt') optional.push(c);
    }
    const order = (a, b) => a[2] - b[2] || a[1] - b[1] || a[0] - b[0];
    cells.sort(order); optional.sort(order);
    const plane = isPlane(st.lattice);
    const out = (list) => (plane ? list.map((c) => jsonCell(st.lattice, c)) : list); // hexagons as [x, y]
    const board = { cells: out(cells) };
    // a fixed piece's cell: its colour is the piece's; the board's under it neutral unless loaded so
    const boardColours = cells.map((c) => {
      const k = key(...c);
      return st.cells.get(k) === 'fix' ? st.underFix.get(k) || 0 : st.colors.get(k) || 0;
    });
    if (boardColours.some(Boolean)) board.colors = boardColours;
    if (optional.length) board.optional = out(optional);
    const pieces = st.pieces.map((p) => ({
      name: p.name, cells: out(p.cells), ...(p.colors?.some(Boolean) ? { colors: [...p.colors] } : {}),
      count: p.min === p.max ? p.min : [p.min, p.max],
    }));
    const fixed = fixedPieces(new Set(pieces.map((p) => p.name))).map((p) => {
      const cols = p.cells.map((c) => st.colors.get(key(...c)) || 0);
      return { ...p, cells: out(p.cells), ...(cols.some(Boolean) ? { colors: cols } : {}) };
    });
    const colors = {};
    if (st.palette) colors.palette = [...st.palette];
    if (st.allow.length) colors.allow = st.allow.map(([a, b]) => ({ piece: a, board: b }));
    return {
      version: 1, name: nameInput.value.trim() || 'My puzzle',
      ...(plane ? { lattice: st.lattice } : {}), // absent: the cubic lattice
      board, pieces: pieces.concat(fixed),
      rotations: st.rotations, mirror: false,
      ...(Object.keys(colors).length ? { colors } : {}),
    };
  }
  /* The fixed brush's cells as fixed pieces: each connected group of them
   * one piece, named as the loaded puzzle named it, else fixed1, fixed2... */
  function fixedPieces(taken) {
    const left = new Set([...st.cells].filter(([, v]) => v === 'fix').map(([k]) => k));
    const out = [];
    for (const start of [...left]) {
      if (!left.has(start)) continue;
      const group = [], todo = [start];
      left.delete(start);
      while (todo.length) {
        const k = todo.pop();
        group.push(k);
        const [x, y, z] = k.split(',').map(Number);
        const next = isPlane(st.lattice) ? geometry(st.lattice).neighbours([x, y, z]).map((c) => key(...c))
          : [key(x + 1, y, z), key(x - 1, y, z), key(x, y + 1, z), key(x, y - 1, z), key(x, y, z + 1), key(x, y, z - 1)];
        for (const n of next)
          if (left.has(n)) { left.delete(n); todo.push(n); }
      }
      group.sort();
      let name = st.fixedNames.get(group.join(';'));
      for (let i = out.length + 1; !name || taken.has(name); i++) name = `fixed${i}`;
      taken.add(name);
      out.push({ name, cells: group.map((k) => k.split(',').map(Number)), fixed: true });
    }
    return out;
  }
  /* The design a new page starts with: a 6x6 board, every cell required
   * (on triangles the 6x6 rhombus of the hexiamonds, on hexagons the 7x4
   * parallelogram of the tetrahexes). */
  function fresh(lattice = 'cubic') {
    load({ name: 'My puzzle', ...(isPlane(lattice) ? { lattice } : {}), board: { cells: [] }, pieces: [] });
    [st.w, st.h] = lattice === 'hexagonal' ? [7, 4] : [6, 6];
    st.layers = 1;
    wInput.value = st.w; hInput.value = st.h; lInput.value = st.layers;
    for (const [x, y, z] of boxCells()) st.cells.set(key(x, y, z), 'req');
    changed('load');
  }
  /* The design kept in the browser, as it was (its size too, empty rows
   * and layers included). */
  function restore(k) {
    load(k.puzzle);
    st.w = Math.max(st.w, Math.min(MAX_SIDE, k.w | 0));
    st.h = Math.max(st.h, Math.min(MAX_SIDE, k.h | 0));
    st.layers = Math.max(st.layers, Math.min(MAX_LAYERS, k.layers | 0));
    wInput.value = st.w; hInput.value = st.h; lInput.value = st.layers;
    st.dirty = Boolean(k.dirty);
    changed('load');
  }
  /* ": 3 colours, 4 allowed pairs" of a coloured design, else nothing. */
  function colourSummary() {
    if (!isColoured()) return '';
    const used = new Set([...st.colors.values(), ...st.underFix.values(), ...st.pieces.flatMap((p) => p.colors || [])].filter(Boolean));
    const n = st.palette ? st.palette.length : used.size;
    return `: ${n} colour${n === 1 ? '' : 's'}, ${st.allow.length} allowed pair${st.allow.length === 1 ? '' : 's'}`;
  }
  function load(pz) {
    st.cells.clear();
    st.colors.clear();
    st.underFix.clear();
    setLatticeUi(latticeOf(pz));
    const plane = isPlane(st.lattice);
    const all = pz.board?.cells || [];
    const opt = new Set((pz.board?.optional || []).map((c) => key(c[0], c[1], c[2] || 0)));
    const fixed = new Set();
    const fixedColour = new Map(); // a fixed piece's cell -> its colour
    for (const p of pz.pieces || []) if (p.fixed) p.cells.forEach((c, i) => {
      fixed.add(key(c[0], c[1], c[2] || 0));
      if (p.colors?.[i]) fixedColour.set(key(c[0], c[1], c[2] || 0), p.colors[i]);
    });
    const boardColours = pz.board?.colors || [];
    // moved to the origin; on the triangular lattice z is a triangle's kind, not a layer
    const mins = [0, 1, 2].map((k) => (plane && k === 2 ? 0 : Math.min(...all.map((c) => c[k] || 0))));
    const at = (c) => key(c[0] - mins[0], c[1] - mins[1], (c[2] || 0) - mins[2]);
    all.forEach((c, i) => {
      const k = key(c[0], c[1], c[2] || 0);
      st.cells.set(at(c), fixed.has(k) ? 'fix' : opt.has(k) ? 'opt' : 'req');
      // a fixed piece's cell shows the piece's colour; the board's under it is kept aside
      const n = fixed.has(k) ? fixedColour.get(k) : boardColours[i];
      if (n) st.colors.set(at(c), n);
      if (fixed.has(k) && boardColours[i]) st.underFix.set(at(c), boardColours[i]);
    });
    st.fixedNames = new Map((pz.pieces || []).filter((p) => p.fixed).map((p) => [p.cells.map(at).sort().join(';'), p.name]));
    st.w = Math.min(MAX_SIDE, Math.max(1, ...all.map((c) => c[0] - mins[0] + 1)));
    st.h = Math.min(MAX_SIDE, Math.max(1, ...all.map((c) => c[1] - mins[1] + 1)));
    st.layers = plane ? 1 : Math.min(MAX_LAYERS, Math.max(1, ...all.map((c) => (c[2] || 0) - mins[2] + 1)));
    wInput.value = st.w; hInput.value = st.h; lInput.value = st.layers;
    st.pieces = (pz.pieces || []).filter((p) => !p.fixed).map((p) => {
      const [lo, hi] = Array.isArray(p.count) ? p.count : [p.count ?? 1, p.count ?? 1];
      return { name: p.name, ...normalized(p.cells, p.colors), min: lo, max: hi };
    });
    st.rotations = pz.rotations || 'all';
    st.palette = Array.isArray(pz.colors?.palette) ? [...pz.colors.palette] : null;
    st.allow = (pz.colors?.allow || []).map((a) => [a.piece, a.board]);
    extraColours = 9;
    nameInput.value = pz.name || 'My puzzle';
    st.dirty = false;
    changed('load');
  }

  // ---- actions ------------------------------------------------------------------
  let optionFields = [];
  const optionBox = h('span', { class: 'designer-options' });
  const modesHelp = h('small', { class: 'help', 'data-testid': 'design-modes' });
  const options = () => fieldValues(optionFields);
  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'design-error', hidden: true });
  const result = h('div', { class: 'designer-result', 'data-testid': 'design-result', 'aria-live': 'polite' });
  const showError = (e) => { errorBox.textContent = e.message; errorBox.hidden = false; };
  // a failed action leaves no "Estimating…" behind; the actions that need
  // pieces wait for them (instead of a message about $.puzzle.pieces)
  const needPieces = new Set(['design-validate', 'design-estimate', 'design-submit', 'design-batch', 'design-save-burrtools']);
  const act = (testid, label, cls, fn) => h('button', { type: 'button', class: `btn ${cls}`, 'data-testid': testid, text: label,
    onclick: async (ev) => {
      const b = ev.currentTarget;
      errorBox.hidden = true;
      b.disabled = true;
      try { await fn(); } catch (e) { result.textContent = ''; showError(e); } finally { b.disabled = false; markActions(); }
    } });
  function markActions() {
    for (const b of root.querySelectorAll('button[data-testid]')) {
      if (!needPieces.has(b.dataset.testid)) continue;
      const squaresOnly = b.dataset.testid === 'design-batch' && isPlane(st.lattice);
      b.disabled = st.pieces.length === 0 || squaresOnly;
      b.title = squaresOnly ? 'Hole batches are made on squares and cubes only' : b.disabled ? 'Add pieces first' : '';
    }
  }
  const fileInput = h('input', { type: 'file', accept: '.json,.txt,.xmpuzzle,application/json,text/plain', 'data-testid': 'design-upload', 'aria-label': 'Open a puzzle file' });
  // a BurrTools file with several problems: which one is open (choosing
  // another opens it)
  let opened = null; // {text, name}: the BurrTools file the chooser is for
  const chooser = problemChooser('design-problem', async (n) => {
    errorBox.hidden = true;
    try { return await openText(opened.text, opened.name, n); } catch (e) { showError(e); return false; }
  }, 'the one chosen is the one open here');
  /* Open a puzzle file's text (problem: a BurrTools file's problem number). */
  async function openText(text, fname, problem) {
    // what the submit page takes: JSON, polycube text, a BurrTools file;
    // JSON that does not parse goes as it is, so the daemon names the line
    let body = null;
    if (text.startsWith('<')) body = problem ? { xmpuzzle: text, problem } : { xmpuzzle: text };
    else if (!text.startsWith('{')) body = { polycube: text };
    else try { body = JSON.parse(text); } catch { body = text; }
    const v = await api.validate(body).catch(async (e) => {
      // a design that does not balance yet is still a design: read it as it is
      if (body?.board?.cells && body.pieces?.every((p) => p.cells)) return { puzzle: body.puzzle || body };
      throw new Error(`${fname}: ${e.message}`);
    });
    if (!mayReplace(problem ? `problem ${problem} of ${fname}` : fname)) return false;
    load(v.puzzle);
    const problems = opened?.text === text ? burrToolsProblems(text) : [];
    const which = problems.length > 1 ? `, problem ${problem || 1} of ${problems.length}` : '';
    result.textContent = `Opened ${fname}${which}${colourSummary()}.`;
    return true;
  }
  fileInput.addEventListener('change', async () => {
    const f = fileInput.files[0];
    if (!f) return;
    errorBox.hidden = true;
    try {
      const text = (await readPuzzleFile(f)).trim();
      const problems = burrToolsProblems(text);
      const before = opened;
      opened = { text, name: f.name };
      if (await openText(text, f.name, problems.length > 1 ? 1 : undefined)) chooser.set(problems);
      else opened = before;
    } catch (e) { showError(e); }
    fileInput.value = '';
  });
  /* What the designer holds is no longer a problem of that file. */
  const forgetFile = () => { opened = null; chooser.set([]); };

  const holeSelect = h('select', { 'data-testid': 'hole-shape', 'aria-label': 'Hole shape' },
    h('option', { value: 'each-cell', text: 'one cell' }),
    h('option', { value: '##/##', text: '2×2 square' }),
    h('option', { value: '##', text: 'domino' }));
  const everyPos = h('input', { type: 'checkbox', 'data-testid': 'hole-every', id: 'hole-every' });
  const uniqueTest = h('input', { type: 'checkbox', 'data-testid': 'hole-unique', id: 'hole-unique' });

  const actions = h('div', { class: 'button-row' },
    act('design-validate', 'Validate', '', async () => {
      const v = await api.validate({ puzzle: puzzle(), options: options() });
      result.textContent = `Valid: ${v.summary.cells} cells, ${v.summary.pieces} pieces.`;
      if (v.summary.fits) showFits(v.summary.fits);
    }),
    act('design-estimate', 'Estimate', '', async () => {
      result.textContent = 'Estimating (a few seconds)…';
      const e = await postJSON('/api/v1/estimate', { puzzle: puzzle(), options: options() });
      if (e.pieces) showFits({ pieces: e.pieces, warnings: e.warnings || [] });
      const one = e.seconds?.['1'];
      result.textContent = e.exact
        ? `Exact: ${e.exact.solutions} solutions, ${e.exact.nodes} nodes in ${e.exact.text}.`
        : `About ${Math.round(e.solutions.estimate)} solutions; ${one ? one.text : '?'} on one thread.`;
    }),
    act('design-submit', 'Submit job', 'btn-primary', async () => {
      const j = await api.submit({ puzzle: puzzle(), options: options() });
      st.dirty = false; /* the job holds it */
      save();
      location.hash = `#/jobs/${j.id}`;
    }),
    act('design-new', 'New design', '', async () => {
      if (!mayReplace('a new, empty design')) return;
      fresh(st.lattice);
      forgetFile();
      result.textContent = `A new design: a ${st.w}×${st.h} board, no pieces.`;
    }),
    act('design-download', 'Download JSON', '', async () => {
      const pz = puzzle();
      downloadBlob(new Blob([JSON.stringify(pz, null, 1)], { type: 'application/json' }), `${slug(pz.name)}.json`);
      st.dirty = false;
      save();
    }),
    act('design-save-burrtools', 'Save as BurrTools', '', async () => {
      // the daemon's writer (tessera convert's): what BurrTools cannot
      // express (one-sided pieces, say) comes back named, as an error
      const pz = puzzle();
      const blob = await api.convert({ puzzle: pz }, 'xmpuzzle').catch((e) => {
        throw new Error(`Cannot save as BurrTools: ${e.message.replace(/^cannot be written as xmpuzzle: /, '')}`);
      });
      downloadBlob(blob, `${slug(pz.name)}.xmpuzzle`);
      result.textContent = `Saved ${slug(pz.name)}.xmpuzzle: BurrTools opens it${pz.pieces.some((p) => p.fixed) ? ' (fixed pieces are left out of its result shape: BurrTools has none)' : ''}.`;
      st.dirty = false;
      save();
    }));

  const batchNote = h('small', { class: 'help', 'data-testid': 'design-batch-note', hidden: true,
    text: 'The daemon makes hole variants on squares and cubes only; on triangles and hexagons, submit each board as a job.' });
  const batchRow = h('div', { class: 'designer-batch' },
    h('label', {}, 'A hole: ', holeSelect),
    h('label', { for: 'hole-every' }, everyPos, ' every position (not one per symmetry class)'),
    h('label', { for: 'hole-unique' }, uniqueTest, ' stop each at 2 solutions (uniqueness)'),
    act('design-batch', 'Submit the batch', '', async () => {
      const shape = holeSelect.value === 'each-cell' ? 'each-cell' : { rows: holeSelect.value.split('/') };
      const opts = options();
      if (uniqueTest.checked) opts.limit = 2;
      const pz = puzzle();
      const b = await postJSON('/api/v1/batches', {
        name: `${pz.name}: a hole at ${everyPos.checked ? 'every position' : 'each position up to symmetry'}`,
        puzzle: pz, options: opts, variants: { hole: shape, up_to_symmetry: !everyPos.checked },
      });
      st.dirty = false;
      save();
      location.hash = `#/batches/${b.id}`;
    }));

  root.append(h('div', { class: 'container designer' },
    h('div', { class: 'page-head' }, h('h1', { text: 'Design a puzzle' })),
    errorBox,
    h('div', { class: 'designer-columns' },
      h('section', { class: 'card' },
        h('h2', { text: 'Board' }),
        h('div', { class: 'designer-toolbar' },
          h('label', {}, 'Name ', nameInput), h('label', {}, 'Lattice ', latticeSelect),
          h('label', {}, 'Width ', wInput), h('label', {}, 'Height ', hInput), h('label', {}, 'Layers ', lInput)),
        h('div', { class: 'designer-toolbar', role: 'toolbar', 'aria-label': 'Drawing tools' },
          choice('tool', 'paint', 'Cells', 'tool-paint', 'Click or drag over cells'),
          choice('tool', 'rect', 'Rectangle', 'tool-rect', 'Drag from corner to corner'),
          choice('tool', 'fill', 'Fill', 'tool-fill', 'Fill the connected area of one kind'),
          h('span', { class: 'toolbar-gap' }),
          choice('brush', 'req', 'Required', 'brush-req', 'Cells every solution covers'),
          choice('brush', 'opt', 'Optional +', 'brush-opt', 'Cells a solution may leave empty'),
          choice('brush', 'fix', 'Fixed ■', 'brush-fix', 'Cells of fixed pieces: part of the board, filled before the search (each connected group one piece)'),
          choice('brush', 'empty', 'Erase', 'brush-empty', 'Not part of the board'),
          choice('brush', 'color', 'Colour', 'brush-color', 'Paint the colour chosen on board cells (0: neutral); on a cell of that colour, back to neutral')),
        h('div', { class: 'designer-toolbar', role: 'toolbar', 'aria-label': 'Colour' }, h('span', { class: 'muted', text: 'Colour ' }), boardSwatches),
        boardArea,
        h('small', { class: 'help' }, 'Blue: required; dashed with +: optional (a solution may leave it empty); grey: fixed pieces; a dot: the cell\'s colour (its number in the tooltip). ',
          'Several layers make a 3D board, drawn bottom layer first. ',
          'On triangles and hexagons the box is a parallelogram of width × height, y up (Polyform Puzzler\'s coordinates): erase what the board leaves out.')),
      h('section', { class: 'card' },
        h('h2', { text: 'Pieces' }),
        h('div', { class: 'designer-toolbar' }, setSelect,
          h('button', { type: 'button', class: 'btn btn-small btn-ghost', text: 'Remove all', 'data-testid': 'pieces-clear',
            onclick: () => { st.pieces = []; st.rotations = 'all'; changed(); } })),
        h('div', { class: 'designer-toolbar' }, rotSelect, rotNote), setNote,
        balanceBox,
        pieceList, fitsNote,
        editorBox)),
    h('section', { class: 'card designer-colours', 'data-testid': 'design-colours' },
      h('h2', { text: 'Colours' }),
      h('p', { class: 'help' }, 'A coloured piece cell may sit on a neutral board cell, and on a coloured one only when the pair is listed; ',
        'a neutral piece cell fits anywhere (BurrTools\' rule). Paint colours with the Colour brush above and in the piece editor.'),
      pairList,
      h('div', { class: 'designer-toolbar' }, h('label', {}, 'Piece colour ', pairPiece), h('label', {}, '→ board colour ', pairBoard), pairAdd, pairNote)),
    h('section', { class: 'card' },
      h('h2', { text: 'Check, save and run' }),
      h('div', { class: 'designer-toolbar' }, optionBox,
        h('label', {}, 'Open a file ', fileInput)),
      chooser.el,
      modesHelp,
      actions, result,
      h('h3', { text: 'Batch: the board with a hole at each position' }),
      batchRow, batchNote)));
  markChoices(); /* the buttons exist now: the chosen tool and brush show pressed */

  const ready = (async () => {
    try {
      const list = await optionsList();
      optionFields = list.options.filter((o) => OPTIONS_SHOWN.includes(o.name))
        .map((o) => optionField(o, { testid: `design-${o.name}`, id: `design-${o.name}`, compact: true }));
      optionBox.append(...optionFields.map((f) => f.el));
      modesHelp.textContent = `Counting: ${list.counting_modes.map((m) => `${m.name}: ${m.text}`).join('. ')}.`;
    } catch (e) { showError(new Error(`Could not load the job options: ${e.message}`)); }
    try {
      st.library = (await api.library()).puzzles || [];
      for (const p of st.library) {
        if (!/\.json$/.test(p.file)) continue;
        const o = h('option', { value: `lib:${p.file}`, text: p.name || p.file });
        o.dataset.lattice = p.lattice || 'cubic';
        libGroup.append(o);
      }
      fillSetSelect();
    } catch { /* the library is optional */ }
    const kept = saved();
    if (kept?.puzzle) restore(kept);
    else fresh();
    if (params.job) {
      try {
        const pz = await api.puzzle(params.job);
        if (mayReplace(`the puzzle of job ${params.job}`)) {
          load(pz);
          result.textContent = `Opened the puzzle of job ${params.job}${colourSummary()}.`;
        } else {
          result.textContent = `Kept your design; the puzzle of job ${params.job} was not opened.`;
        }
      } catch (e) { showError(e); }
    }
  })();
  const onResize = () => drawBoard();
  window.addEventListener('resize', onResize);
  return {
    ready,
    destroy() {
      destroyed = true;
      window.removeEventListener('resize', onResize);
      window.removeEventListener('beforeunload', onBeforeUnload);
    },
  };
}
