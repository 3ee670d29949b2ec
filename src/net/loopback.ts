import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True for `localhost` and loopback IP literals (127.0.0.0/8, `::1`, IPv4-mapped loopback);
 * never for a DNS name that merely starts like one (`127.evil.example`, `127.0.0.1.nip.io`).
 * The brackets of an IPv6 literal (`[::1]`) are allowed.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 6 ? 'ipv6' : 'ipv4');
}
