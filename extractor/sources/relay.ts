// The loopback relay ffmpeg reads from: http://127.0.0.1:PORT/TOKEN on a random port with an
// unguessable token. ffmpeg itself never talks to the internet (its protocol whitelist can stay
// at http/tcp on loopback); every byte it gets comes through the checked fetcher.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { RELAY_PARTS_HEADER } from "../ffmpeg/args.ts";
import type { SourceError } from "./errors.ts";
import { asSourceError } from "./errors.ts";
import type { ServedMedia } from "./ranged-origin.ts";

export interface Relay {
  url: string;
  /** The first origin failure seen while serving, so a failed ffmpeg run can be explained. */
  failure(): SourceError | null;
  close(): Promise<void>;
}

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

  /** The last byte to send for a request of start..size-1 (inclusive). */
  endFor(start: number, size: number): number {
    const read = this.readSoFar.get(start) ?? 0;
    this.readSoFar.delete(start);
    const part =
      read < SMALL_PARTS_UP_TO_BYTES ? SMALL_PART_BYTES : Math.min(read, LARGEST_PART_BYTES);
    const end = Math.min(start + part - 1, size - 1);
    if (end < size - 1) {
      if (this.readSoFar.size >= REMEMBERED_PART_ENDS) {
        this.readSoFar.delete(this.readSoFar.keys().next().value as number);
      }
      this.readSoFar.set(end + 1, read + (end - start + 1));
    }
    return end;
  }
}

export async function startRelay(media: ServedMedia): Promise<Relay> {
  const token = randomBytes(24).toString("base64url");
  const parts = new PartSizes();
  let firstFailure: SourceError | null = null;
  const server = http.createServer((request, response) => {
    serve(request, response).catch((error) => {
      const failure = asSourceError(error, "relaying the source");
      const abortedByReader = request.destroyed || response.destroyed;
      if (!abortedByReader && !firstFailure) firstFailure = failure;
      response.destroy();
    });
  });

  async function serve(request: http.IncomingMessage, response: http.ServerResponse) {
    if (request.url !== `/${token}`) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const size = await media.size();
    const range = parseRange(request.headers.range, size);
    if (range === "unsatisfiable") {
      response.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
    const { start } = range ?? { start: 0 };
    const openEnded =
      request.headers[RELAY_PARTS_HEADER] === "1" &&
      /^bytes=\d+-\s*$/.test(request.headers.range ?? "");
    const end = range ? (openEnded ? parts.endFor(start, size) : range.end) : size - 1;
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
    await media.pump(
      start,
      end,
      async (chunk) => {
        if (!response.write(chunk)) await once(response, "drain", { signal: readerGone.signal });
      },
      readerGone.signal,
    );
    response.end();
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    failure: () => firstFailure,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await media.close();
    },
  };
}
