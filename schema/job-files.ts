// The keys of a job's files in R2, `{kind}/{job_id}/{attempt_id}/{name}`, and the names a job's
// files can have. Both sides hold to them: the extractor names its files so, the edge accepts
// an upload or a result only under such a key (schema/messages.ts' ExtractResultSchema), and
// /files/* serves only such keys.

/**
 * The names a job's files can have, and no others: its frames (frame-0001.jpg …, in the job's
 * format), their thumbnails (thumb-0001.jpg …), its ZIP, its captions and its storyboard (the
 * extractor's names: output/frame-sink.ts, output/thumbnails.ts, context/captions.ts,
 * storyboard/thumbnail-track.ts) and its moving preview (animated/job-preview.ts). The
 * extractor's uploads are held to them,
 * so an attempt's token cannot store a page or a script under a job (`evil.html`, served from
 * our origin) however it is typed.
 */
const JOB_FILE_NAME =
  /^(?:frame-\d{4,6}\.(?:jpg|png|webp)|thumb-\d{4,6}\.jpg|frames\.zip|captions\.vtt|storyboard\.jpg|sprite\.jpg|thumbnails\.vtt|preview\.(?:webp|gif))$/;

export function isJobFileName(name: string): boolean {
  return JOB_FILE_NAME.test(name);
}

/** A key an attempt may upload: a key of ours whose name is one a job produces. */
export function parseUploadKey(key: string): ReturnType<typeof parseFileKey> {
  const parsed = parseFileKey(key);
  return parsed && isJobFileName(parsed.name) ? parsed : null;
}

/** Objects live under `{kind}/{job_id}/{attempt_id}/{name}`. */
export function parseFileKey(
  key: string,
): { kind: "job" | "demo"; jobId: string; name: string } | null {
  const match = /^(job|demo)\/([0-9a-f-]{36})\/[0-9a-zA-Z-]{1,64}\/([\w.-]{1,64})$/.exec(key);
  if (!match) return null;
  return { kind: match[1] as "job" | "demo", jobId: match[2], name: match[3] };
}

const CONTENT_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  zip: "application/zip",
  vtt: "text/vtt; charset=utf-8",
};

/**
 * A stored file's content type, by its name's extension (a key's name, or the key): what the
 * edge stores it with and serves it as (edge/files.ts, edge/jobs/attempt-files.ts).
 */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[name.split(".").pop() ?? ""] ?? "application/octet-stream";
}
