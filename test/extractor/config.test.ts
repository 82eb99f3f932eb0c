// The extractor's settings (extractor/config.ts): every variable read once at start, with one
// default each, a bad value refused with its name; and the log lines (extractor/log.ts) carry
// the request and job context set once around the work.
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultConcurrency, loadConfig } from "../../extractor/config.ts";
import { mediaToolEnv, setMediaToolPaths, toolPath } from "../../extractor/ffmpeg/process.ts";
import { log, logContext, setLogLevel, withLogContext } from "../../extractor/log.ts";
import { extractorMallocEnv } from "../../scripts/lib/stack.mjs";
import { hugePageMarked, hugePageMode } from "../support/processes.ts";

const TOKEN = { INTERNAL_TOKEN: "t".repeat(32) };

function linesWritten(fn: () => Promise<void> | void) {
  const written: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  return Promise.resolve(fn())
    .finally(() => spy.mockRestore())
    .then(() => written.map((line) => JSON.parse(line) as Record<string, unknown>));
}

afterEach(() => setLogLevel("silent"));

describe("extractor settings", () => {
  it("have one default each", () => {
    const config = loadConfig(TOKEN);
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8788,
      waitingLimit: 64,
      tenantWaitingLimit: 32,
      mediaNice: 19,
      deadlineSeconds: 900,
      allowPrivate: false,
      mediaTools: { ffmpeg: "ffmpeg", ffprobe: "ffprobe" },
      ytdlp: "yt-dlp",
      ytdlpExtraArgs: [],
      logLevel: "info",
      // Only the local stack's children, whose stdin is its lifeline, stop when stdin closes.
      stopWithParent: false,
    });
  });

  it("run one attempt per core by default, fewer where memory is short", () => {
    const config = loadConfig(TOKEN);
    expect(config.concurrency).toBeGreaterThanOrEqual(1);
    expect(config.concurrency).toBeLessThanOrEqual(availableParallelism());
    expect(config.newcomerSlots).toBe(config.concurrency);
    const GiB = 1024 ** 3;
    expect(defaultConcurrency(2, 8 * GiB)).toBe(2); // production's standard-3
    expect(defaultConcurrency(16, 4 * GiB)).toBe(8); // half a gigabyte each
    expect(defaultConcurrency(4, 256 * 1024 ** 2)).toBe(1); // never none
    const set = loadConfig({
      ...TOKEN,
      EXTRACTOR_CONCURRENCY: "3",
      EXTRACTOR_WAITING_LIMIT: "10",
      EXTRACTOR_TENANT_WAITING_LIMIT: "4",
      EXTRACTOR_NEWCOMER_SLOTS: "0",
      EXTRACTOR_MEDIA_NICE: "0",
    });
    expect(set).toMatchObject({
      concurrency: 3,
      waitingLimit: 10,
      tenantWaitingLimit: 4,
      newcomerSlots: 0,
      mediaNice: 0,
    });
    expect(() => loadConfig({ ...TOKEN, EXTRACTOR_MEDIA_NICE: "20" })).toThrow(
      /EXTRACTOR_MEDIA_NICE/,
    );
    expect(() => loadConfig({ ...TOKEN, EXTRACTOR_CONCURRENCY: "0" })).toThrow(
      /EXTRACTOR_CONCURRENCY/,
    );
  });

  it("take the media tools, yt-dlp and the log level from their variables", () => {
    const config = loadConfig({
      ...TOKEN,
      FFMPEG_PATH: "/opt/ffmpeg/bin/ffmpeg",
      FFPROBE_PATH: "/opt/ffmpeg/bin/ffprobe",
      STILLS_YTDLP: "/cache/yt-dlp",
      STILLS_YTDLP_EXTRA_ARGS: "  --proxy  socks5://127.0.0.1:1080 ",
      EXTRACTOR_LOG: "debug",
      STILLS_ALLOW_PRIVATE_NETWORK: "1",
      EXTRACTOR_STOP_WITH_PARENT: "1",
    });
    expect(config.mediaTools).toEqual({
      ffmpeg: "/opt/ffmpeg/bin/ffmpeg",
      ffprobe: "/opt/ffmpeg/bin/ffprobe",
    });
    expect(config.ytdlp).toBe("/cache/yt-dlp");
    expect(config.ytdlpExtraArgs).toEqual(["--proxy", "socks5://127.0.0.1:1080"]);
    expect(config.logLevel).toBe("debug");
    expect(config.allowPrivate).toBe(true);
    expect(config.stopWithParent).toBe(true);
  });

  it("refuse bad values with their names, and a missing token", () => {
    expect(() => loadConfig({ ...TOKEN, EXTRACTOR_LOG: "verbose" })).toThrow(
      /^extractor settings: EXTRACTOR_LOG /,
    );
    expect(() =>
      loadConfig({ ...TOKEN, EXTRACTOR_PORT: "70000", STILLS_ALLOW_PRIVATE_NETWORK: "yes" }),
    ).toThrow(/EXTRACTOR_PORT .*; STILLS_ALLOW_PRIVATE_NETWORK /);
    expect(() => loadConfig({ ...TOKEN, EXTRACTOR_STOP_WITH_PARENT: "yes" })).toThrow(
      /^extractor settings: EXTRACTOR_STOP_WITH_PARENT /,
    );
    expect(() => loadConfig({})).toThrow(/INTERNAL_TOKEN is not set/);
  });

  it("are handed to the media tools once, not read from the environment per call", () => {
    process.env.FFMPEG_PATH = "/not/this/one";
    try {
      setMediaToolPaths({ ffmpeg: "/usr/bin/ffmpeg", ffprobe: "/usr/bin/ffprobe" });
      expect(toolPath("ffmpeg")).toBe("/usr/bin/ffmpeg");
      expect(toolPath("ffprobe")).toBe("/usr/bin/ffprobe");
    } finally {
      delete process.env.FFMPEG_PATH;
      setMediaToolPaths({ ffmpeg: "ffmpeg", ffprobe: "ffprobe" });
    }
  });
});

