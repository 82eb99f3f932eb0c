// One suite for every authenticated operation: the same credential checks, the same error
// shape, rate headers on each answer, and no plaintext key anywhere in D1. The operations come
// from the OpenAPI document the worker serves, so a route added later is covered here without
// anyone editing this file. An operation that omits `security` is checked as authenticated:
// only a declared `security: []` makes a route public, so forgetting the declaration fails here.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { generateApiKey, KEY_PREFIX } from "../../schema/api-keys.ts";
import { api, createAccount, openApiDocument } from "./support/api.ts";

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  items?: JsonSchema;
  required?: string[];
  properties?: Record<string, JsonSchema>;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema };

type Operation = {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: JsonSchema }> };
};

type Document = {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
};

/** What the spec (§4) names as needing a key; the document must declare at least these. */
const SPEC_AUTHENTICATED = ["POST /jobs", "GET /jobs", "GET /jobs/{id}", "GET /usage"];
const HTTP_METHODS = ["get", "put", "post", "delete", "patch"];
const PATH_ID = "00000000-0000-4000-8000-000000000000";
/** A public, harmless link: a body's `uri` fields must pass validation, not be fetched. */
const SAMPLE_URL = "https://example.com/video.mp4";

/** The smallest value the schema accepts: required properties only, lower bounds, first enum. */
function minimalValue(schema: JsonSchema, doc: Document): unknown {
  if (schema.$ref) {
    const name = schema.$ref.replace("#/components/schemas/", "");
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`the document does not define ${schema.$ref}`);
    return minimalValue(target, doc);
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const variant = schema.allOf?.[0] ?? schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return minimalValue(variant, doc);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((name) => [
          name,
          minimalValue(schema.properties?.[name] ?? {}, doc),
        ]),
      );
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () =>
        minimalValue(schema.items ?? {}, doc),
      );
    case "integer":
    case "number":
      return schema.minimum ?? (schema.exclusiveMinimum ?? 0) + 1;
    case "boolean":
      return false;
    case "string":
      if (schema.format === "uri" || schema.format === "url") return SAMPLE_URL;
      if (schema.format === "uuid") return PATH_ID;
      if (schema.format === "email") return "someone@example.com";
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    default:
      throw new Error(`cannot make a value for the schema ${JSON.stringify(schema)}`);
  }
}

type Target = { label: string; method: string; path: string; body?: unknown };

/** One request per authenticated operation: path ids filled, required query and body minimal. */
function authenticatedTargets(doc: Document): Target[] {
  const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, "");
  const targets: Target[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation || operation.security?.length === 0) continue;
      const parameters = operation.parameters ?? [];
      // Every id in our paths is a UUID; an unknown one still has to be refused as 401 first.
      const path = template.replace(/\{[^}]+\}/g, PATH_ID);
      const query = new URLSearchParams(
        parameters
          .filter((p) => p.in === "query" && p.required)
          .map((p) => [p.name, String(minimalValue(p.schema ?? {}, doc))]),
      );
      const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
      targets.push({
        label: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        path: `${base}${path}${query.size ? `?${query}` : ""}`,
        body: bodySchema ? minimalValue(bodySchema, doc) : undefined,
      });
    }
  }
  return targets;
}

const document = (await openApiDocument()) as unknown as Document;
const TARGETS = authenticatedTargets(document);

it("the document declares every operation the spec names as authenticated, with both headers", () => {
  expect(TARGETS.map((target) => target.label)).toEqual(expect.arrayContaining(SPEC_AUTHENTICATED));
  for (const label of SPEC_AUTHENTICATED) {
    const [method, path] = label.split(" ");
    const schemes = document.paths[path][method.toLowerCase()].security?.flatMap(Object.keys);
    expect(schemes, label).toEqual(expect.arrayContaining(["bearerAuth", "apiKeyHeader"]));
  }
});

it("builds the minimal create-job body from the document's required fields", () => {
  const create = TARGETS.find((target) => target.label === "POST /jobs");
  expect(create?.body).toEqual({ url: SAMPLE_URL });
});

