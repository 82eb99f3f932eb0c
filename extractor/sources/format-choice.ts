// Which of the versions yt-dlp lists to read: a video stream over plain http(s) whose short side
// is the largest not above the requested resolution. Audio is never needed, so video-only
// streams are welcome (they are the only high-resolution ones on YouTube).

export interface YtDlpFormat {
  format_id?: string;
  url?: string;
  protocol?: string;
  ext?: string;
  vcodec?: string;
  acodec?: string;
  width?: number | null;
  height?: number | null;
  tbr?: number | null;
  format_note?: string;
  http_headers?: Record<string, string>;
  cookies?: string;
}

export interface ChosenFormat {
  format: YtDlpFormat;
  shortSide: number | null;
  note: string | null;
}

const AUDIO_EXTENSIONS = new Set(["m4a", "mp3", "aac", "opus", "ogg", "oga", "wav", "flac"]);
const HLS_PROTOCOLS = new Set(["m3u8", "m3u8_native"]);
const STREAMING_PROTOCOLS = new Set([...HLS_PROTOCOLS, "http_dash_segments", "f4m", "ism"]);

function shortSideOf(format: YtDlpFormat): number | null {
  if (format.width && format.height) return Math.min(format.width, format.height);
  return format.height ?? null;
}

function hasVideo(format: YtDlpFormat): boolean {
  if (format.vcodec === "none") return false;
  if (format.vcodec) return true;
  if (format.format_note?.toLowerCase().includes("audio only")) return false;
  return !AUDIO_EXTENSIONS.has(format.ext ?? "");
}

export function isHls(format: YtDlpFormat): boolean {
  return HLS_PROTOCOLS.has(format.protocol ?? "");
}

/** Plain http(s) files, and HLS (joined by hls-origin.ts); not DASH manifests or others. */
function readableOverHttp(format: YtDlpFormat): boolean {
  if (!format.url || !/^https?:/i.test(format.url)) return false;
  return !format.protocol || ["http", "https"].includes(format.protocol) || isHls(format);
}

// Cheap to decode first; AV1 last.
function codecRank(format: YtDlpFormat): number {
  const codec = (format.vcodec ?? "").toLowerCase();
  if (/^(avc|h264)/.test(codec)) return 0;
  if (/^(vp0?9|hev|hvc|h265)/.test(codec)) return 1;
  if (codec === "") return 2;
  return 3;
}

// A plain file first (it can be read by range), then the cheapest codec, then no audio.
function preferred(a: YtDlpFormat, b: YtDlpFormat): number {
  return (
    Number(isHls(a)) - Number(isHls(b)) ||
    codecRank(a) - codecRank(b) ||
    Number(a.acodec !== "none") - Number(b.acodec !== "none") ||
    (b.tbr ?? 0) - (a.tbr ?? 0)
  );
}

export type FormatProblem = "no-video" | "streaming-only";

export function chooseFormat(
  formats: YtDlpFormat[],
  requested: number,
): ChosenFormat | FormatProblem {
  const videos = formats.filter(hasVideo);
  if (videos.length === 0) return "no-video";
  const usable = videos.filter(readableOverHttp);
  if (usable.length === 0) {
    return videos.some((f) => STREAMING_PROTOCOLS.has(f.protocol ?? ""))
      ? "streaming-only"
      : "no-video";
  }
  const sized = usable.filter((f) => shortSideOf(f) !== null);
  if (sized.length === 0) {
    // Sizes unknown (a bare <video src>): yt-dlp lists worst to best; a plain file if any.
    const files = usable.filter((f) => !isHls(f));
    const pick = (files.length > 0 ? files : usable).at(-1) as YtDlpFormat;
    return { format: pick, shortSide: null, note: null };
  }
  const fitting = sized.filter((f) => (shortSideOf(f) as number) <= requested);
  if (fitting.length === 0) {
    // Every version is larger than asked: take the smallest; frames are scaled down from it.
    const smallest = Math.min(...sized.map((f) => shortSideOf(f) as number));
    const pick = sized.filter((f) => shortSideOf(f) === smallest).sort(preferred)[0];
    return { format: pick, shortSide: smallest, note: null };
  }
  const best = Math.max(...fitting.map((f) => shortSideOf(f) as number));
  const pick = fitting.filter((f) => shortSideOf(f) === best).sort(preferred)[0];
  const size = pick.width && pick.height ? ` (${pick.width}×${pick.height})` : "";
  const note =
    best < requested
      ? `Requested ${requested}p, but the largest version this source offers is ${best}p${size}; frames come from that version.`
      : null;
  return { format: pick, shortSide: best, note };
}

/** yt-dlp's `cookies` field ("a=1; Domain=…; Path=/; b=2; …") as a Cookie header. */
export function cookieHeader(cookies: string | undefined): string | null {
  if (!cookies) return null;
  const attributes = /^(domain|path|expires|max-age|secure|httponly|samesite|version|comment)$/i;
  const pairs = cookies
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part.includes("=") && !attributes.test(part.split("=")[0].trim()));
  return pairs.length > 0 ? pairs.join("; ") : null;
}
