// A cookie-keeping client of the worker, posting forms the way a browser does (same-origin
// Origin and Sec-Fetch-Site; a header given as "" is left out). The sign-in and dashboard
// suites share it.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../../../edge/index.ts";
import { accountIdFor, issueKeyStatements } from "../../../schema/accounts.ts";
import type { PlanName } from "../../../schema/plans.ts";
import { freshIp, ORIGIN } from "./api.ts";

export class Visitor {
  readonly cookies = new Map<string, string>();
  readonly ip = freshIp();

  /** Requests go to the worker with this env instead of the configured one (Stripe tests). */
  workerEnv: Env | undefined;

  private async send(url: string, init: RequestInit): Promise<Response> {
    if (!this.workerEnv) return exports.default.fetch(url, init);
    const ctx = createExecutionContext();
    const response = await app.fetch(new Request(url, init), this.workerEnv, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  async request(
    method: string,
    path: string,
    options: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { "cf-connecting-ip": this.ip };
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers.origin = ORIGIN;
      headers["sec-fetch-site"] = "same-origin";
    }
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    }
    Object.assign(headers, options.headers);
    for (const [name, value] of Object.entries(headers)) if (value === "") delete headers[name];
    const response = await this.send(`${ORIGIN}${path}`, {
      method,
      headers,
      body,
      redirect: "manual",
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  get(path: string) {
    return this.request("GET", path);
  }

  post(path: string, form: Record<string, string>, headers?: Record<string, string>) {
    return this.request("POST", path, { form, headers });
  }
}

/** The newest sign-in code the local mail carrier kept for `email`. */
export async function latestCode(email: string): Promise<string> {
  const mail = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email)
    .first<{ code: string }>();
  return mail?.code ?? "";
}

/** A new account with an API key, and a Visitor signed in to it by the e-mail code. */
export async function signedInWithKey(plan: PlanName = "starter") {
  const email = `${crypto.randomUUID()}@example.com`;
  const issued = await issueKeyStatements({ email, plan });
  await env.DB.batch(issued.statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  const visitor = new Visitor();
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  expect(
    (await visitor.post("/sign-in/code", { email, code: await latestCode(email) })).status,
  ).toBe(303);
  return {
    visitor,
    email,
    accountId: await accountIdFor(email),
    key: issued.key,
    keyId: issued.keyId,
    auth: { authorization: `Bearer ${issued.key}` },
  };
}
