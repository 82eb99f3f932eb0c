// The WebVTT thumbnail track: one cue per tile, `sprite.jpg#xywh=x,y,w,h`, the format video.js
// (videojs-vtt-thumbnails), Plyr (previewThumbnails) and Vidstack read for seek previews.
// Pure, so the cue rule is tested as data.
//
// Cue rule: tile i is shown from its own moment to the next tile's; the first cue starts at 0
// and the last ends at the video's end, so the cues cover the whole video without gaps. Two
// tiles at the same moment (repeated timestamps) keep only the first.

export const SPRITE_FILE_NAME = "sprite.jpg";
export const THUMBNAILS_FILE_NAME = "thumbnails.vtt";
export const CONTACT_SHEET_FILE_NAME = "storyboard.jpg";

export interface TileGeometry {
  columns: number;
  tileWidth: number;
  tileHeight: number;
}

export function tilePosition(i: number, grid: TileGeometry): { x: number; y: number } {
  return {
    x: (i % grid.columns) * grid.tileWidth,
    y: Math.floor(i / grid.columns) * grid.tileHeight,
  };
}

export function thumbnailTrack(
  moments: number[],
  durationSeconds: number,
  grid: TileGeometry,
): string {
  const lines = ["WEBVTT", ""];
  let cue = 0;
  moments.forEach((moment, i) => {
    const start = cue === 0 ? 0 : moment;
    const next = moments.slice(i + 1).find((m) => m > moment);
    const end = next ?? Math.max(durationSeconds, moment);
    if (!(end > start) || (i > 0 && moments[i - 1] === moment)) return;
    const { x, y } = tilePosition(i, grid);
    cue++;
    lines.push(
      String(cue),
      `${vttTime(start)} --> ${vttTime(end)}`,
      `${SPRITE_FILE_NAME}#xywh=${x},${y},${grid.tileWidth},${grid.tileHeight}`,
      "",
    );
  });
  return lines.join("\n");
}

/** hh:mm:ss.mmm, as WebVTT requires (hours always written, so any length parses). */
export function vttTime(seconds: number): string {
  const ms = Math.round(Math.max(0, seconds) * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const rest = ms % 1000;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(rest, 3)}`;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}
