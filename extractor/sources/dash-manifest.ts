// DASH manifests (MPD, ISO/IEC 23009-1) as data, read with bounds (decision 0333): the video
// representations of a static, single-period manifest, and for each its init segment and media
// segments, from SegmentTemplate ($Number$ or $Time$, with or without SegmentTimeline),
// SegmentList, or SegmentBase (whose segments come from the file's own sidx, fetched later).
// Every BaseURL level is resolved in turn. Nothing here fetches.

import type { XmlElement } from "./dash-xml.ts";
import { parseXml, XmlProblem } from "./dash-xml.ts";
import type { ByteRange, Variant } from "./hls-playlist.ts";

/** Most bytes a manifest may have (a 3-hour SegmentTimeline of 2-second segments is ~1 MB). */
export const MANIFEST_BYTES = 4 * 1024 * 1024;
/** Most representations a manifest may list (all adaptation sets, audio included). */
export const MAX_REPRESENTATIONS = 64;
/** Most segments one representation may have (11 hours of 2-second segments). */
export const MAX_SEGMENTS = 20_000;
const MAX_ELEMENTS = 200_000;
const MAX_DEPTH = 16;

export class ManifestProblem extends Error {}

export interface DashSegment {
  url: URL;
  range: ByteRange | null;
  /** Seconds from the representation's first segment. */
  start: number;
  duration: number;
}

export interface DashRepresentation extends Variant {
  id: string;
  /** Every URL this representation names (init, segments, its sidx file), to judge. */
  init: { url: URL; range: ByteRange | null } | null;
  /** null for SegmentBase: the segments are in the sidx at `index`. */
  segments: DashSegment[] | null;
  /** SegmentBase: the file and the byte range of its sidx. */
  index: { url: URL; range: ByteRange } | null;
}

export interface Manifest {
  representations: DashRepresentation[];
  /** Seconds, from mediaPresentationDuration or the period's duration (null when neither). */
  duration: number | null;
}

/** Parses a manifest, or throws ManifestProblem saying why it is refused. */
export function parseManifest(text: string, base: URL): Manifest {
  if (text.length > MANIFEST_BYTES) {
    throw new ManifestProblem(`it is larger than ${MANIFEST_BYTES} bytes`);
  }
  let root: XmlElement;
  try {
    root = parseXml(text, { maxDepth: MAX_DEPTH, maxElements: MAX_ELEMENTS });
  } catch (error) {
    if (error instanceof XmlProblem) throw new ManifestProblem(`it is not XML: ${error.message}`);
    throw error;
  }
  if (root.name !== "MPD") throw new ManifestProblem("its root element is not <MPD>");
  if ((root.attributes.get("type") ?? "static") !== "static") {
    throw new ManifestProblem(
      'it is a live manifest (type="dynamic"); only static (VOD) manifests are read',
    );
  }
  const periods = children(root, "Period");
  if (periods.length !== 1) {
    throw new ManifestProblem(
      `it has ${periods.length} periods; only manifests of one period are read`,
    );
  }
  const [period] = periods;
  const duration =
    seconds(period.attributes.get("duration")) ??
    seconds(root.attributes.get("mediaPresentationDuration"));
  const mpdBase = baseUrl(root, base);
  const periodBase = baseUrl(period, mpdBase);
  const representations: DashRepresentation[] = [];
  let count = 0;
  for (const set of children(period, "AdaptationSet")) {
    const setBase = baseUrl(set, periodBase);
    for (const element of children(set, "Representation")) {
      count += 1;
      if (count > MAX_REPRESENTATIONS) {
        throw new ManifestProblem(`it lists more than ${MAX_REPRESENTATIONS} representations`);
      }
      const protectedBy = [set, element].some((e) => children(e, "ContentProtection").length > 0);
      const mimeType = attribute("mimeType", element, set) ?? "";
      const contentType = set.attributes.get("contentType") ?? mimeType.split("/")[0];
      const codecs = attribute("codecs", element, set);
      const representation = readRepresentation(element, set, period, baseUrl(element, setBase), {
        duration,
      });
      if (protectedBy) representation.encrypted = true;
      if (contentType !== "video" && !(contentType === "" && codecs && isVideoCodec(codecs))) {
        representation.audioOnly = true;
      }
      representations.push(representation);
    }
  }
  if (representations.length === 0) throw new ManifestProblem("it lists no representation");
  return { representations, duration };
}

