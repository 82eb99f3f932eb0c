// An OAuth consent makes a connector key, and that key counts against the account's key cap:
// approving again and again cannot mint keys (each with its own rate limit) without end.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { MAX_ACTIVE_KEYS } from "../../edge/auth/keys.ts";
import { issueConnectorKey } from "../../edge/oauth/connector-key.ts";
import { createAccount } from "./support/api.ts";

it("issues connector keys up to the account's key cap, then refuses", async () => {
  const account = await createAccount(); // holds one key already
  const names: string[] = [];
  for (let i = 1; i < MAX_ACTIVE_KEYS; i++) {
    const issued = await issueConnectorKey(env, account.accountId, `Client ${i}`);
    expect(issued.key).toMatch(/^stills_live_/);
    names.push(`MCP: Client ${i}`);
  }
  await expect(issueConnectorKey(env, account.accountId, "One too many")).rejects.toThrow(
    /already holds 25 API keys/,
  );
  const { results } = await env.DB.prepare(
    "SELECT name FROM api_keys WHERE account_id = ? AND revoked_at IS NULL AND name LIKE 'MCP: %'",
  )
    .bind(account.accountId)
    .all<{ name: string }>();
  expect(results.map((r) => r.name).sort()).toEqual(names.sort());
});
