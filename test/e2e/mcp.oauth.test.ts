// Signing an MCP client in with OAuth against the real stack, as a custom connector in a chat
// app would: discovery from the 401, the metadata documents, dynamic registration, the e-mail
// code sign-in (code read from the local outbox with the admin command), consent, the token
// exchange with PKCE, and tool calls with the access token — driven by the SDK's own OAuth
// client. The browser's part (following redirects, posting forms) is done with fetch.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/stack.mjs";
import { makeTestVideo } from "../support/videos.ts";
import { call, type Harness, startHarness } from "./support/harness.ts";

const run = promisify(execFile);
// Nothing listens here: the test reads the redirect's Location instead of following it.
const REDIRECT_URI = "http://127.0.0.1:9/callback";

let h: Harness;
let base: string;
let videoUrl: string;

beforeAll(async () => {
  h = await startHarness();
  base = h.stack.baseUrl;
  const file = await makeTestVideo({ width: 320, height: 180, durationSeconds: 4 });
  videoUrl = h.serveVideo("/media/clip.mp4", file);
});

afterAll(async () => {
  await h?.close();
});

/** The client side of OAuth as the SDK asks a host application to keep it. */
class ConnectorProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "E2E Agent",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A browser's cookie jar, as far as this flow needs one. */
class Browser {
  cookies = new Map<string, string>();

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {
      cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "),
    };
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
      // A form posted from our own page carries our origin.
      headers.origin = base;
    }
    const response = await fetch(new URL(url, base), {
      method: init.method ?? (init.form ? "POST" : "GET"),
      headers,
      body,
      redirect: "manual",
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(";");
      const [name, value] = pair.split("=");
      const cleared = attributes.some((a) => /max-age=0\b/i.test(a.trim())) || value === "";
      if (cleared) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value.trim());
    }
    return { status: response.status, location: response.headers.get("location"), response };
  }
}

/** The e-mail code sign-in, with the code read from the local outbox as the README says. */
async function signIn(browser: Browser, email: string, next: string) {
  const asked = await browser.request("/sign-in", { form: { email, next } });
  expect(asked.status).toBe(303);
  const { stdout } = await run(
    process.execPath,
    [join(ROOT, "scripts/admin.mjs"), "outbox", "--email", email],
    { env: { ...process.env, STILLS_STATE_DIR: h.stack.stateDir } },
  );
  const code = stdout.trim().split("\n").at(-1) ?? "";
  expect(code).toMatch(/^\d{6}$/);
  const entered = await browser.request("/sign-in/code", { form: { email, code, next } });
  expect(entered.status).toBe(303);
  return entered.location;
}

/** Sign-in and consent in the "browser", ending at the client's redirect URI. */
async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: URL,
  email: string,
  decision: "approve" | "deny" = "approve",
) {
  let page = await browser.request(authorizationUrl.href);
  if (page.status === 303) {
    const signIn = new URL(page.location ?? "", base);
    expect(signIn.pathname).toBe("/sign-in");
    const next = signIn.searchParams.get("next") ?? "";
    expect(next).toBe(`${authorizationUrl.pathname}${authorizationUrl.search}`);
    const back = await signInAndReturn(browser, email, next);
    page = await browser.request(back);
  }
  expect(page.status).toBe(200);
  const html = await page.response.text();
  expect(html).toContain("Connect E2E Agent to Stills?");
  expect(html).toContain(email);
  expect(html).toContain("127.0.0.1");
  expect(page.response.headers.get("content-security-policy")).toContain(
    "form-action 'self' http://127.0.0.1:9",
  );
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const decided = await browser.request("/oauth/authorize", { form: { handle, decision } });
  expect(decided.status).toBe(302);
  return new URL(decided.location ?? "");
}

async function signInAndReturn(browser: Browser, email: string, next: string) {
  const location = await signIn(browser, email, next);
  expect(location).toBe(next);
  return location ?? "";
}

async function connectorKeys(email: string) {
  return await h.query(
    `SELECT name, revoked_at FROM api_keys WHERE account_id = (SELECT id FROM accounts WHERE email = '${email}')`,
  );
}

