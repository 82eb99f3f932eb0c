// The dashboard's batches (decision 0381): the list shows each batch with its items counted and
// its charge, as GET /v1/batches has them; a batch's page lists all its items in link order,
// each linked to its job or saying why it has none; another account's batch and a bad id are a
// 404 page; an account without batches sees how to make one.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_BATCH_URLS } from "../../schema/batches.ts";
import { api } from "./support/api.ts";
import { signedInWithKey, Visitor } from "./support/visitor.ts";

const LINK = "https://cdn.example.com/clips/talk.mp4";
const LONG_LINK = `https://cdn.example.com/${"quarterly-all-hands-".repeat(8)}final.mp4`;

interface Item {
  status: "pending" | "completed" | "failed";
  url?: string;
  credits?: number;
  itemError?: string;
}

/**
 * A batch of the account's, its items as given (a job for each, but for pending items and
 * those that failed before they became one), `ended` as the lifecycle completes one.
 */
async function batchOf(accountId: string, items: Item[], ended = false) {
  const batchId = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO batches (id, account_id, state, options, webhook_url, item_count, request_hash,
       completed_at)
     VALUES (?1, ?2, ?3, '{"count":6,"format":"png"}', NULL, ?4, 'hash', ?5)`,
  )
    .bind(
      batchId,
      accountId,
      ended ? "completed" : "active",
      items.length,
      ended ? new Date().toISOString() : null,
    )
    .run();
  const jobIds: (string | null)[] = [];
  for (const [i, item] of items.entries()) {
    const url = item.url ?? LINK;
    if (item.status === "pending" || item.itemError) {
      await env.DB.prepare(
        "INSERT INTO batch_items (batch_id, idx, url, state, error) VALUES (?1, ?2, ?3, ?4, ?5)",
      )
        .bind(batchId, i + 1, url, item.itemError ? "failed" : "pending", item.itemError ?? null)
        .run();
      jobIds.push(null);
      continue;
    }
    const jobId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO jobs (id, account_id, status, url, source_url, platform, options, credits_charged)
       VALUES (?1, ?2, ?3, ?4, ?4, 'direct', '{}', ?5)`,
    )
      .bind(jobId, accountId, item.status, url, item.credits ?? 0)
      .run();
    await env.DB.prepare(
      "INSERT INTO batch_items (batch_id, idx, url, state, job_id) VALUES (?1, ?2, ?3, 'job', ?4)",
    )
      .bind(batchId, i + 1, url, jobId)
      .run();
    jobIds.push(jobId);
  }
  return { batchId, jobIds };
}

/** The rows of the page's table (data-item or data-batch-id), each row's text squeezed. */
function rows(html: string, attribute: string): { key: string; text: string }[] {
  const found: { key: string; text: string }[] = [];
  const pattern = new RegExp(`<tr ${attribute}="([^"]+)"[^>]*>([\\s\\S]*?)</tr>`, "g");
  for (const match of html.matchAll(pattern)) {
    const text = match[2]
      .replace(/<[^>]+>/g, " ")
      .replace(/\s+/g, " ")
      .trim();
    found.push({ key: match[1], text });
  }
  return found;
}