export function isVideoCodec(codecs: string): boolean {
  return /avc|hvc|hev|vp0?9|vp8|av01/i.test(codecs);
}

interface Read extends DashRepresentation {
  encrypted?: boolean;
  audioOnly?: boolean;
}

function children(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((child) => child.name === name);
}

/** An attribute of the first element that has it (Representation, then AdaptationSet …). */
function attribute(name: string, ...elements: XmlElement[]): string | null {
  for (const element of elements) {
    const value = element.attributes.get(name);
    if (value !== undefined) return value;
  }
  return null;
}

function url(value: string, base: URL): URL {
  let resolved: URL;
  try {
    resolved = new URL(value, base);
  } catch {
    throw new ManifestProblem(`it names a URL that is not one: ${value.slice(0, 100)}`);
  }
  if (resolved.protocol !== "http:" && resolved.protocol !== "https:") {
    throw new ManifestProblem(`it names a ${resolved.protocol} URL; only http and https are read`);
  }
  return resolved;
}

/** The element's first BaseURL resolved against `base`, or `base`. */
function baseUrl(element: XmlElement, base: URL): URL {
  const first = children(element, "BaseURL")[0];
  return first && first.text !== "" ? url(first.text, base) : base;
}

/** An ISO 8601 duration (PT1H2M3.5S, P1DT…) in seconds, or null. */
export function seconds(value: string | undefined | null): number | null {
  if (!value) return null;
  const match =
    /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(
      value.trim(),
    );
  if (!match) throw new ManifestProblem(`it has a duration that is not one: ${value.slice(0, 40)}`);
  const [, d, h, m, s] = match.map((part) => Number(part ?? 0));
  return d * 86400 + h * 3600 + m * 60 + s;
}

function whole(value: string | null, what: string, fallback: number): number {
  if (value === null) return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0) {
    throw new ManifestProblem(`its ${what} is not a whole number: ${value.slice(0, 40)}`);
  }
  return number;
}

function range(value: string | null): ByteRange | null {
  if (value === null) return null;
  const match = /^(\d+)-(\d+)$/.exec(value.trim());
  if (!match || Number(match[2]) < Number(match[1])) {
    throw new ManifestProblem(`it has a byte range that is not one: ${value.slice(0, 40)}`);
  }
  return { offset: Number(match[1]), length: Number(match[2]) - Number(match[1]) + 1 };
}

/** A template with $RepresentationID$, $Bandwidth$, $Number$, $Time$ (and %0Nd widths). */
function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\$(\w*)(?:%0(\d+)d)?\$/g, (_whole, name: string, width?: string) => {
    if (name === "") return "$";
    const value = values[name];
    if (value === undefined) throw new ManifestProblem(`its template names $${name}$`);
    const text = String(value);
    return width ? text.padStart(Number(width), "0") : text;
  });
}

