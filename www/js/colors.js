// colors.js — piece colours: a palette of 39 colours chosen greedily for the
// largest smallest CIELAB distance (lightness half-weighted, since shading
// moves it), so that the first dozen are far apart and 35 hexominoes still
// differ; mirror partners (f and F, L' and L) share a hue at another
// lightness; fixed pieces are grey (drawn hatched); plus readable label
// colours.

export const PALETTE = [
  '#e6194b', '#3cb44b', '#ffe119', '#4363d8', '#f58231', '#42d4f4', '#f032e6',
  '#fabed4', '#97ff00', '#5d7e66', '#808000', '#00fdcf', '#ff7ed1', '#8c3bff',
  '#9c3b4f', '#645474', '#7fb3ff', '#ffd8b1', '#d60000', '#9a6324', '#a17569',
  '#bde6bf', '#bfef45', '#eb0077', '#03c600', '#911eb4', '#dcbeff', '#e0a030',
  '#ff7266', '#00af89', '#2f6f3f', '#95b577', '#a57bb8', '#708297', '#469990',
  '#9e4b00', '#0774d8', '#cac300', '#018700',
];

export const BOARD_FILL = '#eef1f5';
export const BOARD_STROKE = '#9aa5b4';
export const FIXED_FILL = '#9aa3ad';

/** Colour number i: the palette, then golden-angle hues for more. */
export function pieceColor(index) {
  if (index == null || index < 0) return BOARD_FILL;
  if (index < PALETTE.length) return PALETTE[index];
  const k = index - PALETTE.length;
  return hslToHex((k * 137.508 + 20) % 360, [70, 55, 85][k % 3], [55, 40, 72][(k >> 1) % 3]);
}

export function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function hslToHex(hue, sat, light) {
  const s = sat / 100, l = light / 100;
  const a = s * Math.min(l, 1 - l);
  const f = (n) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return `#${[f(0), f(8), f(4)].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

function rgbToHsl([r, g, b]) {
  r /= 255; g /= 255; b /= 255;
  const max = Math.max(r, g, b), min = Math.min(r, g, b), l = (max + min) / 2;
  if (max === min) return [0, 0, l * 100];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  const hue = max === r ? (g - b) / d + (g < b ? 6 : 0) : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return [hue * 60, s * 100, l * 100];
}

/** The same hue, lighter when the colour is dark and darker when it is light. */
export function partnerShade(hex) {
  const [hue, sat, light] = rgbToHsl(hexToRgb(hex));
  return hslToHex(hue, Math.max(35, sat), light > 55 ? light - 24 : light + 24);
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

/** The name whose mirror image `name` is, when the puzzle has both: "f" of
 *  "F" (one-sided sets), "L'" of "L"; else null. */
export function mirrorOf(name, names) {
  if (name.endsWith("'") && names.has(name.slice(0, -1))) return name.slice(0, -1);
  const up = name.toUpperCase();
  if (up !== name && name.toLowerCase() === name && names.has(up)) return up;
  return null;
}

/**
 * Maps the puzzle's piece list to colours: color(name) → hex, fixed(name).
 * Copies of a piece (count > 1) share their colour; a mirror partner takes
 * its twin's hue; fixed pieces are grey.
 */
export function colorMap(puzzlePieces) {
  const pieces = puzzlePieces || [];
  const names = new Set(pieces.map((p) => p.name));
  const colour = new Map();
  const fixed = new Set(pieces.filter((p) => p.fixed).map((p) => p.name));
  let next = 0;
  for (const p of pieces) {
    if (colour.has(p.name)) continue;
    if (fixed.has(p.name)) colour.set(p.name, FIXED_FILL);
    else if (!mirrorOf(p.name, names)) colour.set(p.name, pieceColor(next++));
  }
  for (const p of pieces) {
    if (colour.has(p.name)) continue;
    const twin = colour.get(mirrorOf(p.name, names));
    colour.set(p.name, twin ? partnerShade(twin) : pieceColor(next++));
  }
  return {
    index: (name) => pieces.findIndex((p) => p.name === name),
    color: (name) => colour.get(name) ?? pieceColor(hashIndex(name)),
    fixed: (name) => fixed.has(name),
  };
}

function hashIndex(name) {
  let h = 0;
  for (const c of String(name)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % PALETTE.length;
}

// ---- the puzzle's own colours (Puzzle JSON "colors"): cell colours 1..63 ----

/** Nine far-apart colours for colour numbers 1..9 of a puzzle without a
 *  palette (then the piece colours, shifted, for 10..63). */
export const CELL_PALETTE = ['#d7263d', '#1b998b', '#f4d35e', '#2e5eaa', '#f46036',
  '#7b2cbf', '#55dde0', '#e83f6f', '#6a994e'];

/** How colour n (1..63) of a puzzle is shown: its palette's, else a fixed one. */
export function cellColor(n, palette) {
  if (!n) return null;
  if (palette && /^#[0-9a-f]{6}$/i.test(palette[n - 1] || '')) return palette[n - 1];
  return n <= CELL_PALETTE.length ? CELL_PALETTE[n - 1] : pieceColor(n + 7);
}
