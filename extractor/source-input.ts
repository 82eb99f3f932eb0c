// How a job's URL becomes what ffmpeg reads: the sources module (extractor/sources/, its own
// issue) resolves platforms, downloads or relays, and hands back a local path or a loopback
// relay URL. Loaded lazily so the service starts (and /healthz answers) even while that module
// is being worked on, and so tests can put their own opener in its place.
import type { ExtractRequest } from "../schema/messages.ts";

export interface SourceHandle {
  /** A local file path or http://127.0.0.1:PORT/… of the loopback relay. */
  input: string;
  close(): Promise<void>;
  bytesRead(): number;
  /** The platform had no version at the requested resolution. */
  resolutionNote?: string | null;
  /** Why serving the media failed, if it did (explains an ffmpeg failure). */
  failure?(): unknown;
}

export type OpenSource = (
  request: ExtractRequest,
  settings: { deadlineSeconds: number },
) => Promise<SourceHandle>;

const DEFAULT_MAX_SOURCE_BYTES = 4 * 1024 ** 3;

export const defaultOpenSource: OpenSource = async (request, { deadlineSeconds }) => {
  const sources = await import("./sources/index.ts");
  return sources.openSource(request.url, request.platform, {
    resolution: request.options.resolution,
    allowPrivate: process.env.STILLS_ALLOW_PRIVATE_NETWORK === "1",
    maxBytes: Number(process.env.EXTRACTOR_MAX_SOURCE_BYTES) || DEFAULT_MAX_SOURCE_BYTES,
    deadlineMs: deadlineSeconds * 1000,
  });
};