function readRepresentation(
  element: XmlElement,
  set: XmlElement,
  period: XmlElement,
  base: URL,
  context: { duration: number | null },
): Read {
  const id = element.attributes.get("id") ?? "";
  const bandwidth = whole(element.attributes.get("bandwidth") ?? null, "bandwidth", 0);
  const width = whole(attribute("width", element, set), "width", 0);
  const height = whole(attribute("height", element, set), "height", 0);
  const values = { RepresentationID: id, Bandwidth: bandwidth };
  const found: Read = {
    id,
    url: base,
    bandwidth: bandwidth || null,
    width: width || null,
    height: height || null,
    codecs: attribute("codecs", element, set),
    init: null,
    segments: null,
    index: null,
  };
  const levels = [element, set, period];
  const templates = levels.flatMap((e) => children(e, "SegmentTemplate"));
  const lists = levels.flatMap((e) => children(e, "SegmentList"));
  const bases = levels.flatMap((e) => children(e, "SegmentBase"));
  // Attributes are inherited: the Representation's own first, then the AdaptationSet's, …
  const inherited = (elements: XmlElement[], name: string) => attribute(name, ...elements);
  if (templates.length > 0) {
    const timescale = whole(inherited(templates, "timescale"), "timescale", 1) || 1;
    const initialization = inherited(templates, "initialization");
    if (initialization) found.init = { url: url(fill(initialization, values), base), range: null };
    const media = inherited(templates, "media");
    if (!media) throw new ManifestProblem("its SegmentTemplate names no media");
    const startNumber = whole(inherited(templates, "startNumber"), "startNumber", 1);
    const times = timeline(templates, timescale, context.duration);
    found.segments = times.map((time, k) => ({
      url: url(fill(media, { ...values, Number: startNumber + k, Time: time.t }), base),
      range: null,
      start: time.start,
      duration: time.duration,
    }));
  } else if (lists.length > 0) {
    const timescale = whole(inherited(lists, "timescale"), "timescale", 1) || 1;
    const initialization = lists.flatMap((e) => children(e, "Initialization"))[0];
    if (initialization) {
      const source = initialization.attributes.get("sourceURL");
      found.init = {
        url: source ? url(source, base) : base,
        range: range(initialization.attributes.get("range") ?? null),
      };
    }
    const urls = lists.flatMap((e) => children(e, "SegmentURL"));
    if (urls.length > MAX_SEGMENTS) {
      throw new ManifestProblem(`a representation has more than ${MAX_SEGMENTS} segments`);
    }
    const times = timeline(lists, timescale, context.duration);
    if (times.length < urls.length) {
      throw new ManifestProblem("its SegmentList has more segments than times");
    }
    found.segments = urls.map((segment, k) => {
      const media = segment.attributes.get("media");
      return {
        url: media ? url(media, base) : base,
        range: range(segment.attributes.get("mediaRange") ?? null),
        start: times[k].start,
        duration: times[k].duration,
      };
    });
  } else if (bases.length > 0) {
    const indexRange = range(inherited(bases, "indexRange"));
    if (!indexRange) throw new ManifestProblem("its SegmentBase has no indexRange");
    const initialization = bases.flatMap((e) => children(e, "Initialization"))[0];
    const initRange = range(initialization?.attributes.get("range") ?? null);
    found.init = { url: base, range: initRange ?? { offset: 0, length: indexRange.offset } };
    found.index = { url: base, range: indexRange };
  } else {
    throw new ManifestProblem(
      "a representation has no SegmentTemplate, SegmentList or SegmentBase (a single file without an index)",
    );
  }
  if (found.segments && found.segments.length === 0) {
    throw new ManifestProblem("a representation has no segments");
  }
  return found;
}

/**
 * Segment times from a SegmentTimeline (S@t, @d, @r; r = -1 repeats to the period's end) or
 * from @duration over the period. `start` is seconds from the first segment.
 */