describe("the dashboard's batches", () => {
  it("lists each batch with its items counted and its charge, as the API does", async () => {
    const owner = await signedInWithKey();
    const first = await batchOf(
      owner.accountId,
      [
        { status: "completed", credits: 1 },
        { status: "completed", credits: 2 },
        { status: "failed" },
      ],
      true,
    );
    const second = await batchOf(owner.accountId, [
      { status: "completed", credits: 1 },
      { status: "pending" },
    ]);
    const page = await owner.visitor.get("/dashboard/batches");
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.text).toContain('aria-current="page">Batches<');
    const listed = rows(page.text, "data-batch-id");
    // Newest first: as GET /v1/batches lists them.
    const api_ = await api("GET", "/v1/batches", { headers: owner.auth });
    expect(listed.map((r) => r.key)).toEqual(api_.body.data.map((b: { id: string }) => b.id));
    expect(new Set(listed.map((r) => r.key))).toEqual(new Set([first.batchId, second.batchId]));
    const firstRow = listed.find((r) => r.key === first.batchId)?.text ?? "";
    expect(firstRow).toContain("3 links");
    expect(firstRow).toContain("count 6 · png");
    expect(firstRow).toContain("Completed");
    expect(firstRow).toContain("3 of 3 ended · 1 failed");
    // The credits cell: the jobs' 1 + 2.
    const credits = new RegExp(
      `data-batch-id="${first.batchId}"[\\s\\S]*?data-label="Credits"[^>]*>([^<]*)<`,
    ).exec(page.text);
    expect(credits?.[1].trim()).toBe("3");
    const secondRow = listed.find((r) => r.key === second.batchId)?.text ?? "";
    expect(secondRow).toContain("Running");
    expect(secondRow).toContain("1 of 2 ended");
    expect(page.text).toContain(`href="/dashboard/batches/${first.batchId}"`);
  });

  it("shows a batch's items in link order, each with its job or why it has none", async () => {
    const owner = await signedInWithKey();
    const { batchId, jobIds } = await batchOf(owner.accountId, [
      { status: "completed", credits: 1, url: LONG_LINK },
      {
        status: "failed",
        itemError: JSON.stringify({
          name: "InvalidUrl",
          message: "not a video link",
          userMessage: "That link is not a video we can read.",
        }),
      },
      { status: "pending" },
    ]);
    const page = await owner.visitor.get(`/dashboard/batches/${batchId}`);
    expect(page.status).toBe(200);
    const items = rows(page.text, "data-item");
    expect(items.map((r) => r.key)).toEqual(["1", "2", "3"]);
    expect(items[0].text).toContain(LONG_LINK);
    expect(items[0].text).toContain("Completed");
    expect(page.text).toContain(`href="/dashboard/jobs/${jobIds[0]}"`);
    expect(items[1].text).toContain("Failed");
    expect(items[1].text).toContain("That link is not a video we can read.");
    expect(items[1].text).toContain("—");
    expect(items[2].text).toContain("Waiting");
    // The summary: counts, charge and the options each item takes.
    const facts = page.text.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
    expect(facts).toContain("Items 2 of 3 ended · 1 failed");
    expect(facts).toContain("Waiting, queued, processing 1, 0, 0");
    expect(facts).toContain("Credits 1");
    expect(facts).toContain("Each item asks for count 6 · png");
    expect(facts).toContain(batchId);
    // The API counts the same: each status apart, the waiting item and the refused one too.
    const read = await api("GET", `/v1/batches/${batchId}`, { headers: owner.auth });
    expect(read.body.counts).toEqual({
      total: 3,
      pending: 1,
      queued: 0,
      processing: 0,
      completed: 1,
      failed: 1,
      expired: 0,
    });
  });

  it("counts an expired item apart from a completed one", async () => {
    const owner = await signedInWithKey();
    const { batchId, jobIds } = await batchOf(owner.accountId, [
      { status: "completed", credits: 1 },
      { status: "completed", credits: 1 },
    ]);
    await env.DB.prepare("UPDATE jobs SET expires_at = ?1 WHERE id = ?2")
      .bind(new Date(Date.now() - 60_000).toISOString(), jobIds[1])
      .run();
    const read = await api("GET", `/v1/batches/${batchId}`, { headers: owner.auth });
    expect(read.body.counts).toMatchObject({ total: 2, completed: 1, expired: 1 });
    expect(read.body.credits_charged).toBe(2);
    const page = await owner.visitor.get(`/dashboard/batches/${batchId}`);
    expect(rows(page.text, "data-item").map((r) => r.text.includes("Expired"))).toEqual([
      false,
      true,
    ]);
  });

  it("shows all of the largest batch's items on one page, in link order", async () => {
    const owner = await signedInWithKey();
    const many = Array.from({ length: MAX_BATCH_URLS }, () => ({ status: "pending" as const }));
    const { batchId } = await batchOf(owner.accountId, many);
    const all = Array.from({ length: MAX_BATCH_URLS }, (_, i) => String(i + 1));
    const page = await owner.visitor.get(`/dashboard/batches/${batchId}`);
    expect(page.status).toBe(200);
    expect(rows(page.text, "data-item").map((r) => r.key)).toEqual(all);
    expect(page.text).not.toContain('class="pager"');
    // A ?page= left from elsewhere changes nothing: a batch is one page.
    const again = await owner.visitor.get(`/dashboard/batches/${batchId}?page=2`);
    expect(again.status).toBe(200);
    expect(rows(again.text, "data-item").map((r) => r.key)).toEqual(all);
  });

  it("another account's batch, an unknown id and a malformed one are a 404 page", async () => {
    const owner = await signedInWithKey();
    const stranger = await signedInWithKey();
    const { batchId } = await batchOf(owner.accountId, [{ status: "pending" }]);
    for (const path of [
      `/dashboard/batches/${batchId}`,
      `/dashboard/batches/${crypto.randomUUID()}`,
      "/dashboard/batches/not-an-id",
    ]) {
      const page = await stranger.visitor.get(path);
      expect(page.status, path).toBe(404);
      expect(page.text, path).toContain("This account has no batch with that id.");
      expect(page.text, path).not.toContain(LINK);
    }
    // Signed out: sent to sign in, the batch unseen.
    const anonymous = await new Visitor().get(`/dashboard/batches/${batchId}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe(
      `/sign-in?next=${encodeURIComponent(`/dashboard/batches/${batchId}`)}`,
    );
    expect(anonymous.text).not.toContain(LINK);
  });

  it("an account without batches is told how to make one", async () => {
    const owner = await signedInWithKey();
    const page = await owner.visitor.get("/dashboard/batches");
    expect(page.status).toBe(200);
    expect(page.text).toContain("No batches yet.");
    expect(page.text).toContain('href="/docs/batches"');
    expect(rows(page.text, "data-batch-id")).toEqual([]);
  });
});
