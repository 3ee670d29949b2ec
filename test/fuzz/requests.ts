/**
 * fast-check arbitraries for HTTP requests to mnemo: every route with random and adversarial
 * path parameters, query strings, headers and bodies. Most requests are close to valid (the
 * operator token, JSON, one field broken) so they reach the handlers; the rest probe the edges.
 */
import fc from 'fast-check';

export interface Shape {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

/** Routes: methods, path template, and a valid body for the writes. */
const ROUTES: { methods: string[]; path: string; body?: (m: string) => unknown }[] = [
  {
    methods: ['POST', 'GET'],
    path: '{base}/banks/{bank}/memories',
    body: () => ({
      items: [
        {
          content: 'Bob likes tea',
          fact_type: 'preference',
          context: 'chat',
          timestamp: '2024-01-02T03:04:05Z',
          entities: [{ text: 'Bob', type: 'PERSON' }],
          tags: ['t'],
          metadata: { k: 'v' },
        },
      ],
      document_id: 'd1',
    }),
  },
  {
    methods: ['POST'],
    path: '{base}/banks/{bank}/memories/recall',
    body: () => ({
      query: 'what does Bob like?',
      max_tokens: 512,
      budget: 'low',
      types: ['world'],
      tags: ['t'],
      tags_match: 'any',
      query_timestamp: '2024-01-02T03:04:05Z',
      temporal_window: { start: '2024-01-01T00:00:00Z', end: '2024-02-01T00:00:00Z' },
      min_scores: { reranker: 0.1 },
    }),
  },
  { methods: ['GET'], path: '{base}/banks/{bank}/memories/list' },
  { methods: ['DELETE'], path: '{base}/banks/{bank}/memories/{id}' },
  { methods: ['GET'], path: '{base}/banks' },
  {
    methods: ['GET', 'DELETE', 'PATCH', 'PUT'],
    path: '{base}/banks/{bank}',
    body: () => ({
      name: 'Bank',
      mission: 'remember',
      disposition: { skepticism: 3, literalism: 3, empathy: 3 },
    }),
  },
  {
    methods: ['GET', 'PATCH'],
    path: '{base}/banks/{bank}/config',
    body: () => ({
      updates: { retain_extraction_mode: 'chunks', disposition_empathy: 4, enable_reranking: true },
    }),
  },
  { methods: ['GET'], path: '{base}/banks/{bank}/entities' },
  { methods: ['GET'], path: '{base}/banks/{bank}/graph' },
  { methods: ['GET'], path: '{base}/banks/{bank}/profile' },
  { methods: ['GET', 'POST'], path: '{base}/spaces', body: () => ({ id: 'space-1', name: 'Space' }) },
  { methods: ['GET'], path: '{base}/spaces/{space}/banks' },
  { methods: ['PUT', 'DELETE'], path: '{base}/spaces/{space}/banks/{bank}' },
  { methods: ['DELETE'], path: '{base}/spaces/{space}' },
  { methods: ['GET'], path: '{base}/audit' },
  {
    methods: ['POST'],
    path: '{base}/banks/{bank}/reflect',
    body: () => ({
      query: 'What about Bob?',
      context: 'c',
      budget: 'low',
      tags: ['t'],
      fact_types: ['world'],
    }),
  },
  { methods: ['POST'], path: '{base}/banks/{bank}/consolidate' },
  {
    methods: ['GET', 'POST'],
    path: '{base}/banks/{bank}/directives',
    body: () => ({ name: 'rule', text: 'Be kind.', priority: 1, tags: ['t'], active: true }),
  },
  {
    methods: ['GET', 'PATCH', 'DELETE'],
    path: '{base}/banks/{bank}/directives/{id}',
    body: () => ({ text: 'Be brief.', priority: 2, active: false }),
  },
  { methods: ['GET'], path: '{base}/banks/{bank}/operations' },
  { methods: ['GET', 'DELETE'], path: '{base}/banks/{bank}/operations/{id}' },
  { methods: ['GET'], path: '{base}/banks/{bank}/documents' },
  { methods: ['GET', 'DELETE'], path: '{base}/banks/{bank}/documents/{id}' },
  { methods: ['GET', 'POST'], path: '/v1/default/projects', body: () => ({ id: 'proj-1', name: 'P' }) },
  {
    methods: ['GET', 'PATCH', 'DELETE'],
    path: '/v1/default/projects/{project}',
    body: () => ({ name: 'P2', limits: { requests_per_minute: null, retained_items_per_day: 1000000 } }),
  },
  {
    methods: ['GET', 'POST'],
    path: '/v1/default/projects/{project}/keys',
    body: () => ({ name: 'k', scopes: ['recall'], expires_at: '2999-01-01T00:00:00Z' }),
  },
  { methods: ['DELETE'], path: '/v1/default/projects/{project}/keys/{id}' },
  {
    methods: ['POST', 'GET', 'DELETE'],
    path: '/mcp',
    body: () => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'recall', arguments: { bank: 'b', query: 'q' } },
    }),
  },
  { methods: ['GET'], path: '/health' },
  { methods: ['GET'], path: '/health/ready' },
  { methods: ['GET'], path: '/version' },
  { methods: ['GET'], path: '/metrics' },
  { methods: ['GET'], path: '/openapi.json' },
  { methods: ['GET'], path: '/console' },
];

