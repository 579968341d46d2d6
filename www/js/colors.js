// colors.js — the fixed piece palette (by index in the puzzle's piece list)
// and helpers for readable label colours and shading.

export const PALETTE = [
  '#e6194b', '#3cb44b', '#ffe119', '#4363d8', '#f58231', '#911eb4',
  '#42d4f4', '#f032e6', '#bfef45', '#fabed4', '#469990', '#dcbeff',
  '#9a6324', '#fffac8', '#800000', '#aaffc3', '#808000', '#ffd8b1',
  '#000075', '#a9a9a9', '#b3446c', '#7fb3ff', '#2f6f3f', '#e0a030',
];

export const BOARD_FILL = '#eef1f5';
export const BOARD_STROKE = '#9aa5b4';

export function pieceColor(index) {
  if (index == null || index < 0) return BOARD_FILL;
  return PALETTE[index % PALETTE.length];
}

export function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function luminance([r, g, b]) {
  const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
}

/** Black or white, whichever contrasts more with the fill. */
export function textColorFor(hex) {
  const L = luminance(hexToRgb(hex));
  return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#111111' : '#ffffff';
}

/**
 * Maps the puzzle's piece list to colours: colourOf(name) → hex.
 * Copies of a piece (count > 1) share their colour.
 */
export function colorMap(puzzlePieces) {
  const idx = new Map();
  (puzzlePieces || []).forEach((p, i) => { if (!idx.has(p.name)) idx.set(p.name, i); });
  return {
    index: (name) => (idx.has(name) ? idx.get(name) : -1),
    color: (name) => pieceColor(idx.has(name) ? idx.get(name) : hashIndex(name)),
  };
}

function hashIndex(name) {
  let h = 0;
  for (const c of String(name)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % PALETTE.length;
}
