// The loopback relay ffmpeg reads from: http://127.0.0.1:PORT/TOKEN on a random port with an
// unguessable token. ffmpeg itself never talks to the internet (its protocol whitelist can stay
// at http/tcp on loopback); every byte it gets comes through the checked fetcher.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { RELAY_PARTS_HEADER } from "../ffmpeg/args.ts";
import type { SpanView } from "../ffmpeg/mp4-spans.ts";
import type { UnneededFrames } from "../ffmpeg/unneeded-frames.ts";
import type { SourceError } from "./errors.ts";
import { asSourceError } from "./errors.ts";
import type { PumpOptions, ServedMedia } from "./ranged-origin.ts";

export interface Relay {
  url: string;
  /** The first origin failure seen while serving, so a failed ffmpeg run can be explained. */
  failure(): SourceError | null;
  /**
   * An address of the same file for one decode run, whose decoder does not see the pictures
   * `frames` says the run does not need (ffmpeg/unneeded-frames.ts).
   */
  withoutUnneededFrames(frames: UnneededFrames): string;
  /**
   * An address of `view` for one decode run: the file with an index of only the stretches
   * the run decodes (ffmpeg/mp4-spans.ts), hiding what `frames` says too, if given.
   */
  withSpans(view: SpanView, frames: UnneededFrames | null): string;
  close(): Promise<void>;
}

/** The query parameters naming a run's UnneededFrames and its SpanView. */
const HIDE_PARAMETER = "hide";
const VIEW_PARAMETER = "view";

type ByteRange = { start: number; end: number } | "unsatisfiable" | null;

export function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(size - suffix, 0), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/**
 * ffmpeg asks for the rest of the file ("bytes=X-") at every seek and hangs up once it has the
 * frames it wants; meanwhile the kernel's send buffer (up to 4 MiB on Linux) fills with bytes
 * it never reads, each one fetched from the origin. So a request for the rest of the file is
 * answered with a small part when the reader says it asks again where a part ends (our
 * ffmpeg runs send RELAY_PARTS_HEADER with -reconnect 1, ffmpeg/args.ts; any other reader gets the
 * whole rest as before). The first parts stay small (a sparse seek needs one GOP, often under 1 MiB); a reader
 * that has come back for more than that is decoding on, and its parts grow to what it has
 * read so far. Measured on 12 seeks into a 5-minute 1080p file: 79 % of the file read
 * before, under 10 % after.
 */
export const SMALL_PART_BYTES = 64 * 1024;
const SMALL_PARTS_UP_TO_BYTES = 512 * 1024;
const LARGEST_PART_BYTES = 16 * 1024 * 1024;
// Where earlier parts ended, for as many readers as a job runs at once and then some.
const REMEMBERED_PART_ENDS = 64;

/** The parts handed out to open-ended range requests, growing for a reader that returns. */
export class PartSizes {
  /** Where a reader's next request will start → bytes it has read in parts so far. */
  private readonly readSoFar = new Map<number, number>();

  /** A request that starts where a part ended: the same reader coming back for more. */
  continues(start: number): boolean {
    return this.readSoFar.has(start);
  }

  /**
   * A part of start..end handed out on a read hint: a reader that comes back after it read
   * past its estimate, so it goes on in small parts (counted from zero).
   */
  hinted(start: number, end: number, size: number): void {
    this.readSoFar.delete(start);
    if (end < size - 1) this.remember(end + 1, 0);
  }

  /** The last byte to send for a request of start..size-1 (inclusive). */
  endFor(start: number, size: number): number {
    const read = this.readSoFar.get(start) ?? 0;
    this.readSoFar.delete(start);
    const part =
      read < SMALL_PARTS_UP_TO_BYTES ? SMALL_PART_BYTES : Math.min(read, LARGEST_PART_BYTES);
    const end = Math.min(start + part - 1, size - 1);
    if (end < size - 1) this.remember(end + 1, read + (end - start + 1));
    return end;
  }

