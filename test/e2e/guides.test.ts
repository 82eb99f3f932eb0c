// The guides say what the service does (issue 34): the signature checks printed in the webhooks
// guide (JavaScript and Python, run as printed) accept a webhook the real stack delivered and
// refuse it once tampered with; the credits guide's worked examples are what billing charges;
// the quick start's first command, run by a shell as the page prints it, completes a job.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditsFor } from "../../schema/billing.ts";
import { ANIMATED_CREDITS, TEXT_FRAMES_PER_CREDIT } from "../../schema/plans.ts";
import {
  call,
  type Harness,
  type ReceivedHook,
  startHarness,
  startReceiver,
} from "./support/harness.ts";

const GUIDES = resolve(import.meta.dirname, "../../docs/guides");

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

/** The guide as a visitor gets it from this stack (its origin written in), as Markdown. */
async function guide(name: string): Promise<string> {
  const response = await fetch(`${h.stack.baseUrl}/docs/${name}.md`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The fenced code blocks of a Markdown text in a given language. */
function codeBlocks(markdown: string, language: string): string[] {
  const pattern = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g");
  return [...markdown.matchAll(pattern)].map((match) => match[1]);
}

async function deliveredWebhook(): Promise<{ hook: ReceivedHook; secret: string }> {
  const account = await h.newKey("starter");
  const receiver = await startReceiver();
  try {
    const video = `${new URL(h.stack.apiUrl).origin}/samples/intro.mp4`;
    const created = await call(h.stack, "POST", "/jobs", {
      body: { url: video, timestamps: [1], webhook_url: receiver.url },
      headers: account.auth,
    });
    expect(created.status).toBe(201);
    const deadline = Date.now() + 30_000;
    while (receiver.received.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(1);
    return { hook: receiver.received[0], secret: await h.webhookSecret(account.email) };
  } finally {
    await receiver.close();
  }
}

describe("the webhooks guide", () => {
  it("prints checks that accept a real delivery and refuse a tampered one", async () => {
    const text = await guide("webhooks");
    const [js] = codeBlocks(text, "js");
    const [python] = codeBlocks(text, "python");
    expect(js).toContain("export function verifyStillsWebhook");
    expect(python).toContain("def verify_stills_webhook");
    const { hook, secret } = await deliveredWebhook();
    const tampered = { ...hook, body: hook.body.replace('"completed"', '"failed"') };
    expect(tampered.body).not.toBe(hook.body);

    const dir = mkdtempSync(join(tmpdir(), "stills-guide-"));
    writeFileSync(join(dir, "verify.mjs"), js);
    const { verifyStillsWebhook } = await import(pathToFileURL(join(dir, "verify.mjs")).href);
    expect(verifyStillsWebhook(secret, hook.headers, hook.body)).toBe(true);
    expect(verifyStillsWebhook(secret, tampered.headers, tampered.body)).toBe(false);
    expect(verifyStillsWebhook(`whsec_${btoa("another secret")}`, hook.headers, hook.body)).toBe(
      false,
    );

    writeFileSync(
      join(dir, "verify.py"),
      `${python}\nimport json, sys\ncase = json.load(sys.stdin)\nprint(verify_stills_webhook(case["secret"], case["headers"], case["body"].encode()))\n`,
    );
    const runPython = (candidate: ReceivedHook) =>
      spawnSync("/usr/bin/python3", [join(dir, "verify.py")], {
        input: JSON.stringify({ secret, headers: candidate.headers, body: candidate.body }),
        encoding: "utf8",
      });
    const accepted = runPython(hook);
    expect(accepted.stderr).toBe("");
    expect(accepted.stdout.trim()).toBe("True");
    expect(runPython(tampered).stdout.trim()).toBe("False");
  }, 60_000);
});

describe("the credits guide", () => {
  it("works its examples out as billing does", () => {
    const text = readFileSync(join(GUIDES, "credits.md"), "utf8");
    const table = text.slice(text.indexOf("## Worked examples"), text.indexOf("## Where credits"));
    const stated = [...table.matchAll(/\*\*(\d+)\*\*/g)].map((match) => Number(match[1]));
    // The same rows: mode, seconds processed, frames delivered (a storyboard is one more).
    const computed = [
      creditsFor("count", 30, 6),
      creditsFor("interval", 600, 600),
      creditsFor("interval", 180, 360),
      creditsFor("interval", 30, 15),
      creditsFor("timestamps", 0, 25),
      creditsFor("scenes", 0, 8 + 1),
      creditsFor("best", 0, 3) + ANIMATED_CREDITS,
      creditsFor("count", 30, 12) + Math.ceil(12 / TEXT_FRAMES_PER_CREDIT),
      // A job that fails is charged nothing (resultCredits).
      0,
    ];
    expect(stated).toEqual(computed);
  });
});

describe("the quick start", () => {
  it("runs its first command as printed, and the job completes with six frames", async () => {
    const text = await guide("quick-start");
    const command = codeBlocks(text, "sh").find((block) => block.includes("POST"));
    expect(command).toContain(`${h.stack.baseUrl}/v1/jobs?wait=true`);
    const { key } = await h.newKey("free");
    const run = spawnSync("sh", ["-c", command ?? "false"], {
      env: { ...process.env, STILLS_API_KEY: key },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const job = JSON.parse(run.stdout);
    expect(job.status).toBe("completed");
    expect(job.frames).toHaveLength(6);
  }, 90_000);
});
