// ffmpeg, ffprobe and yt-dlp run as an unprivileged user of their own when one is configured
// (the container image's stills-media): a compromised decoder then cannot read the extractor's
// environment (INTERNAL_TOKEN). The switch needs root, so the tests that switch users run only
// as root; the last one runs the service exactly as the image does (its bundle, under
// extractor/Dockerfile's setpriv line: root holding only SETUID, SETGID and KILL).
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startTool } from "../../extractor/ffmpeg/process.ts";
import {
  chooseMediaUser,
  mediaSpawnOptions,
  useMediaIdentity,
} from "../../extractor/media-sandbox.ts";
import { OWNER_MARKER, processStartTime } from "../../extractor/owner.ts";
import { buildExtractor, EXTRACTOR_MAIN } from "../../scripts/build-extractor.mjs";
import { extractorMallocEnv, freePort, ROOT } from "../../scripts/lib/stack.mjs";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { hugePageMarked, hugePageMode, markedProcesses } from "../support/processes.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { resultFor, startFakeEdge } from "./fake-edge.ts";

const NOBODY = { uid: 65534, gid: 65534, label: "65534:65534" };
const asRoot = process.getuid?.() === 0;

function status(pid: number): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
    const [name, ...value] = line.split(":");
    fields[name] = value.join(":").trim();
  }
  return fields;
}

const DOCKERFILE = readFileSync(join(ROOT, "extractor/Dockerfile"), "utf8");

/** A variable the image's Dockerfile sets with ENV. */
function imageEnv(name: string): string {
  const value = new RegExp(`^\\s*(?:ENV\\s+)?${name}=(\\S+)`, "m").exec(DOCKERFILE)?.[1];
  if (!value) throw new Error(`extractor/Dockerfile sets no ${name}`);
  return value;
}

afterEach(() => useMediaIdentity(null));

describe("choosing the media user", () => {
  const passwd = () =>
    "root:x:0:0::/root:/bin/sh\nstills-media:x:999:998::/nonexistent:/sbin/nologin\n";

  it("takes the image's stills-media user when running as root and it exists", () => {
    expect(chooseMediaUser(undefined, 0, passwd)).toMatchObject({
      identity: { uid: 999, gid: 998, label: "stills-media" },
    });
  });

  it("warns and runs as itself otherwise, or when told to", () => {
    expect(chooseMediaUser(undefined, 0, () => "root:x:0:0::/:/bin/sh")).toMatchObject({
      identity: null,
      warn: true,
      why: expect.stringMatching(/no stills-media user/),
    });
    expect(chooseMediaUser(undefined, 1000, passwd)).toMatchObject({ identity: null, warn: true });
    expect(chooseMediaUser("self", 0, passwd)).toMatchObject({ identity: null, warn: false });
  });

  it("takes a named user or uid:gid, and refuses a name that does not exist", () => {
    expect(chooseMediaUser("stills-media", 1000, passwd).identity).toMatchObject({ uid: 999 });
    expect(chooseMediaUser("123:456", 1000, passwd).identity).toEqual({
      uid: 123,
      gid: 456,
      label: "123:456",
    });
    expect(() => chooseMediaUser("nosuchuser", 0, passwd)).toThrow(/does not exist/);
  });
});

