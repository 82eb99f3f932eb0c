// Which URLs Stills may fetch (sources) or call (webhooks). Pure: the edge runs it at job
// creation, the extractor runs it again on every hop and on every resolved address.
// An address is refused unless it is plain global unicast; everything special-purpose in the
// IANA registries (loopback, private, link-local, CGNAT, documentation, benchmarking,
// multicast, reserved) is refused, and IPv6 forms that embed an IPv4 address are judged by
// the address they embed.

/**
 * The longest link a client may submit (sources and webhooks). Only what clients send is
 * bounded: the URLs a platform resolves to along the way (signed CDN links) can be longer.
 */
export const MAX_URL_LENGTH = 2048;

export interface UrlPolicy {
  /** STILLS_ALLOW_PRIVATE_NETWORK=1: lifts the address and port checks and allows http webhooks. */
  allowPrivate: boolean;
  /** Webhooks: https only (unless allowPrivate). */
  requireHttps?: boolean;
  /** Loopback tests of the address rules: any port, addresses still judged. */
  anyPort?: boolean;
  /** Replaces classifyIp, so tests can call one loopback address "public" and another not. */
  classifyAddress?: (address: string) => "public" | string;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const ALLOWED_PORTS = new Set(["", "80", "443"]);

// Names that resolve to the machine itself or to a private network by convention.
const PRIVATE_NAME_SUFFIXES = [".localhost", ".internal", ".local", ".localdomain", ".home.arpa"];
const PRIVATE_NAMES = new Set(["localhost", "localhost.localdomain", "metadata", "instance-data"]);

export function checkUrl(input: string | URL, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `scheme ${url.protocol} is not allowed (only http and https)` };
  }
  if (policy.requireHttps && url.protocol !== "https:" && !policy.allowPrivate) {
    return { ok: false, reason: "only https URLs are allowed here" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "URLs with a user name or password are not allowed" };
  }
  if (!ALLOWED_PORTS.has(url.port) && !policy.allowPrivate && !policy.anyPort) {
    return { ok: false, reason: `port ${url.port} is not allowed (only 80 and 443)` };
  }
  if (url.hostname === "") return { ok: false, reason: "the URL has no host" };
  if (!policy.allowPrivate) {
    const hostProblem = classifyHost(url.hostname, policy.classifyAddress);
    if (hostProblem !== "public") return { ok: false, reason: hostProblem };
  }
  return { ok: true, url };
}

/** Judges a URL hostname (as `new URL()` normalises it) without resolving it. */
export function classifyHost(
  hostname: string,
  classifyAddress: (address: string) => "public" | string = classifyIp,
): "public" | string {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") || isIpv4Literal(host)) {
    return classifyAddress(host.replace(/^\[(.*)\]$/, "$1"));
  }
  if (PRIVATE_NAMES.has(host) || host === "metadata.google.internal") {
    return `host ${host} is a local or metadata name`;
  }
  if (PRIVATE_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return `host ${host} is in a local-only domain`;
  }
  // A single label resolves through the machine's search domains, i.e. to internal hosts.
  if (!host.includes(".")) return `host ${host} is not a fully qualified domain name`;
  return "public";
}

/**
 * "public" or why the address is refused. Accepts IPv4 in every inet_aton form (decimal,
 * octal, hex, short forms) and IPv6 with or without brackets.
 */
export function classifyIp(address: string): "public" | string {
  const text = address.trim().replace(/^\[(.*)\]$/, "$1");
  if (text.includes(":")) {
    if (text.includes("%")) return `${address} is a scoped (zone) IPv6 address`;
    const groups = parseIpv6(text);
    if (!groups) return `${address} is not a valid IP address`;
    return classifyIpv6(groups, address);
  }
  const v4 = parseIpv4(text);
  if (v4 === null) return `${address} is not a valid IP address`;
  return classifyIpv4(v4, address);
}

// [network, prefix length, reason], from the IANA IPv4 special-purpose registry.
const IPV4_BLOCKS: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "is in 0.0.0.0/8 (unspecified, this network)"],
  ["10.0.0.0", 8, "is a private address (10.0.0.0/8)"],
  ["100.64.0.0", 10, "is a carrier-grade NAT address (100.64.0.0/10)"],
  ["127.0.0.0", 8, "is a loopback address"],
  ["169.254.0.0", 16, "is a link-local address (cloud metadata lives here)"],
  ["172.16.0.0", 12, "is a private address (172.16.0.0/12)"],
  ["192.0.0.0", 24, "is an IETF protocol assignment (192.0.0.0/24)"],
  ["192.0.2.0", 24, "is a documentation address (TEST-NET-1)"],
  ["192.31.196.0", 24, "is an AS112 service address"],
  ["192.52.193.0", 24, "is an AMT relay address"],
  ["192.88.99.0", 24, "is a deprecated 6to4 relay address"],
  ["192.168.0.0", 16, "is a private address (192.168.0.0/16)"],
  ["192.175.48.0", 24, "is an AS112 service address"],
  ["198.18.0.0", 15, "is a benchmarking address (198.18.0.0/15)"],
  ["198.51.100.0", 24, "is a documentation address (TEST-NET-2)"],
  ["203.0.113.0", 24, "is a documentation address (TEST-NET-3)"],
  ["224.0.0.0", 4, "is a multicast address"],
  ["255.255.255.255", 32, "is the broadcast address"],
  ["240.0.0.0", 4, "is a reserved address (240.0.0.0/4)"],
];
const IPV4_TABLE = IPV4_BLOCKS.map(([net, bits, reason]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (parseIpv4(net) ?? 0) & mask, mask, reason };
});

