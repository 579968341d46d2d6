// api.js — thin fetch wrapper for the tesserad REST API: JSON in/out,
// bearer token from localStorage, errors as ApiError: the server's message
// in the user's words (no status number, no "request body" wrapper the
// user never wrote), the status and the raw message beside it.

const TOKEN_KEY = 'tessera.token';
const authListeners = new Set();

/** "request body:3:7: ..." -> "line 3, column 7: ..."; "request body: $.x: ..." -> "$.x: ...". */
export function userMessage(message) {
  return String(message)
    .replace(/^request body:(\d+):(\d+): /, 'line $1, column $2: ')
    .replace(/^request body: /, '');
}

export class ApiError extends Error {
  constructor(status, message) {
    super(userMessage(message));
    this.status = status;
    this.serverMessage = message;
  }
}

export function getToken() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage unavailable: token lives for this page only */ }
}

/** fn(err, method) is called whenever the server answers 401. */
export function onAuthRequired(fn) { authListeners.add(fn); }

function headers(extra = {}) {
  const h = { ...extra };
  const t = getToken();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

/** Low-level request; resolves to the Response when ok, else throws ApiError. */
export async function request(method, path, { body, raw = false } = {}) {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, `Network error: cannot reach the server (${e.message})`);
  }
  if (res.ok) return res;
  let message = res.statusText || 'request failed';
  try {
    const j = await res.json();
    if (j && j.error && j.error.message) message = j.error.message;
  } catch { /* not JSON */ }
  const err = new ApiError(res.status, message);
  if (res.status === 401) authListeners.forEach((fn) => fn(err, method));
  throw err;
}

export async function getJSON(path) {
  return (await request('GET', path)).json();
}

export async function postJSON(path, body) {
  const res = await request('POST', path, { body });
  return res.status === 204 ? null : res.json();
}

export const api = {
  listJobs: (after = 0, limit = 100) => getJSON(`/api/v1/jobs?limit=${limit}&after=${after}`),
  async allJobs() {
    const jobs = [];
    let after = 0;
    for (;;) {
      const page = await api.listJobs(after, 100);
      jobs.push(...page.jobs);
      if (page.next == null || page.jobs.length === 0) return jobs;
      after = page.next;
    }
  },
  job: (id) => getJSON(`/api/v1/jobs/${id}`),
  puzzle: (id) => getJSON(`/api/v1/jobs/${id}/puzzle`),
  solutions: (id, after = 0, limit = 50) =>
    getJSON(`/api/v1/jobs/${id}/solutions?after=${after}&limit=${limit}`),
  action: (id, action) => postJSON(`/api/v1/jobs/${id}/${action}`),
  remove: (id) => request('DELETE', `/api/v1/jobs/${id}`),
  submit: (body) => postJSON('/api/v1/jobs', body),
  validate: (body) => postJSON('/api/v1/validate', body),
  /** A submit body's puzzle as a file (to: json, polycube, xmpuzzle), a Blob. */
  async convert(body, to) {
    return (await request('POST', `/api/v1/convert?to=${encodeURIComponent(to)}`, { body })).blob();
  },
  library: () => getJSON('/api/v1/puzzles'),
  async libraryFile(file) {
    return (await request('GET', `/api/v1/puzzles/${encodeURIComponent(file)}`)).text();
  },
};

/** A job that will never change again (the API says so: `final`). */
export const isFinal = (job) => job?.final === true;
