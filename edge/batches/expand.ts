// A batch made of one link (POST /v1/batches with `url`, decision 0340 "Playlists"): the
// extractor lists the playlist or channel with yt-dlp (POST /expand,
// extractor/sources/ytdlp-playlist.ts), at most the plan's max_batch_items entries plus one to
// tell a longer list. A longer list is truncated, and the batch says so; a link to one video
// is a batch of one item; a direct video or HLS/DASH link is one item without asking.
import type { BatchPlaylist } from "../../schema/batches.ts";
import { checkUrl } from "../../schema/url-safety.ts";
import { edgeConfig } from "../config.ts";
import { ApiError, STATUS_OF } from "../errors.ts";
import { poolInstanceFor } from "../jobs/dispatch.ts";
import { allowsPrivateNetwork } from "../sources.ts";

/** What the extractor's POST /expand answers (extractor/sources/ytdlp-playlist.ts Expansion). */
type Expansion =
  | { kind: "video"; url: string; title: string | null }
  | { kind: "playlist"; title: string | null; entries: string[]; more: boolean };

/** yt-dlp's own bound is 20 s; this covers its start and the proxy around it. */
const EXPAND_TIMEOUT_MS = 25_000;

/** A file or stream link is one video: listing it would only fetch it for nothing. */
const ONE_VIDEO_PATH = /\.(mp4|mov|webm|m4v|m3u8|mpd)$/i;

export async function expandBatchLink(
  env: Env,
  link: string,
  maxItems: number,
  planName: string,
  tenant: string,
): Promise<{ links: string[]; playlist: BatchPlaylist }> {
  const safe = checkUrl(link, { allowPrivate: allowsPrivateNetwork(env) });
  if (!safe.ok) {
    throw new ApiError("InvalidUrl", `url: ${safe.reason}`, {
      userMessage: "That link isn't a supported public playlist or video URL.",
    });
  }
  if (ONE_VIDEO_PATH.test(safe.url.pathname)) {
    return { links: [link], playlist: single(link, null) };
  }
  const expansion = await askExtractor(env, link, maxItems, tenant);
  if (expansion.kind === "video") return { links: [link], playlist: single(link, expansion.title) };
  if (expansion.entries.length === 0) {
    throw new ApiError("NoVideoFound", "url: the playlist has no videos", {
      userMessage: "That playlist or channel has no videos.",
    });
  }
  const truncated = expansion.more;
  return {
    links: expansion.entries,
    playlist: {
      url: link,
      title: expansion.title,
      items: expansion.entries.length,
      truncated,
      note: truncated
        ? `The playlist has more than ${maxItems} videos: this batch takes its first ${maxItems} (the ${planName} plan's max_batch_items).`
        : null,
    },
  };
}

function single(link: string, title: string | null): BatchPlaylist {
  return {
    url: link,
    title,
    items: 1,
    truncated: false,
    note: "The link is one video, not a playlist: a batch of one item.",
  };
}

function unavailable(why: string) {
  return new ApiError("ServiceUnavailable", `cannot list the link now: ${why}`, {
    userMessage: "We couldn't read that playlist right now. Please try again in a minute.",
    retryAfter: 30,
  });
}

async function askExtractor(
  env: Env,
  url: string,
  maxEntries: number,
  tenant: string,
): Promise<Expansion> {
  const { secrets, extractorUrl } = edgeConfig(env);
  const request = (base: string) =>
    new Request(`${base}/expand`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${secrets.internalToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ url, max_entries: maxEntries }),
      signal: AbortSignal.timeout(EXPAND_TIMEOUT_MS),
    });
  let res: Response;
  try {
    const container = env.EXTRACTOR;
    if (container) {
      // Any instance can list; the tenant's name spreads the work as its jobs are spread.
      const name = `extractor-${poolInstanceFor({ job_id: tenant, tenant })}`;
      res = await container.get(container.idFromName(name)).fetch(request("http://extractor"));
    } else {
      if (!extractorUrl) throw new Error("EXTRACTOR_URL is not set and there is no EXTRACTOR");
      res = await fetch(request(extractorUrl));
    }
  } catch (err) {
    throw unavailable(String((err as Error)?.message ?? err));
  }
  const body = (await res.json().catch(() => null)) as {
    error?: { name?: string; message?: string; userMessage?: string };
  } | null;
  if (res.status === 422 && body?.error) {
    // The link's own fault (private, not found, no video, a refused address): a 400.
    const name =
      body.error.name &&
      body.error.name in STATUS_OF &&
      STATUS_OF[body.error.name as keyof typeof STATUS_OF] === 400
        ? (body.error.name as keyof typeof STATUS_OF)
        : "DownloadFailed";
    throw new ApiError(name, `url: ${body.error.message ?? "the link could not be listed"}`, {
      userMessage: body.error.userMessage ?? "That playlist or channel could not be read.",
    });
  }
  if (res.status !== 200 || !body) throw unavailable(`the extractor answered ${res.status}`);
  return body as unknown as Expansion;
}
