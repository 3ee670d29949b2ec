import { createHmac } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { hostOf, isPrivateAddress, privateHostReason } from '../core/webhooks/address.js';

/** Bytes of a receiver's answer read (and kept in the deliveries log); the rest is not read. */
export const RESPONSE_CAP = 1024;

/** `sha256=<hex HMAC-SHA256 of the exact body>`, the value of `X-Hindsight-Signature`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface SendResult {
  status: number;
  body: string;
}

/** A refusal to connect: the address is private (or turned private since the webhook was made). */
export class RefusedAddress extends Error {}

/**
 * Resolves like `dns.lookup` and refuses any private address: the check runs on the very
 * addresses the socket connects to, so a name that resolved to a public address when the
 * webhook was created and to a private one now (DNS rebinding) is refused.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as { address: string; family: number }[];
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const refusal = new RefusedAddress(`${hostname} resolves to ${bad.address}, a private address`);
      return callback(refusal as NodeJS.ErrnoException, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    const first = list[0];
    if (!first) return callback(new Error(`${hostname} has no address`) as NodeJS.ErrnoException, '', 0);
    callback(null, first.address, first.family);
  });
};

/**
 * One POST of a webhook's body. Redirects are not followed (a 3xx is the answer), the whole
 * attempt is bounded by `timeoutMs`, and at most RESPONSE_CAP bytes of the answer are read.
 * Without `allowPrivate`, private, loopback, link-local and metadata addresses are refused,
 * literal or resolved.
 */
export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const url = new URL(req.url);
  const host = hostOf(url);
  if (!req.allowPrivate) {
    // Literal addresses and reserved names here (no lookup runs for them); names at connect time.
    const reason = await privateHostReason(host, async () => []);
    if (reason) throw new RefusedAddress(reason);
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve, reject) => {
    const r = send(url, {
      method: 'POST',
      headers: {
        ...req.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(req.body)),
      },
      ...(req.allowPrivate ? {} : { lookup: guardedLookup }),
    });
    const timer = setTimeout(
      () => r.destroy(new Error(`no answer within ${Math.round(req.timeoutMs / 1000)} s`)),
      req.timeoutMs,
    );
    const done = (fn: () => void) => {
      clearTimeout(timer);
      fn();
    };
    r.on('error', (err) => done(() => reject(err)));
    r.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        res.removeAllListeners('data');
        res.destroy();
        r.destroy();
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_CAP).toString('utf8');
        done(() => resolve({ status: res.statusCode ?? 0, body: text }));
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_CAP) finish();
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    r.end(req.body);
  });
}
