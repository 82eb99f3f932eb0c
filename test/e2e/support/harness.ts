// The end-to-end harness: the real stack (the edge under Miniflare + extractor) on free ports
// with its own state directory, test videos served from 127.0.0.1, and a client that speaks
// only HTTP.
import { createHmac } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import {
  createKey,
  freePort,
  readTail,
  type Stack,
  stackExecute,
  stackQuery,
  startStack,
} from "../../../scripts/lib/stack.mjs";
import { fileRoute, startTestServer, type TestServer } from "../../sources/support/servers.ts";
import type { SharedStack } from "./shared-stack.ts";

export interface Harness {
  stack: Stack;
  /** Lines the stack itself logged (an extractor restart, say). */
  stackLog: string[];
  videos: TestServer;
  serveVideo(path: string, file: string, contentType?: string): string;
  newKey(
    plan?: string,
    packCredits?: number,
  ): Promise<{ key: string; email: string; auth: Record<string, string> }>;
  webhookSecret(email: string): Promise<string>;
  /** One statement's rows on the stack's D1 (its development route; no wrangler spawned). */
  query(sql: string, params?: (string | number | null)[]): Promise<Record<string, any>[]>;
  /** A script of `;`-separated statements on the stack's D1, in one batch. */
  execute(script: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The stack one test file drives.
 * - `startHarness()`: the stack every e2e and browser file shares, started once by
 *   test/e2e/support/shared-stack.ts (vitest's globalSetup). Each file still gets its own
 *   accounts and keys (newKey) and its own video server, so files stay independent.
 * - `startHarness({ own: "why", ...settings })`: a stack of the file's own, for a file that
 *   kills, stops or restarts the stack's processes, or that needs other settings (settings
 *   other than those its project's shared stack was started with mean a stack of its own).
 *   `own` says in one line why the file cannot share.
 */
export async function startHarness(
  options: { own?: string } & Record<string, string> = {},
): Promise<Harness> {
  const { own, ...settings } = options;
  const shared = inject("sharedStack") as SharedStack | undefined;
  // Settings other than the shared stack's mean a stack of its own, as does a project without
  // the shared one.
  const ownStack = Boolean(own) || !shared || !sameSettings(settings, shared.settings ?? {});
  const stackLog: string[] = [];
  let stateDir: string | undefined;
  let stack: Stack;
  if (ownStack) {
    stateDir = mkdtempSync(join(tmpdir(), "stills-e2e-"));
    stack = await startStack({
      STILLS_STATE_DIR: stateDir,
      PORT: String(await freePort()),
      STILLS_ALLOW_PRIVATE_NETWORK: "1",
      quiet: true,
      // Other work in the tree must not rebuild the edge under a test, and the worker is
      // bundled once per run, not once per stack (scripts/lib/stack.mjs, decision 0292).
      prebuilt: true,
      log: (line) => stackLog.push(line),
      ...settings,
    });
  } else {
    stack = attachShared(shared as SharedStack);
  }
  const videos = await startTestServer();
  return {
    stack,
    stackLog,
    videos,
    serveVideo(path, file, contentType = "video/mp4") {
      videos.route(path, fileRoute(file, { ranges: true, contentType }));
      return `${videos.origin}${path}`;
    },
    async newKey(plan = "starter", packCredits = 0) {
      const email = `${crypto.randomUUID()}@example.com`;
      const issued = await createKey({ email, plan, packCredits, stack });
      return { key: issued.key, email, auth: { authorization: `Bearer ${issued.key}` } };
    },
    async webhookSecret(email) {
      const [row] = await stackQuery(stack, "SELECT webhook_secret FROM accounts WHERE email = ?", [
        email,
      ]);
      return String(row.webhook_secret);
    },
    query: (sql, params) => stackQuery(stack, sql, params),
    execute: (script) => stackExecute(stack, script),
    async close() {
      await videos.close();
      if (!ownStack) return;
      await stack.stop();
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

function sameSettings(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * The shared stack as this file sees it: its addresses and secrets, and its logs read from the
 * files the global setup's children write. Its processes belong to the global setup; a file
 * that must stop or signal them takes a stack of its own.
 */
function attachShared(shared: SharedStack): Stack {
  const notHere = (what: string) => () => {
    throw new Error(`${what} is not offered by the shared stack: use startHarness({ own: "…" })`);
  };
  return {
    ...shared,
    get children(): never {
      return notHere("children")();
    },
    get extractorRestarts(): never {
      return notHere("extractorRestarts")();
    },
    extractorReady: notHere("extractorReady"),
    stopExtractor: notHere("stopExtractor"),
    restartExtractor: notHere("restartExtractor"),
    logTail: (name) => readTail(shared.logFiles[name]),
    // Stopped by the global setup once every file is done.
    stop: async () => {},
  };
}

export async function call<T = any>(
  stack: Stack,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: T }> {
  let response: Response;
  try {
    response = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { "content-type": "application/json", ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    // A dropped connection is explained by what the edge logged, not by the socket error.
    const logs = `${stack.logTail("edge")}\n${stack.logTail("extractor")}`.slice(-6000);
    throw new Error(`${method} ${path} failed: ${error}\n${logs}`, { cause: error });
  }
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

export async function download(
  url: string,
): Promise<{ status: number; type: string | null; bytes: Uint8Array }> {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

/** The account's available credits, as GET /v1/usage answers them. */
export async function creditsAvailable(
  stack: Stack,
  auth: Record<string, string>,
): Promise<number> {
  const usage = await call(stack, "GET", "/usage", { headers: auth });
  if (usage.status !== 200) throw new Error(`GET /v1/usage answered ${usage.status}`);
  return usage.body.credits.available;
}

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that records what it gets. */
export async function startReceiver(status = 200) {
  const received: ReceivedHook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status).end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Standard Webhooks verification, written from the scheme, not from our signer. */
export function verifyStandardWebhook(secret: string, hook: ReceivedHook): boolean {
  const id = String(hook.headers["webhook-id"]);
  const timestamp = String(hook.headers["webhook-timestamp"]);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key)
    .update(`${id}.${timestamp}.${hook.body}`)
    .digest("base64");
  return String(hook.headers["webhook-signature"])
    .split(" ")
    .some((candidate) => candidate === `v1,${expected}`);
}

/**
 * An attempt's token for /internal/*, written from the scheme (issue 12), not from the edge's
 * signer: base64url(HMAC-SHA256(INTERNAL_TOKEN, `${kind}:${job}:${attempt}:${expiry}`)).expiry
 */
export function attemptTokenFor(
  secret: string,
  attempt: { kind: string; jobId: string; attemptId: string },
  lifeSeconds = 3600,
): string {
  const expiry = Math.floor(Date.now() / 1000) + lifeSeconds;
  const mac = createHmac("sha256", secret)
    .update(`${attempt.kind}:${attempt.jobId}:${attempt.attemptId}:${expiry}`)
    .digest("base64url");
  return `${mac}.${expiry}`;
}