/** Marks a raw JSON token (a number JSON.stringify cannot write) to splice into the body. */
const RAW = '\u0001RAW:';
const raw = (token: string) => `${RAW}${token}`;

const edgeStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\uFEFF',
  '\u202e\u202d',
  '\u200b',
  '😀👩‍👩‍👧‍👦',
  'e\u0301',
  'ﬁ',
  'İ',
  'ß',
  '\r\n',
  '%',
  '%00',
  '../..',
  '__org__:acme',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  '$1',
  '{{x}}',
  '<script>',
  'x'.repeat(257),
  'y'.repeat(5000),
  '2024-02-30T25:61:61Z',
  '0001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  'NaN',
);

const edgeNumbers = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, 5e-324),
  fc.constantFrom(
    raw('1e400'),
    raw('-1e400'),
    raw('1e-400'),
    raw('123456789012345678901234567890'),
    raw('-0.0e-0'),
  ),
  fc.integer(),
  fc.double({ noNaN: true }),
);

const leaf = fc.oneof(
  { weight: 3, arbitrary: edgeStrings },
  { weight: 2, arbitrary: edgeNumbers },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
);

const weird: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), edgeStrings), leaf, { maxKeys: 4 }),
  },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [[[]]], JSON.parse('{"__proto__":{"admin":true}}')) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Replaces, adds or removes one member somewhere in a valid body. */
function mutate(
  value: unknown,
  choice: number,
  replacement: unknown,
  op: 'set' | 'delete' | 'extra',
): unknown {
  const holders: { obj: any; key: string | number }[] = [];
  const walk = (v: any) => {
    if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        holders.push({ obj: v, key: Array.isArray(v) ? Number(k) : k });
        walk(v[k]);
      }
    }
  };
  walk(value);
  if (holders.length === 0) return replacement;
  const h = holders[choice % holders.length]!;
  if (op === 'delete' && !Array.isArray(h.obj)) delete h.obj[h.key];
  else if (op === 'extra' && !Array.isArray(h.obj)) h.obj[`unknown_${choice}`] = replacement;
  else h.obj[h.key] = replacement;
  return value;
}

const serialize = (v: unknown) =>
  JSON.stringify(v).replace(/"\\u0001RAW:([^"]*)"/g, (_, token: string) => token) ?? 'null';

