// pages/submit.js — the submit form (#/submit): puzzle text / file / library,
// options, Preview (POST /validate) and Submit (POST /jobs).  The option
// fields are built from the daemon's list (GET /api/v1/options, options.js):
// what the job asks in view, the engine's tuning in a fold.  A job
// document's options fill the form however it arrives (pasted, typed,
// uploaded, picked); the server's errors are told in the user's terms (the
// JSON path as they wrote it, a piece's name, the line, marked in the text
// box); pieces that do not hang together get a warning.  A BurrTools file
// with several problems shows a chooser: the problem chosen is the one
// previewed, estimated and submitted (the job's "problem").

import { h, clear } from '../dom.js';
import { api, postJSON } from '../api.js';
import { fmtInt } from '../format.js';
import { renderPreview, legend, disconnectedPieces, readPuzzleFile, burrToolsProblems, problemChooser } from '../preview.js';
import { latticeOf } from '../lattice.js';
import { pathSteps, parseWithOffsets, offsetOf, lineOf } from '../jsonpos.js';
import { optionsList, optionField, fieldValues } from '../options.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Builds the request body from the text and the form's options.  In a job
 * document the form decides every option it has a field for (known: their
 * names), also by leaving one out; other keys go to the server as written.
 * problem: a BurrTools file's problem number (undefined: the first).
 */
export function buildBody(text, options, known = Object.keys(options), problem = undefined) {
  const t = text.trim();
  if (!t) throw new Error('Paste a puzzle, upload a file or choose one from the library first.');
  let obj;
  let parsed = false;
  try { obj = JSON.parse(t); parsed = true; } catch { /* not JSON */ }
  if (parsed) {
    if (isPlainObject(obj) && 'puzzle' in obj) {
      if (obj.options === undefined || isPlainObject(obj.options)) {
        const others = Object.entries(obj.options || {}).filter(([k]) => !known.includes(k));
        return { ...obj, options: { ...Object.fromEntries(others), ...options } };
      }
      return obj; // malformed options: let the server name the problem
    }
    return { puzzle: obj, options };
  }
  // Text that looks like JSON but does not parse: send it as is so that the
  // server reports the syntax error with its line and column.
  if (t.startsWith('{')) return text;
  // a BurrTools file (its XML: an upload is inflated in the browser)
  if (t.startsWith('<')) return problem ? { xmpuzzle: text, problem, options } : { xmpuzzle: text, options };
  return { polycube: text, options };
}

/**
 * The server's message for the text the user wrote: {text, line}.  The
 * form wraps a bare puzzle as {"puzzle": …}, so "$.puzzle" is the user's "$";
 * a piece is named as well as numbered; a JSON syntax error's or a polycube
 * file's line is the user's line.  line is 1-based, or 0 when unknown.
 */
export function explainError(message, userText) {
  let msg = String(message).replace(/^request body(?=[: ])/, '');
  let m;
  if ((m = msg.match(/^:(\d+):(\d+): (.*)$/s))) return { text: `line ${m[1]}, column ${m[2]}: ${m[3]}`, line: Number(m[1]) };
  msg = msg.replace(/^: /, '');
  const doc = (() => { try { return JSON.parse(userText); } catch { return null; } })();
  const isJob = isPlainObject(doc) && ('puzzle' in doc || 'polycube' in doc);
  if ((m = msg.match(/^\$\.polycube:(\d+): (.*)$/s))) {
    // the line of the polycube text: the box's own line unless it holds a job document
    return { text: `${doc ? '$.polycube ' : ''}line ${m[1]}: ${m[2]}`, line: doc ? 0 : Number(m[1]) };
  }
  if (!(m = msg.match(/^(\$[^\s:]*): (.*)$/s))) return { text: msg, line: 0 };
  let [, path, rest] = m;
  const tree = parseWithOffsets(userText);
  if (!isJob && path.startsWith('$.puzzle')) path = `$${path.slice('$.puzzle'.length)}`;
  else if (!isJob && path.startsWith('$.options.')) return { text: `option ${path.slice(10)}: ${rest}`, line: 0 };
  const steps = pathSteps(path);
  const puzzle = isJob ? doc.puzzle : doc;
  const k = steps.indexOf('pieces');
  const idx = steps[k + 1];
  const inPuzzle = !isJob || steps[0] === 'puzzle';
  let piece = '';
  if (k >= 0 && k <= 1 && inPuzzle && Number.isInteger(idx)) {
    const name = puzzle?.pieces?.[idx]?.name;
    piece = name != null ? `piece "${name}"` : '';
  }
  const off = tree ? offsetOf(tree, steps) : -1;
  const line = off >= 0 ? lineOf(userText, off) : 0;
  const where = [piece, line ? `line ${line}` : ''].filter(Boolean).join(', ');
  return { text: `${path}${where ? ` (${where})` : ''}: ${rest}`, line };
}

