// The relay answers our ffmpeg's "rest of the file" requests in parts (issue 11: bytes read
// for sparse jobs): part sizes, the headers and bytes of a part, other readers unchanged, and
// ffmpeg reading through parts gets exactly the frames it gets from the file itself.
import { execFile } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  inputWithReadHint,
  RELAY_PARTS_HEADER,
  safeInputArgs,
} from "../../extractor/ffmpeg/args.ts";
import type { OpenedSource } from "../../extractor/sources/index.ts";
import { openSource } from "../../extractor/sources/index.ts";
import { PartSizes, SMALL_PART_BYTES } from "../../extractor/sources/relay.ts";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";
import { brightnessVideo } from "./support/videos.ts";

const run = promisify(execFile);
const KiB = 1024;
const MiB = 1024 * KiB;

describe("PartSizes", () => {
  it("keeps a new reader's parts small, then grows them to what it has read, up to 16 MiB", () => {
    const parts = new PartSizes();
    const size = 100 * MiB;
    const sizes: number[] = [];
    let start = 5 * MiB + 17;
    while (start < size) {
      const end = parts.endFor(start, size);
      sizes.push(end - start + 1);
      start = end + 1;
    }
    expect(sizes.slice(0, 9)).toEqual([...Array(8).fill(64 * KiB), 512 * KiB]);
    expect(sizes.slice(9, 13)).toEqual([1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB]);
    expect(Math.max(...sizes)).toBe(16 * MiB);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(size - (5 * MiB + 17));
  });

  it("starts over small where nobody's part ended, and never passes the file's end", () => {
    const parts = new PartSizes();
    parts.endFor(0, 10 * MiB);
    expect(parts.endFor(3 * MiB, 10 * MiB)).toBe(3 * MiB + SMALL_PART_BYTES - 1);
    expect(parts.endFor(10 * MiB - 1000, 10 * MiB)).toBe(10 * MiB - 1);
  });
});

