// The `stills` command (sdk/src/cli.ts, issue 37) against the real stack, in a pseudo-terminal
// (util-linux `script`) and without one: `stills frames <url> --count 4 -o DIR` leaves the
// job's four frames in DIR, a progress line is drawn only on a terminal, and the documented exit
// codes come back for bad usage, a bad key, no credits and a failed job. Also login (the key
// stored 0600, STILLS_API_KEY winning over it), jobs list/get and usage, with --json.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { download, type Harness, startHarness } from "../e2e/support/harness.ts";
import { makeFileWithBytes, readImagePattern } from "../support/videos.ts";
import { frameNumberAt, makeSdkVideo } from "./support.ts";

const CLI = fileURLToPath(new URL("../../sdk/src/cli.ts", import.meta.url));

let h: Harness;
let videoUrl: string;
let home: string;

beforeAll(async () => {
  h = await startHarness();
  videoUrl = h.serveVideo("/media/cli.mp4", await makeSdkVideo());
  home = mkdtempSync(join(tmpdir(), "stills-cli-home-"));
});

afterAll(async () => {
  await h?.close();
  rmSync(home, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `stills …` as a user would, with only the environment it is given. */
function stills(
  args: string[],
  options: { key?: string; tty?: boolean; stdin?: string; cwd?: string } = {},
): Promise<Run> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    STILLS_BASE_URL: h.stack.apiUrl,
    ...(options.key !== undefined ? { STILLS_API_KEY: options.key } : {}),
  };
  const command = [process.execPath, CLI, ...args];
  const [file, argv] = options.tty
    ? // script gives the command a pseudo-terminal for stdin, stdout and stderr; -e keeps its code.
      ["script", ["-qfec", command.map(shellQuote).join(" "), "/dev/null"]]
    : [command[0], command.slice(1)];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env, cwd: options.cwd ?? home });
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
    child.stdin.end(options.stdin ?? "");
  });
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The frames in `dir` are the job's: the same bytes as its URLs, each showing its moment. */
async function expectJobFrames(dir: string, key: string) {
  const names = readdirSync(dir).sort();
  expect(names).toEqual(["frame-0001.jpg", "frame-0002.jpg", "frame-0003.jpg", "frame-0004.jpg"]);
  const list = await fetch(`${h.stack.apiUrl}/jobs`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const [summary] = ((await list.json()) as { data: { id: string }[] }).data;
  const job: any = await (
    await fetch(`${h.stack.apiUrl}/jobs/${summary.id}`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  expect(job).toMatchObject({ status: "completed", frames_count: 4 });
  for (const [i, name] of names.entries()) {
    const bytes = readFileSync(join(dir, name));
    const frame = job.frames[i];
    expect(Buffer.compare(bytes, (await download(frame.url)).bytes)).toBe(0);
    expect((await readImagePattern(bytes)).number).toBe(frameNumberAt(frame.timestamp));
  }
  return job;
}

describe("stills frames", () => {
  it("without a terminal: paths on stdout, no progress drawn, the job's 4 frames on disk", async () => {
    const { key } = await h.newKey("starter");
    const out = join(home, "plain");
    const run = await stills(["frames", videoUrl, "--count", "4", "-o", out], { key });
    expect(run.stderr).not.toContain("\r");
    expect(run.stderr).not.toContain("\x1b");
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual(
      [1, 2, 3, 4].map((i) => join(out, `frame-000${i}.jpg`)),
    );
    expect(run.stderr).toMatch(/^4 frames in .* · 1 credit · job [0-9a-f-]{36}\n$/);
    await expectJobFrames(out, key);
  });

  it("in a terminal: a progress line that ends with the downloads, the same 4 frames", async () => {
    const { key } = await h.newKey("starter");
    const out = join(home, "tty");
    const run = await stills(["frames", videoUrl, "--count", "4", "-o", out], { key, tty: true });
    expect(run.code).toBe(0);
    // Everything a terminal shows comes through the pty as stdout.
    expect(run.stdout).toContain("\r\x1b[2K");
    expect(run.stdout).toMatch(/(queued|processing|fetching|probing|extracting)/);
    // The job's own progress (job.progress) fills the bar: all 4 frames once it completed.
    expect(run.stdout).toMatch(/\] 100% completed 4\/4 frames/);
    expect(run.stdout).toContain("downloading 4/4");
    await expectJobFrames(out, key);
  });

  it("--json prints the job and the files", async () => {
    const { key } = await h.newKey("starter");
    const out = join(home, "json");
    const run = await stills(
      ["frames", videoUrl, "--at", "1.5,3", "--format", "png", "-o", out, "--json"],
      {
        key,
      },
    );
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed.job).toMatchObject({ status: "completed", frames_count: 2 });
    expect(printed.files.map((f: { path: string }) => f.path)).toEqual([
      join(out, "frame-0001.png"),
      join(out, "frame-0002.png"),
    ]);
  });

  it("exit 2 for bad usage, with the reason", async () => {
    const run = await stills(["frames", videoUrl, "--count", "4", "--every", "2"], { key: "x" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("choose one of --count, --every");
    const invalid = await stills(["frames", videoUrl, "--every", "0.01"], {
      key: (await h.newKey("starter")).key,
    });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/InvalidRequest, HTTP 400/);
    expect(invalid.stderr).toMatch(/every must be at least 0.1/);
  });

  it("exit 3 for a bad key or none", async () => {
    const bad = await stills(["frames", videoUrl, "--count", "4"], {
      key: `stills_live_${"x".repeat(38)}`,
    });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/InvalidApiKey, HTTP 401/);
    const none = await stills(["usage"]);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/STILLS_API_KEY or run `stills login`/);
  });

  it("exit 4 when the account has no credits", async () => {
    const broke = await h.newKey("free");
    await h.execute(
      `UPDATE accounts SET plan_credits = 0, pack_credits = 0 WHERE email = '${broke.email}'`,
    );
    const run = await stills(["frames", videoUrl, "--count", "4"], { key: broke.key });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/InsufficientBalance, HTTP 402/);
  });

  it("exit 1 when the job fails, saying why", async () => {
    const garbage = await makeFileWithBytes("sdk-not-a-video.mp4", new Uint8Array(4096).fill(7));
    const url = h.serveVideo("/media/not-a-video.mp4", garbage);
    const out = join(home, "failed");
    const run = await stills(["frames", url, "--count", "4", "-o", out], {
      key: (await h.newKey("starter")).key,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /job [0-9a-f-]{36} failed: .+ \((NoVideoFound|ExtractionFailed|DownloadFailed): /,
    );
    expect(() => readdirSync(out)).toThrow();
  });

  it("--help for every command, with the exit codes", async () => {
    for (const args of [
      ["--help"],
      ["frames", "--help"],
      ["jobs", "list", "--help"],
      ["jobs", "get", "-h"],
      ["usage", "--help"],
      ["login", "--help"],
    ]) {
      const run = await stills(args);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage|^stills:/m);
      expect(run.stdout).toContain("5  rate limited (429) after the retries");
    }
    expect((await stills([])).code).toBe(2);
    expect((await stills(["nope"])).code).toBe(2);
  });
});

