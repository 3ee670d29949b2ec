/**
 * The shared core of the fake provider servers: a real HTTP server on 127.0.0.1 (random port) that
 * records every request and lets the test decide each reply. See openai-server.ts and anthropic-server.ts.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the fake server received it; `body` is parsed JSON, or the raw text when not JSON. */
export interface RecordedRequest {
  method: string;
  /** Without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A reply chosen by a test. `json` (serialized) wins over `raw` (sent as is). */
export interface FakeReply {
  /** Default 200. */
  status?: number;
  json?: unknown;
  raw?: string;
  /** Wait this long before replying (stops early if the client goes away). */
  delayMs?: number;
  headers?: Record<string, string>;
}

/**
 * Decides the reply to one request. `n` is the request's index in `requests` (0 for the first).
 * Returning undefined (or a reply with neither `json` nor `raw`) lets the server build its default reply.
 */
export type FakeHandler<R extends FakeReply> = (
  body: any,
  n: number,
  request: RecordedRequest,
) => R | undefined | Promise<R | undefined>;

/** A running fake server. */
export interface FakeServer<R extends FakeReply> {
  /** Base URL to give the client under test. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Requests being answered right now. */
  readonly inFlight: number;
  /** The most requests ever answered at once, for checking a client's concurrency limit. */
  readonly maxInFlight: number;
  /** Replaces the reply handler; call with no argument to go back to the defaults. */
  respond(handler?: FakeHandler<R>): void;
  /** Stops the server, cutting off replies still waiting on `delayMs`. */
  close(): Promise<void>;
}

/**
 * Starts the core server. `complete` turns the handler's reply (possibly undefined) into the final
 * reply for a request: it fills in the protocol's default body and error shapes.
 */
export async function startFakeHttp<R extends FakeReply>(
  complete: (request: RecordedRequest, reply: R | undefined) => FakeReply,
  options: { urlPath?: string; handler?: FakeHandler<R> | undefined } = {},
): Promise<FakeServer<R>> {
  const requests: RecordedRequest[] = [];
  let handler = options.handler;
  let inFlight = 0;
  let maxInFlight = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      headers: req.headers,
      body: parseBody(text),
    };
    const n = requests.push(request) - 1;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once('close', () => inFlight--);
    try {
      const reply = complete(request, await handler?.(request.body, n, request));
      if (reply.delayMs) await waitOrClose(reply.delayMs, res);
      send(res, reply);
    } catch (err) {
      send(res, { status: 500, raw: `fake server handler failed: ${String(err)}` });
    }
  };
  // A client that hangs up mid-request only ends its own exchange.
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${options.urlPath ?? ''}`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    respond(next) {
      handler = next;
    },
    close() {
      return new Promise((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive and delayed replies would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function waitOrClose(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done() {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
  });
}

function send(res: ServerResponse, reply: FakeReply): void {
  if (res.destroyed || res.writableEnded) return;
  const isJson = reply.json !== undefined;
  const body = isJson ? JSON.stringify(reply.json) : (reply.raw ?? '');
  res.writeHead(reply.status ?? 200, {
    'content-type': isJson ? 'application/json' : 'text/plain',
    ...reply.headers,
  });
  res.end(body);
}

/** The text of a message's content, for echoing and counting (content blocks are counted as JSON). */
export function contentText(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

/** The last user message of a chat request, as text. */
export function lastUserText(messages: Array<{ role: string; content: unknown }>): string {
  const last = messages.filter((m) => m.role === 'user').at(-1);
  return last ? contentText(last.content) : '';
}

/** A rough token count (4 characters a token), enough for usage fields. */
export function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
