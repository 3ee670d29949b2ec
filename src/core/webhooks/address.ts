import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../errors.js';

/**
 * Addresses a webhook may not reach unless the operator allows private targets
 * (`MNEMO_WEBHOOK_ALLOW_PRIVATE=1`): this host, private networks, link-local (cloud metadata at
 * 169.254.169.254 and fd00:ec2::254), carrier-grade NAT, multicast, reserved and documentation
 * ranges, and IPv6 forms that embed an IPv4 address.
 */
// Two lists: one BlockList checks an IPv4 address against its IPv6 rules too (as mapped), and
// ::ffff:0:0/96 below would then refuse every IPv4 address.
const BLOCKED_V4 = new BlockList();
const BLOCKED_V6 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED_V4.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  // IPv4-compatible (deprecated) and IPv4-translated (SIIT) forms: reserved, and a translator
  // on the host's path would take them to the IPv4 address they embed.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED_V6.addSubnet(net, bits, 'ipv6');

/** Host names that name this host or a cloud's metadata service whatever DNS says. */
const BLOCKED_NAMES = /^(localhost|metadata|metadata\.google\.internal|instance-data)$|\.localhost$/;

/** Whether an IP address (v4 or v6) is one a webhook may not reach. Not an address: true. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return BLOCKED_V4.check(ip, 'ipv4');
  if (family === 6) return BLOCKED_V6.check(ip, 'ipv6');
  return true;
}

/** The host of a URL as `net` takes it (IPv6 without brackets), lower case, without a final dot. */
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

const refused = (message: string) =>
  new AppError('validation_error', `url ${message}`, { details: [{ path: 'url', message }] });

/** A webhook URL's form: http or https, no credentials in it. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused('must be http or https');
  if (url.username || url.password) throw refused('must not carry credentials (use a secret or headers)');
  return url;
}

/** Resolves a host name to every address it has. */
export type Resolver = (host: string) => Promise<string[]>;

export const resolveAll: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The reason a host may not be reached, or null when it may: a literal address is checked as
 * it is, a name by each address it resolves to (any private one refuses it: DNS could hand out
 * either). A name that does not resolve is not refused here; delivery checks it again.
 */
export async function privateHostReason(
  host: string,
  resolve: Resolver = resolveAll,
): Promise<string | null> {
  if (isIP(host))
    return isPrivateAddress(host) ? `${host} is a private, loopback or link-local address` : null;
  if (BLOCKED_NAMES.test(host)) return `${host} names this host or a metadata service`;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return null;
  }
  const bad = addresses.find(isPrivateAddress);
  return bad ? `${host} resolves to ${bad}, a private, loopback or link-local address` : null;
}

/**
 * Checks a webhook URL at creation or update: its form always; its host unless private targets
 * are allowed. Throws a 400 naming the reason.
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<string> {
  const url = parseWebhookUrl(text);
  if (!allowPrivate) {
    const reason = await privateHostReason(hostOf(url));
    if (reason)
      throw refused(`refused: ${reason} (the operator may allow it with MNEMO_WEBHOOK_ALLOW_PRIVATE=1)`);
  }
  return url.toString();
}
