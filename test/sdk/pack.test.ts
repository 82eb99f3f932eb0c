// The package as npm ships it (issue 37): `npm pack` of sdk/ installed into an empty folder,
// offline. A consumer's script imports "@stills/sdk" and creates a job with wait, on the
// machine's own Node (not the repository's); the `stills` bin downloads a count-4 job's frames;
// and a consumer's TypeScript compiles against the shipped declarations.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../e2e/support/harness.ts";
import { makeSdkVideo } from "./support.ts";

const SDK = fileURLToPath(new URL("../../sdk", import.meta.url));
const TSC = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
// The machine's Node (Debian's, older than the repository's 22) where there is one.
const SYSTEM_NODE = existsSync("/usr/bin/node") ? "/usr/bin/node" : process.execPath;

let h: Harness;
let app: string;
let videoUrl: string;

function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      // HOME is the app folder: npm keeps its cache there, never in the checkout.
      env: { PATH: process.env.PATH ?? "", HOME: app, ...options.env },
    });
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

beforeAll(async () => {
  h = await startHarness();
  videoUrl = h.serveVideo("/media/pack.mp4", await makeSdkVideo());
  app = mkdtempSync(join(tmpdir(), "stills-pack-"));
  const npm = join(process.execPath, "../npm");
  const npmCli = existsSync(npm) ? npm : "npm";
  const packed = await run(npmCli, ["pack", "--pack-destination", app, "--json"], { cwd: SDK });
  expect(packed.code, packed.stderr).toBe(0);
  const [{ filename }] = JSON.parse(packed.stdout) as { filename: string }[];
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module" }),
  );
  const installed = await run(
    npmCli,
    ["install", "--offline", "--no-audit", "--no-fund", join(app, filename)],
    { cwd: app },
  );
  expect(installed.code, installed.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await h?.close();
  if (app) rmSync(app, { recursive: true, force: true });
});

describe("the packed @stills/sdk, installed in an empty folder", () => {
  it("ships the built package, its bin, README and CHANGELOG, and no sources or tests", () => {
    const root = join(app, "node_modules/@stills/sdk");
    const files = readdirSync(root, { recursive: true }).map(String).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        "README.md",
        "CHANGELOG.md",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cli.js",
      ]),
    );
    expect(files.filter((f) => f.startsWith("src") || f.startsWith("python"))).toEqual([]);
    expect(
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies,
    ).toBeUndefined();
  });

  it("a ten-line script creates a job with wait", async () => {
    const { key } = await h.newKey("starter");
    writeFileSync(
      join(app, "make-job.mjs"),
      `import { Stills } from "@stills/sdk";
const stills = new Stills(); // STILLS_API_KEY, STILLS_BASE_URL
const job = await stills.jobs.create({ url: process.argv[2], count: 4 }, { wait: true });
console.log(JSON.stringify({ id: job.id, status: job.status, frames: job.frames.length }));
`,
    );
    const result = await run(SYSTEM_NODE, ["make-job.mjs", videoUrl], {
      cwd: app,
      env: { STILLS_API_KEY: key, STILLS_BASE_URL: h.stack.apiUrl },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed", frames: 4 });
  });

  it("the stills bin downloads a count-4 job's frames", async () => {
    const { key } = await h.newKey("starter");
    const result = await run(
      SYSTEM_NODE,
      ["node_modules/.bin/stills", "frames", videoUrl, "--count", "4", "-o", "out"],
      { cwd: app, env: { STILLS_API_KEY: key, STILLS_BASE_URL: h.stack.apiUrl } },
    );
    expect(result.code, result.stderr).toBe(0);
    const names = readdirSync(join(app, "out")).sort();
    expect(names).toEqual(["frame-0001.jpg", "frame-0002.jpg", "frame-0003.jpg", "frame-0004.jpg"]);
    for (const name of names) {
      expect([...readFileSync(join(app, "out", name)).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    }
  });

  it("compiles a TypeScript consumer against the shipped declarations", async () => {
    writeFileSync(
      join(app, "consumer.ts"),
      `import { type Job, Stills, StillsError, type WebhookEvent } from "@stills/sdk";
const stills = new Stills({ apiKey: "k", baseUrl: "http://127.0.0.1/v1" });
export async function first(): Promise<Job["status"] | undefined> {
  for await (const job of stills.jobs.list({ status: "completed" })) return job.status;
  return undefined;
}
export function name(error: unknown): string | undefined {
  return error instanceof StillsError ? error.data.name : undefined;
}
export type Kind = WebhookEvent["type"];
`,
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          lib: ["es2022", "dom"],
          types: [],
        },
        files: ["consumer.ts"],
      }),
    );
    const result = await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: app });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
  });
});
