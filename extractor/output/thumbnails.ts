// A small picture of each delivered frame, made once from the decoded pixels while the job runs
// and stored beside the frame, so a gallery (the dashboard's) never loads the originals to show
// a grid (decision 0240). The edge has no image library: this is the one place that has both
// the picture and sharp.
import sharp from "sharp";

/** Thumbnails are at most this wide; narrower frames keep their own width (never upscaled). */
export const THUMBNAIL_MAX_WIDTH = 320;
export const THUMBNAIL_CONTENT_TYPE = "image/jpeg";
/** How every thumbnail is encoded, whichever way its pixels were scaled. */
const THUMBNAIL_JPEG = { quality: 80 } as const;

/** thumb-0001.jpg: the thumbnail of frame 1, whatever the frame's own format. */
export function thumbnailFileName(index: number): string {
  return `thumb-${String(index).padStart(4, "0")}.jpg`;
}

/** The thumbnail's size: THUMBNAIL_MAX_WIDTH wide at most, the frame's shape kept. */
export function thumbnailSize(width: number, height: number): { width: number; height: number } {
  if (width <= THUMBNAIL_MAX_WIDTH) return { width, height };
  return {
    width: THUMBNAIL_MAX_WIDTH,
    height: Math.max(1, Math.round((THUMBNAIL_MAX_WIDTH * height) / width)),
  };
}

/**
 * A JPEG thumbnail from a delivered RGB picture. Linear resampling: about 5 ms for a 1080p
 * frame on one core (measured: cubic 4.9, lanczos3 5.8, a full-size JPEG 21), and at 320 px
 * the difference does not show.
 */
export function makeThumbnail(pixels: Buffer, width: number, height: number): Promise<Buffer> {
  const size = thumbnailSize(width, height);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .resize({ ...size, fit: "fill", kernel: "linear" })
    .jpeg(THUMBNAIL_JPEG)
    .toBuffer();
}

/** A small RGB24 picture inside wider rows: `height` rows of `rowWidth` pixels each. */
export interface ThumbnailRows {
  pixels: Buffer;
  rowWidth: number;
  width: number;
  height: number;
}

/**
 * A JPEG thumbnail from the small picture ffmpeg scaled beside the frame (decode.ts
 * ThumbnailRows; args.ts pictureChain): only its own pixels are read and encoded, ~1.4 ms at
 * any frame size against ~7.4 ms (1080p) for makeThumbnail (decision 0283).
 */
export function encodeThumbnail(rows: ThumbnailRows): Promise<Buffer> {
  return sharp(rows.pixels, { raw: { width: rows.rowWidth, height: rows.height, channels: 3 } })
    .extract({ left: 0, top: 0, width: rows.width, height: rows.height })
    .jpeg(THUMBNAIL_JPEG)
    .toBuffer();
}
