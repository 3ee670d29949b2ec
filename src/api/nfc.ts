/**
 * Ids are compared as strings, so `Café` typed precomposed (U+00E9) and decomposed (e + U+0301)
 * would name two banks that look the same. Every id reaching the API is put in Unicode NFC at
 * the boundary: each path segment and each query value here, before routing; MCP bank
 * arguments and document ids where they are read (`mcp/tool.ts`, `core/retain`).
 */

/** NFC of a string (ids are compared in this form everywhere). */
export const nfc = (s: string) => s.normalize('NFC');

function nfcSegment(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return segment; // malformed escapes are the router's to refuse
  }
  const normal = nfc(decoded);
  return normal === decoded ? segment : encodeURIComponent(normal);
}

/** The request with its path segments and query values in NFC; the same request when they already are. */
export function nfcRequest(req: Request): Request {
  const url = new URL(req.url);
  // Only escaped non-ASCII text (%80 and above) can be out of NFC.
  if (!/%[89a-f][0-9a-f]/i.test(url.pathname + url.search)) return req;
  const path = url.pathname.split('/').map(nfcSegment).join('/');
  let search = url.search;
  const params = new URLSearchParams(url.search);
  if ([...params].some(([k, v]) => nfc(k) !== k || nfc(v) !== v)) {
    search = `?${new URLSearchParams([...params].map(([k, v]) => [nfc(k), nfc(v)])).toString()}`;
  }
  if (path === url.pathname && search === url.search) return req;
  url.pathname = path;
  url.search = search;
  const hasBody = req.body !== null && req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, {
    method: req.method,
    headers: req.headers,
    body: hasBody ? req.body : undefined,
    signal: req.signal,
    ...(hasBody ? { duplex: 'half' } : {}),
  } as RequestInit);
}
