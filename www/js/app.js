// app.js — entry point: hash router (#/, #/submit, #/jobs/{id}), nav state,
// the API-token form, and the body[data-ready] flag for tests.

import { getToken, setToken, onAuthRequired } from './api.js';
import * as jobsPage from './pages/jobs.js';
import * as submitPage from './pages/submit.js';
import * as jobPage from './pages/job.js';
import { h, clear } from './dom.js';

const main = document.getElementById('main');
let current = null; // { destroy() } of the mounted page
let navSeq = 0;

function route(hash) {
  const path = (hash || '').replace(/^#/, '') || '/';
  let m;
  if (path === '/' || path === '') return { page: jobsPage, params: {}, nav: 'jobs' };
  if (path === '/submit') return { page: submitPage, params: {}, nav: 'submit' };
  if ((m = path.match(/^\/jobs\/([^/]+)$/))) return { page: jobPage, params: { id: decodeURIComponent(m[1]) }, nav: 'jobs' };
  return null;
}

async function navigate() {
  const seq = ++navSeq;
  delete document.body.dataset.ready;
  if (current) { try { current.destroy(); } catch { /* ignore */ } current = null; }
  clear(main);
  const r = route(location.hash);
  for (const a of document.querySelectorAll('.nav a')) {
    const active = r && a.dataset.testid === `nav-${r.nav}`;
    if (active) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (!r) {
    document.title = 'Not found · Tessera';
    main.append(h('div', { class: 'container' },
      h('h1', { text: 'Page not found' }),
      h('p', {}, 'There is nothing at this address. ', h('a', { href: '#/', text: 'Back to the jobs' }))));
    document.body.dataset.ready = '1';
    return;
  }
  const mounted = r.page.mount(main, r.params);
  current = mounted;
  try { await mounted.ready; } catch { /* the page shows its own error */ }
  if (seq === navSeq) document.body.dataset.ready = '1';
}

// --- API token form -------------------------------------------------------
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token-input');
const tokenToggle = document.getElementById('token-toggle');
const tokenNote = document.getElementById('token-note');

function showTokenForm(show, note = '') {
  tokenForm.hidden = !show;
  tokenToggle.setAttribute('aria-expanded', String(show));
  tokenNote.textContent = note;
  if (show) tokenInput.value = getToken();
}

tokenToggle.addEventListener('click', () => {
  showTokenForm(tokenForm.hidden);
  if (!tokenForm.hidden) tokenInput.focus();
});
tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(tokenInput.value.trim());
  showTokenForm(false);
  tokenToggle.textContent = getToken() ? 'API token ✓' : 'API token';
  // Reload the page only when reading failed; otherwise keep what was typed.
  if (readRefused) { readRefused = false; navigate(); }
});
document.getElementById('token-clear').addEventListener('click', () => {
  setToken('');
  tokenInput.value = '';
  tokenToggle.textContent = 'API token';
  tokenNote.textContent = 'Token cleared.';
});
let readRefused = false;
onAuthRequired((err, method) => {
  if (method === 'GET') readRefused = true;
  showTokenForm(true, getToken() ? 'The server refused this token.' : 'The server needs an API token for this.');
  tokenInput.focus();
});
if (getToken()) tokenToggle.textContent = 'API token ✓';

document.getElementById('skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', navigate);
navigate();
