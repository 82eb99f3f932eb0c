// `stills frames --best --animated gif` (issue 39) against the shared stack: the best frame of
// the quality clip (its crisp stretch) and the job's looping preview land in the directory;
// a bad --animated value is a usage error before any request.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../e2e/support/harness.ts";
import { qualityClip, stretchAt } from "../support/quality-clip.ts";

const CLI = fileURLToPath(new URL("../../sdk/src/cli.ts", import.meta.url));

let h: Harness;
let clipUrl: string;
let home: string;

beforeAll(async () => {
  h = await startHarness();
  clipUrl = h.serveVideo("/media/cli-best.mp4", await qualityClip());
  home = mkdtempSync(join(tmpdir(), "stills-cli-best-"));
}, 120_000);

afterAll(async () => {
  await h?.close();
  rmSync(home, { recursive: true, force: true });
});

function stills(args: string[], key: string) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    STILLS_BASE_URL: h.stack.apiUrl,
    STILLS_API_KEY: key,
  };
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, cwd: home });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

describe("stills frames --best --animated", { timeout: 120_000 }, () => {
  it("downloads the best frame and the job's looping preview", async () => {
    const { key } = await h.newKey("starter");
    const dir = join(home, "best");
    const run = await stills(
      [
        "frames",
        clipUrl,
        "--best",
        "--count",
        "2",
        "--animated",
        "gif",
        "--animated-duration",
        "1",
        "-o",
        dir,
        "--json",
      ],
      key,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const { job } = JSON.parse(run.stdout);
    expect(job.options).toMatchObject({ mode: "best", count: 2 });
    expect(stretchAt(job.frames[0].timestamp)).toBe("crisp");
    expect(readdirSync(dir).sort()).toEqual(["frame-0001.jpg", "frame-0002.jpg", "preview.gif"]);
    const preview = readFileSync(join(dir, "preview.gif"));
    expect(preview.length).toBe(job.animated.bytes);
    const meta = await sharp(preview, { animated: true }).metadata();
    expect(meta).toMatchObject({ format: "gif", loop: 0, pages: job.animated.frames });
  });

  it("refuses --animated that is neither webp nor gif", async () => {
    const run = await stills(["frames", clipUrl, "--animated", "mp4"], "stills_live_unused");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--animated takes webp or gif");
  });
});