function classifyIpv4(value: number, label: string): "public" | string {
  for (const block of IPV4_TABLE) {
    if ((value & block.mask) >>> 0 === block.base >>> 0) return `${label} ${block.reason}`;
  }
  return "public";
}

function classifyIpv6(g: number[], label: string): "public" | string {
  const embedded = (hi: number, lo: number) => ((g[hi] << 16) | g[lo]) >>> 0;
  const allZero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (allZero(0, 8)) return `${label} is the unspecified address`;
  if (allZero(0, 7) && g[7] === 1) return `${label} is a loopback address`;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64) reach the IPv4.
  const isMapped = allZero(0, 5) && g[5] === 0xffff;
  const isCompatible = allZero(0, 6);
  const isNat64 = g[0] === 0x64 && g[1] === 0xff9b && allZero(2, 6);
  if (isMapped || isCompatible || isNat64) {
    const inner = classifyIpv4(embedded(6, 7), `${label} (embedding ${v4Text(embedded(6, 7))})`);
    return inner;
  }
  if (g[0] === 0x2002) {
    return classifyIpv4(embedded(1, 2), `${label} (6to4 embedding ${v4Text(embedded(1, 2))})`);
  }
  if (g[0] === 0x64 && g[1] === 0xff9b) return `${label} is a local-use NAT64 address`;
  if ((g[0] & 0xfe00) === 0xfc00) return `${label} is a unique local address (fc00::/7)`;
  if ((g[0] & 0xffc0) === 0xfe80) return `${label} is a link-local address`;
  if ((g[0] & 0xffc0) === 0xfec0) return `${label} is a site-local address`;
  if ((g[0] & 0xff00) === 0xff00) return `${label} is a multicast address`;
  if (g[0] === 0x2001 && g[1] === 0x0db8) return `${label} is a documentation address`;
  if (g[0] === 0x3fff && (g[1] & 0xf000) === 0) return `${label} is a documentation address`;
  // 2001::/23 holds Teredo (which embeds IPv4), benchmarking, ORCHID: no video host lives there.
  if (g[0] === 0x2001 && g[1] < 0x0200) return `${label} is an IETF protocol assignment`;
  if ((g[0] & 0xe000) !== 0x2000) return `${label} is not a global unicast address`;
  return "public";
}

function v4Text(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join(".");
}

/** True when `new URL()` would have turned the host into dotted-quad IPv4. */
function isIpv4Literal(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

/** IPv4 as inet_aton reads it: 1–4 parts, each decimal, octal (0…) or hex (0x…). */
export function parseIpv4(text: string): number | null {
  const parts = text.replace(/\.$/, "").split(".");
  if (parts.length < 1 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part, 16);
    else if (/^0[0-7]+$/.test(part)) value = Number.parseInt(part, 8);
    else if (/^(0|[1-9]\d*)$/.test(part)) value = Number(part);
    else return null;
    if (!Number.isFinite(value)) return null;
    values.push(value);
  }
  const last = values.pop() as number;
  if (values.some((v) => v > 255)) return null;
  if (last >= 256 ** (4 - values.length)) return null;
  let result = 0;
  values.forEach((v, i) => {
    result += v * 256 ** (3 - i);
  });
  return result + last;
}

/** Eight 16-bit groups, or null. Handles "::" and a trailing dotted IPv4. */
export function parseIpv6(text: string): number[] | null {
  let body = text.toLowerCase();
  const tail: number[] = [];
  const dotted = body.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    if (!/^(\d{1,3})(\.\d{1,3}){3}$/.test(dotted[2])) return null;
    const octets = dotted[2].split(".").map(Number);
    if (octets.some((o) => o > 255)) return null;
    tail.push((octets[0] << 8) | octets[1], (octets[2] << 8) | octets[3]);
    body = dotted[1].endsWith("::") ? dotted[1] : dotted[1].slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = parseGroups(halves[0]);
  const rest = halves.length === 2 ? parseGroups(halves[1]) : [];
  if ([...head, ...rest].some((h) => !/^[0-9a-f]{1,4}$/.test(h))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 && known !== 8) return null;
  if (halves.length === 2 && known > 7) return null;
  const zeros = new Array(8 - known).fill(0);
  const groups = [
    ...head.map(hex),
    ...(halves.length === 2 ? zeros : []),
    ...rest.map(hex),
    ...tail,
  ];
  return groups.length === 8 ? groups : null;
}

function hex(group: string): number {
  return Number.parseInt(group, 16);
}
