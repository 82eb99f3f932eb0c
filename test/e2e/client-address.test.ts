// Issue 33, decision 0104: the local stack takes a client's address from its socket, as
// Cloudflare does, not from a CF-Connecting-IP (or X-Forwarded-For …) the client sent. The proxy
// in front of `wrangler dev` (scripts/lib/client-address-proxy.mjs) sets it, and streams bodies
// both ways unchanged. First through the real stack (a per-network limit, a ZIP, MCP), then the
// proxy alone against a stand-in for `wrangler dev`, where each header and byte can be seen.
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { unzipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../schema/api.ts";
import { startClientAddressProxy } from "../../scripts/lib/client-address-proxy.mjs";
import { freePort } from "../../scripts/lib/stack.mjs";
import { fetchFrom, freshLoopbackAddress } from "../support/from-address.ts";
import { makeTestVideo } from "../support/videos.ts";
import { call, type Harness, startHarness } from "./support/harness.ts";

/** Address headers a client might send to pass for another network. */
const FORGED = {
  "cf-connecting-ip": "203.0.113.9",
  "x-forwarded-for": "203.0.113.10",
  "true-client-ip": "203.0.113.11",
  "x-real-ip": "203.0.113.12",
  forwarded: "for=203.0.113.13",
};

describe("through the stack", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  /** A sign-in code request as the sign-in page's form posts it. */
  function askForCode(from: typeof fetch, email: string, headers: Record<string, string> = {}) {
    return from(`${h.stack.baseUrl}/sign-in`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: h.stack.baseUrl,
        ...headers,
      },
      body: new URLSearchParams({ email }).toString(),
      redirect: "manual",
    });
  }

  it("counts a client that sends CF-Connecting-IP as its socket's address; another address has its own bucket", async () => {
    const here = fetchFrom(freshLoopbackAddress());
    // The sign-in codes one network may ask for in a minute (edge/auth/code-limits.ts), each
    // for a different address so only the network's own limit is met.
    const spent = await Promise.all(
      Array.from({ length: 10 }, () => askForCode(here, `${crypto.randomUUID()}@example.com`)),
    );
    expect(spent.map((r) => r.status)).toEqual(Array(10).fill(303));
    // A forged address would be a fresh bucket if it were believed: it is not.
    const forged = await askForCode(here, `${crypto.randomUUID()}@example.com`, FORGED);
    expect(forged.status).toBe(429);
    expect(Number(forged.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await forged.text()).toContain("Too many sign-in codes were asked for just now");
    // A connection from another address is another network, whatever it says.
    const elsewhere = await askForCode(
      fetchFrom(freshLoopbackAddress()),
      `${crypto.randomUUID()}@example.com`,
      FORGED,
    );
    expect(elsewhere.status).toBe(303);
  });

  it("a ZIP the extractor uploaded and the API hands out passes both ways intact", async () => {
    const account = await h.newKey("starter");
    const video = h.serveVideo(
      "/media/address-zip.mp4",
      await makeTestVideo({ width: 640, height: 360, durationSeconds: 4 }),
    );
    const job = await call(h.stack, "POST", "/jobs?wait=true", {
      body: { url: video, timestamps: [0.5, 1.5, 2.5], output: "both" },
      headers: account.auth,
    });
    expect(job.body.status).toBe("completed");
    const zip = await fetch(job.body.zip_url);
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-type")).toBe("application/zip");
    const bytes = new Uint8Array(await zip.arrayBuffer());
    expect(bytes.length).toBe(job.body.zip_bytes);
    const entries = Object.values(unzipSync(bytes));
    expect(entries).toHaveLength(3);
    // Each frame in the ZIP is, byte for byte, the frame served on its own.
    const digest = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    const singles = await Promise.all(
      job.body.frames.map(async (f: { url: string }) =>
        digest(new Uint8Array(await (await fetch(f.url)).arrayBuffer())),
      ),
    );
    expect(entries.map(digest).sort()).toEqual(singles.sort());
  });

  it("MCP's streamable HTTP answers as an event stream through the proxy", async () => {
    const account = await h.newKey("starter");
    const response = await fetch(`${h.stack.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        ...account.auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });
    expect(response.status).toBe(200);
    const type = response.headers.get("content-type") ?? "";
    const text = await response.text();
    const json = type.includes("text/event-stream")
      ? JSON.parse(
          text
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5))
            .join(""),
        )
      : JSON.parse(text);
    expect(json).toMatchObject({ jsonrpc: "2.0", id: 7 });
    expect(json.result.tools.map((t: { name: string }) => t.name)).toContain("extract_frames");
  });
});

describe("the proxy alone", () => {
  /** A stand-in for `wrangler dev` that records what reaches it. */
  let upstream: http.Server;
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  let upstreamConnections = 0;
  let proxy: Awaited<ReturnType<typeof startClientAddressProxy>>;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => handler(req, res));
    upstream.on("connection", () => upstreamConnections++);
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    const { port } = upstream.address() as AddressInfo;
    proxy = await startClientAddressProxy({
      port: await freePort(),
      upstream: `http://127.0.0.1:${port}`,
    });
  });

  afterAll(async () => {
    await proxy?.close();
    upstream?.close();
  });

  it("sets CF-Connecting-IP from the socket and drops the address headers a client sent; the rest passes", async () => {
    let seen: http.IncomingMessage | undefined;
    handler = (req, res) => {
      seen = req;
      res.end("ok");
    };
    const address = freshLoopbackAddress();
    const response = await fetchFrom(address)(`${proxy.url}/v1/usage?x=1`, {
      headers: {
        ...FORGED,
        "cf-ipcountry": "XX",
        "x-forwarded-proto": "https",
        authorization: "Bearer k",
        cookie: "a=1; b=2",
        "x-custom": "kept",
      },
    });
    expect(await response.text()).toBe("ok");
    const req = seen as http.IncomingMessage;
    expect(req.url).toBe("/v1/usage?x=1");
    expect(req.headers["cf-connecting-ip"]).toBe(address);
    expect(req.headersDistinct["cf-connecting-ip"]).toEqual([address]);
    for (const name of [...Object.keys(FORGED).slice(1), "cf-ipcountry", "x-forwarded-proto"]) {
      expect(req.headers[name], name).toBeUndefined();
    }
    // The Host the client asked for reaches the edge (its URLs are made from it).
    expect(req.headers.host).toBe(new URL(proxy.url).host);
    expect(req.headers).toMatchObject({
      authorization: "Bearer k",
      cookie: "a=1; b=2",
      "x-custom": "kept",
    });
  });

  it("passes the status and every header back, each Set-Cookie on its own", async () => {
    handler = (_req, res) => {
      res.setHeader("set-cookie", ["a=1; Path=/; HttpOnly", "b=2; Path=/; Max-Age=0"]);
      res.setHeader("x-request-id", "r-1");
      res.writeHead(418, "Short and stout", { "content-type": "text/plain" });
      res.end("teapot");
    };
    const response = await fetch(`${proxy.url}/x`);
    expect(response.status).toBe(418);
    expect(response.statusText).toBe("Short and stout");
    expect(response.headers.getSetCookie()).toEqual([
      "a=1; Path=/; HttpOnly",
      "b=2; Path=/; Max-Age=0",
    ]);
    expect(response.headers.get("x-request-id")).toBe("r-1");
    expect(await response.text()).toBe("teapot");
  });

  it("streams an answer as it comes: the client has its first part before the edge writes the rest", async () => {
    const rest = randomBytes(8 * 1024 * 1024);
    let firstPartRead: () => void = () => {};
    const clientHasFirstPart = new Promise<void>((r) => {
      firstPartRead = r;
    });
    handler = async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      // Only once the client has read it: a proxy that held the answer back never gets here.
      await clientHasFirstPart;
      res.end(rest);
    };
    const response = await fetch(`${proxy.url}/events`);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    firstPartRead();
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
    expect(Buffer.concat(parts).equals(rest)).toBe(true);
  });

  it("streams an upload as it comes, byte for byte", async () => {
    const body = randomBytes(8 * 1024 * 1024);
    let firstPartArrived: () => void = () => {};
    const edgeHasFirstPart = new Promise<void>((r) => {
      firstPartArrived = r;
    });
    handler = (req, res) => {
      const hash = createHash("sha256");
      let bytes = 0;
      req.on("data", (chunk: Buffer) => {
        if (bytes === 0) firstPartArrived();
        bytes += chunk.length;
        hash.update(chunk);
      });
      req.on("end", () => res.end(JSON.stringify({ bytes, sha256: hash.digest("hex") })));
    };
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(body.subarray(0, 1024));
        // The rest only once the edge has the first part: a proxy that read the whole
        // upload before passing it on never lets this go on.
        await edgeHasFirstPart;
        controller.enqueue(body.subarray(1024));
        controller.close();
      },
    });
    const response = await fetch(`${proxy.url}/upload`, {
      method: "PUT",
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(await response.json()).toEqual({
      bytes: body.length,
      sha256: createHash("sha256").update(body).digest("hex"),
    });
  });

  it("keeps one connection to the edge alive across requests", async () => {
    handler = (_req, res) => res.end("ok");
    const before = upstreamConnections;
    for (let i = 0; i < 20; i++) expect(await (await fetch(`${proxy.url}/k`)).text()).toBe("ok");
    expect(upstreamConnections - before).toBeLessThanOrEqual(1);
  });

  it("answers 502 in the API's error shape when the edge does not answer", async () => {
    const closed = await freePort();
    const alone = await startClientAddressProxy({
      port: await freePort(),
      upstream: `http://127.0.0.1:${closed}`,
    });
    try {
      const response = await fetch(`${alone.url}/v1/jobs`, { method: "POST", body: "{}" });
      expect(response.status).toBe(502);
      const body = ErrorBodySchema.parse(await response.json());
      expect(body).toMatchObject({
        code: 502,
        name: "BadGateway",
        data: {
          name: "ServiceUnavailable",
          doc_url: `${alone.url}/docs/errors#ServiceUnavailable`,
        },
      });
      expect(body.data.request_id).toBe(response.headers.get("x-request-id"));
      expect(body.message).toContain("ECONNREFUSED");
    } finally {
      await alone.close();
    }
    // Closed means closed: nothing listens on its port any more.
    await expect(fetch(alone.url)).rejects.toThrow();
  });
});
