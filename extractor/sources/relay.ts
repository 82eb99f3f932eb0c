// The loopback relay ffmpeg reads from: http://127.0.0.1:PORT/TOKEN on a random port with an
// unguessable token. ffmpeg itself never talks to the internet (its protocol whitelist can stay
// at http/tcp on loopback); every byte it gets comes through the checked fetcher.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
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

export async function startRelay(media: ServedMedia): Promise<Relay> {
  const token = randomBytes(24).toString("base64url");
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
    const { start, end } = range ?? { start: 0, end: size - 1 };
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
