// What differs between runtimes (Node 18+, Workers, Deno, Bun, browsers), in one place.

/** An environment variable where the runtime has them; undefined elsewhere (browsers, Workers). */
export function envVar(name: string): string | undefined {
  const g = globalThis as {
    process?: { env?: Record<string, string | undefined> };
    Deno?: { env?: { get(name: string): string | undefined } };
  };
  try {
    return g.process?.env?.[name] ?? g.Deno?.env?.get(name) ?? undefined;
  } catch {
    // Deno without --allow-env throws; that is the same as no variable.
    return undefined;
  }
}

type WebCrypto = typeof globalThis.crypto;

/** Web Crypto: global everywhere but Node 18, which keeps it in node:crypto. */
export async function webCrypto(): Promise<WebCrypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto;
  const specifier = "node:crypto";
  const nodeCrypto = (await import(/* @vite-ignore */ specifier)) as { webcrypto: WebCrypto };
  return nodeCrypto.webcrypto;
}

export async function randomId(): Promise<string> {
  const crypto = await webCrypto();
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b: number) => b.toString(16).padStart(2, "0")).join("");
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
