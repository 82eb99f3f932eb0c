// A batch of one attempt's files in one body, as the extractor posts them to
// /internal/file-batches/{kind}/{job_id}/{attempt_id} (extractor/output/edge-sink.ts) and the
// edge stores them (edge/routes/internal/handlers.ts). Framed, not multipart (decision 0278):
//
//   {"files":[{"name":"frame-0001.jpg","bytes":41234}, …]}\n  then each file's bytes in order
//
// The lengths are known before a byte is read, so the edge reads the body once and hands R2
// views of it: no boundary scan, no part headers, no copy per file. A multipart/form-data body
// (the format before) is still accepted by the edge, for an extractor deployed before it.
import { z } from "zod";

export const FILE_BATCH_TYPE = "application/vnd.stills.file-batch";

/** The manifest line at most; 64 entries of a 64-character name are far below it. */
export const MOST_MANIFEST_BYTES = 16 * 1024;

const Manifest = z.object({
  files: z
    .array(
      z.object({
        name: z.string().min(1).max(200),
        bytes: z.number().int().min(0),
      }),
    )
    .max(10_000),
});

export interface BatchFile {
  name: string;
  bytes: Uint8Array;
}

/** The body for `files`: the manifest line, then their bytes back to back. */
export function encodeFileBatch(files: readonly BatchFile[]): Uint8Array {
  const manifest = JSON.stringify({
    files: files.map((f) => ({ name: f.name, bytes: f.bytes.byteLength })),
  });
  const head = new TextEncoder().encode(`${manifest}\n`);
  const body = new Uint8Array(head.length + files.reduce((n, f) => n + f.bytes.byteLength, 0));
  body.set(head, 0);
  let offset = head.length;
  for (const file of files) {
    body.set(file.bytes, offset);
    offset += file.bytes.byteLength;
  }
  return body;
}

/**
 * The files of a framed body, each a view of `body` (no copy), or why it is not one: a
 * manifest line that is missing, too long or not the shape above, or lengths that do not add
 * up to exactly the bytes after it.
 */
export function decodeFileBatch(body: ArrayBuffer): BatchFile[] | { error: string } {
  const all = new Uint8Array(body);
  const end = all.subarray(0, MOST_MANIFEST_BYTES + 1).indexOf(0x0a);
  if (end < 0) return { error: "the body does not start with a manifest line" };
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(all.subarray(0, end)));
  } catch {
    return { error: "the manifest line is not JSON" };
  }
  const manifest = Manifest.safeParse(raw);
  if (!manifest.success) return { error: "the manifest is not {files: [{name, bytes}]}" };
  const listed = manifest.data.files.reduce((n, f) => n + f.bytes, 0);
  const rest = all.length - end - 1;
  if (listed !== rest) {
    return { error: `the manifest lists ${listed} bytes of files and ${rest} follow it` };
  }
  let offset = end + 1;
  return manifest.data.files.map((f) => {
    const bytes = all.subarray(offset, offset + f.bytes);
    offset += f.bytes;
    return { name: f.name, bytes };
  });
}
