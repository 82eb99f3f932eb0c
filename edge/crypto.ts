// Small Web Crypto helpers shared by auth, signed file URLs and webhooks.

const encoder = new TextEncoder();

/** Compares two equal-length hex strings without an early exit. */
export function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function importHmacKey(keyBytes: Uint8Array) {
  return crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

// Configured secrets (string form) are imported once per isolate: a job read signs every
// frame URL with the same key.
const importedKeys = new Map<string, Promise<CryptoKey>>();

export async function hmacSha256(
  secret: string | Uint8Array,
  message: string,
): Promise<Uint8Array> {
  let key: Promise<CryptoKey>;
  if (typeof secret === "string") {
    key = importedKeys.get(secret) ?? importHmacKey(encoder.encode(secret));
    importedKeys.set(secret, key);
  } else {
    key = importHmacKey(secret);
  }
  return new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(message)));
}

export function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}
