// The sample videos the service serves itself at {origin}/samples/<name>, so every example in
// the docs, the pages and the MCP tools can be run as it stands (docs/decisions/0130). Pure:
// the edge serves them and accepts them as sources; the extractor may fetch exactly these
// URLs even where private addresses are refused.

export interface Sample {
  /** The file name under /samples/. */
  name: string;
  contentType: string;
  /** What it shows, for the pages and the docs. */
  description: string;
}

export const SAMPLE_PATH_PREFIX = "/samples/";

export const SAMPLES: readonly Sample[] = [
  {
    name: "intro.mp4",
    contentType: "video/mp4",
    description:
      "30 s, 1280×720 H.264 with AAC sound: five scenes of 6 s, a running clock, a keyframe every 2 s",
  },
];

/** The sample every example uses. */
export const DEFAULT_SAMPLE = "intro.mp4";

export function findSample(name: string): Sample | undefined {
  return SAMPLES.find((sample) => sample.name === name);
}

/** `{origin}/samples/intro.mp4` (or another sample's name). */
export function sampleUrl(origin: string, name: string = DEFAULT_SAMPLE): string {
  return `${new URL(origin).origin}${SAMPLE_PATH_PREFIX}${name}`;
}

/**
 * True only for a URL that is exactly one of the samples on the service's own origin: the
 * same scheme, host and port, the path of a sample as written (after the URL parser resolves
 * dot segments, so `/samples/../x` is `/x`), no query, no fragment, no user name. Anything
 * else is judged by the ordinary address rules.
 */
export function isServiceSample(url: string | URL, serviceOrigin: string): boolean {
  let parsed: URL;
  let origin: string;
  try {
    parsed = new URL(String(url));
    origin = new URL(serviceOrigin).origin;
  } catch {
    return false;
  }
  if (parsed.origin !== origin || parsed.username !== "" || parsed.password !== "") return false;
  if (parsed.search !== "" || parsed.hash !== "" || /[?#]/.test(String(url))) return false;
  if (!parsed.pathname.startsWith(SAMPLE_PATH_PREFIX)) return false;
  return findSample(parsed.pathname.slice(SAMPLE_PATH_PREFIX.length)) !== undefined;
}
