// The development-only SQL route the test stacks use instead of spawning wrangler: it exists
// only with STILLS_DEV_ROUTES=1, only for a request addressed to a loopback host, and only with
// the stack's INTERNAL_TOKEN; a production configuration cannot turn it on.
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { parseEdgeConfig } from "../../edge/config.ts";

const settings = env as unknown as Record<string, string | undefined>;
const TOKEN = settings.INTERNAL_TOKEN as string;
const SELECT = { statements: [{ sql: "SELECT ? + 1 AS n", params: [41] }] };

function post(origin: string, body: unknown, token: string | undefined = TOKEN) {
  return exports.default.fetch(`${origin}/__dev/sql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "cf-connecting-ip": "198.51.100.77",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

const publicBaseUrl = settings.PUBLIC_BASE_URL;
/** As a local stack runs: the setting on, and a loopback public origin (edge/config.ts). */
function asLocalStack() {
  settings.STILLS_DEV_ROUTES = "1";
  settings.PUBLIC_BASE_URL = "http://127.0.0.1:8787";
}

afterEach(() => {
  delete settings.STILLS_DEV_ROUTES;
  settings.PUBLIC_BASE_URL = publicBaseUrl;
});

describe("the development SQL route", () => {
  it("runs statements in one batch for a loopback request with the internal token", async () => {
    asLocalStack();
    const res = await post("http://127.0.0.1:8787", {
      statements: [
        { sql: "SELECT ? + 1 AS n", params: [41] },
        { sql: "SELECT count(*) AS tables FROM sqlite_master WHERE name = 'accounts'" },
      ],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: [[{ n: 42 }], [{ tables: 1 }]] });
  });

  it("answers 404, as for no route, when the setting is off (the default)", async () => {
    const res = await post("http://127.0.0.1:8787", SELECT);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { data: { name: string } }).data.name).toBe("NotFound");
  });

  it("answers 404 to a request for a public host, even with the token and the setting on", async () => {
    asLocalStack();
    expect((await post("https://stills.test", SELECT)).status).toBe(404);
    expect((await post("https://api.stills.dev", SELECT)).status).toBe(404);
  });

  it("answers 404 without the token or with another one", async () => {
    asLocalStack();
    expect((await post("http://127.0.0.1:8787", SELECT, "")).status).toBe(404);
    expect((await post("http://127.0.0.1:8787", SELECT, `${TOKEN}x`)).status).toBe(404);
    expect((await post("http://localhost:8787", SELECT, "wrong-token-wrong")).status).toBe(404);
  });

  it("refuses a body that is not a list of statements", async () => {
    asLocalStack();
    const res = await post("http://127.0.0.1:8787", { sql: "SELECT 1" });
    expect(res.status).toBe(400);
  });

  it("cannot be turned on with a public origin, and production never sets it", () => {
    const secrets = { INTERNAL_TOKEN: "a".repeat(32), FILE_URL_SECRET: "b".repeat(32) };
    expect(() =>
      parseEdgeConfig({
        ...secrets,
        STILLS_DEV_ROUTES: "1",
        PUBLIC_BASE_URL: "https://api.stills.dev",
      }),
    ).toThrow(/STILLS_DEV_ROUTES/);
    expect(
      parseEdgeConfig({ ...secrets, STILLS_DEV_ROUTES: "1", PUBLIC_BASE_URL: "http://127.0.0.1:9" })
        .devRoutes,
    ).toBe(true);
    expect(parseEdgeConfig(secrets).devRoutes).toBe(false);
    expect(() => parseEdgeConfig({ ...secrets, STILLS_DEV_ROUTES: "yes" })).toThrow(
      /STILLS_DEV_ROUTES/,
    );
  });
});
