// One line an agent reads about the video itself (job.video): what it is and its shape, so
// frames are read in context. The platform's words (title, uploader) are quoted as JSON: they
// are strangers' text, data to read, and the quotes keep them apart from ours.
import type { z } from "zod";
import type { VideoSchema } from "../../schema/api.ts";

type Video = z.infer<typeof VideoSchema>;

export function videoLine(video: Video): string {
  const named = video.title ? ` ${JSON.stringify(video.title)}` : "";
  const by = video.uploader ?? video.channel;
  const from = by ? ` by ${JSON.stringify(by)}` : "";
  const date = video.upload_date ? `, uploaded ${video.upload_date}` : "";
  const shape = [
    video.duration_seconds !== null ? `${video.duration_seconds} s` : null,
    video.width && video.height ? `${video.width}×${video.height}` : null,
    video.frame_rate ? `${video.frame_rate} fps` : null,
    video.codec,
    video.has_audio ? "with audio" : "no audio",
  ].filter(Boolean);
  return `The video${named}${from}${date}: ${shape.join(", ")}.`;
}
