// options.js — the job options' form fields, built from GET /api/v1/options:
// the daemon's one list of options (include/tessera/options.h) says each
// option's name, kind, range, default, named values and help, and the
// counting modes.  The pages hold no list of their own.
//
// A field shows one option and gives its value back as JSON; undefined
// means "left out" (the option's default, or the engine's choice).  A value
// the field cannot show (a pasted job's typo) is kept as it is, so that the
// daemon names the mistake, until the field is changed.

import { h } from './dom.js';
import { getJSON } from './api.js';

let listPromise = null;

/** The list ({options, counting_modes}), fetched once per page load. */
export function optionsList() {
  listPromise ??= getJSON('/api/v1/options').catch((e) => { listPromise = null; throw e; });
  return listPromise;
}

const OTHER = '\u0001other'; // the select's entry that reveals the free input

/** A choice's text up to its first ';': what fits in a select. */
const short = (text) => String(text).split(';')[0];

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** "0", "\"all\"", "automatic": the default as help shows it. */
function defaultText(o) {
  if (o.default === null) return 'automatic';
  return typeof o.default === 'string' ? o.default : JSON.stringify(o.default);
}

/**
 * The field of option o (an entry of the list's "options").  testid names
 * the main control (the select, else the input); a free value next to a
 * select is `${testid}-value`.  compact: no label or help below, the help
 * goes to the control's title and aria-label instead.
 * Returns {o, el, control, get(), set(value)}.
 */
export function optionField(o, { testid = o.name, id = `opt-${o.name}`, compact = false } = {}) {
  const choices = o.choices || [];
  const free = o.integer ? 'integer' : o.string ? 'string' : null;
  let raw; // a value set() could not show, sent as it is until the user edits
  const input = free && h('input', {
    type: free === 'integer' ? 'number' : 'text', class: compact ? 'num-small' : null,
    min: o.integer ? String(o.integer.min) : null, max: o.integer ? String(o.integer.max) : null,
    step: free === 'integer' ? '1' : null, inputmode: free === 'integer' ? 'numeric' : null,
    maxlength: o.string ? String(o.string.max_bytes) : null, spellcheck: 'false', autocomplete: 'off',
    placeholder: o.string?.piece ? 'a piece name' : o.default === null ? 'automatic' : null,
  });
  let select = null;
  if (choices.length) {
    select = h('select', {});
    if (o.default === null) select.append(h('option', { value: '', text: 'automatic' }));
    for (const c of choices) {
      const mark = same(c.value, o.default) ? ' (default)' : '';
      // a counting mode by its name (the list below the select says what it
      // counts); another named value by its name and what it does
      const label = o.kind === 'mode' ? c.value
        : typeof c.value === 'string' ? `${c.value}: ${short(c.text)}` : short(c.text);
      select.append(h('option', { value: typeof c.value === 'string' ? c.value : JSON.stringify(c.value), text: label + mark }));
    }
    if (free) select.append(h('option', { value: OTHER, text: free === 'integer' ? 'a number…' : 'a piece…' }));
  }
  const control = select || input;
  control.id = id;
  control.dataset.testid = testid;
  if (select && input) {
    input.dataset.testid = `${testid}-value`;
    input.setAttribute('aria-label', `${o.name}: ${free === 'integer' ? 'the number' : 'the piece'}`);
  }
  const helpText = `${o.help}${o.daemon_only ? ' (the daemon’s jobs only)' : ''}. Default: ${defaultText(o)}.`;
  if (compact) {
    control.title = helpText;
    control.setAttribute('aria-label', `${o.name}: ${o.help}`);
  }

  const showFree = () => { if (select && input) input.hidden = select.value !== OTHER; };
  const choiceOf = (v) => choices.find((c) => same(c.value, v));
  const fits = (v) => (free === 'integer' && Number.isInteger(v) && v >= o.integer.min && v <= o.integer.max)
    || (free === 'string' && typeof v === 'string' && v.length <= o.string.max_bytes);

  function set(v) {
    raw = undefined;
    if (v === undefined) v = o.default;
    if (select) {
      const c = choiceOf(v);
      if (v === null) select.value = '';
      else if (c) select.value = typeof c.value === 'string' ? c.value : JSON.stringify(c.value);
      else if (fits(v)) { select.value = OTHER; input.value = String(v); }
      else { raw = v; select.value = o.default === null ? '' : select.options[0].value; }
    } else if (v === null) {
      input.value = '';
    } else if (fits(v)) {
      input.value = String(v);
    } else {
      raw = v;
      input.value = o.default === null ? '' : String(o.default);
    }
    showFree();
  }

  function get() {
    if (raw !== undefined) return raw;
    if (select && select.value !== OTHER) {
      if (select.value === '') return undefined;
      return choices.find((c) => (typeof c.value === 'string' ? c.value : JSON.stringify(c.value)) === select.value)?.value;
    }
    const t = input.value.trim();
    if (t === '') return o.default === null || select ? undefined : o.default;
    return free === 'integer' ? Number(t) : t;
  }

  for (const c of [select, input]) c?.addEventListener('input', () => { raw = undefined; showFree(); });
  set(undefined);

  const controls = [select, input].filter(Boolean);
  const el = compact
    ? h('label', { class: 'option-compact' }, `${o.name} `, ...controls)
    : h('div', { class: 'field', 'data-option': o.name },
      h('label', { for: id }, h('code', { text: o.name })),
      h('div', { class: 'option-controls' }, ...controls),
      h('small', { class: 'help', text: helpText }),
      o.kind === 'mode' ? h('ul', { class: 'help mode-list' },
        choices.map((c) => h('li', {}, h('b', { text: c.value }), `: ${c.text}`))) : null);
  return { o, el, control, get, set };
}

/** The values of fields, without those left out. */
export function fieldValues(fields) {
  const out = {};
  for (const f of fields) {
    const v = f.get();
    if (v !== undefined) out[f.o.name] = v;
  }
  return out;
}
