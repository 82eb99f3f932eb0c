// The picture steps of a decode (HDR tone mapping, rotation, output size, the colour matrix
// of untagged video), from the probe and the output size: shared by job.ts and live.ts.
import type { PictureSteps } from "./ffmpeg/args.ts";
import type { VideoProbe } from "./ffmpeg/probe.ts";
import type { OutputSize } from "./sizing.ts";

export function pictureSteps(
  video: VideoProbe,
  size: Pick<OutputSize, "width" | "height">,
): PictureSteps {
  return {
    hdr: video.hdr,
    rotation: video.rotation,
    width: size.width,
    height: size.height,
    // Untagged HD video is BT.709 in practice; ffmpeg would otherwise assume BT.601.
    fallbackMatrix: video.colorMatrix ? null : isHdSize(video) ? "bt709" : "bt601",
  };
}

/**
 * HD by its stored size, as players guess a matrix (mpv's rule): 1280 wide or more than the
 * 576 rows of SD. The width counts too: widescreen HD is often under 720 rows (1280×536).
 */
function isHdSize(video: VideoProbe): boolean {
  return video.width >= 1280 || video.height > 576;
}
