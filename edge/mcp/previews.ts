// Frames an agent can look at: each frame as a JPEG of at most PREVIEW_LONG_SIDE pixels on
// its long side (view_frames), or of one of PREVIEW_SIDES (zoom, which picks the largest that
// fits its answer's token cap), small enough that a page of them fits a model's context. The worker has no
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

/** The long sides a preview may be made at: view_frames' one, and zoom's choices (decision 0322). */
export const PREVIEW_SIDES = [1024, 768, 512, 384, 256] as const;
export type PreviewSide = (typeof PREVIEW_SIDES)[number];

/**
 * Where a frame's preview lives: beside the frame, under the same job and attempt. The 512 px
 * preview keeps the name it always had; other sizes carry theirs.
 */
export function previewKeyOf(frameKey: string, longSide: PreviewSide = PREVIEW_LONG_SIDE): string {
  const slash = frameKey.lastIndexOf("/");
  const stem = frameKey.slice(slash + 1).replace(/\.[a-z]+$/, "");
  const size = longSide === PREVIEW_LONG_SIDE ? "" : `${longSide}-`;
  return `${frameKey.slice(0, slash + 1)}preview-${size}${stem}.jpg`;
}

/** The size a picture of this size is shown at within longSide: scaled down, never up. */
export function previewSizeOf(
  size: { width: number; height: number },
  longSide: number,
): { width: number; height: number } {
  const scale = Math.min(1, longSide / Math.max(size.width, size.height));
  return {
    width: Math.max(1, Math.round(size.width * scale)),
    height: Math.max(1, Math.round(size.height * scale)),
  };
}

/**
 * The preview of one stored frame. `signedUrl` is the frame's own signed URL, which the
 * image-resizing fetch reads when there is no Images binding.
 */
export async function framePreview(
  env: Env,
  frame: { key: string; signedUrl: string },
  longSide: PreviewSide = PREVIEW_LONG_SIDE,
): Promise<Preview> {
  const previewKey = previewKeyOf(frame.key, longSide);
  const cached = await env.FILES.get(previewKey);
  if (cached) {
    const preview = measured(new Uint8Array(await cached.arrayBuffer()), longSide);
    if (preview) return preview;
  }
  const source = await env.FILES.get(frame.key);
  if (!source) throw unavailable("the frame's file is gone");
  const original = new Uint8Array(await source.arrayBuffer());
  // A JPEG already within the size is its own preview (the demo's small frames, 240p jobs).
  const asIs = frame.key.endsWith(".jpg") ? measured(original, longSide) : null;
  if (asIs) return asIs;

  const scaled = await scale(env, original, frame.signedUrl, longSide);
  const preview = measured(scaled, longSide);
  // Image services answer with the original when they cannot transform: never pass that on.
  if (!preview) throw unavailable("the image service did not return a small JPEG");
  await env.FILES.put(previewKey, preview.bytes, {
    httpMetadata: { contentType: PREVIEW_MIME_TYPE },
  });
  return preview;
}

function measured(bytes: Uint8Array, longSide: number): Preview | null {
  const size = jpegSize(bytes);
  return size && Math.max(size.width, size.height) <= longSide ? { bytes, ...size } : null;
}

type WithImages = Env & { IMAGES?: ImagesBinding };

async function scale(
  env: WithImages,
  original: Uint8Array,
  signedUrl: string,
  longSide: PreviewSide,
) {
  const box = { width: longSide, height: longSide, fit: "scale-down" as const };
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
