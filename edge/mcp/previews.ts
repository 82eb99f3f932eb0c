// Frames an agent can look at: each frame as a JPEG of at most PREVIEW_LONG_SIDE pixels on
// its long side, small enough that a page of them fits a model's context. The worker has no
// image library, so Cloudflare's image service scales them: the Images binding when the worker
// has one (env.IMAGES), otherwise an image-resizing fetch of the frame's own signed URL (which
// `wrangler dev` runs locally with sharp, and production runs on a zone with Image
// Transformations). A preview is made once and kept in R2 beside its frame, so it expires and is
// deleted with the job's other files.
import { ApiError } from "../errors.ts";
import { jpegSize } from "./jpeg.ts";

export const PREVIEW_LONG_SIDE = 512;
export const PREVIEW_QUALITY = 80;
export const PREVIEW_MIME_TYPE = "image/jpeg";
const SCALE_TIMEOUT_MS = 20_000;

export interface Preview {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** Where a frame's preview lives: beside the frame, under the same job and attempt. */
export function previewKeyOf(frameKey: string): string {
  const slash = frameKey.lastIndexOf("/");
  const stem = frameKey.slice(slash + 1).replace(/\.[a-z]+$/, "");
  return `${frameKey.slice(0, slash + 1)}preview-${stem}.jpg`;
}

const fits = (size: { width: number; height: number }) =>
  Math.max(size.width, size.height) <= PREVIEW_LONG_SIDE;

/**
 * The preview of one stored frame. `signedUrl` is the frame's own signed URL, which the
 * image-resizing fetch reads when there is no Images binding.
 */
export async function framePreview(
  env: Env,
  frame: { key: string; signedUrl: string },
): Promise<Preview> {
  const previewKey = previewKeyOf(frame.key);
  const cached = await env.FILES.get(previewKey);
  if (cached) {
    const preview = measured(new Uint8Array(await cached.arrayBuffer()));
    if (preview) return preview;
  }
  const source = await env.FILES.get(frame.key);
  if (!source) throw unavailable("the frame's file is gone");
  const original = new Uint8Array(await source.arrayBuffer());
  // A JPEG already within the size is its own preview (the demo's small frames, 240p jobs).
  const asIs = frame.key.endsWith(".jpg") ? measured(original) : null;
  if (asIs) return asIs;

  const scaled = await scale(env, original, frame.signedUrl);
  const preview = measured(scaled);
  // Image services answer with the original when they cannot transform: never pass that on.
  if (!preview) throw unavailable("the image service did not return a small JPEG");
  await env.FILES.put(previewKey, preview.bytes, {
    httpMetadata: { contentType: PREVIEW_MIME_TYPE },
  });
  return preview;
}

function measured(bytes: Uint8Array): Preview | null {
  const size = jpegSize(bytes);
  return size && fits(size) ? { bytes, ...size } : null;
}

type WithImages = Env & { IMAGES?: ImagesBinding };

async function scale(env: WithImages, original: Uint8Array, signedUrl: string) {
  const box = { width: PREVIEW_LONG_SIDE, height: PREVIEW_LONG_SIDE, fit: "scale-down" as const };
  if (env.IMAGES) {
    const input = new Blob([original]).stream();
    const output = await env.IMAGES.input(input)
      .transform(box)
      .output({ format: PREVIEW_MIME_TYPE, quality: PREVIEW_QUALITY });
    return new Uint8Array(await output.response().arrayBuffer());
  }
  const response = await fetch(signedUrl, {
    cf: { image: { ...box, format: "jpeg", quality: PREVIEW_QUALITY } },
    // A stuck image service must fail the call, not hold it open.
    signal: AbortSignal.timeout(SCALE_TIMEOUT_MS),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw unavailable(`the image service answered ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

function unavailable(why: string) {
  return new ApiError("ServiceUnavailable", `A frame preview could not be made: ${why}`, {
    userMessage: "We couldn't prepare the frame images right now. Please try again shortly.",
  });
}
