// `npm start` on a machine without ffmpeg, as root: it installs ffmpeg through apt-get (a fake
// that records its calls and then links this machine's real ffmpeg and ffprobe onto the PATH;
// nothing is installed or removed here), says so in one line, brings the stack up, and a job
// on a local file completes with frames from the installed tools. Closing its terminal (SIGHUP)
// then stops it and every process of the stack.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createKey, descendants, freePort, ROOT } from "../../scripts/lib/stack.mjs";
import { fakeBin, pathWithout } from "../scripts/fake-bin.ts";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { alive } from "../support/processes.ts";
import { makeTestVideo } from "../support/videos.ts";

let child: ChildProcess | undefined;
const stateDir = mkdtempSync(join(tmpdir(), "stills-setup-start-"));

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(stateDir, { recursive: true, force: true });
});

describe("npm start on a fresh machine without ffmpeg", () => {
  it("installs ffmpeg as root, says so, starts the stack, and a job completes", async () => {
    const bin = fakeBin();
    bin.add("id", "echo 0");
    bin.add(
      "apt-get",
      `[ "$1" = install ] && /bin/ln -s /usr/bin/ffmpeg /usr/bin/ffprobe "$(/usr/bin/dirname "$0")/"; exit 0`,
    );
    // A current yt-dlp, so start-up has no reason to reach the network.
    const ytdlp = bin.add("yt-dlp-current", "echo 2026.11.01");
    const port = await freePort();
    const env = {
      ...process.env,
      PATH: `${bin.dir}:${pathWithout(["ffmpeg", "ffprobe", "apt-get", "id", "yt-dlp"])}`,
      PORT: String(port),
      STILLS_STATE_DIR: stateDir,
      STILLS_ALLOW_PRIVATE_NETWORK: "1",
      STILLS_YTDLP: ytdlp,
      EXTRACTOR_LOG: "info",
    };
    child = spawn(process.execPath, [join(ROOT, "scripts/start.mjs")], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (c) => {
      stdout += c;
    });
    child.stderr?.on("data", (c) => {
      stderr += c;
    });
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (stdout.includes("Stills API listening on")) {
          clearInterval(check);
          resolve();
        } else if (child?.exitCode !== null) {
          clearInterval(check);
          reject(new Error(`npm start exited ${child?.exitCode}:\n${stdout}\n${stderr}`));
        }
      }, 200);
    });

    const said = stderr.split("\n").filter((l) => l.includes("installing Debian's ffmpeg"));
    expect(said).toEqual([
      "ffmpeg and ffprobe not found: installing Debian's ffmpeg (apt-get update && apt-get install -y --no-install-recommends ffmpeg)",
    ]);
    expect(bin.calls().filter((c) => c.startsWith("apt-get") && !c.includes("--version"))).toEqual([
      "apt-get update -qq DEBIAN_FRONTEND=noninteractive",
      "apt-get install -y --no-install-recommends ffmpeg -qq DEBIAN_FRONTEND=noninteractive",
    ]);
    expect(stdout).toContain(`yt-dlp 2026.11.01: ${ytdlp}`);

    const videos = await startTestServer();
    try {
      const file = await makeTestVideo({ width: 320, height: 180, fps: 30, durationSeconds: 4 });
      videos.route("/clip.mp4", fileRoute(file, { ranges: true, contentType: "video/mp4" }));
      // Through the running stack's development route: no wrangler spawned.
      const secrets = JSON.parse(readFileSync(join(stateDir, "secrets.json"), "utf8"));
      const { key } = await createKey({
        email: `${crypto.randomUUID()}@example.com`,
        stack: { baseUrl: `http://127.0.0.1:${port}`, secrets },
      });
      const res = await fetch(`http://127.0.0.1:${port}/v1/jobs?wait=true`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${videos.origin}/clip.mp4`, count: 2, format: "png" }),
      });
      const job = (await res.json()) as { status: string; frames: { url: string }[] };
      expect(res.status).toBe(201);
      expect(job.status).toBe("completed");
      expect(job.frames).toHaveLength(2);
      const frame = await fetch(job.frames[0].url);
      expect(frame.headers.get("content-type")).toBe("image/png");
      const bytes = new Uint8Array(await frame.arrayBuffer());
      expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    } finally {
      await videos.close();
    }
  });

  it("stops, with every process of its stack, when its terminal closes (SIGHUP)", async () => {
    const started = child;
    if (!started?.pid || started.exitCode !== null) throw new Error("npm start is not running");
    const stackProcesses = await descendants(started.pid);
    // wrangler dev, its workerd, the extractor and the client-address proxy at least.
    expect(stackProcesses.length).toBeGreaterThanOrEqual(4);
    const exited = new Promise<number | null>((r) => started.once("exit", (code) => r(code)));
    started.kill("SIGHUP");
    expect(await exited).toBe(0);
    await expect
      .poll(() => stackProcesses.filter(alive), { timeout: 15_000, interval: 200 })
      .toEqual([]);
  });
});