describe("OAuth for MCP clients", () => {
  it("publishes where and how to sign in", async () => {
    const refused = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? "";
    expect(metadataUrl).toBe(`${base}/.well-known/oauth-protected-resource/mcp`);

    const resource = await (await fetch(metadataUrl)).json();
    expect(resource).toMatchObject({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      bearer_methods_supported: ["header"],
    });
    const server = (await (
      await fetch(`${base}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(server).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
    });
    expect(server.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token"]),
    );
  });

  it("signs a person in with the e-mail code on the way, and refuses a wrong PKCE verifier", async () => {
    const email = `${crypto.randomUUID()}@example.com`;
    const provider = new ConnectorProvider();
    const mcpUrl = new URL(`${base}/mcp`);

    // The SDK's client meets the 401, discovers, registers and asks for authorization.
    const first = new Client({ name: "e2e-oauth", version: "1.0.0" });
    const firstTransport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toEqual(expect.any(String));
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(
      `${base}/oauth/authorize`,
    );
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${base}/mcp`);

    // The browser: no session yet, so sign-in first, then consent, then back to the client.
    const browser = new Browser();
    const callback = await authorizeInBrowser(browser, authorizationUrl, email);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe(authorizationUrl.searchParams.get("state"));
    const code = callback.searchParams.get("code") ?? "";

    // A wrong PKCE verifier gets no token.
    const wrong = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT_URI,
        client_id: provider.client?.client_id ?? "",
        code_verifier: randomBytes(32).toString("base64url"),
      }),
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_grant");
    expect(provider.verifier).not.toBe("");
    expect(createHash("sha256").update(provider.verifier).digest("base64url")).toBe(
      authorizationUrl.searchParams.get("code_challenge"),
    );
  });

  it("exchanges the code with PKCE and calls tools with the access token", async () => {
    const email = `${crypto.randomUUID()}@example.com`;
    const provider = new ConnectorProvider();
    const mcpUrl = new URL(`${base}/mcp`);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: "e2e", version: "1" }).connect(transport)).rejects.toThrow(
      UnauthorizedError,
    );
    const browser = new Browser();
    const callback = await authorizeInBrowser(browser, provider.authorizationUrl as URL, email);
    await transport.finishAuth(callback.searchParams.get("code") ?? "");
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    expect(provider.saved?.refresh_token).toEqual(expect.any(String));

    // The token is bound to the account: a key named for the client now exists on it.
    expect(await connectorKeys(email)).toEqual([{ name: "MCP: E2E Agent", revoked_at: null }]);

    const client = new Client({ name: "e2e", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("extract_frames");
    const usage = (await client.callTool({ name: "get_usage" })) as any;
    // A new account from the sign-in: the free plan and its 60 credits.
    expect(usage.structuredContent.plan).toBe("free");
    expect(usage.structuredContent.credits.available).toBe(60);

    // A job through the token spends this account's credits, like any job.
    const extracted = (await client.callTool(
      { name: "extract_frames", arguments: { url: videoUrl, timestamps: [1, 2] } },
      undefined,
      { timeout: 90_000 },
    )) as any;
    expect(extracted.structuredContent.job.status).toBe("completed");
    expect(extracted.structuredContent.job.credits_charged).toBe(1);
    const after = (await client.callTool({ name: "get_usage" })) as any;
    expect(after.structuredContent.credits.available).toBe(59);
    await client.close();

    // The refresh token gets a new access token, which works as the first did.
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: provider.saved?.refresh_token ?? "",
        client_id: provider.client?.client_id ?? "",
      }),
    });
    expect(refreshed.status).toBe(200);
    const renewed = (await refreshed.json()) as OAuthTokens;
    expect(renewed.access_token).not.toBe(provider.saved?.access_token);
    const withRenewed = new Client({ name: "e2e", version: "1" });
    await withRenewed.connect(
      new StreamableHTTPClientTransport(mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${renewed.access_token}` } },
      }),
    );
    const renewedUsage = (await withRenewed.callTool({ name: "get_usage" })) as any;
    expect(renewedUsage.structuredContent.credits.available).toBe(59);
    await withRenewed.close();

    // Revoking the connector's key in the dashboard disconnects the client.
    const [connector] = (await h.query(
      `SELECT id FROM api_keys WHERE name = 'MCP: E2E Agent' AND account_id = (SELECT id FROM accounts WHERE email = '${email}')`,
    )) as { id: string }[];
    const revocation = await browser.request(`/dashboard/keys/${connector.id}/revoke`, {
      form: {},
    });
    expect(revocation.status).toBe(303);
    expect(revocation.location).toBe("/dashboard/keys?notice=revoked");
    const revoked = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${renewed.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(revoked.status).toBe(401);
    // Revoking the key revokes its grant too (issue 33), so the token is one the provider no
    // longer knows: answered as any other credential that is not a key, as the forged token
    // below is (before grant revocation it was swapped for the revoked key: "invalid").
    expect(((await revoked.json()) as { data: unknown }).data).toMatchObject({
      name: "InvalidApiKey",
      reason: "malformed",
    });
    // And it cannot be refreshed back to life.
    const refreshedAfter = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: renewed.refresh_token ?? "",
        client_id: provider.client?.client_id ?? "",
      }),
    });
    expect(refreshedAfter.status).toBe(400);
    expect(((await refreshedAfter.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("answers a token that is not one as REST answers a malformed key", async () => {
    const forged = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: "Bearer someone:something:forged",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const rest = await call(h.stack, "GET", "/usage", {
      headers: { authorization: "Bearer someone:something:forged" },
    });
    expect(forged.status).toBe(401);
    // The same body, each naming its own request.
    const body = (await forged.json()) as any;
    expect(body.data.request_id).toBe(forged.headers.get("x-request-id"));
    expect({ ...body, data: { ...body.data, request_id: rest.body.data.request_id } }).toEqual(
      rest.body,
    );
    expect(forged.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("sends the client back with access_denied when the person declines", async () => {
    const email = `${crypto.randomUUID()}@example.com`;
    const provider = new ConnectorProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: provider,
    });
    await expect(new Client({ name: "e2e", version: "1" }).connect(transport)).rejects.toThrow(
      UnauthorizedError,
    );
    const callback = await authorizeInBrowser(
      new Browser(),
      provider.authorizationUrl as URL,
      email,
      "deny",
    );
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("code")).toBeNull();
    expect(await connectorKeys(email)).toEqual([]);
  });
});
