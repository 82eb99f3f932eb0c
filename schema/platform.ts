// Which platform a video link belongs to, and the one canonical URL the extractor resolves.
// Pure (no Node or Workers APIs): the edge calls it at job creation to fill `platform` and to
// answer 400 InvalidUrl early. It does not judge addresses; url-safety.ts does that.

import { MAX_URL_LENGTH } from "./url-safety.ts";

export const PLATFORMS = [
  "youtube",
  "tiktok",
  "instagram",
  "facebook",
  "x",
  "vimeo",
  "google_drive",
  "direct",
] as const;
export type Platform = (typeof PLATFORMS)[number];

export type SourceDetection =
  | { ok: true; platform: Platform; url: string }
  | { ok: false; reason: string };

export const DIRECT_VIDEO_EXTENSIONS = [".mp4", ".mov", ".webm", ".m4v"];

interface Link {
  host: string;
  segments: string[];
  params: URLSearchParams;
  original: URL;
  /** A link found inside another one (an embed's href=): it may not nest a third. */
  nested: boolean;
}

type Rule = (link: Link) => SourceDetection | null;

const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/;
const DIGITS = /^\d+$/;
const SHORTCODE = /^[A-Za-z0-9_-]+$/;

export function detectSource(input: string): SourceDetection {
  return detect(input, false);
}

