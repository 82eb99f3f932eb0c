// Cross-site request forgery: every page route that is not GET, HEAD or OPTIONS takes a request
// only from our own pages (Sec-Fetch-Site same-origin, or our Origin), whatever its body. The
// routes come from the app itself, so a new page route is covered without editing this file;
// only endpoints that machines call with credentials in headers are left out, by name.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../edge/index.ts";
import { ORIGIN } from "./support/api.ts";
import { Visitor } from "./support/visitor.ts";

/** Called by machines, authenticated by a header or a signature; never by a page's form. */
const MACHINE_ENDPOINTS = [
  "/v1/", // the API: a key in Authorization / X-API-Key
  "/internal/", // the extractor: an attempt token
  "/mcp", // MCP: a key or an OAuth access token
  "/oauth/token", // OAuth clients: PKCE
  "/oauth/register", // OAuth dynamic client registration
  "/billing/stripe/webhook", // Stripe: Stripe-Signature
  "/__dev/", // the local stack's test hook: INTERNAL_TOKEN, loopback only
];

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

function pageRoutesThatChangeThings(): { method: string; path: string }[] {
  const seen = new Set<string>();
  const routes: { method: string; path: string }[] = [];
  for (const route of app.routes) {
    if (!UNSAFE.has(route.method)) continue;
    if (MACHINE_ENDPOINTS.some((prefix) => route.path.startsWith(prefix))) continue;
    const path = route.path.replace(/:[A-Za-z]+/g, crypto.randomUUID());
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    routes.push({ method: route.method, path });
  }
  return routes;
}

async function signedIn() {
  const visitor = new Visitor();
  const email = `${crypto.randomUUID()}@example.com`;
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const row = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC",
  )
    .bind(email)
    .first<{ code: string }>();
  expect((await visitor.post("/sign-in/code", { email, code: row?.code ?? "" })).status).toBe(303);
  return { visitor, email };
}

function send(
  visitor: Visitor,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "{}",
) {
  const cookie = [...visitor.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  return exports.default.fetch(`${ORIGIN}${path}`, {
    method,
    headers: { "cf-connecting-ip": visitor.ip, cookie, ...headers },
    body,
    redirect: "manual",
  });
}

async function expectRefused(response: Response, label: string) {
  expect(response.status, label).toBe(400);
  const body = (await response.json()) as { data: { name: string }; message: string };
  expect(body.data.name, label).toBe("InvalidRequest");
  expect(body.message, label).toContain("Cross-site");
}

const FORGERIES: [string, Record<string, string>][] = [
  ["JSON with no Origin and no Sec-Fetch-Site", { "content-type": "application/json" }],
  [
    "JSON from another site",
    {
      "content-type": "application/json",
      origin: "https://evil.example",
      "sec-fetch-site": "cross-site",
    },
  ],
  [
    "a form from a sibling subdomain (same-site is not same-origin)",
    {
      "content-type": "application/x-www-form-urlencoded",
      origin: "https://evil.stills.test",
      "sec-fetch-site": "same-site",
    },
  ],
  [
    "text/plain claiming our Origin while the browser says cross-site",
    { "content-type": "text/plain", origin: ORIGIN, "sec-fetch-site": "cross-site" },
  ],
];

describe("every page route that changes something refuses other sites", () => {
  it("finds the page routes (sign-in, keys, webhooks, OAuth consent …) from the app", () => {
    const paths = pageRoutesThatChangeThings().map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      "POST /sign-in",
      "POST /sign-in/code",
      "POST /sign-out",
      "POST /dashboard/keys",
      "POST /dashboard/webhooks/reveal",
      "POST /dashboard/webhooks/rotate",
      "POST /oauth/authorize",
    ]) {
      expect(paths).toContain(expected);
    }
  });

  it.each(FORGERIES)("%s is refused on each of them", async (label, headers) => {
    const { visitor } = await signedIn();
    for (const route of pageRoutesThatChangeThings()) {
      const response = await send(visitor, route.method, route.path, headers);
      await expectRefused(response, `${label}: ${route.method} ${route.path}`);
    }
  });

  it("the webhook secret is neither shown nor rotated by a JSON post without Origin", async () => {
    const { visitor, email } = await signedIn();
    const secretOf = async () =>
      (
        await env.DB.prepare("SELECT webhook_secret FROM accounts WHERE email = ?")
          .bind(email)
          .first<{ webhook_secret: string }>()
      )?.webhook_secret;
    const before = await secretOf();
    for (const path of ["/dashboard/webhooks/reveal", "/dashboard/webhooks/rotate"]) {
      const response = await send(visitor, "POST", path, { "content-type": "application/json" });
      const text = await response.text();
      expect(response.status, path).toBe(400);
      expect(text, path).not.toContain("whsec_");
    }
    expect(await secretOf()).toBe(before);
  });

  it("our own pages still post: Sec-Fetch-Site same-origin, or our Origin where a browser sends no Sec-Fetch-Site", async () => {
    const { visitor } = await signedIn();
    const viaFetchMetadata = await send(
      visitor,
      "POST",
      "/dashboard/webhooks/reveal",
      { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      "",
    );
    expect(viaFetchMetadata.status).toBe(200);
    expect(await viaFetchMetadata.text()).toContain("whsec_");
    const viaOrigin = await send(
      visitor,
      "POST",
      "/dashboard/webhooks/reveal",
      { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      "",
    );
    expect(viaOrigin.status).toBe(200);
  });
});
