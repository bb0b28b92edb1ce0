/** Decoding of strace's sockaddr structs into family / address / port. Pure. */
import type { SocketFamily } from './events.ts';
import { readQuoted, structFields } from './syntax.ts';

export interface SocketAddress {
  family: SocketFamily;
  domain: string;
  address?: string;
  port?: number;
}

const FAMILIES: Readonly<Record<string, SocketFamily>> = {
  AF_INET: 'inet',
  AF_INET6: 'inet6',
  AF_UNIX: 'unix',
  AF_LOCAL: 'unix',
  AF_NETLINK: 'netlink',
  AF_PACKET: 'packet',
};

export function familyOf(domain: string): SocketFamily {
  return FAMILIES[domain] ?? 'other';
}

const PORT_RE = /^htons\((\d+)\)$/;
const QUOTED_RE = /"((?:[^"\\]|\\.)*)"/;

function quotedIn(text: string): string | undefined {
  const m = QUOTED_RE.exec(text);
  return m === null ? undefined : readQuoted(m[0], 0)?.value;
}

/** `{sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}` and friends. */
export function parseSockaddr(raw: string): SocketAddress | undefined {
  const fields = structFields(raw);
  const family = fields.find((f) => f.startsWith('sa_family='))?.slice('sa_family='.length);
  if (family === undefined) return undefined;
  const byName = new Map<string, string>();
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq > 0) byName.set(f.slice(0, eq), f.slice(eq + 1));
  }
  const base = { family: familyOf(family), domain: family };
  switch (base.family) {
    case 'inet':
    case 'inet6': {
      const portText = byName.get(base.family === 'inet' ? 'sin_port' : 'sin6_port') ?? '';
      const port = PORT_RE.exec(portText)?.[1];
      const addrField =
        base.family === 'inet'
          ? byName.get('sin_addr')
          : (fields.find((f) => f.startsWith('inet_pton(')) ?? byName.get('sin6_addr'));
      const address = addrField === undefined ? undefined : quotedIn(addrField);
      return {
        ...base,
        ...(address === undefined ? {} : { address }),
        ...(port === undefined ? {} : { port: Number(port) }),
      };
    }
    case 'unix': {
      const path = byName.get('sun_path');
      if (path === undefined) return base; // unnamed socket
      // Abstract sockets print as sun_path=@"name".
      const abstract = path.startsWith('@');
      const value = readQuoted(path, abstract ? 1 : 0)?.value ?? path;
      return { ...base, address: abstract ? `@${value}` : value };
    }
    case 'netlink':
    case 'packet':
    case 'other': {
      const rest = fields.filter((f) => !f.startsWith('sa_family=')).join(', ');
      return rest === '' ? base : { ...base, address: rest };
    }
  }
}
