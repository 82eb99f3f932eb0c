// ffmpeg must not follow a playlist hidden in a "video": neither read local files nor connect
// anywhere. The flags are the extraction engine's (extractor/ffmpeg/args.ts safeInputArgs);
// the first two tests show the files really are hostile when those flags are missing.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeInputArgs } from "../../extractor/ffmpeg/args.ts";
import { openSource, SourceError } from "../../extractor/sources/index.ts";
import { gab2Avi, hostilePlaylist, watchFifo } from "./support/hostile-media.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";

const run = promisify(execFile);
let directory: string;
let fifo: string;
let canary: TestServer;
let files: TestServer;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "stills-hostile-"));
  fifo = join(directory, "secret.ts");
  await run("mkfifo", [fifo]);
  canary = await startTestServer();
  canary.route("/leak.ts", (_req, res) => res.end("leaked"));
  const playlist = hostilePlaylist(`${canary.origin}/leak.ts`, fifo);
  await writeFile(join(directory, "playlist.avi"), playlist);
  await writeFile(join(directory, "gab2.avi"), gab2Avi(playlist));
  files = await startTestServer();
  files.route("/playlist.avi", (_req, res) =>
    res.writeHead(200, { "content-type": "video/x-msvideo" }).end(playlist),
  );
  files.route("/gab2.avi", (_req, res) => {
    res.writeHead(200, { "content-type": "video/x-msvideo" }).end(gab2Avi(playlist));
  });
});

afterAll(async () => {
  await canary?.close();
  await files?.close();
});

/** Runs a tool, and reports whether it opened the FIFO or reached the canary server. */
async function touches(tool: "ffprobe" | "ffmpeg", args: string[]) {
  const before = canary.requests.length;
  const watcher = watchFifo(fifo);
  const outputArgs = tool === "ffmpeg" ? ["-f", "null", "-"] : [];
  const exit = await run(tool, ["-v", "error", "-rw_timeout", "3000000", ...args, ...outputArgs], {
    timeout: 15_000,
  }).then(
    () => 0,
    (error: { code?: number }) => error.code ?? 1,
  );
  return { readFile: await watcher.stop(), connected: canary.requests.length > before, exit };
}

describe("hostile playlists inside media files", () => {
  it("control: without the safety flags, ffprobe opens the local file named in playlist.avi", async () => {
    const result = await touches("ffprobe", [join(directory, "playlist.avi")]);
    expect(result.readFile).toBe(true);
  });

  it("control: without the safety flags, ffprobe over http connects to the server in the playlist", async () => {
    const result = await touches("ffprobe", [`${files.origin}/playlist.avi`]);
    expect(result.connected).toBe(true);
  });

  for (const tool of ["ffprobe", "ffmpeg"] as const) {
    for (const name of ["playlist.avi", "gab2.avi"]) {
      it(`${tool} with the safety flags reads neither the file nor the network: local ${name}`, async () => {
        const result = await touches(tool, safeInputArgs(join(directory, name)));
        expect(result).toMatchObject({ readFile: false, connected: false });
        expect(result.exit).not.toBe(0);
      });

      it(`${tool} with the safety flags reads neither the file nor the network: ${name} over loopback http`, async () => {
        const result = await touches(tool, safeInputArgs(`${files.origin}/${name}`));
        expect(result).toMatchObject({ readFile: false, connected: false });
        expect(result.exit).not.toBe(0);
      });
    }
  }

  it("openSource refuses a link whose bytes are a playlist", async () => {
    const error = await openSource(`${files.origin}/playlist.avi`, "direct", {
      resolution: 720,
      allowPrivate: true,
      maxBytes: 1_000_000,
      deadlineMs: 10_000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    // The caller's own link that is no video is a wrong link (decision 0260).
    expect((error as SourceError).name).toBe("InvalidUrl");
    expect((error as SourceError).message).toContain("HLS playlist");
  });

  it("the relay serving the GAB2 AVI, read with the safety flags, touches nothing", async () => {
    const source = await openSource(`${files.origin}/gab2.avi`, "direct", {
      resolution: 720,
      allowPrivate: true,
      maxBytes: 1_000_000,
      deadlineMs: 10_000,
    });
    try {
      for (const tool of ["ffprobe", "ffmpeg"] as const) {
        const result = await touches(tool, safeInputArgs(source.input));
        expect(result).toMatchObject({ readFile: false, connected: false });
      }
    } finally {
      await source.close();
    }
  });
});
