// The DASH manifest reader as data (decision 0333): BaseURL at every level, attributes inherited
// from the AdaptationSet, SegmentTimeline repeats (r = -1 to the period's end), $Time$ and
// width formats, and the XML reader's refusals (DOCTYPE, unknown entities, unclosed elements).
import { describe, expect, it } from "vitest";
import {
  ManifestProblem,
  parseManifest,
  seconds,
  segmentsFromSidx,
} from "../../extractor/sources/dash-manifest.ts";
import { parseXml, XmlProblem } from "../../extractor/sources/dash-xml.ts";

const base = new URL("https://cdn.example/videos/show/manifest.mpd");

describe("parseManifest", () => {
  it("resolves BaseURL level by level and inherits the AdaptationSet's template", () => {
    const manifest = parseManifest(
      `<?xml version="1.0" encoding="utf-8"?>
<!-- a comment before the root -->
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1M0.5S">
  <BaseURL>https://media.example/root/</BaseURL>
  <Period duration="PT9S">
    <BaseURL>period/</BaseURL>
    <AdaptationSet mimeType="video/mp4" codecs="avc1.64001f" width="1280" height="720">
      <BaseURL>set/</BaseURL>
      <SegmentTemplate timescale="1000" initialization="$RepresentationID$/init.mp4"
        media="$RepresentationID$/$Number%04d$-$Bandwidth$.m4s" startNumber="7" duration="4000"/>
      <Representation id="hd" bandwidth="3000000"><BaseURL>rep/</BaseURL></Representation>
      <Representation id="sd" bandwidth="800000" width="640" height="360"/>
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4">
      <Representation id="en" bandwidth="128000"><SegmentTemplate media="a$Number$.m4s" duration="2" /></Representation>
    </AdaptationSet>
  </Period>
</MPD>`,
      base,
    );
    expect(manifest.duration).toBe(9);
    const [hd, sd, audio] = manifest.representations;
    expect(hd.init?.url.href).toBe("https://media.example/root/period/set/rep/hd/init.mp4");
    expect(hd.segments?.map((s) => s.url.href)).toEqual([
      "https://media.example/root/period/set/rep/hd/0007-3000000.m4s",
      "https://media.example/root/period/set/rep/hd/0008-3000000.m4s",
      "https://media.example/root/period/set/rep/hd/0009-3000000.m4s",
    ]);
    expect(hd.segments?.map((s) => [s.start, s.duration])).toEqual([
      [0, 4],
      [4, 4],
      [8, 4],
    ]);
    expect([hd.width, hd.height, sd.width, sd.height]).toEqual([1280, 720, 640, 360]);
    expect(sd.segments?.[0].url.href).toBe(
      "https://media.example/root/period/set/sd/0007-800000.m4s",
    );
    expect(audio.segments).toHaveLength(9 / 2 + 0.5);
  });

  it("repeats timeline entries, to the period's end for r=-1, and names $Time$", () => {
    const manifest = parseManifest(
      `<MPD type="static" mediaPresentationDuration="PT10S"><Period><AdaptationSet contentType="video">
        <Representation id="v" bandwidth="1">
          <SegmentTemplate timescale="90000" media="t$Time$.m4s" initialization="i.mp4">
            <SegmentTimeline><S t="900" d="180000" r="1"/><S d="90000"/><S d="180000" r="-1"/></SegmentTimeline>
          </SegmentTemplate>
        </Representation></AdaptationSet></Period></MPD>`,
      base,
    );
    const segments = manifest.representations[0].segments ?? [];
    expect(segments.map((s) => s.url.pathname.split("/").pop())).toEqual([
      "t900.m4s",
      "t180900.m4s",
      "t360900.m4s",
      "t450900.m4s",
      "t630900.m4s",
      "t810900.m4s",
    ]);
    // The last one runs past the period's end (10 s): segments cover it.
    expect(segments.map((s) => s.start)).toEqual([0, 2, 4, 5, 7, 9]);
  });

  it("refuses what it cannot read, with the reason", () => {
    const refused = (text: string) => {
      try {
        parseManifest(text, base);
      } catch (error) {
        expect(error).toBeInstanceOf(ManifestProblem);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(refused("<html><body>hi</body></html>")).toBe("its root element is not <MPD>");
    expect(
      refused(
        '<MPD type="static"><Period><AdaptationSet><Representation id="v"/></AdaptationSet></Period></MPD>',
      ),
    ).toContain("a representation has no SegmentTemplate, SegmentList or SegmentBase");
    expect(
      refused(
        '<MPD type="static" mediaPresentationDuration="PT4S"><Period><AdaptationSet><Representation id="v"><SegmentTemplate media="file:///etc/passwd" duration="1"/></Representation></AdaptationSet></Period></MPD>',
      ),
    ).toBe("it names a file: URL; only http and https are read");
    expect(
      refused(
        '<MPD type="static" mediaPresentationDuration="PT100000S"><Period><AdaptationSet><Representation id="v"><SegmentTemplate media="$Number$" duration="1"/></Representation></AdaptationSet></Period></MPD>',
      ),
    ).toBe("a representation has more than 20000 segments");
    expect(
      refused('<MPD type="static"><Period><AdaptationSet>&lol;</AdaptationSet></Period></MPD>'),
    ).toContain("it names an unknown entity &lol;");
  });

  it("reads ISO 8601 durations", () => {
    expect(seconds("PT1H2M3.5S")).toBe(3723.5);
    expect(seconds("P1DT1S")).toBe(86401);
    expect(() => seconds("1 hour")).toThrow(ManifestProblem);
  });
});

describe("the XML reader", () => {
  const bounds = { maxDepth: 4, maxElements: 10 };
  it("decodes the predefined entities and character references, and CDATA", () => {
    const root = parseXml('<a x="&lt;&amp;&#x41;&#66;"><b><![CDATA[<raw>]]></b></a>', bounds);
    expect(root.attributes.get("x")).toBe("<&AB");
    expect(root.children[0].text).toBe("<raw>");
  });
  it("refuses a DOCTYPE, nesting and counts past its bounds, and broken documents", () => {
    const why = (text: string) => {
      try {
        parseXml(text, bounds);
      } catch (error) {
        expect(error).toBeInstanceOf(XmlProblem);
        return (error as Error).message;
      }
      throw new Error("not refused");
    };
    expect(why('<!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>')).toContain("DOCTYPE");
    expect(why("<a><a><a><a><a></a></a></a></a></a>")).toContain("nest deeper than 4");
    expect(why(`<a>${"<b/>".repeat(10)}</a>`)).toContain("more than 10 elements");
    expect(why("<a><b></a>")).toContain("</a> closes nothing open");
    expect(why("<a>")).toContain("<a> is never closed");
    expect(why('<a x="1" x="2"/>')).toContain("an attribute is repeated");
  });
});

describe("segmentsFromSidx", () => {
  it("turns a sidx's references into byte ranges after it", () => {
    const sidx = Buffer.alloc(32 + 24);
    sidx.writeUInt32BE(sidx.length, 0);
    sidx.write("sidx", 4, "latin1");
    sidx.writeUInt32BE(1, 12); // track
    sidx.writeUInt32BE(1000, 16); // timescale
    sidx.writeUInt32BE(0, 20); // earliest time
    sidx.writeUInt32BE(10, 24); // first offset
    sidx.writeUInt16BE(2, 30);
    sidx.writeUInt32BE(500, 32);
    sidx.writeUInt32BE(2000, 36);
    sidx.writeUInt32BE(700, 44);
    sidx.writeUInt32BE(1500, 48);
    const file = new URL("https://cdn.example/v.mp4");
    const segments = segmentsFromSidx(sidx, file, { offset: 800, length: sidx.length });
    expect(segments.map((s) => [s.range?.offset, s.range?.length, s.start, s.duration])).toEqual([
      [800 + 56 + 10, 500, 0, 2],
      [800 + 56 + 10 + 500, 700, 2, 1.5],
    ]);
    sidx.writeUInt32BE(0x80000000 + 500, 32);
    expect(() => segmentsFromSidx(sidx, file, { offset: 800, length: 56 })).toThrow(
      "points at other indexes",
    );
  });
});
