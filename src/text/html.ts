import { decodeHTML } from 'entities';

/** Elements whose content is never text a reader sees: dropped with everything inside them. */
const HIDDEN = ['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'head'];

/** Elements that end a line of text (blocks, breaks, list items, table cells). */
const BREAKS =
  /^(?:address|article|aside|blockquote|br|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|tbody|td|tfoot|th|thead|title|tr|ul)$/i;

/**
 * The text of an HTML page as a reader sees it: comments, scripts, styles and other hidden
 * elements dropped with their content, tags removed (block elements end a line), entities
 * decoded, white space collapsed. A small scanner, linear in the input: it never builds a tree
 * and never backtracks, so a hostile page costs what its length costs.
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      out.push(decodeHTML(html.slice(i)));
      break;
    }
    if (lt > i) out.push(decodeHTML(html.slice(i, lt)));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end === -1 ? n : end + 3;
      continue;
    }
    const close = html.indexOf('>', lt + 1);
    if (close === -1) break; // an unterminated tag: nothing after it is text
    const tag = /^<\/?\s*([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(lt, Math.min(close + 1, lt + 64)));
    i = close + 1;
    if (!tag) continue; // <!DOCTYPE>, <?xml?>, a stray '<'
    const name = tag[1]!.toLowerCase();
    const opening = html[lt + 1] !== '/';
    if (opening && HIDDEN.includes(name) && html[close - 1] !== '/') {
      // Skip to the matching end tag (case-insensitive), or to the end of the page.
      const endTag = new RegExp(`</${name}`, 'gi');
      endTag.lastIndex = i;
      const end = endTag.exec(html)?.index ?? -1;
      if (end === -1) break;
      const after = html.indexOf('>', end);
      i = after === -1 ? n : after + 1;
      if (name === 'head') out.push('\n');
      continue;
    }
    if (BREAKS.test(name)) out.push('\n');
  }
  return out
    .join('')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n[\s]*/g, '\n')
    .trim();
}