it("covers a route it has never seen, unless it is declared public", () => {
  const later: Document = {
    servers: [{ url: "https://stills.test/v1" }],
    paths: {
      "/webhooks/{id}/replay": {
        post: {
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          requestBody: {
            content: {
              "application/json": {
                schema: { $ref: "#/components/schemas/Replay" },
              },
            },
          },
        },
      },
      "/status": { get: { security: [] } },
    },
    components: {
      schemas: {
        Replay: {
          type: "object",
          required: ["attempts", "events"],
          properties: {
            attempts: { type: "integer", minimum: 1 },
            events: { type: "array", minItems: 1, items: { enum: ["job.completed"] } },
            note: { type: "string" },
          },
        },
      },
    },
  };
  expect(authenticatedTargets(later)).toEqual([
    {
      label: "POST /webhooks/{id}/replay",
      method: "POST",
      path: `/v1/webhooks/${PATH_ID}/replay`,
      body: { attempts: 1, events: ["job.completed"] },
    },
  ]);
});

describe.each(TARGETS)("$label", (target) => {
  const call = (headers: Record<string, string>) =>
    api(target.method, target.path, { body: target.body, headers });

  it("without a credential answers 401 AuthenticationRequired, counted against the address", async () => {
    const res = await call({});
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({
      name: "NotAuthenticated",
      code: 401,
      className: "not-authenticated",
      data: { name: "AuthenticationRequired" },
    });
    expect(res.body.data.userMessage.length).toBeGreaterThan(0);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(Number(res.headers.get("X-RateLimit-Remaining"))).toBeLessThan(60);
  });

  it.each([
    ["a Bearer value without the key prefix", { authorization: "Bearer sk_live_abcdef" }],
    ["a Basic credential", { authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty Bearer value", { authorization: "Bearer " }],
  ])("with %s answers InvalidApiKey malformed", async (_label, headers) => {
    const res = await call(headers);
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "malformed" });
  });

  it.each([
    ["an unknown well-formed key", () => generateApiKey()],
    ["a key whose checksum does not match", () => `${generateApiKey().slice(0, -1)}0`],
    ["a prefixed key of the wrong length", () => `${KEY_PREFIX}abc`],
  ])("with %s answers InvalidApiKey invalid", async (_label, makeKey) => {
    const key = makeKey();
    for (const headers of [{ authorization: `Bearer ${key}` }, { "x-api-key": key }] as Record<
      string,
      string
    >[]) {
      const res = await call(headers);
      expect(res.status).toBe(401);
      expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
    }
  });

  it("takes any X-API-Key value as a key, so one without the prefix is invalid (spec §5.7)", async () => {
    const res = await call({ "x-api-key": "not-a-stills-key" });
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
  });

  it("refuses a revoked key as invalid", async () => {
    const account = await createAccount();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), account.keyId)
      .run();
    const res = await call(account.auth);
    expect(res.status).toBe(401);
    expect(res.body.data).toMatchObject({ name: "InvalidApiKey", reason: "invalid" });
  });

  // A 400 here would mean the generated request was refused for its shape, and the checks
  // above would prove nothing about the credential; so the request must be valid, too.
  it("accepts a valid key in either header, counting against the key's plan", async () => {
    const account = await createAccount();
    for (const headers of [account.auth, { "x-api-key": account.key }]) {
      const res = await call(headers);
      expect([400, 401], JSON.stringify(res.body)).not.toContain(res.status);
      expect(res.headers.get("X-RateLimit-Limit")).toBe("30");
    }
  });
});

it("keeps only SHA-256 hashes of keys in D1", async () => {
  const account = await createAccount();
  const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
    .bind(account.keyId)
    .first<Record<string, string>>();
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(account.key)),
  );
  expect(row?.key_hash).toBe([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
  const secret = account.key.slice(KEY_PREFIX.length);
  for (const table of ["api_keys", "accounts", "credit_ledger"]) {
    const { results } = await env.DB.prepare(`SELECT * FROM ${table}`).all();
    expect(JSON.stringify(results), table).not.toContain(secret);
  }
});
