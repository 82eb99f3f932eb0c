// OAuth for MCP connectors against a holder of its tokens, and against anyone at all (issue 33):
// a refresh token dies with the connector key it acts through, and dynamic registration, open
// to everyone and kept in OAUTH_KV, is bounded field by field.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountIdFor } from "../../schema/accounts.ts";
import { CLIENT_REGISTRATION_LIMITS } from "../../schema/oauth-client.ts";
import { freshIp, ORIGIN, revokeElsewhere } from "./support/api.ts";
import { Visitor } from "./support/visitor.ts";

const REDIRECT_URI = "https://client.example/callback";
const RESOURCE = `${ORIGIN}/mcp`;

function post(path: string, body: string, type: string) {
  return exports.default.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": type, "cf-connecting-ip": freshIp() },
    body,
  });
}

function register(document: Record<string, unknown> | string) {
  const body = typeof document === "string" ? document : JSON.stringify(document);
  return post("/oauth/register", body, "application/json");
}

function token(form: Record<string, string>) {
  return post(
    "/oauth/token",
    new URLSearchParams(form).toString(),
    "application/x-www-form-urlencoded",
  );
}

const CLIENT = {
  client_name: "Security Agent",
  redirect_uris: [REDIRECT_URI],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

async function base64url(bytes: ArrayBuffer | Uint8Array) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Signs a new person in with the code the local outbox holds. */
async function signedIn() {
  const email = `${crypto.randomUUID()}@example.com`;
  const visitor = new Visitor();
  expect((await visitor.post("/sign-in", { email })).status).toBe(303);
  const mail = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email)
    .first<{ code: string }>();
  expect((await visitor.post("/sign-in/code", { email, code: mail?.code ?? "" })).status).toBe(303);
  return { visitor, accountId: await accountIdFor(email) };
}

/** A registered client connected by a signed-in person: its tokens and connector key. */
async function connected() {
  const registered = await register(CLIENT);
  expect(registered.status).toBe(201);
  const { client_id } = await registered.json<{ client_id: string }>();
  const verifier = await base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = await base64url(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)),
  );
  const { visitor, accountId } = await signedIn();
  const query = new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    resource: RESOURCE,
  });
  const page = await visitor.get(`/oauth/authorize?${query}`);
  expect(page.status).toBe(200);
  const handle = /name="handle" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
  const approved = await visitor.post("/oauth/authorize", { handle, decision: "approve" });
  expect(approved.status).toBe(302);
  const code = new URL(approved.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const exchanged = await token({
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id,
    code_verifier: verifier,
    resource: RESOURCE,
  });
  expect(exchanged.status).toBe(200);
  const tokens = await exchanged.json<{ access_token: string; refresh_token: string }>();
  const key = await env.DB.prepare(
    "SELECT id FROM api_keys WHERE account_id = ? AND name = 'MCP: Security Agent'",
  )
    .bind(accountId)
    .first<{ id: string }>();
  expect(key).not.toBeNull();
  return { clientId: client_id, tokens, keyId: key?.id ?? "", visitor, accountId };
}

function refresh(clientId: string, refreshToken: string) {
  return token({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
}

async function mcpStatus(accessToken: string) {
  const response = await exports.default.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "cf-connecting-ip": freshIp(),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("a connector's refresh token", () => {
  it("refreshes while its key lives, and is revoked with the key in the dashboard", async () => {
    const { clientId, tokens, keyId, visitor } = await connected();
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    const refreshed = await refresh(clientId, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json<{ access_token: string; refresh_token: string }>();

    expect((await visitor.post(`/dashboard/keys/${keyId}/revoke`, {})).status).toBe(303);
    const refused = await refresh(clientId, next.refresh_token);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_grant" });
    expect(await mcpStatus(next.access_token)).toBe(401);
  });

  it("is refused, and its grant revoked, when the key was revoked some other way", async () => {
    const { clientId, tokens, keyId } = await connected();
    await revokeElsewhere(keyId);
    const refused = await refresh(clientId, tokens.refresh_token);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_grant" });
    // The grant is gone, not only refused once.
    const again = await refresh(clientId, tokens.refresh_token);
    expect(again.status).toBe(400);
    await again.arrayBuffer();
  });
});

describe("dynamic client registration", () => {
  const L = CLIENT_REGISTRATION_LIMITS;
  const long = (n: number) => `https://client.example/${"a".repeat(n - 23)}`;

  async function clientsStored() {
    return (await env.OAUTH_KV.list({ prefix: "client:" })).keys.length;
  }

  it("refuses every field past its bound with invalid_client_metadata, and stores nothing", async () => {
    const before = await clientsStored();
    const refusals: [string, Record<string, unknown> | string][] = [
      [
        "1,000 redirect URIs",
        {
          ...CLIENT,
          redirect_uris: Array.from({ length: 1000 }, (_, i) => `https://c.example/${i}`),
        },
      ],
      [
        "11 redirect URIs",
        {
          ...CLIENT,
          redirect_uris: Array.from({ length: 11 }, (_, i) => `https://c.example/${i}`),
        },
      ],
      ["a 2,001-character redirect URI", { ...CLIENT, redirect_uris: [long(2001)] }],
      ["a 5,000-character client name", { ...CLIENT, client_name: "n".repeat(5000) }],
      ["a 101-character client name", { ...CLIENT, client_name: "n".repeat(101) }],
      ["a long client_uri", { ...CLIENT, client_uri: long(2001) }],
      ["a long logo_uri", { ...CLIENT, logo_uri: long(2001) }],
      ["a long policy_uri", { ...CLIENT, policy_uri: long(2001) }],
      ["a long tos_uri", { ...CLIENT, tos_uri: long(2001) }],
      [
        "six contacts",
        { ...CLIENT, contacts: Array.from({ length: 6 }, (_, i) => `c${i}@example.com`) },
      ],
      ["a long contact", { ...CLIENT, contacts: [`${"c".repeat(320)}@example.com`] }],
      ["a long scope", { ...CLIENT, scope: "s".repeat(1001) }],
      [
        "eleven localized names",
        {
          ...CLIENT,
          ...Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`client_name#l${i}`, "x"])),
        },
      ],
      ["a long localized name", { ...CLIENT, "client_name#fr": "n".repeat(101) }],
      [
        "a document over 16 KiB",
        JSON.stringify({ ...CLIENT, software_statement: "x".repeat(L.bodyBytes) }),
      ],
    ];
    for (const [what, document] of refusals) {
      const answer = await register(document);
      expect(answer.status, what).toBe(400);
      const body = await answer.json<{ error: string; error_description: string }>();
      expect(body.error, what).toBe("invalid_client_metadata");
      expect(body.error_description, what).toMatch(/at most/);
    }
    expect(await clientsStored()).toBe(before);
  });

  it("registers a client within every bound", async () => {
    const answer = await register({
      ...CLIENT,
      client_name: "n".repeat(L.clientNameLength),
      redirect_uris: Array.from({ length: L.redirectUris }, (_, i) => `https://c.example/${i}`),
      client_uri: long(L.uriLength),
      contacts: ["ops@client.example"],
      "client_name#fr": "Agent de sécurité",
    });
    expect(answer.status).toBe(201);
    const client = await answer.json<{ client_id: string; redirect_uris: string[] }>();
    expect(client.redirect_uris).toHaveLength(L.redirectUris);
  });
});
