// Hostile DASH manifests (decision 0333): every URL a manifest names, in every representation,
// is judged by the address rules before any is fetched, and bounded manifests refuse size,
// representations, entities and what is not read (live, encrypted, several periods). The public
// origin plays on 127.0.0.2; 127.0.0.1 stays private, and its server's log must stay empty.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { OpenSourceOptions } from "../../extractor/sources/index.ts";
import { openSource, SourceError } from "../../extractor/sources/index.ts";
import { PUBLIC_LOOPBACK, testPolicy } from "./support/policies.ts";
import type { TestServer } from "./support/servers.ts";
import { startTestServer } from "./support/servers.ts";

let origin: TestServer;
let privateHost: TestServer;

const options = (): OpenSourceOptions => ({
  resolution: 720,
  allowPrivate: false,
  policy: testPolicy(),
  maxBytes: 50_000_000,
  deadlineMs: 20_000,
});

function serve(path: string, text: string) {
  origin.route(path, (_req, res) =>
    res.writeHead(200, { "content-type": "application/dash+xml" }).end(text),
  );
}

const TEMPLATE =
  '<SegmentTemplate timescale="1000" duration="2000" initialization="init.mp4" media="s$Number$.m4s"/>';

/** A static one-period manifest around `sets` (AdaptationSets). */
function mpd(sets: string, head = 'type="static" mediaPresentationDuration="PT10S"'): string {
  return `<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" ${head}><Period>${sets}</Period></MPD>`;
}

function video(inner: string, attributes = 'id="v" bandwidth="100000" width="640" height="360"') {
  return `<AdaptationSet contentType="video" mimeType="video/mp4"><Representation ${attributes}>${inner}</Representation></AdaptationSet>`;
}

async function refusal(path: string): Promise<SourceError> {
  const error = await openSource(`${origin.origin}${path}`, "direct", options()).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
}

/** What the public origin was asked besides manifests. */
const fetchedMedia = () => origin.requests.map((r) => r.url).filter((u) => !u.endsWith(".mpd"));

beforeAll(async () => {
  origin = await startTestServer(PUBLIC_LOOPBACK);
  privateHost = await startTestServer();
  privateHost.route("/s1.m4s", (_req, res) => res.end("secret"));
});

afterEach(() => {
  expect(privateHost.requests, "nothing was asked of the private address").toEqual([]);
});

afterAll(async () => {
  await origin?.close();
  await privateHost?.close();
});

describe("hostile DASH manifests are refused before any private fetch", () => {
  it("a segment template on a private address", async () => {
    serve(
      "/private-template.mpd",
      mpd(
        video(
          `<SegmentTemplate timescale="1000" duration="2000" initialization="init.mp4" media="${privateHost.origin}/s$Number$.m4s"/>`,
        ),
      ),
    );
    const error = await refusal("/private-template.mpd");
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    // Not even the public init segment: the manifest was refused whole.
    expect(fetchedMedia()).toEqual([]);
  });

  it("a BaseURL on a private address, in a representation that would not be chosen", async () => {
    serve(
      "/private-base.mpd",
      mpd(
        video(TEMPLATE) +
          `<AdaptationSet contentType="audio"><BaseURL>${privateHost.origin}/</BaseURL><Representation id="a" bandwidth="1">${TEMPLATE}</Representation></AdaptationSet>`,
      ),
    );
    const error = await refusal("/private-base.mpd");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
    expect(fetchedMedia()).toEqual([]);
  });

  it("an MPD-level BaseURL on a private address", async () => {
    serve(
      "/private-root.mpd",
      mpd(video(TEMPLATE)).replace("<Period>", `<BaseURL>${privateHost.origin}/</BaseURL><Period>`),
    );
    const error = await refusal("/private-root.mpd");
    expect(error.message).toBe("refused destination: 127.0.0.1 is a loopback address");
  });

  it("10 000 representations", async () => {
    const many = Array.from(
      { length: 10_000 },
      (_, i) => `<Representation id="r${i}" bandwidth="${i + 1}">${TEMPLATE}</Representation>`,
    ).join("");
    serve(
      "/many.mpd",
      mpd(
        `<AdaptationSet contentType="video"><BaseURL>${privateHost.origin}/</BaseURL>${many}</AdaptationSet>`,
      ),
    );
    const error = await refusal("/many.mpd");
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain(
      "a DASH manifest that cannot be read: it lists more than 64 representations",
    );
  });

  it("a manifest over the byte bound", async () => {
    const filler = "<!-- filler -->".repeat(300_000);
    serve("/huge.mpd", mpd(video(TEMPLATE) + filler));
    const error = await refusal("/huge.mpd");
    expect(error.name).toBe("DownloadFailed");
    expect(error.message).toContain("is over 4194304 bytes");
    expect(fetchedMedia()).toEqual([]);
  });

  it("a DOCTYPE (entity expansion) is not read", async () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<MPD type="static">&b;</MPD>`;
    serve("/entities.mpd", bomb);
    const error = await refusal("/entities.mpd");
    expect(error.name).toBe("InvalidUrl");
    expect(error.message).toContain("it has a DOCTYPE or declaration, which is not read");
  });

  it("live, encrypted, several periods, no video: each with its reason, nothing fetched", async () => {
    serve("/live.mpd", mpd(video(TEMPLATE), 'type="dynamic"'));
    expect((await refusal("/live.mpd")).message).toContain(
      'it is a live manifest (type="dynamic"); only static (VOD) manifests are read',
    );
    serve(
      "/drm.mpd",
      mpd(video(`<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011"/>${TEMPLATE}`)),
    );
    expect((await refusal("/drm.mpd")).message).toContain(
      "its video is encrypted (ContentProtection), which Stills does not read",
    );
    serve("/periods.mpd", mpd(video(TEMPLATE)).replace("</Period>", "</Period><Period></Period>"));
    expect((await refusal("/periods.mpd")).message).toContain(
      "it has 2 periods; only manifests of one period are read",
    );
    serve(
      "/audio.mpd",
      mpd(
        `<AdaptationSet contentType="audio"><Representation id="a" bandwidth="1">${TEMPLATE}</Representation></AdaptationSet>`,
      ),
    );
    expect((await refusal("/audio.mpd")).message).toContain("it has no video representation");
    expect(fetchedMedia()).toEqual([]);
  });
});