const deepJson = fc
  .tuple(fc.constantFrom(20, 200, 2000, 100_000), fc.boolean(), fc.boolean())
  .map(([depth, arrays, wrapped]) => {
    const inner = arrays
      ? `${'['.repeat(depth)}${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return wrapped
      ? `{"items":[{"content":"deep","metadata":${inner}}],"query":${inner},"updates":${inner}}`
      : inner;
  });

const junk = fc.constantFrom(
  '{',
  '{"items":',
  '[]]',
  'nul',
  '{"a":1}{"b":2}',
  '{"items":[{"content":"x",}]}',
  "{'items': []}",
  '\uFEFF{"items":[{"content":"bom"}]}',
  '\uFEFF{"query":"bom"}',
  '""',
  '1e400',
  'null',
  '   ',
  '{"items":[{"content":"\\ud800"}]}',
  '{"query":"\\u0000"}',
  '{"items":[{"content":"x"}],"items":[]}',
);

/** Bytes that are not valid UTF-8 (or are UTF-16), inside otherwise valid JSON. */
const badBytes = fc
  .tuple(
    fc.constantFrom(
      [0xff],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0x80],
      [0xf8, 0x88, 0x80, 0x80, 0x80],
    ),
    fc.constantFrom(
      '{"items":[{"content":"#"}]}',
      '{"query":"#"}',
      '{"id":"#","name":"#"}',
      '{"updates":{"#":1}}',
    ),
    fc.boolean(),
  )
  .map(([bad, template, utf16]) => {
    if (utf16) return new Uint8Array([0xff, 0xfe, ...Buffer.from(template.replace('#', 'x'), 'utf16le')]);
    const [a, b] = template.split('#') as [string, string];
    return new Uint8Array([...Buffer.from(a), ...bad, ...Buffer.from(b)]);
  });

const segment = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'fuzz@example.com',
      'seeded',
      'acme',
      'default',
      'fuzzproj',
      '__org__:acme',
      'doc-1',
      '00000000-0000-0000-0000-000000000000',
    ),
  },
  { weight: 2, arbitrary: fc.uuid().map(String) },
  { weight: 2, arbitrary: edgeStrings },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%',
      '%zz',
      '%C0%AF',
      '%ED%A0%80',
      '%FF%FE',
      '%2e%2e',
      '%2F',
      'a%2Fb',
      '%25',
      '%00',
    ),
  },
);

/** Encodes a path segment (or leaves it raw, slashes and all). */
const encodeSegment = (s: string, rawMode: boolean) => {
  if (rawMode) return s;
  try {
    return encodeURIComponent(s);
  } catch {
    return s; // a lone surrogate: sent as it is
  }
};

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'limit',
          'cursor',
          'type',
          'tags',
          'tags_match',
          'document_id',
          'q',
          'space',
          'status',
          'bank',
          'action',
          'since',
          'until',
          'offset',
          'depth',
        ),
        fc.string({ maxLength: 6 }),
      ),
      fc.oneof(
        fc.constantFrom(
          '-1',
          '0',
          '1',
          '500',
          '501',
          '1e309',
          'NaN',
          '0x10',
          '1.5',
          '',
          'any',
          'exact',
          'pending',
        ),
        edgeStrings,
        fc.string({ unit: 'grapheme', maxLength: 12 }),
      ),
      fc.boolean(),
    ),
    { maxLength: 4 },
  )
  .map((pairs) =>
    pairs.length === 0
      ? ''
      : `?${pairs.map(([k, v, rawMode]) => `${encodeSegment(k, false)}=${encodeSegment(v, rawMode)}`).join('&')}`,
  );

/** The request arbitrary, with the credentials the harness made. */
export function requestArbitrary(
  keys: { valid: string; revoked: string; narrow: string },
  admin: string,
): fc.Arbitrary<Shape> {
  const auth = fc.oneof(
    { weight: 10, arbitrary: fc.constant(`Bearer ${admin}`) },
    { weight: 3, arbitrary: fc.constant(`Bearer ${keys.valid}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        `Bearer ${keys.revoked}`,
        `Bearer ${keys.narrow}`,
        'Bearer',
        'Bearer ',
        `bearer ${admin}`,
        `Bearer ${admin} `,
        `Bearer ${admin}x`,
        'Basic Zm9vOmJhcg==',
        'Bearer mk_',
        'Bearer mk__',
        'Bearer mk_x_y',
        `Bearer mk_${'a'.repeat(300)}_b`,
        `Bearer ${keys.valid.slice(0, -1)}`,
        'Bearer \u00e9\u00ff',
      ),
    },
  );
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'APPLICATION/JSON',
        'application/merge-patch+json',
        'application/vnd.api+json',
        'text/plain',
        'text/json',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
        'application/jsonx',
        '*/*',
      ),
    },
  );
  const body = (route: (typeof ROUTES)[number], method: string) =>
    fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .tuple(
            fc.nat(),
            weird,
            fc.constantFrom('set', 'set', 'delete', 'extra') as fc.Arbitrary<'set' | 'delete' | 'extra'>,
          )
          .map(([choice, value, op]) =>
            serialize(route.body ? mutate(structuredClone(route.body(method)), choice, value, op) : value),
          ),
      },
      { weight: 3, arbitrary: fc.constant(route.body ? serialize(route.body(method)) : undefined) },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(serialize) },
      { weight: 1, arbitrary: deepJson },
      { weight: 1, arbitrary: junk },
      { weight: 1, arbitrary: badBytes },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  const routed = fc.tuple(fc.nat({ max: ROUTES.length - 1 }), fc.nat()).chain(([r, m]) => {
    const route = ROUTES[r]!;
    const method = route.methods[m % route.methods.length]!;
    return fc
      .record({
        method: fc.oneof(
          { weight: 12, arbitrary: fc.constant(method) },
          {
            weight: 1,
            arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
          },
        ),
        base: fc.oneof(
          { weight: 8, arbitrary: fc.constant('/v1/default') },
          { weight: 3, arbitrary: fc.constant('/v1/me') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              '/v1/other',
              '/v2/default',
              '/V1/default',
              '//v1/default',
              '/v1/default/',
            ),
          },
        ),
        params: fc.array(
          fc.tuple(
            segment,
            fc.nat({ max: 9 }).map((n) => n < 2),
          ),
          {
            minLength: 4,
            maxLength: 4,
          },
        ),
        query: queryString,
        auth,
        contentType,
        body: body(route, method),
        extra: fc.record(
          {
            'idempotency-key': fc.oneof(
              fc.uuid().map(String),
              fc.constantFrom('', ' ', 'k'.repeat(300), '\u00e9'),
            ),
            'x-request-id': fc.oneof(
              fc.uuid().map(String),
              fc.constantFrom('', 'a b', 'x'.repeat(200), '<id>'),
            ),
            accept: fc.constantFrom('text/html', 'application/json', '*/*', 'text/event-stream'),
            origin: fc.constantFrom('http://evil.example', 'null'),
          },
          { requiredKeys: [] },
        ),
      })
      .map((x) => {
        let i = 0;
        const path = route.path.replace('{base}', x.base).replace(/\{(\w+)\}/g, () => {
          const [value, rawMode] = x.params[i++ % x.params.length]!;
          return encodeSegment(value, rawMode);
        });
        const headers: Record<string, string> = { ...(x.extra as Record<string, string>) };
        if (x.auth !== undefined) headers.authorization = x.auth;
        if (x.contentType !== undefined && x.body !== undefined) headers['content-type'] = x.contentType;
        return { method: x.method, path: path + x.query, headers, body: x.body };
      });
  });
  const anywhere = fc.record({
    method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
    path: fc.oneof(
      fc.webPath().map((p) => p || '/'),
      fc.constantFrom(
        '/v1',
        '/v1/',
        '/v1/default',
        '/v1/me',
        '/v1/default/banks/',
        '/v1/default/banks//memories',
        '/%',
      ),
    ),
    headers: fc.constant({ authorization: `Bearer ${admin}` } as Record<string, string>),
    body: fc.constant(undefined),
  });
  return fc.oneof({ weight: 20, arbitrary: routed }, { weight: 1, arbitrary: anywhere });
}