  private remember(next: number, read: number): void {
    if (this.readSoFar.size >= REMEMBERED_PART_ENDS) {
      this.readSoFar.delete(this.readSoFar.keys().next().value as number);
    }
    this.readSoFar.set(next, read);
  }
}

// Past a view's stretch (ffmpeg/mp4-spans.ts): ffmpeg's 32 KiB buffer, refilled whole (as
// decode.ts READ_AHEAD_BYTES).
const VIEW_READ_AHEAD_BYTES = 64 * 1024;

// Hints are for seeks: a request in the file's first MiB (where every reader opens) has none.
const HINTS_FROM_BYTES = 1024 * 1024;
// A hinted part's first request to the origin: 256 KiB, then 512 KiB, 1 MiB…: three trips for
// a 2 MB seek instead of a dozen. A reader that reads less than its estimate may still have
// cost the rest of it (the kernel's buffers take what we send): the estimate bounds the waste.
const HINTED_FIRST_RUN_BLOCKS = 4;
// Hints of as many readers as a job starts (a batch's inputs), and then some.
const REMEMBERED_HINTS = 256;
const MAX_HINT_BYTES = LARGEST_PART_BYTES;

/**
 * What each reader said it will read after its seek: our batch runs give every input a URL of
 * its own with `?reads=N&input=K` (ffmpeg/args.ts inputWithReadHint; N from the file's average
 * rate over the span the input decodes). Over the internet every part is a round trip to the
 * origin, one after the other: a seek that reads 800 KB took 8 parts of 64 KiB and a ninth.
 * A fresh request of a hinted reader (a seek, not a return at a part's end) is answered with
 * what it still expects, fetched from the origin in a few growing requests; past that it goes
 * on in small parts. The allowance is spent by what is fetched for it, so a reader that seeks
 * again (over another stream's chunk, say) cannot make the relay fetch its estimate twice.
 */
export class ReadHints {
  /** A reader's key (its query) → bytes of its allowance not yet handed out. */
  private readonly left = new Map<string, number>();

  /** The allowance of the reader at this request's URL, or null for a reader without one. */
  allowance(requestUrl: string): { key: string; bytes: number } | null {
    const query = requestUrl.split("?")[1];
    if (!query) return null;
    const params = new URLSearchParams(query);
    const reads = params.get("reads") ?? "";
    const input = params.get("input") ?? "";
    if (!/^\d{1,12}$/.test(reads) || !/^\d{1,12}$/.test(input)) return null;
    const key = `${input}:${reads}`;
    if (!this.left.has(key)) {
      if (this.left.size >= REMEMBERED_HINTS) {
        this.left.delete(this.left.keys().next().value as string);
      }
      this.left.set(key, Math.min(Number(reads), MAX_HINT_BYTES));
    }
    return { key, bytes: this.left.get(key) ?? 0 };
  }

  spend(key: string, bytes: number): void {
    this.left.set(key, Math.max((this.left.get(key) ?? 0) - bytes, 0));
  }
}