describe("the media tools' environment", () => {
  it("is the PATH, a locale and the extractor's GLIBC_TUNABLES, and nothing else", () => {
    const extractor = {
      PATH: "/opt/media/bin:/usr/bin",
      HOME: "/root",
      ...TOKEN,
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
    };
    expect(mediaToolEnv(extractor)).toEqual({
      PATH: "/opt/media/bin:/usr/bin",
      LANG: "C.UTF-8",
      GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
    });
    expect(mediaToolEnv({ ...TOKEN })).toEqual({ PATH: "/usr/bin:/bin", LANG: "C.UTF-8" });
  });
});

describe.skipIf(hugePageMode() !== "madvise")(
  "the extractor's malloc settings (decision 0374)",
  () => {
    // A Node holding a 64 MiB buffer, written once: the sizes of its mappings marked for huge
    // pages (the mark is ours; whether the kernel found free huge pages depends on the machine).
    const marked = (env: NodeJS.ProcessEnv) => {
      const script = `const b = Buffer.allocUnsafe(64 << 20); b.fill(1);
      const fs = require("fs");
      process.stdout.write(JSON.stringify({ byte: b[12345], smaps: fs.readFileSync("/proc/self/smaps", "utf8") }));`;
      const out = JSON.parse(
        execFileSync(process.execPath, ["-e", script], { env, encoding: "utf8" }),
      );
      expect(out.byte).toBe(1);
      return hugePageMarked(out.smaps);
    };

    it("mark a frame buffer's mapping for transparent huge pages, which glibc alone does not", () => {
      const base = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
      const ours = marked({ ...base, ...extractorMallocEnv({}) });
      expect(ours.some((kb) => kb >= 64 * 1024)).toBe(true);
      const without = marked({
        ...base,
        ...extractorMallocEnv({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=0" }),
      });
      expect(without).toEqual([]);
    });
  },
);

describe("extractor log lines", () => {
  it("carry the request and job context through awaits, without the calls passing it", async () => {
    setLogLevel("info");
    const lines = await linesWritten(async () => {
      await withLogContext({ request: "req-1", job: "job-1" }, async () => {
        await new Promise((r) => setTimeout(r, 1));
        await withLogContext({ attempt: "att-1" }, async () => {
          log("info", "source.resolved", { kind: "direct" });
          expect(logContext()).toEqual({ request: "req-1", job: "job-1", attempt: "att-1" });
        });
        log("warn", "later");
      });
      log("info", "outside");
    });
    expect(lines.map(({ time, ...rest }) => rest)).toEqual([
      {
        level: "info",
        side: "extractor",
        message: "source.resolved",
        request: "req-1",
        job: "job-1",
        attempt: "att-1",
        kind: "direct",
      },
      { level: "warn", side: "extractor", message: "later", request: "req-1", job: "job-1" },
      { level: "info", side: "extractor", message: "outside" },
    ]);
  });

  it("follow the level set at start", async () => {
    setLogLevel("info");
    expect(await linesWritten(() => log("debug", "hidden"))).toEqual([]);
    setLogLevel("debug");
    expect((await linesWritten(() => log("debug", "shown")))[0].message).toBe("shown");
    setLogLevel("silent");
    expect(await linesWritten(() => log("error", "hidden too"))).toEqual([]);
  });
});
