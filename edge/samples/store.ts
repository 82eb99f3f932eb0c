// The sample videos (schema/samples.ts) live in R2 under samples/<name>, served by the edge at
// /samples/<name>. The files are committed in edge/samples/ and bundled; the first request
// after a deploy (or on a fresh local state) writes the bundled copy to R2, and a copy whose
// SHA-256 is not the bundled one is replaced, so a changed sample reaches R2 by itself
// (docs/decisions/0130).
import type { Sample } from "../../schema/samples.ts";
import intro from "./intro.mp4";

const BUNDLED: Record<string, ArrayBuffer> = { "intro.mp4": intro };

const digests = new Map<string, Promise<string>>();

async function sha256Of(bytes: ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function bundledDigest(name: string, bytes: ArrayBuffer): Promise<string> {
  let digest = digests.get(name);
  if (!digest) {
    digest = sha256Of(bytes);
    digests.set(name, digest);
  }
  return digest;
}

export function sampleKey(sample: Sample): string {
  return `samples/${sample.name}`;
}

export interface SampleFile {
  size: number;
  etag: string;
  /** Reads the whole file, or `length` bytes from `offset`. */
  read(range?: { offset: number; length: number }): Promise<ReadableStream | null>;
}

/** R2 copies this isolate has checked (or written): key → the copy's size and ETag. */
const checked = new Map<string, { size: number; etag: string }>();

/** Makes R2 hold the bundled copy (checked once per isolate) and says its size and ETag. */
async function ensureCopy(env: Env, sample: Sample, bytes: ArrayBuffer, recheck = false) {
  const key = sampleKey(sample);
  const known = checked.get(key);
  if (known && !recheck) return known;
  const sha256 = await bundledDigest(sample.name, bytes);
  let head = await env.FILES.head(key);
  if (head?.customMetadata?.sha256 !== sha256) {
    head = await env.FILES.put(key, bytes, {
      httpMetadata: { contentType: sample.contentType },
      customMetadata: { sha256 },
    });
  }
  const copy = { size: head?.size ?? bytes.byteLength, etag: head?.httpEtag ?? `"${sha256}"` };
  checked.set(key, copy);
  return copy;
}

/**
 * The sample's R2 copy, written from the bundled one first when R2 lacks it. One R2 read per
 * request once the copy is checked: the extractor reads a sample in several ranges.
 */
export async function openSample(env: Env, sample: Sample): Promise<SampleFile | null> {
  const bytes = BUNDLED[sample.name];
  if (!bytes) return null;
  const key = sampleKey(sample);
  const sha256 = await bundledDigest(sample.name, bytes);
  const copy = await ensureCopy(env, sample, bytes);
  return {
    ...copy,
    async read(range) {
      const options = range ? { range } : undefined;
      const object = await env.FILES.get(key, options);
      if (object?.customMetadata?.sha256 === sha256) return object.body;
      // Deleted or replaced since it was checked: written again, then read.
      await object?.body.cancel();
      await ensureCopy(env, sample, bytes, true);
      return (await env.FILES.get(key, options))?.body ?? null;
    },
  };
}
