// job.video: what the extractor learned about the source while reading it, with no second
// fetch. From ffprobe always; from yt-dlp's info for platform links (issue #15 fills this in).
import type { VideoFacts } from "../../schema/messages.ts";
import type { MediaProbe, VideoProbe } from "../ffmpeg/probe.ts";
import type { SourceHandle } from "../source-input.ts";

export function describeVideo(
  probe: MediaProbe & { video: VideoProbe },
  durationSeconds: number,
  _source: SourceHandle | null,
): VideoFacts {
  const video = probe.video;
  return {
    duration_seconds: Math.round(durationSeconds * 1000) / 1000,
    width: video.displayWidth,
    height: video.displayHeight,
    frame_rate: video.frameRate === null ? null : Math.round(video.frameRate * 1000) / 1000,
    codec: video.codec,
    rotation: video.rotation,
    has_audio: probe.hasAudio,
  };
}
