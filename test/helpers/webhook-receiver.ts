/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (method, headers, the raw
 * body as received), answers 200 `ok`, 503 `unavailable` for as many requests to a path as
 * `failNext` asks, `/redirect` with a 302 to `/target`, `/nul` with a NUL byte, `/big` with 1 MB;
 * `/hang` never answers.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hit {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url(path: string): string;
  hits(path: string): Hit[];
  /** The next `n` requests to `path` get a 503. */
  failNext(path: string, n: number): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hits: Hit[] = [];
  const failing = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const left = failing.get(path) ?? 0;
      if (left > 0) {
        failing.set(path, left - 1);
        res.writeHead(503).end('unavailable');
      } else if (path === '/redirect') res.writeHead(302, { location: '/target' }).end();
      else if (path === '/hang')
        return; // never answers
      else if (path === '/nul') res.writeHead(200).end('a\0b');
      else if (path === '/big') res.writeHead(200).end('x'.repeat(1 << 20));
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits: (path) => hits.filter((h) => h.path === path),
    failNext: (path, n) => failing.set(path, n),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