export function mount(root) {
  document.title = 'Submit a puzzle · Tessera';
  let destroyed = false;
  let preview = null;
  let busy = false;

  const textarea = h('textarea', {
    id: 'puzzle-text', 'data-testid': 'puzzle-text', rows: 16, spellcheck: 'false', wrap: 'off',
    autocomplete: 'off', placeholder: '{"board": {"size": [10, 6]}, "pieces": [...]}\n\nor a polycube definition (D:xDim=...)',
    'aria-describedby': 'puzzle-text-help',
  });
  // Behind the text box, the same text, invisible, with the line an error
  // names marked (a textarea cannot colour a line of its own).
  const backdrop = h('div', { class: 'editor-backdrop', 'aria-hidden': 'true' });
  const editor = h('div', { class: 'editor' }, backdrop, textarea);
  const fileInput = h('input', { type: 'file', id: 'puzzle-file', 'data-testid': 'puzzle-file', accept: '.json,.txt,.xmpuzzle,application/json,text/plain' });
  // a BurrTools file's problems, when it has several: the one to solve
  const chooser = problemChooser('problem-select', () => { resetPreview(); estimateOut.textContent = ''; showError(''); });
  const library = h('select', { id: 'library-select', 'data-testid': 'library-select' },
    h('option', { value: '', text: 'Loading the library…' }));
  // the option fields, once the daemon's list has come (options.js)
  let fields = [];
  const jobOptions = h('div', { class: 'option-grid', 'data-testid': 'job-options' },
    h('p', { class: 'muted', text: 'Loading the options…' }));
  const engineOptions = h('div', { class: 'option-grid', 'data-testid': 'engine-options' });

  const errorBox = h('div', { class: 'alert', role: 'alert', 'data-testid': 'submit-error', hidden: true });
  const warningBox = h('div', { class: 'alert alert-warning', role: 'status', 'data-testid': 'submit-warning', hidden: true });
  const summary = h('div', { class: 'summary', 'data-testid': 'preview-summary', 'aria-live': 'polite' });
  const area = h('div', { class: 'preview-area', 'data-testid': 'preview-area' });
  const previewBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'preview', text: 'Preview' });
  const submitBtn = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'submit', text: 'Submit job' });
  const estimateBtn = h('button', { type: 'button', class: 'btn', 'data-testid': 'estimate', text: 'Estimate' });
  const estimateOut = h('p', { class: 'estimate-result', 'data-testid': 'estimate-result', 'aria-live': 'polite' });
  const status = h('span', { class: 'muted', 'aria-live': 'polite' });

  const field = (labelText, input, help) => h('div', { class: 'field' },
    h('label', { for: input.id, text: labelText }), input, help ? h('small', { class: 'help', text: help }) : null);

  const form = h('form', { class: 'submit-form', 'data-testid': 'submit-form', novalidate: true },
    h('section', { class: 'card' },
      h('h2', { text: 'Puzzle' }),
      h('div', { class: 'field' },
        h('label', { for: 'puzzle-text', text: 'Puzzle JSON, job JSON, polycube text or a BurrTools file (.xmpuzzle)' }),
        editor,
        h('small', { class: 'help', id: 'puzzle-text-help' }, 'The format: ',
          h('a', { href: '#/docs/puzzle-format.md', 'data-testid': 'format-link', text: 'docs/puzzle-format.md' }),
          '. A job ({"puzzle": …, "options": …}) brings its options into the form below; what the form says is what the job gets.')),
      h('div', { class: 'field-row' },
        field('Upload a file', fileInput),
        field('Or choose from the library', library)),
      chooser.el),
    h('section', { class: 'card' },
      h('h2', { text: 'Options' }),
      jobOptions,
      h('details', { class: 'engine-options' },
        h('summary', { text: 'Engine options (chosen from the puzzle unless set here)' }),
        engineOptions),
      h('div', { class: 'button-row' }, previewBtn, estimateBtn, submitBtn), status, estimateOut));

  root.append(h('div', { class: 'container' },
    h('div', { class: 'page-head' }, h('h1', { text: 'Submit a puzzle' })),
    errorBox,
    warningBox,
    form,
    h('section', { class: 'card preview-card', 'aria-labelledby': 'preview-heading' },
      h('h2', { id: 'preview-heading', text: 'Preview' }),
      summary, area)));

  const showError = (msg) => { errorBox.textContent = msg || ''; errorBox.hidden = !msg; if (!msg) markLine(0); };
  const showWarning = (msg) => { warningBox.textContent = msg || ''; warningBox.hidden = !msg; };

  /** An error from the server, told for the text in the box. */
  function showServerError(e) {
    if (!e.status) { showError(e.message); return; }
    const { text, line } = explainError(e.serverMessage ?? e.message, textarea.value);
    showError(text);
    markLine(line);
  }

  /** Marks line n (1-based) behind the text and scrolls it into view; 0 clears. */
  function markLine(n) {
    clear(backdrop);
    editor.classList.toggle('has-mark', n > 0);
    if (!n) return;
    const lines = textarea.value.split('\n');
    if (n > lines.length) return;
    backdrop.append(lines.slice(0, n - 1).map((l) => `${l}\n`).join(''),
      h('mark', { 'data-testid': 'error-line', text: lines[n - 1] || ' ' }),
      `\n${lines.slice(n).join('\n')}`);
    const lh = parseFloat(getComputedStyle(textarea).lineHeight) || 18;
    textarea.scrollTop = Math.max(0, (n - 1) * lh - textarea.clientHeight / 3);
    syncScroll();
  }
  function syncScroll() {
    backdrop.scrollTop = textarea.scrollTop;
    backdrop.scrollLeft = textarea.scrollLeft;
  }
  textarea.addEventListener('scroll', syncScroll);

  function options() {
    return fieldValues(fields);
  }

  /** After loading or pasting a job document, show its options in the form
   *  (the form's options are what is submitted).  An option the document
   *  leaves out is the daemon's default, not what the form held before; a
   *  bare puzzle leaves the form alone. */
  function adoptOptions(text) {
    let obj;
    try { obj = JSON.parse(text); } catch { return; }
    if (!isPlainObject(obj) || !('puzzle' in obj || 'polycube' in obj)) return;
    const o = isPlainObject(obj.options) ? obj.options : {};
    for (const f of fields) f.set(o[f.o.name]);
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
    estimateBtn.disabled = b;
    submitBtn.disabled = b;
    status.textContent = msg;
  }

  function body() {
    try {
      return buildBody(textarea.value, options(), fields.map((f) => f.o.name), chooser.value());
    } catch (e) { showError(e.message); return null; }
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
      const loose = disconnectedPieces(res.puzzle.pieces, latticeOf(res.puzzle));
      showWarning(loose.length ? `Warning: the cells of ${loose.length === 1 ? 'piece' : 'pieces'} ${loose.map((n) => `"${n}"`).join(', ')} are not all connected (side to side). The puzzle can be solved as it is, but such a piece is rarely meant.` : '');
      setBusy(false, '');
    } catch (e) {
      if (destroyed) return;
      setBusy(false, '');
      showServerError(e);
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
        item('Counting', res.options?.unique || options().unique || '')));
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
      showServerError(err);
    }
  }

  /** How long it would take, before submitting (POST /api/v1/estimate). */
  async function doEstimate() {
    if (busy) return;
    showError('');
    estimateOut.textContent = '';
    const b = body();
    if (b == null) return;
    setBusy(true, 'Estimating (a few seconds)…');
    try {
      const e = await postJSON('/api/v1/estimate', b);
      if (destroyed) return;
      setBusy(false, '');
      const one = e.seconds?.['1'];
      const sols = e.solutions?.high == null ? `at least ${fmtInt(Math.round(e.solutions?.low ?? 0))}`
        : `about ${fmtInt(Math.round(e.solutions.estimate))} (${fmtInt(Math.round(e.solutions.low))} to ${fmtInt(Math.round(e.solutions.high))})`;
      estimateOut.textContent = e.exact
        ? `Exact: ${fmtInt(e.exact.solutions)} solutions, ${fmtInt(e.exact.nodes)} nodes in ${e.exact.text}.`
        : `Solutions: ${sols}; ${one ? one.text : '?'} on one thread.`;
    } catch (err) {
      if (destroyed) return;
      setBusy(false, '');
      showServerError(err);
    }
  }

  previewBtn.addEventListener('click', doPreview);
  estimateBtn.addEventListener('click', doEstimate);
  // Typed or pasted text: its options (a job document) fill the form, and
  // the library no longer names what is in the box.
  textarea.addEventListener('input', () => {
    adoptOptions(textarea.value);
    chooser.set(burrToolsProblems(textarea.value));
    if (library.value) { library.value = ''; status.textContent = ''; }
    markLine(0);
    showWarning('');
    estimateOut.textContent = ''; /* it was for the text before */
  });
  form.addEventListener('submit', doSubmit);
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) doSubmit(e);
  });

  fileInput.addEventListener('change', async () => {
    const f = fileInput.files && fileInput.files[0];
    if (!f) return;
    try {
      textarea.value = await readPuzzleFile(f);
    } catch (e) {
      showError(`Could not read ${f.name}: ${e.message}`);
      return;
    }
    adoptOptions(textarea.value);
    const problems = burrToolsProblems(textarea.value);
    chooser.set(problems);
    library.value = '';
    estimateOut.textContent = '';
    resetPreview();
    showError('');
    showWarning('');
    status.textContent = problems.length > 1 ? `Loaded ${f.name}: ${problems.length} problems; choose one below the upload.` : `Loaded ${f.name}.`;
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
      chooser.set(burrToolsProblems(text));
      estimateOut.textContent = '';
      resetPreview();
      markLine(0);
      showWarning('');
      setBusy(false, `Loaded ${file}.`);
    } catch (err) {
      if (destroyed) return;
      setBusy(false, '');
      showError(err.message);
    }
  });

  const fieldsReady = (async () => {
    try {
      const list = await optionsList();
      if (destroyed) return;
      fields = list.options.map((o) => optionField(o));
      clear(jobOptions);
      for (const f of fields) (f.o.group === 'engine' ? engineOptions : jobOptions).append(f.el);
      adoptOptions(textarea.value); // a job typed while the list was coming
    } catch (e) {
      if (destroyed) return;
      clear(jobOptions);
      jobOptions.append(h('p', { class: 'muted', text: 'The options are unavailable: a job gets its own, or the defaults.' }));
      showError(`Could not load the job options: ${e.message}`);
    }
  })();

  const libraryReady = (async () => {
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
    ready: Promise.all([fieldsReady, libraryReady]),
    destroy() { destroyed = true; preview?.destroy(); },
  };
}
