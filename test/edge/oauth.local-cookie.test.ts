// On plain http to loopback (`npm start`), the OAuth consent's binding cookie travels under a
// local name without Secure, so a client that keeps Secure cookies for https only (curl, most
// HTTP libraries) can finish OAuth; over https it stays the provider's `__Host-` cookie.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../edge/index.ts";
import { freshIp, ORIGIN } from "./support/api.ts";
import { Visitor } from "./support/visitor.ts";

const LOCAL = "http://127.0.0.1:8787";
const REDIRECT_URI = "http://127.0.0.1:9999/callback";
/** The worker as `npm start` runs it: its public origin is the loopback one. */
const localEnv = { ...env, PUBLIC_BASE_URL: LOCAL } as Env;

async function local(path: string, init: RequestInit) {
  const ctx = createExecutionContext();
  const response = await app.fetch(new Request(`${LOCAL}${path}`, init), localEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** A cookie-keeping HTTP client that, like curl's jar, never sends a Secure cookie over http. */
class PlainHttpClient {
  readonly cookies = new Map<string, string>();
  readonly ip = freshIp();

  async request(method: string, path: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { "cf-connecting-ip": this.ip };
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    }
    if (form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers.origin = LOCAL;
    }
    const response = await local(path, {
      method,
      headers,
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: "manual",
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim());
      if (attributes.some((a) => a.toLowerCase() === "secure")) continue;
      const name = pair.slice(0, pair.indexOf("="));
      const value = pair.slice(pair.indexOf("=") + 1);
      if (value === "" || attributes.some((a) => /^max-age=0$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      setCookies,
      text: await response.text(),
    };
  }
}

async function registerClient(where: "local" | "https") {
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": freshIp() },
    body: JSON.stringify({
      client_name: "Local Agent",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  };
  const response =
    where === "local"
      ? await local("/oauth/register", init)
      : await exports.default.fetch(`${ORIGIN}/oauth/register`, init);
  expect(response.status).toBe(201);
  return (await response.json<{ client_id: string }>()).client_id;
}

async function latestCode(email: string) {
  const row = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC",
  )
    .bind(email)
    .first<{ code: string }>();
  return row?.code ?? "";
}

function authorizeQuery(clientId: string, origin: string) {
  return new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "local-1",
    resource: `${origin}/mcp`,
  });
}

async function signedInLocally() {
  const client = new PlainHttpClient();
  const email = `${crypto.randomUUID()}@example.com`;
  expect((await client.request("POST", "/sign-in", { email })).status).toBe(303);
  const entered = await client.request("POST", "/sign-in/code", {
    email,
    code: await latestCode(email),
  });
  expect(entered.status).toBe(303);
  return client;
}

describe("the OAuth consent cookie", () => {
  it("on loopback http: a local name without Secure, and a plain HTTP client finishes consent", async () => {
    const clientId = await registerClient("local");
    const client = await signedInLocally();
    const page = await client.request("GET", `/oauth/authorize?${authorizeQuery(clientId, LOCAL)}`);
    expect(page.status).toBe(200);
    const binding = page.setCookies.find((line) => line.startsWith("stills_oauth-consent-"));
    expect(binding, page.setCookies.join("\n")).toBeDefined();
    const attributes = (binding ?? "").split(";").map((a) => a.trim().toLowerCase());
    expect(attributes).not.toContain("secure");
    expect(attributes).toContain("httponly");
    expect(attributes).toContain("samesite=lax");
    expect(page.setCookies.some((line) => line.startsWith("__Host-"))).toBe(false);

    const handle = /name="handle" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
    const approved = await client.request("POST", "/oauth/authorize", {
      handle,
      decision: "approve",
    });
    expect(approved.status, approved.text).toBe(302);
    const callback = new URL(approved.headers.get("location") ?? "");
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(callback.searchParams.get("state")).toBe("local-1");
    // The binding is cleared under the name it was set with.
    expect(approved.setCookies.some((l) => /^stills_oauth-consent-[^=]+=;/.test(l))).toBe(true);
  });

  it("on loopback http, a decline goes back to the client too", async () => {
    const clientId = await registerClient("local");
    const client = await signedInLocally();
    const page = await client.request("GET", `/oauth/authorize?${authorizeQuery(clientId, LOCAL)}`);
    const handle = /name="handle" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
    const denied = await client.request("POST", "/oauth/authorize", { handle, decision: "deny" });
    expect(denied.status).toBe(302);
    expect(new URL(denied.headers.get("location") ?? "").searchParams.get("error")).toBe(
      "access_denied",
    );
  });

  it("over https it stays the provider's Secure __Host- cookie", async () => {
    const clientId = await registerClient("https");
    const visitor = new Visitor();
    const email = `${crypto.randomUUID()}@example.com`;
    await visitor.post("/sign-in", { email });
    await visitor.post("/sign-in/code", { email, code: await latestCode(email) });
    const page = await visitor.get(`/oauth/authorize?${authorizeQuery(clientId, ORIGIN)}`);
    expect(page.status).toBe(200);
    const binding = page.headers.getSetCookie().find((l) => l.startsWith("__Host-oauth-consent-"));
    expect(binding).toBeDefined();
    expect((binding ?? "").split(";").map((a) => a.trim())).toContain("Secure");
    expect(page.headers.getSetCookie().some((l) => l.startsWith("stills_oauth-"))).toBe(false);
  });
});
