/**
 * DOM helpers. Every element is built with createElement and text nodes, never from HTML
 * strings, so stored memory text can never turn into markup (and the strict CSP holds).
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const PROPS = new Set(['value', 'checked', 'selected', 'indeterminate']);

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === true) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (PROPS.has(key)) el[key] = value;
    else if (key === 'class') el.setAttribute('class', [value].flat().filter(Boolean).join(' '));
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

/** An HTML element: `h('a', {href, class, onclick}, 'text', child, [more])`. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  append(el, children);
  // After the children, so a select's `value` finds its options.
  setAttrs(el, attrs);
  return el;
}

/** An SVG element, same signature as `h`. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  append(el, children);
  setAttrs(el, attrs);
  return el;
}

/** Replaces an element's children; null, undefined and booleans are skipped (unlike `replaceChildren`). */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let counter = 0;
/** A document-unique id for label/control pairs. */
export const uid = (prefix = 'c') => `${prefix}-${++counter}`;

/** Date-time for people: local, to the minute; '—' when absent. */
export function fmtDate(value) {
  if (!value) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A `<time>` element with the exact value in `datetime` and a readable text. */
export const time = (value) => (value ? h('time', { datetime: value, title: value }, fmtDate(value)) : '—');

export const fmtNumber = (n) => (typeof n === 'number' ? n.toLocaleString() : '—');

/** Score with three decimals (scores are 0–1 mostly; the reranker's may not be). */
export const fmtScore = (n) => (typeof n === 'number' ? n.toFixed(3) : '—');

/** `datetime-local` input value -> ISO 8601 (interpreted in the browser's zone); '' -> undefined. */
export function localToIso(value) {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}

/** Comma-separated text -> trimmed, non-empty list. */
export const splitList = (text) =>
  String(text ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
