// pages/submit.js — the submit form (#/submit): puzzle text / file / library,
// options, Preview (POST /validate) and Submit (POST /jobs).

import { h, clear } from '../dom.js';
import { api } from '../api.js';
import { fmtInt } from '../format.js';
import { renderPreview, legend } from '../preview.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Builds the request body from the text and the form's options. */
export function buildBody(text, options) {
  const t = text.trim();
  if (!t) throw new Error('Paste a puzzle, upload a file or choose one from the library first.');
  let obj;
  let parsed = false;
  try { obj = JSON.parse(t); parsed = true; } catch { /* not JSON */ }
  if (parsed) {
    if (isPlainObject(obj) && 'puzzle' in obj) {
      if (obj.options === undefined || isPlainObject(obj.options)) {
        return { ...obj, options: { ...(obj.options || {}), ...options } };
      }
      return obj; // malformed options: let the server name the problem
    }
    return { puzzle: obj, options };
  }
  // Text that looks like JSON but does not parse: send it as is so that the
  // server reports the syntax error with its line and column.
  if (t.startsWith('{')) return text;
  return { polycube: text, options };
}

export function mount(root) {
  document.title = 'Submit a puzzle · Tessera';
  let destroyed = false;
  let preview = null;
  let busy = false;

  const textarea = h('textarea', {
    id: 'puzzle-text', 'data-testid': 'puzzle-text', rows: 16, spellcheck: 'false',
    autocomplete: 'off', placeholder: '{"board": {"size": [10, 6]}, "pieces": [...]}\n\nor a polycube definition (D:xDim=...)',
    'aria-describedby': 'puzzle-text-help',
  });
  const fileInput = h('input', { type: 'file', id: 'puzzle-file', 'data-testid': 'puzzle-file', accept: '.json,.txt,application/json,text/plain' });
  const library = h('select', { id: 'library-select', 'data-testid': 'library-select' },
    h('option', { value: '', text: 'Loading the library…' }));
  const unique = h('select', { id: 'opt-unique', 'data-testid': 'unique' },
    h('option', { value: 'raw', text: 'raw: every tiling' }),
    h('option', { value: 'rotations', text: 'rotations: up to rotations', selected: true }),
    h('option', { value: 'mirror', text: 'mirror: up to rotations and reflections' }));
  unique.value = 'rotations';
  const num = (id, testid, value, min, max) => h('input', {
    type: 'number', id, 'data-testid': testid, value: String(value), min: String(min), max: max == null ? null : String(max),
    step: '1', inputmode: 'numeric',
  });
  const limit = num('opt-limit', 'limit', 0, 0);
  const threads = num('opt-threads', 'threads', 0, 0, 1024);
  const priority = num('opt-priority', 'priority', 0, -100, 100);

  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'submit-error', hidden: true });
  const summary = h('div', { class: 'summary', 'data-testid': 'preview-summary', 'aria-live': 'polite' });
  const area = h('div', { class: 'preview-area', 'data-testid': 'preview-area' });
  const previewBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'preview', text: 'Preview' });
  const submitBtn = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'submit', text: 'Submit job' });
  const status = h('span', { class: 'muted', 'aria-live': 'polite' });

  const field = (labelText, input, help) => h('div', { class: 'field' },
    h('label', { for: input.id, text: labelText }), input, help ? h('small', { class: 'help', text: help }) : null);

  const form = h('form', { class: 'submit-form', 'data-testid': 'submit-form', novalidate: true },
    h('section', { class: 'card' },
      h('h2', { text: 'Puzzle' }),
      h('div', { class: 'field' },
        h('label', { for: 'puzzle-text', text: 'Puzzle JSON, job JSON or polycube text' }),
        textarea,
        h('small', { class: 'help', id: 'puzzle-text-help', text: 'See docs/puzzle-format.md. A job ({"puzzle": …, "options": …}) keeps its options; the options below override them.' })),
      h('div', { class: 'field-row' },
        field('Upload a file', fileInput),
        field('Or choose from the library', library))),
    h('section', { class: 'card' },
      h('h2', { text: 'Options' }),
      field('Count solutions as distinct', unique),
      field('Solution limit', limit, '0 = find all'),
      field('Threads', threads, '0 = the daemon decides'),
      field('Priority', priority, '-100 to 100; larger runs first'),
      h('div', { class: 'button-row' }, previewBtn, submitBtn), status));

  root.append(h('div', { class: 'container' },
    h('div', { class: 'page-head' }, h('h1', { text: 'Submit a puzzle' })),
    errorBox,
    form,
    h('section', { class: 'card preview-card', 'aria-labelledby': 'preview-heading' },
      h('h2', { id: 'preview-heading', text: 'Preview' }),
      summary, area)));

  const showError = (msg) => { errorBox.textContent = msg || ''; errorBox.hidden = !msg; };

  function options() {
    const int = (el) => (el.value.trim() === '' ? 0 : Number(el.value));
    return { unique: unique.value, limit: int(limit), threads: int(threads), priority: int(priority) };
  }

  /** After loading a job document, show its options in the form. */
  function adoptOptions(text) {
    let obj;
    try { obj = JSON.parse(text); } catch { return; }
    const o = isPlainObject(obj) && isPlainObject(obj.options) ? obj.options : null;
    if (!o) return;
    if (['raw', 'rotations', 'mirror'].includes(o.unique)) unique.value = o.unique;
    if (Number.isInteger(o.limit)) limit.value = String(o.limit);
    if (Number.isInteger(o.threads)) threads.value = String(o.threads);
    if (Number.isInteger(o.priority)) priority.value = String(o.priority);
  }

  function resetPreview() {
    preview?.destroy();
    preview = null;
    clear(area);
    clear(summary);
  }

  function setBusy(b, msg = '') {
    busy = b;
    previewBtn.disabled = b;
    submitBtn.disabled = b;
    status.textContent = msg;
  }

  function body() {
    try { return buildBody(textarea.value, options()); } catch (e) { showError(e.message); return null; }
  }

  async function doPreview() {
    if (busy) return;
    showError('');
    const b = body();
    if (b == null) return;
    setBusy(true, 'Checking…');
    resetPreview();
    try {
      const res = await api.validate(b);
      if (destroyed) return;
      renderSummary(res);
      preview = renderPreview(area, res.puzzle, res.summary?.dimensions === 3 ? 3 : 2);
      area.prepend(legend(res.puzzle.pieces));
      setBusy(false, '');
    } catch (e) {
      if (destroyed) return;
      setBusy(false, '');
      showError(e.message);
    }
  }

  function renderSummary(res) {
    const sm = res.summary || {};
    const p = res.puzzle || {};
    const exp = sm.expected || {};
    const expText = Object.keys(exp).length
      ? Object.entries(exp).map(([k, v]) => `${fmtInt(v)} ${k}`).join(', ') : 'not given';
    const item = (k, v) => h('div', {}, h('dt', { text: k }), h('dd', { text: v }));
    summary.append(h('p', { class: 'summary-title' }, h('strong', { text: sm.name || 'Unnamed puzzle' }), ` · ${sm.dimensions === 3 ? '3D' : '2D'}`),
      h('dl', { class: 'stats-grid' },
        item('Cells', fmtInt(sm.cells)),
        item('Pieces', fmtInt(sm.pieces)),
        item('Piece shapes', fmtInt((p.pieces || []).length)),
        item('Rotations', `${p.rotations || 'all'}${p.mirror ? ' + mirror' : ''}`),
        item('Expected solutions', expText),
        item('Counting', res.options?.unique || unique.value)));
  }

  async function doSubmit(e) {
    e?.preventDefault();
    if (busy) return;
    showError('');
    const b = body();
    if (b == null) return;
    setBusy(true, 'Submitting…');
    try {
      const job = await api.submit(b);
      if (destroyed) return;
      setBusy(false, '');
      location.hash = `#/jobs/${job.id}`;
    } catch (err) {
      if (destroyed) return;
      setBusy(false, '');
      showError(err.message);
    }
  }

  previewBtn.addEventListener('click', doPreview);
  form.addEventListener('submit', doSubmit);
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) doSubmit(e);
  });

  fileInput.addEventListener('change', () => {
    const f = fileInput.files && fileInput.files[0];
    if (!f) return;
    const reader = new FileReader();
    reader.onload = () => {
      textarea.value = String(reader.result || '');
      adoptOptions(textarea.value);
      library.value = '';
      resetPreview();
      showError('');
      status.textContent = `Loaded ${f.name}.`;
    };
    reader.onerror = () => showError(`Could not read ${f.name}.`);
    reader.readAsText(f);
  });

  library.addEventListener('change', async () => {
    const file = library.value;
    if (!file) return;
    showError('');
    setBusy(true, `Loading ${file}…`);
    try {
      const text = await api.libraryFile(file);
      if (destroyed) return;
      textarea.value = text;
      adoptOptions(text);
      resetPreview();
      setBusy(false, `Loaded ${file}.`);
    } catch (err) {
      if (destroyed) return;
      setBusy(false, '');
      showError(err.message);
    }
  });

  const ready = (async () => {
    try {
      const lib = await api.library();
      if (destroyed) return;
      clear(library);
      library.append(h('option', { value: '', text: lib.puzzles.length ? '— choose a puzzle —' : 'the library is empty' }));
      for (const p of lib.puzzles) {
        const desc = `${p.name || p.file} (${p.dimensions}D, ${fmtInt(p.pieces)} pieces)`;
        library.append(h('option', { value: p.file, text: desc }));
      }
    } catch (e) {
      if (destroyed) return;
      clear(library);
      library.append(h('option', { value: '', text: 'library unavailable' }));
      showError(`Could not load the puzzle library: ${e.message}`);
    }
  })();

  return {
    ready,
    destroy() { destroyed = true; preview?.destroy(); },
  };
}