function timeline(
  elements: XmlElement[],
  timescale: number,
  periodSeconds: number | null,
): Array<{ t: number; start: number; duration: number }> {
  const found: Array<{ t: number; start: number; duration: number }> = [];
  const entries = elements.flatMap((e) => children(e, "SegmentTimeline"))[0];
  const push = (t: number, d: number, first: number) => {
    if (found.length >= MAX_SEGMENTS) {
      throw new ManifestProblem(`a representation has more than ${MAX_SEGMENTS} segments`);
    }
    found.push({ t, start: (t - first) / timescale, duration: d / timescale });
  };
  if (entries) {
    let t = 0;
    let first: number | null = null;
    const list = children(entries, "S");
    list.forEach((s, index) => {
      const at = s.attributes.get("t");
      if (at !== undefined) t = whole(at, "S@t", 0);
      const d = whole(s.attributes.get("d") ?? null, "S@d", 0);
      if (d === 0) throw new ManifestProblem("a SegmentTimeline entry has no duration");
      if (d / timescale > 600) throw new ManifestProblem("a segment is longer than 600 s");
      let repeat = Number(s.attributes.get("r") ?? 0);
      if (!Number.isSafeInteger(repeat) || repeat < -1) {
        throw new ManifestProblem("a SegmentTimeline entry has a bad repeat count");
      }
      first ??= t;
      if (repeat === -1) {
        const nextT = list[index + 1]?.attributes.get("t");
        const end =
          nextT !== undefined
            ? whole(nextT, "S@t", 0)
            : periodSeconds !== null
              ? first + periodSeconds * timescale
              : null;
        if (end === null) throw new ManifestProblem("a repeat to the end has no end");
        repeat = Math.max(0, Math.ceil((end - t) / d) - 1);
      }
      for (let k = 0; k <= repeat; k += 1) {
        push(t, d, first);
        t += d;
      }
    });
    return found;
  }
  const duration = whole(attribute("duration", ...elements), "segment duration", 0);
  if (duration === 0)
    throw new ManifestProblem("its segments have neither a timeline nor a duration");
  if (duration / timescale > 600) throw new ManifestProblem("a segment is longer than 600 s");
  if (elements.some((e) => e.name === "SegmentList") && periodSeconds === null) {
    // A SegmentList's count is its SegmentURLs'; times for as many as it may hold.
    periodSeconds = (MAX_SEGMENTS * duration) / timescale;
  }
  if (periodSeconds === null) {
    throw new ManifestProblem("its length is unknown (no mediaPresentationDuration)");
  }
  const count = Math.ceil((periodSeconds * timescale) / duration - 1e-9);
  if (count > MAX_SEGMENTS) {
    throw new ManifestProblem(`a representation has more than ${MAX_SEGMENTS} segments`);
  }
  for (let k = 0; k < count; k += 1) push(k * duration, duration, 0);
  return found;
}

/** Video representations, refused with the reason when there are none that can be read. */
export function videoRepresentations(manifest: Manifest): DashRepresentation[] {
  const all = manifest.representations as Read[];
  const video = all.filter((r) => !r.audioOnly);
  if (video.length === 0) throw new ManifestProblem("it has no video representation");
  const clear = video.filter((r) => !r.encrypted);
  if (clear.length === 0) {
    throw new ManifestProblem(
      "its video is encrypted (ContentProtection), which Stills does not read",
    );
  }
  return clear;
}

/** Every URL a manifest names, to judge before any is fetched. */
export function manifestUrls(manifest: Manifest): URL[] {
  return manifest.representations.flatMap((r) => [
    r.url,
    ...(r.init ? [r.init.url] : []),
    ...(r.index ? [r.index.url] : []),
    ...(r.segments ?? []).map((s) => s.url),
  ]);
}

/** Segments from a sidx box (SegmentBase@indexRange): byte ranges of `file` after the box. */
export function segmentsFromSidx(sidx: Buffer, file: URL, indexRange: ByteRange): DashSegment[] {
  const problem = (why: string) => new ManifestProblem(`its index (sidx) ${why}`);
  if (sidx.length < 32 || sidx.toString("latin1", 4, 8) !== "sidx") {
    throw problem("is not a sidx box");
  }
  const size = sidx.readUInt32BE(0);
  if (size > sidx.length) throw problem("is cut short");
  const version = sidx[8];
  const timescale = sidx.readUInt32BE(16);
  if (timescale === 0) throw problem("has no timescale");
  let at = 20;
  const firstOffset =
    version === 0 ? sidx.readUInt32BE(at + 4) : Number(sidx.readBigUInt64BE(at + 8));
  at += version === 0 ? 8 : 16;
  const count = sidx.readUInt16BE(at + 2);
  at += 4;
  if (count > MAX_SEGMENTS) throw problem(`lists more than ${MAX_SEGMENTS} segments`);
  if (at + count * 12 > size) throw problem("is cut short");
  let offset = indexRange.offset + size + firstOffset;
  let time = 0;
  const segments: DashSegment[] = [];
  for (let k = 0; k < count; k += 1, at += 12) {
    const word = sidx.readUInt32BE(at);
    if (word & 0x80000000) throw problem("points at other indexes, which are not read");
    const length = word & 0x7fffffff;
    const duration = sidx.readUInt32BE(at + 4) / timescale;
    segments.push({ url: file, range: { offset, length }, start: time, duration });
    offset += length;
    time += duration;
  }
  if (segments.length === 0) throw problem("lists no segments");
  return segments;
}
