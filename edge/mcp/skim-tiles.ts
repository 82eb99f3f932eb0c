// The overview's tiles, worked out from the job as the extractor draws its contact sheet
// (extractor/storyboard/contact-sheet.ts, decision 0050): one tile per delivered picture (frames
// that show the same decoded picture share one), at the frame's moment (moved_to, else its
// timestamp), in time order, left to right and top to bottom, `columns` to a row. That moment is
// the time burned into the tile's foot (hh:mm:ss.mmm). Each tile stands for a span of the
// video: from halfway after the previous tile's moment to halfway before the next one's (the
// count mode's slot around its frame), the first from the range's start, the last to its end.
// Pure, so the rules are tested as data (test/edge/mcp-skim.test.ts).
import type { z } from "zod";
import type { FrameSchema, StoryboardSchema } from "../../schema/api.ts";

type Frame = z.infer<typeof FrameSchema>;
type Storyboard = z.infer<typeof StoryboardSchema>;

export interface Tile {
  /** 1-based, in the sheet's reading order. */
  tile: number;
  /** The frames this tile shows (more than one when they share one picture). */
  frames: Frame[];
  /** Seconds from the source's start: the time burned into the tile. */
  time: number;
  label: string;
  x: number;
  y: number;
  span: { start: number; end: number };
}

/** hh:mm:ss.mmm, exactly as the contact sheet writes it. */
export function tileLabel(seconds: number): string {
  const ms = Math.round(Math.max(0, seconds) * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
}

export function sheetTiles(
  frames: Frame[],
  board: Pick<Storyboard, "columns" | "tile_width" | "tile_height">,
  range: { start: number; end: number },
): Tile[] {
  const moment = (frame: Frame) => frame.moved_to ?? frame.timestamp;
  const delivered = frames
    .filter((frame) => frame.status === "ok")
    .sort((a, b) => moment(a) - moment(b) || a.index - b.index);
  const groups: Frame[][] = [];
  for (const frame of delivered) {
    const last = groups[groups.length - 1]?.[0];
    const samePicture =
      last !== undefined &&
      frame.pts != null &&
      last.pts === frame.pts &&
      (last.moved_to ?? null) === (frame.moved_to ?? null);
    if (samePicture) groups[groups.length - 1].push(frame);
    else groups.push([frame]);
  }
  const times = groups.map((group) => moment(group[0]));
  return groups.map((group, i) => ({
    tile: i + 1,
    frames: group,
    time: times[i],
    label: tileLabel(times[i]),
    x: (i % board.columns) * board.tile_width,
    y: Math.floor(i / board.columns) * board.tile_height,
    span: {
      start: i === 0 ? Math.min(range.start, times[i]) : (times[i - 1] + times[i]) / 2,
      end: i === groups.length - 1 ? Math.max(range.end, times[i]) : (times[i] + times[i + 1]) / 2,
    },
  }));
}

export interface Cue {
  start: number;
  end: number;
  text: string;
}

/**
 * The cues of a WebVTT file the extractor wrote (extractor/context/cues.ts writeWebVtt: a
 * header, then blocks of one timing line and the escaped text). Blocks without a timing line are
 * skipped.
 */
export function readOurWebVtt(text: string): Cue[] {
  const seconds = (stamp: string) =>
    stamp.split(":").reduce((sum, part) => sum * 60 + Number(part), 0);
  const cues: Cue[] = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n\n+/)) {
    const [timing, ...lines] = block.trim().split("\n");
    const match = /^(\d+:\d{2}:\d{2}\.\d{3}) --> (\d+:\d{2}:\d{2}\.\d{3})/.exec(timing ?? "");
    if (!match) continue;
    cues.push({
      start: seconds(match[1]),
      end: seconds(match[2]),
      text: lines.join("\n").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"),
    });
  }
  return cues;
}

/** The cues on screen at some moment of [start, end): each once, in order. */
export function cuesIn(cues: Cue[], span: { start: number; end: number }): string[] {
  return cues.filter((cue) => cue.start < span.end && cue.end > span.start).map((cue) => cue.text);
}
