// "Download all": a completed job's frames as one ZIP, streamed from R2 as it is read, for any
// job whether or not it asked for a ZIP (decision 0242). Each image is stored as it is (JPG,
// PNG and WebP are compressed already), one R2 read at a time, and a chunk is read only when
// the client has taken the last one: memory stays at a chunk or two whatever the job's size.
import { Zip, ZipPassThrough } from "fflate";

/**
 * fflate writes no ZIP64 (sizes and offsets are 32-bit), as the extractor's own ZIP
 * (extractor/output/zip-writer.ts): an archive stays below 4 GiB with room for its directory.
 */
export const MAX_ZIP_BYTES = 2 ** 32 - 64 * 1024 * 1024;

export interface ZipEntry {
  /** The name in the archive (frame-0001.jpg). */
  name: string;
  key: string;
}

export type ZipPlan =
  | { ok: true; bytes: number }
  | { ok: false; reason: "missing"; key: string }
  | { ok: false; reason: "too-large"; bytes: number };

/** The attempt's folder of a key: `job/{id}/{attempt}/`. */
function folderOf(key: string): string {
  return key.slice(0, key.lastIndexOf("/") + 1);
}

/**
 * Checks that every file is there and the archive fits, before the answer starts (a stream
 * that fails half-way has already said 200). One R2 list per 1,000 files of the job's folders.
 */
export async function planZip(bucket: R2Bucket, entries: ZipEntry[]): Promise<ZipPlan> {
  const sizes = new Map<string, number>();
  for (const folder of new Set(entries.map((entry) => folderOf(entry.key)))) {
    let cursor: string | undefined;
    do {
      const listed = await bucket.list({ prefix: folder, cursor });
      for (const object of listed.objects) sizes.set(object.key, object.size);
      cursor = listed.truncated ? listed.cursor : undefined;
    } while (cursor);
  }
  let bytes = 22;
  for (const entry of entries) {
    const size = sizes.get(entry.key);
    if (size === undefined) return { ok: false, reason: "missing", key: entry.key };
    // Local header, data descriptor and central directory entry, the name twice.
    bytes += size + 30 + 16 + 46 + 2 * new TextEncoder().encode(entry.name).length;
  }
  return bytes > MAX_ZIP_BYTES ? { ok: false, reason: "too-large", bytes } : { ok: true, bytes };
}

/** The ZIP of `entries`, in their order, read from `bucket` as the stream is pulled. */
export function zipStream(
  bucket: R2Bucket,
  entries: ZipEntry[],
  modified: Date,
): ReadableStream<Uint8Array> {
  const ready: Uint8Array[] = [];
  let failure: Error | null = null;
  let ended = false;
  // fflate calls back synchronously while we push: its chunks wait here for the next pull.
  const zip = new Zip((error, chunk, final) => {
    if (error) failure = error;
    else {
      if (chunk.length > 0) ready.push(chunk);
      if (final) ended = true;
    }
  });
  let next = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let entry: ZipPassThrough | null = null;

  /** Moves the archive on by one step: opens the next file, or passes one chunk of it. */
  async function step(): Promise<void> {
    if (!reader || !entry) {
      if (next === entries.length) {
        zip.end();
        return;
      }
      const file = entries[next++];
      const object = await bucket.get(file.key);
      if (!object) throw new Error(`${file.key} is gone`);
      entry = new ZipPassThrough(file.name);
      entry.mtime = modified;
      zip.add(entry);
      reader = object.body.getReader();
      return;
    }
    const read = await reader.read();
    if (read.done) {
      entry.push(new Uint8Array(0), true);
      reader = null;
      entry = null;
    } else {
      entry.push(read.value);
    }
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (ready.length === 0 && !ended && !failure) await step();
        if (failure) throw failure;
        for (const chunk of ready.splice(0)) controller.enqueue(chunk);
        if (ended) controller.close();
      },
      async cancel() {
        await reader?.cancel().catch(() => {});
        zip.terminate();
      },
    },
    { highWaterMark: 0 },
  );
}
