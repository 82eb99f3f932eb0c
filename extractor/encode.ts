// Raw RGB frames → image files, with sharp configured once for a long-running service.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import sharp from "sharp";
import type { ImageFormat } from "../schema/messages.ts";

// No libvips operation cache: every frame is new, and a cache only holds memory.
sharp.cache(false);
// One thread per encode: jobs and each frame's encode and thumbnail already run in parallel
// (in turns, priority.ts), and ffmpeg needs the cores. A second thread per encode cost more CPU
// than it saved time (decision 0281: a 1080p JPEG 17.3 ms of CPU with one, 18.3 with two; its
// thumbnail 7.3 against 8.8).
sharp.concurrency(1);

/**
 * Quality defaults, chosen for frames people look at and feed to models:
 * - jpg: quality 85, 4:2:0 chroma, baseline, standard Huffman tables (libjpeg-turbo). Optimised
 *   tables would save ~13 % of bytes but triple the encode time (14 → 5 ms per 1080p frame,
 *   measured), and dense jobs are bound by CPU.
 * - webp: quality 82, effort 4 (libwebp's default speed/size balance).
 * - png: lossless, zlib level 6, adaptive filtering off (close to the smallest at a fraction of
 *   the time of level 9).
 */
export const IMAGE_QUALITY = {
  jpg: { quality: 85, chromaSubsampling: "4:2:0", optimiseCoding: false },
  webp: { quality: 82, effort: 4 },
  png: { compressionLevel: 6, adaptiveFiltering: false },
} as const;

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  jpg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
};

export interface RawPicture {
  pixels: Buffer;
  width: number;
  height: number;
}

export async function encodePicture(picture: RawPicture, format: ImageFormat): Promise<Buffer> {
  const image = sharp(picture.pixels, {
    raw: { width: picture.width, height: picture.height, channels: 3 },
  });
  if (format === "png") return image.png(IMAGE_QUALITY.png).toBuffer();
  if (format === "webp") return image.webp(IMAGE_QUALITY.webp).toBuffer();
  return image.jpeg(IMAGE_QUALITY.jpg).toBuffer();
}

/**
 * Encoded images this large are collected as soon as they are stored (collectEncodedImage).
 * A 2160p PNG is 1–20 MB outside V8's heap; our JS heap grows so slowly that V8 would leave
 * dozens of them dead in memory before its next collection (measured: an 80-frame 2160p PNG
 * job's extractor at 192–195 MB, 161–165 MB with this).
 */
export const COLLECT_AFTER_BYTES = 1024 * 1024;

let minorGc: ((options: { type: "minor" }) => void) | null | undefined;

/**
 * Runs a young-generation collection, where the Buffer of an image just stored (and nothing
 * old) dies: ~1 ms, once per large image. V8 hands out `gc` only behind a flag, which is set
 * here for this one function rather than on every command line that starts the extractor.
 */
export function collectEncodedImage(): void {
  if (minorGc === undefined) {
    try {
      setFlagsFromString("--expose-gc");
      minorGc = runInNewContext("gc") as typeof minorGc;
    } catch {
      minorGc = null;
    }
  }
  minorGc?.({ type: "minor" });
}
