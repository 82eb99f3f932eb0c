// A current yt-dlp for `npm start`: an old copy is replaced by the release fetched from a
// local stand-in for GitHub's release host (the base URL is a parameter), installed only when
// its SHA-256 is the published one; without a network the stack starts with a warning.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/lib/stack.mjs";
import {
  chooseYtDlp,
  MAX_AGE_DAYS,
  publishedSha256,
  releaseDate,
} from "../../scripts/lib/ytdlp.mjs";
import { fakeBin } from "../scripts/fake-bin.ts";

const NOW = new Date("2026-11-23T12:00:00Z");
// What the release host serves: a "yt-dlp" that runs without python and reports a current date.
const RELEASE = Buffer.from("#!/bin/sh\necho 2026.11.01\n");
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

let server: Server;
let base: string;
const requests: string[] = [];
// Per test: what SHA2-256SUMS says.
let sums = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    if (req.url === "/download/yt-dlp") res.end(RELEASE);
    else if (req.url === "/download/SHA2-256SUMS") res.end(sums);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/download`;
});
afterAll(() => new Promise((r) => server.close(r)));

function setUp(installed: string | null) {
  const bin = fakeBin();
  if (installed) bin.add("yt-dlp", `echo ${installed}`);
  const cacheDir = join(bin.dir, "cache");
  const said: string[] = [];
  requests.length = 0;
  const choose = (releaseBase = base, env: Record<string, string> = {}) =>
    chooseYtDlp({
      env: { PATH: bin.dir, ...env },
      cacheDir,
      releaseBase,
      now: NOW,
      timeoutMs: 5_000,
      say: (line: string) => said.push(line),
    });
  return { bin, cacheDir, said, choose };
}

describe("yt-dlp at start-up", () => {
  it("reads versions as release dates", () => {
    expect(releaseDate("2023.03.04")?.toISOString()).toBe("2023-03-04T00:00:00.000Z");
    expect(releaseDate("2025.01.15.232805")?.toISOString()).toBe("2025-01-15T00:00:00.000Z");
    expect(releaseDate("unknown")).toBeUndefined();
    const line = `${sha(RELEASE)}  yt-dlp\n${"0".repeat(64)}  yt-dlp.exe\n`;
    expect(publishedSha256(line, "yt-dlp")).toBe(sha(RELEASE));
    expect(publishedSha256(line, "yt-dlp_linux")).toBeUndefined();
  });

  it("keeps a current yt-dlp from the PATH without touching the network", async () => {
    const { said, choose } = setUp("2026.10.01");
    const chosen = await choose();
    expect(chosen).toEqual({ path: "yt-dlp", version: "2026.10.01", source: "configured" });
    expect(requests).toEqual([]);
    expect(said).toEqual([]);
  });

  it(`replaces one older than ${MAX_AGE_DAYS} days by the release whose SHA-256 is published`, async () => {
    sums = `${"1".repeat(64)}  yt-dlp.exe\n${sha(RELEASE)}  yt-dlp\n`;
    const { cacheDir, said, choose } = setUp("2023.03.04");
    const chosen = await choose();
    const installed = join(cacheDir, "yt-dlp");
    expect(chosen).toEqual({ path: installed, version: "2026.11.01", source: "fetched" });
    expect(readFileSync(installed).equals(RELEASE)).toBe(true);
    expect(statSync(installed).mode & 0o777).toBe(0o755);
    expect(readdirSync(cacheDir)).toEqual(["yt-dlp"]);
    expect(requests.sort()).toEqual(["/download/SHA2-256SUMS", "/download/yt-dlp"]);
    expect(said).toEqual([
      `yt-dlp 2023.03.04 is older than ${MAX_AGE_DAYS} days: fetching the current release into ${cacheDir}`,
    ]);

    // The next start uses the cached copy and asks the network nothing.
    requests.length = 0;
    const again = await chooseYtDlp({
      env: { PATH: join(cacheDir, "..") },
      cacheDir,
      releaseBase: base,
      now: NOW,
      say: () => {},
    });
    expect(again).toEqual({ path: installed, version: "2026.11.01", source: "cache" });
    expect(requests).toEqual([]);
  });

  it("refuses a download whose SHA-256 is not the published one, and starts with the old copy", async () => {
    sums = `${sha(Buffer.from("something else"))}  yt-dlp\n`;
    const { cacheDir, said, choose } = setUp("2023.03.04");
    const chosen = await choose();
    expect(chosen.path).toBe("yt-dlp");
    expect(chosen.source).toBe("outdated");
    expect(existsSync(join(cacheDir, "yt-dlp"))).toBe(false);
    expect(said).toHaveLength(2);
    expect(said[1]).toMatch(/^yt-dlp: could not fetch the current release \(checksum mismatch/);
    expect(said[1]).toContain("pip install -U yt-dlp");
    expect(said[1]).toContain("STILLS_YTDLP");
  });

  it("refuses a release with no published hash for yt-dlp", async () => {
    sums = `${sha(RELEASE)}  yt-dlp_linux\n`;
    const { cacheDir, said, choose } = setUp("2023.03.04");
    await choose();
    expect(existsSync(join(cacheDir, "yt-dlp"))).toBe(false);
    expect(said[1]).toContain("SHA2-256SUMS lists no hash for yt-dlp");
  });

  it("without a network warns in one line and starts with what it has", async () => {
    const closed = `http://127.0.0.1:${await freePort()}/download`;
    const { said, choose } = setUp("2023.03.04");
    const chosen = await choose(closed);
    expect(chosen).toMatchObject({ path: "yt-dlp", version: "2023.03.04", source: "outdated" });
    expect(said[1]).toMatch(
      /^yt-dlp: could not fetch the current release \(ECONNREFUSED\); using yt-dlp/,
    );
    expect(said[1].includes("\n")).toBe(false);
  });

  it("with no yt-dlp at all and no network, says platform links will fail", async () => {
    const closed = `http://127.0.0.1:${await freePort()}/download`;
    const { said, choose } = setUp(null);
    const chosen = await choose(closed);
    expect(chosen.path).toBeUndefined();
    expect(chosen.source).toBe("none");
    expect(said[0]).toMatch(/^no yt-dlp: fetching/);
    expect(said[1]).toContain("platform links will fail");
  });

  it("checks STILLS_YTDLP's age too, and keeps it when current", async () => {
    const { bin, choose } = setUp(null);
    const mine = bin.add("my-yt-dlp", "echo 2026.09.30");
    expect(await choose(base, { STILLS_YTDLP: mine })).toEqual({
      path: mine,
      version: "2026.09.30",
      source: "configured",
    });
    const old = bin.add("old-yt-dlp", "echo 2024.01.01");
    sums = `${sha(RELEASE)}  yt-dlp\n`;
    expect((await choose(base, { STILLS_YTDLP: old })).source).toBe("fetched");
  });
});
