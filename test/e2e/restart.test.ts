// The local contract: a key from the admin command works with both headers on the stack
// `npm start` runs, and the stack keeps its state (jobs, files, keys) across a restart.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort, ROOT, readLocalD1, type Stack, startStack } from "../../scripts/lib/stack.mjs";
import { fileRoute, startTestServer } from "../sources/support/servers.ts";
import { makeTestVideo, readImagePattern } from "../support/videos.ts";
import { call, download } from "./support/harness.ts";

const stateDir = mkdtempSync(join(tmpdir(), "stills-restart-"));
let stack: Stack | undefined;

afterAll(async () => {
  await stack?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

function admin(...args: string[]) {
  const run = spawnSync(process.execPath, [join(ROOT, "scripts/admin.mjs"), ...args], {
    cwd: ROOT,
    env: { ...process.env, STILLS_STATE_DIR: stateDir },
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim().split("\n").at(-1) ?? "";
}

it("serves a key from the admin command and keeps jobs, files and keys across a restart", async () => {
  const settings = {
    STILLS_STATE_DIR: stateDir,
    PORT: String(await freePort()),
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    quiet: true,
  };
  const key = admin(
    "create-key",
    "--email",
    "restart@example.com",
    "--plan",
    "pro",
    "--pack-credits",
    "500",
  );
  expect(key).toMatch(/^stills_live_[0-9A-Za-z]{38}$/);
  expect(JSON.stringify(readLocalD1("SELECT * FROM api_keys", stateDir))).not.toContain(
    key.slice(12),
  );

  const videos = await startTestServer();
  videos.route("/v.mp4", fileRoute(await makeTestVideo({ durationSeconds: 3 }), { ranges: true }));
  try {
    stack = await startStack(settings);
    const usage = await call(stack, "GET", "/usage", { headers: { "x-api-key": key } });
    expect(usage.body).toMatchObject({ plan: "pro", credits: { plan: 5000, pack: 500 } });
    const job = await call(stack, "POST", "/jobs?wait=true", {
      body: { url: `${videos.origin}/v.mp4`, timestamps: [2] },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(job.body.status).toBe("completed");
    await stack.stop();

    stack = await startStack(settings);
    const again = await call(stack, "GET", `/jobs/${job.body.id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(again.body).toMatchObject({ status: "completed", credits_charged: 1 });
    // The URL minted before the restart still works: secrets live with the state.
    const frame = await download(job.body.frames[0].url);
    expect(frame.status).toBe(200);
    expect((await readImagePattern(frame.bytes)).number).toBe(60);
  } finally {
    await videos.close();
  }
}, 180_000);