describe.skipIf(!asRoot)("media tools as another user (needs root)", () => {
  it("ffmpeg runs as that user, without capabilities, secrets or supplementary groups", async () => {
    process.env.INTERNAL_TOKEN ??= "secret-of-the-test-process";
    useMediaIdentity(NOBODY);
    const tool = startTool("ffmpeg", [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "testsrc=size=64x64:rate=5",
      "-t",
      "120",
      "-f",
      "null",
      "-",
    ]);
    try {
      const pid = await runningMarked("ffmpeg");
      const seen = status(pid);
      expect(seen.Uid.split(/\s+/)).toEqual(["65534", "65534", "65534", "65534"]);
      expect(seen.Gid.split(/\s+/)).toEqual(["65534", "65534", "65534", "65534"]);
      expect(seen.CapEff).toBe("0000000000000000");
      expect(seen.Groups).toBe("");
      const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
      expect(environ).not.toContain(process.env.INTERNAL_TOKEN);
      expect(environ).toContain(`${OWNER_MARKER}=`);
    } finally {
      tool.kill();
    }
    // Another user's group, still ours to end.
    expect((await tool.exited).signal).toBe("SIGKILL");
  });

  it("a process started that way cannot read the extractor's environment", async () => {
    useMediaIdentity(NOBODY);
    const child = spawn("sh", ["-c", `cat /proc/${process.pid}/environ`], {
      ...mediaSpawnOptions({ PATH: process.env.PATH ?? "/usr/bin:/bin" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).not.toBe(0);
    expect(out).toBe("");
    expect(err).toMatch(/Permission denied/);
  });
});

/** The pid of our running media tool, found by its mark once it has started. */
async function runningMarked(command: string): Promise<number> {
  const mine = `${process.pid}.${processStartTime(process.pid)}`;
  for (let i = 0; i < 100; i++) {
    const found = markedProcesses(mine).find((p) => p.split(" ")[1]?.endsWith(command));
    if (found) return Number(found.split(" ")[0]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no marked ${command} is running`);
}

describe("the image's extractor", () => {
  it("has the malloc settings the local stack and the bench give it", () => {
    const stack = extractorMallocEnv({});
    expect(Object.keys(stack).sort()).toEqual(
      ["GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"].sort(),
    );
    for (const [name, value] of Object.entries(stack)) expect(imageEnv(name), name).toBe(value);
  });

  it("is the bundle the build script writes, built in its own stage and started by CMD", () => {
    // The stack the tests start runs that file (startStack); the image must run the same one.
    const bundle = relative(ROOT, EXTRACTOR_MAIN);
    expect(DOCKERFILE).toMatch(
      /^FROM \S+ AS build$[\s\S]*^RUN node scripts\/build-extractor\.mjs$/m,
    );
    expect(DOCKERFILE).toContain(`COPY --from=build /app/${dirname(bundle)} ./${dirname(bundle)}`);
    expect(DOCKERFILE).toMatch(
      new RegExp(`^CMD \\["node", "${bundle.replaceAll(".", "\\.")}"\\]$`, "m"),
    );
  });
});

describe.skipIf(!asRoot)("the service as the image runs it (needs root)", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  it("runs jobs with root's rights cut to SETUID, SETGID and KILL, its tools as the media user", async () => {
    const edge = await startFakeEdge("image-token");
    const origin = await startTestServer();
    origin.route(
      "/short.mp4",
      fileRoute(await makeTestVideo({ durationSeconds: 3 }), { ranges: true }),
    );
    origin.route(
      "/long.mp4",
      // 900 PNG frames of 720p: well past a 3 s deadline on any machine (900 of 360p no longer
      // were once frames reached the extractor through a socket pair).
      fileRoute(
        await makeTestVideo({ width: 1280, height: 720, fps: 30, durationSeconds: 90, gop: 60 }),
        { ranges: true },
      ),
    );
    const port = await freePort();
    await buildExtractor();
    const child = spawn(
      "setpriv",
      [
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all,+setuid,+setgid,+kill",
        "--",
        process.execPath,
        EXTRACTOR_MAIN,
      ],
      {
        env: {
          PATH: process.env.PATH,
          INTERNAL_TOKEN: "image-token",
          EXTRACTOR_PORT: String(port),
          EXTRACTOR_MEDIA_USER: "65534:65534",
          EXTRACTOR_JOB_TIMEOUT_SECONDS: "3",
          STILLS_ALLOW_PRIVATE_NETWORK: "1",
          EXTRACTOR_LOG: "silent",
          // The image's malloc settings (checked above to be the stack's).
          ...extractorMallocEnv({}),
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    children.push(child);
    let log = "";
    child.stderr?.on("data", (chunk) => {
      log += chunk;
    });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const extractor = status(child.pid as number);
    expect(extractor.CapEff).toBe("00000000000000e0");
    expect(extractor.NoNewPrivs).toBe("1");
    const owner = `${child.pid}.${processStartTime(child.pid as number)}`;
    // POST /extract answers 202 and runs the job in the background: a job ends with its result.
    const post = async (path: string, options: Record<string, unknown>) => {
      const jobId = crypto.randomUUID();
      const answer = await fetch(`${url}/extract`, {
        method: "POST",
        headers: { authorization: "Bearer image-token", "content-type": "application/json" },
        body: JSON.stringify({
          job_id: jobId,
          kind: "job",
          tenant: `account:${path}`,
          url: `${origin.origin}${path}`,
          platform: "direct",
          options: { format: "jpg", resolution: 360, output: "urls", ...options },
          max_video_seconds: 900,
          clip_to_max: false,
          max_frames: 1000,
          callback: { base_url: edge.baseUrl, token: edge.token },
        }),
      });
      expect(answer.status, log).toBe(202);
      return resultFor(edge, jobId, 60_000);
    };
    try {
      expect((await post("/short.mp4", { mode: "count", count: 3 }))?.status, log).toBe(
        "completed",
      );
      const short = edge.results.at(-1);
      const numbers = await Promise.all(
        (short?.frames ?? []).map(
          async (f) =>
            (await readImagePattern(edge.files.get(f.key ?? "")?.bytes as Buffer)).number,
        ),
      );
      expect(numbers).toEqual([15, 45, 75]);

      // A long job: its tools are watched while they run, then killed at the 3 s deadline.
      const long = post("/long.mp4", { mode: "interval", every: 0.1, format: "png" });
      const seen = new Map<number, Record<string, string>>();
      const environs = new Map<number, string[]>();
      const askedForHugePages = new Set<number>();
      let finished = false;
      void long.finally(() => {
        finished = true;
      });
      while (!finished) {
        for (const found of markedProcesses(owner)) {
          const pid = Number(found.split(" ")[0]);
          try {
            seen.set(pid, status(pid));
            // Its environment is fixed at exec; the mark, once made, stays: each read until seen.
            if (!environs.has(pid)) {
              environs.set(pid, readFileSync(`/proc/${pid}/environ`, "latin1").split("\0"));
            }
            if (
              !askedForHugePages.has(pid) &&
              hugePageMarked(readFileSync(`/proc/${pid}/smaps`, "latin1")).length > 0
            ) {
              askedForHugePages.add(pid);
            }
          } catch {}
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await long)?.status).toBe("failed");
      expect(edge.results.at(-1)?.error?.message).toMatch(/took longer than its [\d.]+ s deadline/);
      expect(seen.size).toBeGreaterThan(0);
      for (const tool of seen.values()) {
        expect(tool.Uid.split(/\s+/)[0]).toBe("65534");
        expect(tool.CapEff).toBe("0000000000000000");
        expect(tool.NoNewPrivs).toBe("1");
      }
      // Their whole environment: the PATH, a locale, the image's malloc tunables and our mark.
      expect(environs.size).toBeGreaterThan(0);
      for (const environ of environs.values()) {
        expect(
          environ
            .filter(Boolean)
            .map((v) => v.split("=")[0])
            .sort(),
        ).toEqual(["GLIBC_TUNABLES", "LANG", OWNER_MARKER, "PATH"].sort());
        expect(environ).toContain(`GLIBC_TUNABLES=${imageEnv("GLIBC_TUNABLES")}`);
      }
      // ...which the sandboxed ffmpeg's glibc acts on, where the kernel gives huge pages on request.
      if (hugePageMode() === "madvise") expect(askedForHugePages.size).toBeGreaterThan(0);
      // Killed across users with only CAP_KILL: nothing of the job is left running.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(markedProcesses(owner)).toEqual([]);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
      await origin.close();
      await edge.close();
    }
  }, 120_000);
});