describe("the relay in parts", () => {
  let server: TestServer;
  let video: string;
  let file: Buffer;
  let originBytes = 0;
  let source: OpenedSource;

  beforeAll(async () => {
    video = await brightnessVideo({ seconds: 12, width: 1280, height: 720, faststart: true });
    file = await readFile(video);
    server = await startTestServer();
    server.route(
      "/video.mp4",
      fileRoute(video, { ranges: true, onBytes: (n) => (originBytes += n) }),
    );
  });

  afterAll(async () => {
    await server?.close();
  });

  async function open() {
    source = await openSource(`${server.origin}/video.mp4`, "direct", {
      resolution: 720,
      allowPrivate: true,
      maxBytes: 500 * MiB,
      deadlineMs: 60_000,
    });
    return source;
  }

  it("answers an opted-in open-ended range with a small part of the right bytes", async () => {
    const relay = await open();
    try {
      const start = 1_000_003;
      const response = await fetch(relay.input, {
        headers: { range: `bytes=${start}-`, [RELAY_PARTS_HEADER]: "1" },
      });
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(206);
      const end = start + SMALL_PART_BYTES - 1;
      expect(response.headers.get("content-range")).toBe(`bytes ${start}-${end}/${file.length}`);
      expect(response.headers.get("content-length")).toBe(String(SMALL_PART_BYTES));
      expect(body.equals(file.subarray(start, end + 1))).toBe(true);
    } finally {
      await relay.close();
    }
  });

  it("answers a hinted reader's seek with what it expects, in few origin requests", async () => {
    const relay = await open();
    try {
      const hinted = inputWithReadHint(relay.input, 700 * KiB);
      expect(new URL(hinted).searchParams.get("reads")).toBe(String(700 * KiB));
      const start = 2_000_003;
      const ask = (from: number) =>
        fetch(hinted, { headers: { range: `bytes=${from}-`, [RELAY_PARTS_HEADER]: "1" } });
      const originRequests = server.requests.length;
      const first = await ask(start);
      const firstBody = Buffer.from(await first.arrayBuffer());
      const end = start + 700 * KiB - 1;
      expect(first.headers.get("content-range")).toBe(`bytes ${start}-${end}/${file.length}`);
      expect(firstBody.equals(file.subarray(start, end + 1))).toBe(true);
      // The blocks under 700 KiB from an unaligned start: 256 KiB, then the rest, in two
      // requests, not one per 64 KiB.
      expect(server.requests.length - originRequests).toBe(2);
      // Coming back at the part's end (read past the estimate): small parts again.
      const more = await ask(end + 1);
      await more.arrayBuffer();
      expect(more.headers.get("content-length")).toBe(String(SMALL_PART_BYTES));
      // Seeking elsewhere: the allowance was spent, so no second large part.
      const again = await ask(4_000_001);
      await again.arrayBuffer();
      expect(again.headers.get("content-length")).toBe(String(SMALL_PART_BYTES));
      // Another input's hint is its own.
      const other = await fetch(inputWithReadHint(relay.input, 200 * KiB), {
        headers: { range: `bytes=${start}-`, [RELAY_PARTS_HEADER]: "1" },
      });
      await other.arrayBuffer();
      expect(other.headers.get("content-length")).toBe(String(200 * KiB));
    } finally {
      await relay.close();
    }
  });

  it("ignores a malformed hint or one at the head of the file; a local file gets none", async () => {
    const relay = await open();
    try {
      const start = 2_000_003;
      const response = await fetch(`${relay.input}?reads=9e99&input=x`, {
        headers: { range: `bytes=${start}-`, [RELAY_PARTS_HEADER]: "1" },
      });
      await response.arrayBuffer();
      expect(response.headers.get("content-length")).toBe(String(SMALL_PART_BYTES));
      // Where every reader opens and reads a frame before it seeks: small parts, hint or not.
      const head = await fetch(inputWithReadHint(relay.input, 700 * KiB), {
        headers: { range: "bytes=48-", [RELAY_PARTS_HEADER]: "1" },
      });
      await head.arrayBuffer();
      expect(head.headers.get("content-length")).toBe(String(SMALL_PART_BYTES));
      expect((await fetch(`${relay.input.replace(/\/[^/]+$/, "/wrong")}?reads=5`)).status).toBe(
        404,
      );
    } finally {
      await relay.close();
    }
    expect(inputWithReadHint(video, 1000)).toBe(video);
    expect(inputWithReadHint("http://127.0.0.1:1/t", null)).toBe("http://127.0.0.1:1/t");
  });

  it("gives any other reader the whole rest of the file, as before", async () => {
    const relay = await open();
    try {
      const start = 1_000_003;
      const response = await fetch(relay.input, { headers: { range: `bytes=${start}-` } });
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get("content-range")).toBe(
        `bytes ${start}-${file.length - 1}/${file.length}`,
      );
      expect(body.equals(file.subarray(start))).toBe(true);
    } finally {
      await relay.close();
    }
  });

  it("lets ffmpeg decode every frame through many parts exactly as from the file", async () => {
    expect(file.length).toBeGreaterThan(8 * SMALL_PART_BYTES);
    const md5 = async (inputArgs: string[]) => {
      const { stdout } = await run(
        "ffmpeg",
        ["-v", "error", ...inputArgs, "-map", "0:v", "-f", "framemd5", "-"],
        { maxBuffer: 16 * MiB },
      );
      return stdout.split("\n").filter((line) => /^\d/.test(line));
    };
    const relay = await open();
    try {
      const local = await md5(safeInputArgs(video));
      const relayed = await md5(safeInputArgs(relay.input));
      expect(local.length).toBe(120);
      expect(relayed).toEqual(local);
    } finally {
      await relay.close();
    }
  });

  it("lets ffmpeg seek and decode through a hinted URL exactly as from the file", async () => {
    const frames = async (inputArgs: string[]) => {
      const { stdout } = await run(
        "ffmpeg",
        ["-v", "error", "-ss", "6.55", ...inputArgs, "-frames:v", "5", "-f", "framemd5", "-"],
        { maxBuffer: 16 * MiB },
      );
      return stdout.split("\n").filter((line) => /^\d/.test(line));
    };
    const relay = await open();
    try {
      // An estimate too small and one too large: both give the same frames.
      for (const bytes of [100 * KiB, 4 * MiB]) {
        const relayed = await frames(safeInputArgs(inputWithReadHint(relay.input, bytes)));
        expect(relayed).toHaveLength(5);
        expect(relayed).toEqual(await frames(safeInputArgs(video)));
      }
    } finally {
      await relay.close();
    }
  });

  it("reads little more than a seek's GOP for one frame in the middle of the file", async () => {
    const frame = async (inputArgs: string[]) => {
      const { stdout } = await run(
        "ffmpeg",
        ["-v", "error", "-ss", "6.55", ...inputArgs, "-frames:v", "1", "-f", "rawvideo", "-"],
        { encoding: "buffer", maxBuffer: 16 * MiB },
      );
      return stdout;
    };
    const relay = await open();
    const before = originBytes;
    try {
      const relayed = await frame(safeInputArgs(relay.input));
      expect(relayed.equals(await frame(safeInputArgs(video)))).toBe(true);
      expect(relayed.length).toBe(1280 * 720 * 1.5);
    } finally {
      await relay.close();
    }
    // One GOP (1 s at 10 fps) is about a twelfth of this file; the whole rest was read before.
    const { size } = await stat(video);
    expect(originBytes - before).toBeLessThan(size * 0.3);
  });
});