export async function startRelay(media: ServedMedia): Promise<Relay> {
  const token = randomBytes(24).toString("base64url");
  const parts = new PartSizes();
  const hints = new ReadHints();
  const hiding = new Map<string, UnneededFrames>();
  const views = new Map<string, { view: SpanView; frames: UnneededFrames | null }>();
  let firstFailure: SourceError | null = null;
  // Loaded with the first relay: the command line starts one only for a job that needs it, and a
  // 4K job has no memory to spare for a module it does not use (sources/local-file.ts).
  const { createServer } = await import("node:http");
  const server = createServer((request, response) => {
    serve(request, response).catch((error) => {
      const failure = asSourceError(error, "relaying the source");
      const abortedByReader = request.destroyed || response.destroyed;
      if (!abortedByReader && !firstFailure) firstFailure = failure;
      response.destroy();
    });
  });

  async function serve(request: http.IncomingMessage, response: http.ServerResponse) {
    const [path, query] = (request.url ?? "").split("?");
    if (path !== `/${token}`) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const params = new URLSearchParams(query ?? "");
    const spanned = views.get(params.get(VIEW_PARAMETER) ?? "") ?? null;
    const view = spanned?.view ?? null;
    const fileSize = await media.size();
    const size = view ? view.size : fileSize;
    const range = parseRange(request.headers.range, size);
    if (range === "unsatisfiable") {
      response.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
    const { start } = range ?? { start: 0 };
    const openEnded =
      request.headers[RELAY_PARTS_HEADER] === "1" &&
      /^bytes=\d+-\s*$/.test(request.headers.range ?? "");
    // Not at the head of the file: every reader opens there and reads a frame or two before it
    // seeks, and a large part sent there fills the kernel's buffers with bytes it never reads.
    const hint =
      openEnded && start >= HINTS_FROM_BYTES && !parts.continues(start) && !view
        ? hints.allowance(request.url ?? "")
        : null;
    let end = range ? range.end : size - 1;
    let pumping: PumpOptions = {};
    const span = openEnded && view ? view.spanAt(start) : null;
    if (openEnded && view && start >= fileSize) {
      // The view's own index, after the file: held here, sent whole.
    } else if (span) {
      // A view knows what its run reads: the rest of this stretch, fetched from the origin in
      // a few growing requests, and ffmpeg's read-ahead past it.
      end = Math.min(span.end + VIEW_READ_AHEAD_BYTES - 1, fileSize - 1);
      pumping = { firstRunBlocks: HINTED_FIRST_RUN_BLOCKS };
    } else if (hint && hint.bytes >= SMALL_PART_BYTES) {
      end = Math.min(start + hint.bytes - 1, size - 1);
      parts.hinted(start, end, size);
      // Fetched from the origin in a few growing requests, not 64 KiB at a time; only what
      // is fetched is spent: an index at the end of the file, or a keyframe the lookup read,
      // is here already and costs nothing.
      const key = hint.key;
      pumping = {
        firstRunBlocks: HINTED_FIRST_RUN_BLOCKS,
        fetched: (bytes) => hints.spend(key, bytes),
      };
    } else if (openEnded) {
      end = parts.endFor(start, view ? fileSize : size);
    }
    response.writeHead(range ? 206 : 200, {
      "accept-ranges": "bytes",
      // Never a playlist MIME type: that alone would make ffmpeg's HLS probe accept the bytes.
      "content-type": media.contentType.startsWith("video/")
        ? media.contentType
        : "application/octet-stream",
      "content-length": String(Math.max(end - start + 1, 0)),
      ...(range ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    if (request.method === "HEAD" || size === 0) {
      response.end();
      return;
    }
    // ffmpeg hangs up whenever it seeks; stop fetching for it at once.
    const readerGone = new AbortController();
    response.on("close", () => readerGone.abort(new Error("reader closed the connection")));
    const frames = spanned ? spanned.frames : hiding.get(params.get(HIDE_PARAMETER) ?? "");
    const hide = frames?.stream(start);
    let position = start;
    if (start < fileSize) {
      await media.pump(
        start,
        Math.min(end, fileSize - 1),
        async (chunk) => {
          const seen = view ? view.pass(position, chunk) : chunk;
          position += chunk.length;
          const bytes = hide ? hide(seen) : seen;
          if (!response.write(bytes)) await once(response, "drain", { signal: readerGone.signal });
        },
        readerGone.signal,
        pumping,
      );
    }
    if (view && end >= fileSize) {
      response.write(view.moov.subarray(Math.max(start - fileSize, 0), end - fileSize + 1));
    }
    response.end();
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    failure: () => firstFailure,
    withoutUnneededFrames(frames) {
      const id = String(hiding.size + 1);
      hiding.set(id, frames);
      return `http://127.0.0.1:${port}/${token}?${HIDE_PARAMETER}=${id}`;
    },
    withSpans(view, frames) {
      const id = String(views.size + 1);
      views.set(id, { view, frames });
      return `http://127.0.0.1:${port}/${token}?${VIEW_PARAMETER}=${id}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await media.close();
    },
  };
}
