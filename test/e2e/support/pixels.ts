// A delivered picture's pixels, for tests that check what a frame shows, not only that it came.
import sharp from "sharp";
import { expect } from "vitest";
import { download } from "./harness.ts";

/** The file at `url` (checked to download), decoded to RGB by sharp. */
export async function downloadPixels(url: string) {
  const file = await download(url);
  expect(file.status).toBe(200);
  const { data, info } = await sharp(file.bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}
