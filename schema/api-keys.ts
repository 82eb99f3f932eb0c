// API key format (DESIGN.md): `stills_live_` + 32 random base62 characters + a 6-character
// base62 CRC-32 of everything before it, as GitHub's tokens do. The checksum lets the edge
// refuse a mistyped or made-up key without a database read, and lets secret scanners
// recognise a leaked one. Runs on Web Crypto, so the worker and Node scripts share it.

export const KEY_PREFIX = "stills_live_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH + CHECKSUM_LENGTH}}$`);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3), as zlib computes it. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function toBase62(value: number, width: number): string {
  let out = "";
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, "0");
}

function checksumOf(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH);
}

export function generateApiKey(): string {
  // 62 * 4 = 248 ≤ 256: rejecting bytes ≥ 248 keeps every character equally likely.
  const chars: string[] = [];
  while (chars.length < SECRET_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(SECRET_LENGTH * 2))) {
      if (byte < 248 && chars.length < SECRET_LENGTH) chars.push(BASE62[byte % 62]);
    }
  }
  const body = KEY_PREFIX + chars.join("");
  return body + checksumOf(body);
}

/** True when the key has our prefix, shape and a matching checksum. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(0, -CHECKSUM_LENGTH);
  return checksumOf(body) === key.slice(-CHECKSUM_LENGTH);
}

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The part shown in a dashboard to tell keys apart: prefix and the first 4 secret chars. */
export function apiKeyHint(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…`;
}
