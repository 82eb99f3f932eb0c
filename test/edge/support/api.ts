// The test client: every request goes through the worker's own fetch handler, and every
// response is checked against the OpenAPI document the worker serves, so the document and
// the behaviour cannot drift apart unnoticed.

import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import { expect } from "vitest";
import { keyLimiter } from "../../../edge/middleware/rate-limit.ts";
import { issueKeyStatements } from "../../../schema/accounts.ts";
import type { PlanName } from "../../../schema/plans.ts";

export const ORIGIN = "https://stills.test";

type OpenApiDocument = {
  servers: { url: string }[];
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components: object;
};

let documentPromise: Promise<OpenApiDocument> | undefined;

export function openApiDocument(): Promise<OpenApiDocument> {
  documentPromise ??= exports.default
    .fetch(`${ORIGIN}/v1/openapi.json`, { headers: { "cf-connecting-ip": "198.51.100.250" } })
    .then((r) => r.json() as Promise<OpenApiDocument>);
  return documentPromise;
}

function findOperation(doc: OpenApiDocument, method: string, path: string) {
  for (const [template, operations] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (pattern.test(path)) return operations[method.toLowerCase()];
  }
  return undefined;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

let ipCounter = 0;
/** A fresh client address per caller, so per-IP limits of one test do not touch another. */
export function freshIp(): string {
  ipCounter++;
  return `203.0.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
}

export async function api<T = any>(
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; ip?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {
    "cf-connecting-ip": options.ip ?? freshIp(),
    ...options.headers,
  };
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  } else if (body !== undefined) {
    headers["content-type"] ??= "application/json";
  }
  const response = await exports.default.fetch(`${ORIGIN}${path}`, { method, headers, body });
  const text = await response.text();
  const parsed =
    text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
  await expectDocumented(method, new URL(`${ORIGIN}${path}`).pathname, response, parsed);
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * Fails the test when the response is not what the served OpenAPI document promises. The
 * document's paths are relative to its server URL (which ends in /v1, as the spec's base URL).
 * A method or path the document does not name must be answered 405 or 404 in the error shape.
 */
async function expectDocumented(method: string, path: string, response: Response, body: unknown) {
  if (!path.startsWith("/v1/") || path === "/v1/openapi.json") return;
  const doc = await openApiDocument();
  const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, "");
  expect(path.startsWith(`${base}/`), `${path} lies under the server URL`).toBe(true);
  const operation = findOperation(doc, method === "HEAD" ? "GET" : method, path.slice(base.length));
  const schema = operation
    ? operation.responses[String(response.status)]?.content?.["application/json"]?.schema
    : (doc.components as { schemas: Record<string, object> }).schemas.Error;
  if (operation) {
    const declared = operation.responses[String(response.status)];
    expect(declared, `${method} ${path} documents status ${response.status}`).toBeDefined();
  } else {
    expect([404, 405], `${method} ${path} is undocumented, so 404 or 405`).toContain(
      response.status,
    );
  }
  if (!schema || method === "HEAD" || response.status === 204) return;
  const result = new Validator(
    { ...schema, components: doc.components } as never,
    "2020-12",
    false,
  ).validate(body);
  expect(
    result.errors,
    `${method} ${path} ${response.status} body matches the OpenAPI schema`,
  ).toEqual([]);
  for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
    expect(response.headers.get(name), `${name} on ${method} ${path}`).toMatch(/^\d+$/);
  }
}

export interface TestAccount {
  key: string;
  keyId: string;
  accountId: string;
  auth: Record<string, string>;
}

export async function createAccount(
  options: { plan?: PlanName; packCredits?: number; email?: string } = {},
): Promise<TestAccount> {
  const issued = await issueKeyStatements({
    email: options.email ?? `${crypto.randomUUID()}@example.com`,
    plan: options.plan,
    packCredits: options.packCredits,
  });
  await env.DB.batch(issued.statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  return {
    key: issued.key,
    keyId: issued.keyId,
    accountId: issued.accountId,
    auth: { authorization: `Bearer ${issued.key}` },
  };
}

export async function balanceOf(accountId: string) {
  return env.DB.prepare(
    "SELECT plan_credits AS plan, pack_credits AS pack, reserved_credits AS reserved FROM accounts WHERE id = ?",
  )
    .bind(accountId)
    .first<{ plan: number; pack: number; reserved: number }>();
}

/**
 * Revokes a key as the dashboard on another isolate would (its limiter, then D1), leaving this
 * isolate's memory of the key and any lease it holds as they were.
 */
export async function revokeElsewhere(keyId: string) {
  await keyLimiter(env, keyId).revoke();
  await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
    .bind(new Date().toISOString(), keyId)
    .run();
}
