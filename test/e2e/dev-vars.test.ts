// `npm start` hands the edge the developer's own .dev.vars (README "Stripe, mail and MCP
// connectors"): wrangler reads that file by itself only when no --env-file is given, and the
// stack always gives one. Seen from outside: Stripe's webhook answers 503 "not configured"
// until a webhook secret reaches the edge; with one from the file it checks the signature.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createKey, freePort, type Stack, startStack } from "../../scripts/lib/stack.mjs";
import { fileRoute, startTestServer, type TestServer } from "../sources/support/servers.ts";
import { makeTestVideo } from "../support/videos.ts";

const stateDir = mkdtempSync(join(tmpdir(), "stills-dev-vars-"));
let stack: Stack | undefined;
let videos: TestServer | undefined;

afterAll(async () => {
  await stack?.stop();
  await videos?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

it("a webhook secret in the developer's .dev.vars reaches the edge, and the stack's secrets win", async () => {
  const devVars = join(stateDir, "dev.vars");
  // A clashing INTERNAL_TOKEN must not replace the stack's: the extractor would be refused.
  writeFileSync(devVars, "STRIPE_WEBHOOK_SECRET=whsec_dGVzdA==\nINTERNAL_TOKEN=not-the-stacks\n");
  stack = await startStack({
    STILLS_STATE_DIR: join(stateDir, "state"),
    PORT: String(await freePort()),
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    quiet: true,
    devVars,
  });
  const response = await fetch(`${stack.baseUrl}/billing/stripe/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
    body: "{}",
  });
  const body = (await response.json()) as { data?: { name?: string } };
  // Configured: a bad signature is refused as such, not "not configured" (503).
  expect(response.status).toBe(400);
  expect(body.data?.name).not.toBe("ServiceUnavailable");
  // The edge and the extractor still share the stack's INTERNAL_TOKEN: a job runs through.
  videos = await startTestServer();
  videos.route("/v.mp4", fileRoute(await makeTestVideo({ durationSeconds: 2 }), { ranges: true }));
  const { key } = await createKey({ email: "dev-vars@example.com", stack });
  const created = await fetch(`${stack.apiUrl}/jobs?wait=true`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ url: `${videos.origin}/v.mp4`, count: 2 }),
  });
  const job = (await created.json()) as {
    status: string;
    error: unknown;
    frames: { status: string }[];
  };
  // A failure says why: the job's error and what the edge and the extractor last wrote.
  const why = [
    `error: ${JSON.stringify(job.error)}`,
    `edge:\n${stack.logTail("edge")}`,
    `extractor:\n${stack.logTail("extractor")}`,
  ].join("\n");
  expect(job.status, why).toBe("completed");
  expect(job.frames.map((f) => f.status)).toEqual(["ok", "ok"]);
}, 120_000);
