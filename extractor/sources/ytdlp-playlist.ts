// A playlist or channel link expanded into its videos' links (POST /expand, for a batch made
// of one link: decision 0340 "Playlists"). yt-dlp runs with --flat-playlist (the list only,
// no video page is opened) through the checking egress proxy, bounded in time, in output
// bytes and in entries: --playlist-end asks for one more than the caller takes, so a longer
// list is told apart from one that is exactly as long.
import { startEgressProxy } from "./egress-proxy.ts";
import { downloadFailed, interruptedDownload, refusedDestination } from "./errors.ts";
import type { AddressPolicy } from "./policy.ts";
import { classifyYtDlpFailure, runYtDlp } from "./ytdlp.ts";

/** What a link holds: one video, or a list whose first entries (at most max) are given. */
export type Expansion =
  | { kind: "video"; url: string; title: string | null }
  | { kind: "playlist"; title: string | null; entries: string[]; more: boolean };

export interface ExpandOptions {
  policy: AddressPolicy;
  /** Entries the caller takes; one more is asked for to know whether the list is longer. */
  maxEntries: number;
  deadlineMs: number;
  /** Stdout that makes yt-dlp's answer too large (flat entries are small: 4 MiB by default). */
  maxBytes?: number;
  binary?: string;
  signal?: AbortSignal;
}

export const EXPAND_DEADLINE_MS = 20_000;
const MAX_EXPANSION_BYTES = 4 * 1024 * 1024;

export async function expandWithYtDlp(url: string, options: ExpandOptions): Promise<Expansion> {
  const proxy = await startEgressProxy(options.policy);
  try {
    const run = await runYtDlp(
      url,
      proxy.url,
      ["--flat-playlist", "--dump-single-json", "--playlist-end", String(options.maxEntries + 1)],
      {
        deadlineMs: options.deadlineMs,
        signal: options.signal,
        binary: options.binary,
        maxBytes: options.maxBytes ?? MAX_EXPANSION_BYTES,
      },
    );
    if (run.overflowed) throw downloadFailed("yt-dlp's playlist listing was too large");
    if (run.code !== 0 || run.timedOut) {
      if (proxy.refusals.length > 0) throw refusedDestination(proxy.refusals[0]);
      if (run.timedOut)
        throw interruptedDownload(`yt-dlp did not list the link within ${options.deadlineMs} ms`);
      throw classifyYtDlpFailure(run.stderr);
    }
    let info: unknown;
    try {
      info = JSON.parse(run.stdout);
    } catch {
      throw downloadFailed("yt-dlp printed something that is not JSON");
    }
    return expansionOf(info, url, options.maxEntries);
  } finally {
    await proxy.close();
  }
}

/**
 * yt-dlp's flat JSON → the expansion (pure; exported for tests). An entry without an http(s)
 * link is kept as what it says, so the edge fails it as an item with its reason; yt-dlp's own
 * "#__youtubedl_smuggle" fragment is taken off.
 */
export function expansionOf(info: unknown, url: string, maxEntries: number): Expansion {
  if (!info || typeof info !== "object" || Array.isArray(info))
    throw downloadFailed("yt-dlp printed no info object");
  const raw = info as Record<string, unknown>;
  const title = typeof raw.title === "string" ? raw.title.slice(0, 500) : null;
  if (raw._type !== "playlist" && raw._type !== "multi_video") {
    return { kind: "video", url, title };
  }
  const entries = Array.isArray(raw.entries) ? raw.entries : [];
  const links = entries.slice(0, maxEntries + 1).map(entryLink);
  return {
    kind: "playlist",
    title,
    entries: links.slice(0, maxEntries),
    more: links.length > maxEntries,
  };
}

function entryLink(entry: unknown): string {
  if (!entry || typeof entry !== "object") return "";
  const e = entry as Record<string, unknown>;
  const link =
    typeof e.url === "string" && /^https?:/i.test(e.url)
      ? e.url
      : typeof e.webpage_url === "string"
        ? e.webpage_url
        : typeof e.url === "string"
          ? e.url
          : "";
  return link.replace(/#__youtubedl_smuggle=.*$/, "").slice(0, 4096);
}
