// A view of only the stretches a batch decodes (extractor/ffmpeg/mp4-spans.ts), served by the
// relay: ffmpeg reads in it exactly the samples the index keeps, each with the offset, size and
// times it has in the file; every picture it decodes is bit for bit the file's own; the relay
// serves the file's bytes with its moov renamed and the view's moov after them; and each
// stretch's first sample is judged IDR or not as its bytes pass. Expected values come from
// ffprobe and ffmpeg on the original file, never from the code under test.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { mp4IndexFrom, openByteReader } from "../../extractor/ffmpeg/mp4-index.ts";
import type { SpanView } from "../../extractor/ffmpeg/mp4-spans.ts";
import { firstSliceIsIdr, spanIndexOf, spanViewFor } from "../../extractor/ffmpeg/mp4-spans.ts";
import { PictureIndex } from "../../extractor/ffmpeg/unneeded-frames.ts";
import { toSlotTimes } from "../../extractor/slots.ts";
import { localFileSource } from "../../extractor/sources/local-file.ts";
import { makeTestVideo, type TestVideoSpec } from "../support/videos.ts";

const run = promisify(execFile);

interface Packet {
  pts: number;
  dts: number;
  pos: number;
  size: number;
  key: boolean;
}

async function videoPackets(input: string): Promise<Packet[]> {
  const { stdout } = await run(
    "ffprobe",
    [
      ...["-v", "error", "-select_streams", "v:0", "-show_entries"],
      ...["packet=pts,dts,pos,size,flags", "-of", "csv=p=0", input],
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout
    .trim()
    .split("\n")
    .map((line) => {
      const [pts, dts, size, pos, flags] = line.split(",");
      return {
        pts: Number(pts),
        dts: Number(dts),
        size: Number(size),
        pos: Number(pos),
        key: flags.startsWith("K"),
      };
    });
}

/** pts → checksum of every picture ffmpeg decodes from `input` (one thread). */
async function pictureSums(input: string): Promise<Map<number, string>> {
  const { stdout } = await run(
    "ffmpeg",
    ["-v", "error", "-threads", "1", "-i", input, "-map", "0:v:0", "-f", "framemd5", "-"],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const sums = new Map<number, string>();
  for (const line of stdout.split("\n")) {
    if (line.startsWith("#") || !line.trim()) continue;
    const fields = line.split(",").map((f) => f.trim());
    sums.set(Number(fields[2]), fields[5]);
  }
  return sums;
}

/** A view of `video` for the frames on screen at `times`, served by a relay of the file. */
async function served(
  video: string,
  times: number[],
): Promise<{ view: SpanView; url: string; close: () => Promise<void> }> {
  const reader = await openByteReader(video);
  if (!reader) throw new Error("no reader");
  const mp4 = await mp4IndexFrom(reader.read, reader.size).finally(() => reader.close());
  if (!mp4 || mp4.moovAt === null) throw new Error("no sole moov");
  const index = spanIndexOf(mp4.moov, mp4.layout);
  const pictures = PictureIndex.ofFrames(mp4.layout);
  if (!index || !pictures) throw new Error("no span index");
  const view = spanViewFor(index, pictures.onScreen(toSlotTimes(times)), {
    moovAt: mp4.moovAt,
    moovBytes: mp4.moov.length,
    fileSize: mp4.fileSize,
    lengthSize: mp4.layout.lengthSize,
  });
  if (!view) throw new Error("no view");
  const source = localFileSource(video);
  const relay = await source.hidingRelay?.();
  if (!relay) throw new Error("no relay");
  return { view, url: relay.withSpans(view, null), close: () => source.close() };
}

const B_FRAMES_AND_AUDIO: TestVideoSpec = {
  fps: 30,
  gop: 30,
  bframes: 2,
  durationSeconds: 12,
  audio: true,
};
const TIMES = [2.5, 2.61, 6.1, 9.99];

describe("a view of the stretches a batch decodes", () => {
  it("holds only the kept samples of the video, each at its own offset with its own times", async () => {
    const video = await makeTestVideo(B_FRAMES_AND_AUDIO);
    const { view, url, close } = await served(video, TIMES);
    try {
      const original = await videoPackets(video);
      const seen = await videoPackets(url);
      const byPos = new Map(original.map((p) => [p.pos, p]));
      // Few samples: each stretch from its keyframe to just past its wanted time.
      expect(seen.length).toBeGreaterThan(TIMES.length);
      expect(seen.length).toBeLessThan(original.length / 2);
      for (const packet of seen) expect(packet).toEqual(byPos.get(packet.pos));
      // The first sample, then every stretch from a keyframe of the file.
      expect(seen[0]).toEqual(original[0]);
      for (const span of view.spans) {
        expect(byPos.get(span.start)?.key, `stretch at ${span.start}`).toBe(true);
      }
      // The audio track is not in the view: its video is stream 0 and the only one.
      const { stdout } = await run("ffprobe", [
        ...["-v", "error", "-show_entries", "stream=index,codec_type", "-of", "csv=p=0", url],
      ]);
      expect(stdout.trim()).toBe("0,video");
    } finally {
      await close();
    }
  });

  it("decodes every picture it holds bit for bit as the file does", async () => {
    const video = await makeTestVideo(B_FRAMES_AND_AUDIO);
    const { url, close } = await served(video, TIMES);
    try {
      const [ours, theirs] = await Promise.all([pictureSums(url), pictureSums(video)]);
      expect(ours.size).toBeGreaterThan(TIMES.length);
      for (const [pts, sum] of ours) expect(sum, `picture at ${pts}`).toBe(theirs.get(pts));
      // The frames on screen at the wanted times and the one after each are among them.
      for (const t of TIMES) {
        const onScreen = Math.floor(t * 30 + 1e-9);
        const ticks = [...theirs.keys()].sort((a, b) => a - b);
        expect(ours.has(ticks[onScreen])).toBe(true);
        expect(ours.has(ticks[onScreen + 1])).toBe(true);
      }
    } finally {
      await close();
    }
  });

  it("is the file's bytes with its moov named free, then its own moov, and judges its stretches", async () => {
    const video = await makeTestVideo(B_FRAMES_AND_AUDIO);
    const { view, url, close } = await served(video, TIMES);
    try {
      const head = await fetch(url, { method: "HEAD" });
      expect(Number(head.headers.get("content-length"))).toBe(view.fileSize + view.moov.length);
      const at = (start: number, end: number) =>
        fetch(url, { headers: { range: `bytes=${start}-${end}` } }).then(async (r) =>
          Buffer.from(await r.arrayBuffer()),
        );
      const file = await import("node:fs/promises").then((fs) => fs.readFile(video));
      expect(file.toString("latin1", view.moovAt + 4, view.moovAt + 8)).toBe("moov");
      expect((await at(view.moovAt, view.moovAt + 7)).toString("latin1", 4)).toBe("free");
      expect(
        (await at(view.moovAt, view.moovAt + 3)).equals(
          file.subarray(view.moovAt, view.moovAt + 4),
        ),
      ).toBe(true);
      const tail = await at(view.fileSize - 16, view.fileSize + view.moov.length - 1);
      expect(tail.equals(Buffer.concat([file.subarray(-16), view.moov]))).toBe(true);
      // Nothing of a stretch has passed yet: no frame of it may be delivered.
      expect(view.startsClean(0)).toBe(false);
      await videoPackets(url);
      // x264's keyframes here are IDR pictures: every stretch starts clean.
      expect(TIMES.map((_, slot) => view.startsClean(slot))).toEqual(TIMES.map(() => true));
      expect(view.unclean).toBe(false);
    } finally {
      await close();
    }
  });

  it("judges a stretch from an open GOP's I-frame unclean as its bytes pass", async () => {
    const video = await makeTestVideo({ ...B_FRAMES_AND_AUDIO, audio: false, openGop: true });
    const { view, url, close } = await served(video, TIMES);
    try {
      await videoPackets(url);
      // Each wanted time is decoded from an I-frame of a GOP of 1 s (2 s, 2 s, 6 s, 9 s): none
      // is an IDR picture; only the file's first keyframe is.
      expect(TIMES.map((_, slot) => view.startsClean(slot))).toEqual([false, false, false, false]);
      expect(view.unclean).toBe(true);
    } finally {
      await close();
    }
  });
});

describe("a view it cannot list faithfully", () => {
  /** The parts spanViewFor is given for `times` of `video`, for a test to bend one of. */
  async function parts(video: string, times: number[]) {
    const reader = await openByteReader(video);
    if (!reader) throw new Error("no reader");
    const mp4 = await mp4IndexFrom(reader.read, reader.size).finally(() => reader.close());
    const index = mp4 && spanIndexOf(mp4.moov, mp4.layout);
    const pictures = mp4 && PictureIndex.ofFrames(mp4.layout);
    if (!mp4 || mp4.moovAt === null || !index || !pictures) throw new Error("no span index");
    const file = {
      moovAt: mp4.moovAt,
      moovBytes: mp4.moov.length,
      fileSize: mp4.fileSize,
      lengthSize: mp4.layout.lengthSize,
    };
    return { index, onScreen: pictures.onScreen(toSlotTimes(times)), file };
  }

  it("is refused where a gap between kept samples is too long for an stts delta", async () => {
    const { index, onScreen, file } = await parts(await makeTestVideo(B_FRAMES_AND_AUDIO), TIMES);
    expect(spanViewFor(index, onScreen, file)).not.toBeNull();
    // The same samples on a clock 2^16 times finer: 2.5 s after the first sample is more than
    // 2^31 ticks, which ffmpeg would read as a negative delta.
    const fine = { ...index.track, dts: index.track.dts.map((d) => d * 65536) };
    expect(spanViewFor({ ...index, track: fine }, onScreen, file)).toBeNull();
  });

  it("is refused where a stretch's samples are not in file order", async () => {
    const { index, onScreen, file } = await parts(await makeTestVideo(B_FRAMES_AND_AUDIO), TIMES);
    const view = spanViewFor(index, onScreen, file);
    if (!view) throw new Error("no view");
    // Two samples of the first stretch after the file's first sample, their places swapped.
    const first = view.spans[1].first;
    const offsets = [...index.offsets];
    [offsets[first + 1], offsets[first + 2]] = [offsets[first + 2], offsets[first + 1]];
    expect(spanViewFor({ ...index, offsets }, onScreen, file)).toBeNull();
  });

  it("is refused where a stretch lies in the old moov, whose type it serves renamed", async () => {
    const { index, onScreen, file } = await parts(await makeTestVideo(B_FRAMES_AND_AUDIO), TIMES);
    const view = spanViewFor(index, onScreen, file);
    if (!view) throw new Error("no view");
    const inside = { ...file, moovAt: view.spans[1].start + 8 };
    expect(spanViewFor(index, onScreen, inside)).toBeNull();
  });
});

describe("firstSliceIsIdr", () => {
  const nal = (type: number, length: number, lengthSize = 4) => {
    const bytes = Buffer.alloc(lengthSize + length);
    bytes.writeUIntBE(length, 0, lengthSize);
    bytes[lengthSize] = 0x60 | type;
    return bytes;
  };

  it("finds the first slice after delimiters, SEI and parameter sets", () => {
    expect(firstSliceIsIdr(Buffer.concat([nal(9, 2), nal(6, 700), nal(5, 40)]), 4, true)).toBe(
      true,
    );
    expect(firstSliceIsIdr(Buffer.concat([nal(6, 30), nal(1, 40), nal(5, 40)]), 4, true)).toBe(
      false,
    );
    expect(firstSliceIsIdr(Buffer.concat([nal(7, 10, 2), nal(5, 10, 2)]), 2, true)).toBe(true);
    // A data partition is a slice too, never an IDR one.
    expect(firstSliceIsIdr(nal(2, 40), 4, true)).toBe(false);
  });

  it("waits for more bytes until a slice shows, and says no once none can", () => {
    const sei = nal(6, 5000);
    expect(firstSliceIsIdr(sei.subarray(0, 4096), 4, false)).toBeNull();
    expect(firstSliceIsIdr(sei.subarray(0, 4096), 4, true)).toBe(false);
    expect(firstSliceIsIdr(Buffer.concat([nal(6, 3), nal(5, 9)]).subarray(0, 12), 4, false)).toBe(
      true,
    );
  });
});