describe("stills login, jobs, usage", () => {
  it("login checks the key and stores it 0600; STILLS_API_KEY wins over it", async () => {
    const account = await h.newKey("starter");
    const refused = await stills(["login", "--key", `stills_live_${"y".repeat(38)}`]);
    expect(refused.code).toBe(3);
    const file = join(home, ".config", "stills", "config.json");
    expect(() => statSync(file)).toThrow();

    // The key from stdin, as a script pipes it.
    const login = await stills(["login"], { stdin: `${account.key}\n` });
    expect(login.code).toBe(0);
    expect(login.stderr).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, ".config", "stills")).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ api_key: account.key });

    const usage = await stills(["usage", "--json"]);
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ object: "usage", plan: "starter" });
    const overridden = await stills(["usage"], { key: `stills_live_${"z".repeat(38)}` });
    expect(overridden.code).toBe(3);

    const human = await stills(["usage"]);
    expect(human.stdout).toMatch(/^plan {7}starter$/m);
    expect(human.stdout).toMatch(/^credits {4}1500 available/m);

    const logout = await stills(["logout"]);
    expect(logout.code).toBe(0);
    expect(() => statSync(file)).toThrow();
  });

  it("jobs list and jobs get, human and --json", async () => {
    const { key } = await h.newKey("starter");
    const made = await stills(
      ["frames", videoUrl, "--count", "2", "--json", "-o", join(home, "l")],
      {
        key,
      },
    );
    const job = JSON.parse(made.stdout).job;
    const list = await stills(["jobs", "list", "--json"], { key });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((j: { id: string }) => j.id)).toEqual([job.id]);
    const table = await stills(["jobs", "list"], { key });
    expect(table.stdout).toMatch(/^ID +STATUS +CREATED \(UTC\) +FRAMES +CREDITS +URL$/m);
    expect(table.stdout).toContain(`${job.id}  completed`);
    const got = await stills(["jobs", "get", job.id, "--json"], { key });
    expect(JSON.parse(got.stdout)).toMatchObject({ id: job.id, status: "completed" });
    const missing = await stills(["jobs", "get", crypto.randomUUID()], { key });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/JobNotFound, HTTP 404/);
  });
});
