// The one exception to the address rules: the service's own sample videos (schema/samples.ts)
// are fetched from its origin even where private addresses are refused, and nothing else is:
// not another path, a query string, a dot segment, another port or host name for the same
// machine, nor where a sample path redirects. The "service" here is a server on 127.0.0.1,
// a loopback address the real rules refuse, as the local stack's edge is.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { defaultPolicy, openSource, SourceError } from "../../extractor/sources/index.ts";
import { isServiceSample } from "../../schema/samples.ts";
import type { TestServer } from "./support/servers.ts";
import { fileRoute, startTestServer } from "./support/servers.ts";

const SAMPLE_FILE = join(import.meta.dirname, "../../edge/samples/intro.mp4");

let service: TestServer;
let elsewhere: TestServer;
let redirecting: TestServer;

function options(serviceOrigin: string, anyPort = false): OpenSourceOptions {
  return {
    resolution: 720,
    allowPrivate: false,
    maxBytes: 50_000_000,
    deadlineMs: 20_000,
    // The real rules; with anyPort the port is no reason to refuse, so only the address is.
    policy: { ...defaultPolicy(false, serviceOrigin), anyPort },
  };
}

beforeAll(async () => {
  service = await startTestServer();
  service.route("/samples/intro.mp4", fileRoute(SAMPLE_FILE, { ranges: true }));
  service.route("/private.mp4", fileRoute(SAMPLE_FILE, { ranges: true }));
  elsewhere = await startTestServer();
  elsewhere.route("/samples/intro.mp4", fileRoute(SAMPLE_FILE, { ranges: true }));
  // A service whose sample path sends the reader on to a private path of its own, and to
  // another loopback server.
  redirecting = await startTestServer();
  redirecting.route("/samples/intro.mp4", (_req, res) =>
    res.writeHead(302, { location: "/private.mp4" }).end(),
  );
  redirecting.route("/private.mp4", fileRoute(SAMPLE_FILE, { ranges: true }));
});

afterAll(async () => {
  await Promise.all([service?.close(), elsewhere?.close(), redirecting?.close()]);
});

describe("the service's own samples", () => {
  it("are opened from the service's loopback origin with private addresses refused, every byte through ranged reads", async () => {
    const opened = await openSource(
      `${service.origin}/samples/intro.mp4`,
      "direct",
      options(service.origin),
    );
    try {
      const expected = await readFile(SAMPLE_FILE);
      expect(opened.contentLength).toBe((await stat(SAMPLE_FILE)).size);
      // What ffmpeg would read, through the relay: the sample's bytes exactly.
      const relayed = Buffer.from(await (await fetch(opened.input)).arrayBuffer());
      expect(relayed.equals(expected)).toBe(true);
    } finally {
      await opened.close();
    }
    const reads = service.requests.filter((r) => r.url === "/samples/intro.mp4");
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.range?.startsWith("bytes="))).toBe(true);
  });

  const refused: Array<[string, (origin: string) => string]> = [
    ["another path of the service", (o) => `${o}/private.mp4`],
    ["a sample path with a query string", (o) => `${o}/samples/intro.mp4?download=1`],
    ["a sample path with an empty query", (o) => `${o}/samples/intro.mp4?`],
    ["a dot segment out of /samples/", (o) => `${o}/samples/../private.mp4`],
    ["an encoded dot segment", (o) => `${o}/samples/%2e%2e/private.mp4`],
    ["a name that is not a sample", (o) => `${o}/samples/private.mp4`],
    ["an encoded sample name", (o) => `${o}/samples/intro%2Emp4`],
    [
      "the same machine by another name",
      (o) => `${o.replace("127.0.0.1", "localhost")}/samples/intro.mp4`,
    ],
    [
      "the same port on another loopback address",
      (o) => `${o.replace("127.0.0.1", "127.0.0.3")}/samples/intro.mp4`,
    ],
    [
      "a user name before the host",
      (o) => `${o.replace("http://", "http://user@")}/samples/intro.mp4`,
    ],
  ];

  for (const anyPort of [false, true]) {
    for (const [what, urlFor] of refused) {
      it(`refuses ${what}${anyPort ? " (any port allowed, so only the address refuses it)" : ""}`, async () => {
        const before = service.requests.length;
        const url = urlFor(service.origin);
        expect(isServiceSample(url, service.origin)).toBe(false);
        const error = await openSource(url, "direct", options(service.origin, anyPort)).catch(
          (e) => e,
        );
        expect(error).toBeInstanceOf(SourceError);
        expect(String(error.message)).toMatch(/refused destination|not allowed|loopback|local/);
        // Refused before any byte was asked for.
        expect(service.requests.length).toBe(before);
      });
    }

    it(`refuses a sample path on another port of the same machine${anyPort ? " (any port allowed)" : ""}`, async () => {
      const before = elsewhere.requests.length;
      const error = await openSource(
        `${elsewhere.origin}/samples/intro.mp4`,
        "direct",
        options(service.origin, anyPort),
      ).catch((e) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect(elsewhere.requests.length).toBe(before);
    });

    it(`refuses where a sample path redirects to${anyPort ? " (any port allowed)" : ""}`, async () => {
      const error = await openSource(
        `${redirecting.origin}/samples/intro.mp4`,
        "direct",
        options(redirecting.origin, anyPort),
      ).catch((e) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect(String(error.message)).toMatch(/refused destination/);
      // The sample path was asked (it is allowed); the private path it named never was.
      const paths = redirecting.requests.map((r) => r.url);
      expect(paths).toContain("/samples/intro.mp4");
      expect(paths).not.toContain("/private.mp4");
    });
  }

  it("is no exception without a service origin: the sample URL is refused like any loopback URL", async () => {
    const before = service.requests.length;
    const error = await openSource(`${service.origin}/samples/intro.mp4`, "direct", {
      ...options(service.origin),
      policy: defaultPolicy(false),
    }).catch((e) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(service.requests.length).toBe(before);
  });
});
