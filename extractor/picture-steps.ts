// The picture steps of a decode (HDR tone mapping, rotation, output size, the colour matrix
// of untagged video), from the probe and the output size: shared by job.ts and live.ts.

import { largePicture } from "./decode.ts";
import type { PictureSteps } from "./ffmpeg/args.ts";
import type { VideoProbe } from "./ffmpeg/probe.ts";
import { THUMBNAIL_MAX_WIDTH, thumbnailSize } from "./output/thumbnails.ts";
import type { OutputSize } from "./sizing.ts";

/**
 * With `thumbnails`, ffmpeg also scales each frame's thumbnail (args.ts pictureChain), for a
 * sink that keeps them, when the frame is wider than a thumbnail (a narrower frame is its own
 * thumbnail's picture) and no larger than 1440p: above, ffmpeg's stacked picture would be
 * one more 25 MB picture in flight, where memory is bounded to one picture (decode.ts
 * largePicture), and sharp makes the thumbnail from the frame as before.
 */
export function pictureSteps(
  video: VideoProbe,
  size: Pick<OutputSize, "width" | "height">,
  { thumbnails = false }: { thumbnails?: boolean } = {},
): PictureSteps {
  return {
    hdr: video.hdr,
    rotation: video.rotation,
    width: size.width,
    height: size.height,
    // Untagged HD video is BT.709 in practice; ffmpeg would otherwise assume BT.601.
    fallbackMatrix: video.colorMatrix ? null : isHdSize(video) ? "bt709" : "bt601",
    thumbnail:
      thumbnails && size.width > THUMBNAIL_MAX_WIDTH && !largePicture(size)
        ? thumbnailSize(size.width, size.height)
        : null,
  };
}

/**
 * HD by its stored size, as players guess a matrix (mpv's rule): 1280 wide or more than the
 * 576 rows of SD. The width counts too: widescreen HD is often under 720 rows (1280×536).
 */
function isHdSize(video: VideoProbe): boolean {
  return video.width >= 1280 || video.height > 576;
}