function detect(input: string, nested: boolean): SourceDetection {
  // Bounded before parsing: a link is stored twice per job and every byte of it is parsed.
  if (input.length > MAX_URL_LENGTH) {
    return { ok: false, reason: `the link is longer than ${MAX_URL_LENGTH} characters` };
  }
  let original: URL;
  try {
    original = new URL(input.trim());
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (original.protocol !== "http:" && original.protocol !== "https:") {
    return { ok: false, reason: "only http and https links are supported" };
  }
  const host = original.hostname.toLowerCase().replace(/\.$/, "");
  const link: Link = {
    host: host.replace(/^(www|m|mobile|mbasic|web|music)\./, ""),
    segments: original.pathname.split("/").filter(Boolean).map(safeDecode),
    params: original.searchParams,
    original,
    nested,
  };
  for (const rule of [youtube, tiktok, instagram, facebook, x, vimeo, googleDrive]) {
    const result = rule(link);
    if (result) return result;
  }
  return direct(link);
}

function ok(platform: Platform, url: string): SourceDetection {
  return { ok: true, platform, url };
}

function unsupported(platform: string, what: string): SourceDetection {
  return { ok: false, reason: `${platform} link is not a video (${what})` };
}

const youtube: Rule = ({ host, segments, params }) => {
  const hosts = ["youtube.com", "youtu.be", "youtube-nocookie.com"];
  if (!hosts.includes(host)) return null;
  const watch = (id: string | null | undefined) =>
    id && YOUTUBE_ID.test(id) ? ok("youtube", `https://www.youtube.com/watch?v=${id}`) : null;
  const [first, second] = segments;
  const found =
    host === "youtu.be"
      ? watch(first)
      : first === "watch"
        ? watch(params.get("v"))
        : ["shorts", "embed", "v", "e", "live"].includes(first)
          ? watch(second)
          : null;
  return found ?? unsupported("YouTube", "expected a watch, youtu.be, Shorts or embed link");
};

const tiktok: Rule = ({ host, segments, original }) => {
  if (host !== "tiktok.com" && !host.endsWith(".tiktok.com")) return null;
  // vm./vt. and /t/ short links redirect to the video page; yt-dlp follows them.
  if (host === "vm.tiktok.com" || host === "vt.tiktok.com") {
    return segments[0] && SHORTCODE.test(segments[0])
      ? ok("tiktok", `https://${host}/${segments[0]}/`)
      : unsupported("TikTok", "short link without a code");
  }
  if (host !== "tiktok.com") return unsupported("TikTok", `unknown host ${original.hostname}`);
  const [first, second, third] = segments;
  if (first === "t" && second && SHORTCODE.test(second)) {
    return ok("tiktok", `https://www.tiktok.com/t/${second}/`);
  }
  if (first?.startsWith("@") && second === "video" && third && DIGITS.test(third)) {
    return ok("tiktok", `https://www.tiktok.com/${first}/video/${third}`);
  }
  const embedded = first === "embed" ? (second === "v2" ? third : second) : undefined;
  const mobile = first === "v" ? second?.replace(/\.html$/, "") : undefined;
  const id = embedded ?? mobile;
  if (id && DIGITS.test(id)) return ok("tiktok", `https://www.tiktok.com/@/video/${id}`);
  return unsupported("TikTok", "expected /@user/video/ID or a vm./vt. short link");
};

const instagram: Rule = ({ host, segments }) => {
  if (host !== "instagram.com" && host !== "instagr.am") return null;
  // /user/reel/CODE and /user/p/CODE are the same posts as /reel/CODE and /p/CODE.
  const kinds: Record<string, string> = { reel: "reel", reels: "reel", p: "p", tv: "tv" };
  const at = segments.findIndex((s) => s in kinds);
  const code = at >= 0 && at <= 1 ? segments[at + 1] : undefined;
  if (code && SHORTCODE.test(code)) {
    return ok("instagram", `https://www.instagram.com/${kinds[segments[at]]}/${code}/`);
  }
  return unsupported("Instagram", "expected a Reel or post link");
};

const facebook: Rule = (link) => {
  const { host, segments, params } = link;
  if (host === "fb.watch") {
    return segments[0] && SHORTCODE.test(segments[0])
      ? ok("facebook", `https://fb.watch/${segments[0]}/`)
      : unsupported("Facebook", "fb.watch link without a code");
  }
  if (!["facebook.com", "fb.com", "business.facebook.com"].includes(host)) return null;
  const videoId = (id: string | null | undefined) =>
    id && DIGITS.test(id) ? ok("facebook", `https://www.facebook.com/watch/?v=${id}`) : null;
  const [first, second] = segments;
  if (first === "plugins" && params.get("href")) {
    // One level of embedding is what Facebook's plugins produce; a link nested deeper is
    // refused without parsing it, so no chain of embeds costs more than two parses.
    if (link.nested) return unsupported("Facebook", "an embed inside an embed");
    const inner = detect(params.get("href") as string, true);
    if (!inner.ok) return inner;
    return inner.platform === "facebook" ? inner : unsupported("Facebook", "embed");
  }
  if (first === "reel" && second && DIGITS.test(second)) {
    return ok("facebook", `https://www.facebook.com/reel/${second}`);
  }
  if (first === "share" && (second === "v" || second === "r") && segments[2]) {
    return ok("facebook", `https://www.facebook.com/share/${second}/${segments[2]}/`);
  }
  const found =
    first === "watch" || first === "video.php"
      ? videoId(params.get("v"))
      : first === "video" && second === "embed"
        ? videoId(params.get("video_id"))
        : segments.includes("videos")
          ? videoId(segments.filter((s) => DIGITS.test(s)).pop())
          : null;
  return found ?? unsupported("Facebook", "expected a video, watch, Reel or fb.watch link");
};

const x: Rule = ({ host, segments }) => {
  if (host !== "x.com" && host !== "twitter.com") return null;
  // /user/status/ID, /i/web/status/ID, /statuses/ID; /video/N picks one video of several.
  const at = segments.findIndex((s) => s === "status" || s === "statuses");
  const id = at >= 0 ? segments[at + 1] : undefined;
  if (!id || !DIGITS.test(id)) return unsupported("X", "expected a status link");
  const user = at === 1 && segments[0] !== "i" ? segments[0] : "i";
  const pick = segments[at + 2] === "video" && DIGITS.test(segments[at + 3] ?? "");
  return ok("x", `https://x.com/${user}/status/${id}${pick ? `/video/${segments[at + 3]}` : ""}`);
};

const vimeo: Rule = ({ host, segments, params }) => {
  if (host === "player.vimeo.com") {
    if (segments[0] !== "video" || !DIGITS.test(segments[1] ?? "")) {
      return unsupported("Vimeo", "expected player.vimeo.com/video/ID");
    }
    // The h= hash is what makes an unlisted video playable; keep it.
    const hash = params.get("h");
    const query = hash ? `?h=${encodeURIComponent(hash)}` : "";
    return ok("vimeo", `https://player.vimeo.com/video/${segments[1]}${query}`);
  }
  if (host !== "vimeo.com") return null;
  // /showcase/ID/video/VID and /album/ID/video/VID carry two numbers; the video's comes last.
  const afterVideo = segments.findIndex((s) => s === "video" || s === "videos") + 1;
  const at = afterVideo > 0 ? afterVideo : segments.findIndex((s) => DIGITS.test(s));
  if (at < 0 || !DIGITS.test(segments[at] ?? ""))
    return unsupported("Vimeo", "no video number in the link");
  const hash = segments[at + 1];
  const unlisted = hash && /^[0-9a-f]{6,}$/.test(hash) ? `/${hash}` : "";
  return ok("vimeo", `https://vimeo.com/${segments[at]}${unlisted}`);
};

const DRIVE_ID = /^[A-Za-z0-9_-]{10,}$/;

const googleDrive: Rule = ({ host, segments, params, original }) => {
  const hosts = ["drive.google.com", "docs.google.com", "drive.usercontent.google.com"];
  if (!hosts.includes(original.hostname.toLowerCase())) return null;
  if (host === "docs.google.com" && segments[0] !== "uc" && segments[0] !== "file") {
    return unsupported("Google Drive", "a Docs document, not a shared file");
  }
  if (segments.includes("folders")) {
    return unsupported("Google Drive", "a folder; share the video file itself");
  }
  const fileAt = segments.indexOf("d");
  const id = segments[0] === "file" && fileAt > 0 ? segments[fileAt + 1] : params.get("id");
  if (!id || !DRIVE_ID.test(id)) return unsupported("Google Drive", "no file id in the link");
  // confirm=t skips the "can't scan for viruses" page for big files on the usercontent host;
  // resourcekey is required for files shared before Drive's 2021 security update.
  const download = new URL("https://drive.usercontent.google.com/download");
  download.searchParams.set("id", id);
  download.searchParams.set("export", "download");
  download.searchParams.set("confirm", "t");
  const resourceKey = params.get("resourcekey");
  if (resourceKey) download.searchParams.set("resourcekey", resourceKey);
  return ok("google_drive", download.toString());
};

// Hosts whose pages are never a video file: a link to them is a mistake, not a video.
const NON_VIDEO_HOSTS = [
  "google.com",
  "wikipedia.org",
  "github.com",
  "reddit.com",
  "linkedin.com",
  "amazon.com",
  "dropbox.com",
];

/** Whether a link's path ends in a video file's extension (.mp4, .mov, .webm, .m4v). */
export function hasVideoExtension(url: URL): boolean {
  const path = url.pathname.toLowerCase();
  return DIRECT_VIDEO_EXTENSIONS.some((ext) => path.endsWith(ext));
}

/**
 * Everything else: a direct file link. A path ending in a video extension is a file; any other
 * http(s) URL may be one too (a CDN URL, a signed storage URL, a page with a video in it), and
 * only the answer can tell: the extractor reads it and fails a link that is no video with
 * InvalidUrl (decision 0260). Known non-video sites are refused here without asking.
 */
const direct = ({ host, original }: Link): SourceDetection => {
  if (hasVideoExtension(original)) return ok("direct", original.toString());
  if (NON_VIDEO_HOSTS.some((known) => host === known || host.endsWith(`.${known}`))) {
    return { ok: false, reason: `${host} is not a supported video source` };
  }
  return ok("direct", original.toString());
};

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
