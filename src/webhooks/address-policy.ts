import net from 'node:net';
import dns from 'node:dns';

/**
 * Where webhooks may not go unless the operator allows it (WSP_WEBHOOKS_ALLOW_PRIVATE): this
 * host, private networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
 * multicast and reserved ranges, in IPv4 and IPv6 (IPv4-mapped IPv6 is judged as its IPv4).
 */
const blocked = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net4, prefix, 'ipv4');
}
for (const [net6, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net6, prefix, 'ipv6');
}

/** Whether an address (IPv4 or IPv6 text) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface AddressPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** Resolves a host name to every address it has (an IP literal is its own). */
export async function resolveAll(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return [bare];
  const found = await dns.promises.lookup(bare, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

/**
 * The DNS lookup an outbound connection uses: the addresses are checked at the moment of
 * connecting, so a name that resolved to a public address when the webhook was saved and to a
 * private one now (DNS rebinding) is refused all the same.
 */
export function guardedLookup(policy: AddressPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses;
      const usable = policy.allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private or loopback addresses (${list.map((a) => a.address).join(', ')})`), { code: 'EPRIVATEADDRESS' });
        return callback(refused, '', 4);
      }
      // eslint-disable-next-line no-restricted-syntax -- dns.lookup's callback and result are overloaded on options.all; this is the all: true form
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
