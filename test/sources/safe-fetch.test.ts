import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceError } from "../../extractor/sources/errors.ts";
import { defaultPolicy } from "../../extractor/sources/policy.ts";
import { ByteBudget, readBody, safeFetch } from "../../extractor/sources/safe-fetch.ts";
import { PRIVATE_LOOPBACK, PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";

/** Larger than the socket and stream buffers, so a paused reader really stops the socket. */
const LARGE_BYTES = 32 * 1024 * 1024;

let publicServer: TestServer;
let privateServer: TestServer;

/**
 * A server on the private loopback address and one on the public, on the same port. The
 * private address is the busy one (every stack and client of the suite uses 127.0.0.1), so its
 * server takes a free port first and the public one follows; a port another process took on
 * the public address in between means another try. (Binding the public one first once failed
 * a run with EADDRINUSE: another process held that port on 127.0.0.1.)
 */
async function serversOnOnePort(): Promise<{ twin: TestServer; rightful: TestServer }> {
  for (let attempt = 1; ; attempt += 1) {
    const twin = await startTestServer(PRIVATE_LOOPBACK);
    try {
      return { twin, rightful: await startTestServer(PUBLIC_LOOPBACK, twin.port) };
    } catch (error) {
      await twin.close();
      if (attempt >= 5 || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    }
  }
}

beforeAll(async () => {
  publicServer = await startTestServer(PUBLIC_LOOPBACK);
  privateServer = await startTestServer(PRIVATE_LOOPBACK);
  publicServer.route("/hello", (_req, res) => res.end("hello from public"));
  privateServer.route("/secret", (_req, res) => res.end("secret"));
  publicServer.route("/to-private", (_req, res) => {
    res.writeHead(302, { location: `${privateServer.origin}/secret` }).end();
  });
  publicServer.route("/to-private-name", (_req, res) => {
    res.writeHead(301, { location: `http://sneaky.test:${privateServer.port}/secret` }).end();
  });
  publicServer.route("/to-file", (_req, res) =>
    res.writeHead(302, { location: "file:///etc/passwd" }).end(),
  );
  publicServer.route("/to-broken", (_req, res) =>
    res.writeHead(302, { location: "http://[" }).end(),
  );
  publicServer.route("/to-metadata", (_req, res) => {
    res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
  });
  publicServer.route("/chain", (req, res) => {
    const left = Number(new URL(req.url ?? "", "http://x").searchParams.get("left"));
    if (left === 0) res.end("end of chain");
    else res.writeHead(302, { location: `/chain?left=${left - 1}` }).end();
  });
  publicServer.route("/big", (_req, res) => res.end(Buffer.alloc(300_000, 1)));
  publicServer.route("/never", () => {});
  publicServer.route("/large", (_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": LARGE_BYTES });
    res.end(Buffer.alloc(LARGE_BYTES, 7));
  });
  publicServer.route("/stall", (_req, res) => {
    res.writeHead(200, { "content-length": "1000" });
    res.write("x".repeat(10));
  });
  publicServer.route("/echo-headers", (req, res) => res.end(JSON.stringify(req.headers)));
  publicServer.route("/cross-origin", (_req, res) => {
    res.writeHead(302, { location: `http://other.test:${publicServer.port}/echo-headers` }).end();
  });
});

afterAll(async () => {
  await publicServer.close();
  await privateServer.close();
});

async function refusal(promise: Promise<unknown>): Promise<SourceError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
}

describe("safeFetch address rules", () => {
  it("fetches from an address the policy calls public", async () => {
    const response = await safeFetch(`${publicServer.origin}/hello`, { policy: testPolicy() });
    expect(response.status).toBe(200);
    expect((await readBody(response.body, 1000)).toString()).toBe("hello from public");
  });

  it("refuses a private literal address before connecting", async () => {
    const before = privateServer.requests.length;
    const error = await refusal(
      safeFetch(`${privateServer.origin}/secret`, { policy: testPolicy() }),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toContain("loopback");
    expect(privateServer.requests.length).toBe(before);
  });

  it("refuses a redirect from a public host to a private one at the hop", async () => {
    const before = privateServer.requests.length;
    const error = await refusal(
      safeFetch(`${publicServer.origin}/to-private`, { policy: testPolicy() }),
    );
    expect(error.message).toMatch(/refused destination: 127\.0\.0\.1 is a loopback address/);
    expect(privateServer.requests.length).toBe(before);
  });

  // Moved here from test/edge/hostile-input.test.ts when the edge stopped asking links
  // (decision 0260): a Location that is not a URL is refused, not thrown.
  it("refuses a redirect to a Location that is not a URL", async () => {
    const error = await refusal(
      safeFetch(`${publicServer.origin}/to-broken`, { policy: testPolicy() }),
    );
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toMatch(/redirect|not a URL|invalid/i);
  });

  it("refuses a redirect to a name that resolves to a private address", async () => {
    const policy = testPolicy({ "sneaky.test": [PRIVATE_LOOPBACK] });
    const error = await refusal(safeFetch(`${publicServer.origin}/to-private-name`, { policy }));
    expect(error.message).toContain("sneaky.test resolves to 127.0.0.1 is a loopback address");
  });

  it("refuses a name when any of its addresses is private", async () => {
    const policy = testPolicy({ "mixed.test": [PUBLIC_LOOPBACK, PRIVATE_LOOPBACK] });
    const error = await refusal(
      safeFetch(`http://mixed.test:${publicServer.port}/hello`, { policy }),
    );
    expect(error.message).toContain("loopback");
  });

  it("connects only to the address it checked, even when DNS changes its answer (rebinding)", async () => {
    let calls = 0;
    const rebinding = () => (++calls % 2 === 1 ? [PUBLIC_LOOPBACK] : [PRIVATE_LOOPBACK]);
    const policy = testPolicy({ "rebind.test": rebinding });
    // Same port on both loopback addresses, so a connection to the wrong one would succeed.
    const { twin, rightful } = await serversOnOnePort();
    twin.route("/hello", (_req, res) => res.end("REBOUND"));
    rightful.route("/hello", (_req, res) => res.end("hello from public"));
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        try {
          const response = await safeFetch(`http://rebind.test:${rightful.port}/hello`, {
            policy,
          });
          outcomes.push((await readBody(response.body, 100)).toString());
        } catch (error) {
          outcomes.push((error as Error).message.includes("loopback") ? "refused" : "other");
        }
      }
      expect(outcomes).toContain("hello from public");
      expect(outcomes).toContain("refused");
      expect(outcomes).not.toContain("other");
      expect(twin.requests.length).toBe(0);
    } finally {
      await twin.close();
      await rightful.close();
    }
  });

  it.each([
    ["/to-file", "scheme file:"],
    ["/to-metadata", "169.254.169.254 is a link-local address"],
  ])("refuses the redirect %s", async (path, reason) => {
    const error = await refusal(
      safeFetch(`${publicServer.origin}${path}`, { policy: testPolicy() }),
    );
    expect(error.message).toContain(reason);
  });

  const corpus: Array<[string, string]> = [
    ["http://2130706433/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://[::]/", "unspecified"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://user:pw@example.com/", "user name or password"],
    ["http://example.com@127.0.0.1/", "user name or password"],
    ["http://169.254.169.254/", "link-local"],
    ["http://[fd00:ec2::254]/", "unique local"],
    ["http://100.100.100.200/", "carrier-grade"],
    ["http://metadata.google.internal/", "metadata"],
    ["http://example.com:8080/", "port 8080"],
    ["ftp://example.com/a.mp4", "scheme ftp:"],
    ["gopher://example.com/", "scheme gopher:"],
    ["data:text/plain,hi", "scheme data:"],
    ["file:///etc/passwd", "scheme file:"],
  ];
  it.each(corpus)("default policy refuses %s", async (url, reason) => {
    const error = await refusal(safeFetch(url, { policy: defaultPolicy(false) }));
    expect(error.message).toContain(reason);
  });
});

describe("safeFetch limits", () => {
  it("follows five redirects and refuses the sixth", async () => {
    const policy = testPolicy();
    const five = await safeFetch(`${publicServer.origin}/chain?left=5`, { policy });
    expect((await readBody(five.body, 100)).toString()).toBe("end of chain");
    expect(five.redirects).toHaveLength(5);
    const error = await refusal(safeFetch(`${publicServer.origin}/chain?left=6`, { policy }));
    expect(error.message).toContain("more than 5 redirects");
  });

  it("stops a body at the byte budget", async () => {
    const budget = new ByteBudget(100_000);
    const response = await safeFetch(`${publicServer.origin}/big`, {
      policy: testPolicy(),
      budget,
    });
    const error = await refusal(readBody(response.body, 1_000_000));
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toContain("100000-byte limit");
    expect(budget.read).toBeGreaterThan(100_000);
    expect(budget.read).toBeLessThan(300_000);
  });

  it("gives up on a server that never answers", async () => {
    const started = Date.now();
    const error = await refusal(
      safeFetch(`${publicServer.origin}/never`, { policy: testPolicy(), answerTimeoutMs: 300 }),
    );
    expect(error.message).toContain("no answer");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("gives up on a body that goes silent", async () => {
    const response = await safeFetch(`${publicServer.origin}/stall`, {
      policy: testPolicy(),
      idleTimeoutMs: 300,
    });
    const error = await refusal(readBody(response.body, 10_000));
    expect(error.name).toBe("DownloadFailed");
  });

  it("does not count a reader holding the body paused as the origin going silent", async () => {
    const response = await safeFetch(`${publicServer.origin}/large`, {
      policy: testPolicy(),
      idleTimeoutMs: 300,
    });
    const reader = response.body;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      reader.once("data", (chunk: Buffer) => {
        received += chunk.length;
        // Backpressure: the consumer stops reading for three idle timeouts.
        reader.pause();
        setTimeout(() => {
          reader.on("data", (more: Buffer) => {
            received += more.length;
          });
          reader.resume();
        }, 1000);
      });
      reader.on("end", resolve);
      reader.on("error", reject);
    });
    expect(received).toBe(LARGE_BYTES);
  });

  it("honours the caller's abort signal", async () => {
    const error = await refusal(
      safeFetch(`${publicServer.origin}/never`, {
        policy: testPolicy(),
        signal: AbortSignal.timeout(200),
      }),
    );
    expect(error.name).toBe("DownloadFailed");
  });

  it("drops credentials when a redirect leaves the origin", async () => {
    const policy = testPolicy({ "other.test": [PUBLIC_LOOPBACK] });
    const response = await safeFetch(`${publicServer.origin}/cross-origin`, {
      policy,
      headers: { authorization: "Bearer secret", cookie: "a=b", "x-kept": "yes" },
    });
    const seen = JSON.parse((await readBody(response.body, 10_000)).toString());
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen["x-kept"]).toBe("yes");
  });

  it("posts a webhook body with allowPrivate on loopback", async () => {
    const response = await safeFetch(`${privateServer.origin}/secret`, {
      policy: defaultPolicy(true),
      method: "POST",
      body: JSON.stringify({ type: "job.completed" }),
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(200);
    await readBody(response.body, 100);
  });
});
