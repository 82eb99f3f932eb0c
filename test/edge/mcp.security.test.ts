// /mcp counts requests against the key's rate limit, so a request must be one message: a
// JSON-RPC batch (removed from MCP in 2025-06-18) is refused before any of it runs.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { balanceOf, createAccount, freshIp, ORIGIN } from "./support/api.ts";

function post(body: unknown, auth: Record<string, string>) {
  return exports.default.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      "cf-connecting-ip": freshIp(),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...auth,
    },
    body: JSON.stringify(body),
  });
}

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

const remaining = (response: Response) => Number(response.headers.get("x-ratelimit-remaining"));

describe("JSON-RPC batches on /mcp", () => {
  it("a batch of 100 calls is refused as one request: it costs 1 of the limit, not 100, and none runs", async () => {
    const { auth } = await createAccount();
    const first = await post(call(1, "get_usage"), auth);
    expect(first.status).toBe(200);
    const before = remaining(first);
    expect(before).toBe(29);

    const batch = Array.from({ length: 100 }, (_, i) => call(i + 2, "get_usage"));
    const refused = await post(batch, auth);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toContain("application/json");
    const body = (await refused.json()) as {
      id: unknown;
      error: { code: number; message: string };
    };
    expect(body.id).toBeNull();
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain("batch");
    // Counted once, as the request it is.
    expect(remaining(refused)).toBe(before - 1);

    const after = await post(call(200, "get_usage"), auth);
    expect(after.status).toBe(200);
    expect(remaining(after)).toBe(before - 2);
  });

  it("no call of a refused batch runs: extract_frames in a batch creates no job and holds no credits", async () => {
    const { auth, accountId } = await createAccount();
    const batch = [1, 2, 3].map((id) =>
      call(id, "extract_frames", { url: "https://cdn.example.com/talk.mp4", timestamps: [id] }),
    );
    const refused = await post(batch, auth);
    expect(refused.status).toBe(400);
    const jobs = await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(jobs?.n).toBe(0);
    expect((await balanceOf(accountId))?.reserved).toBe(0);
  });

  it("a batch of one is refused too; the same message alone is answered", async () => {
    const { auth } = await createAccount();
    expect((await post([call(1, "get_usage")], auth)).status).toBe(400);
    const alone = await post(call(1, "get_usage"), auth);
    expect(alone.status).toBe(200);
  });
});
