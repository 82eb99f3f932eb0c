// Every ffmpeg/ffprobe argument list, built as pure data so tests can check it as data.
//
// How a frame is picked (the heart of accuracy): ffmpeg's own seeking and `select` give the
// first frame with pts ≥ t, but the picture on screen at t is the last frame with pts ≤ t.
// So each decoded frame's pts is mapped by `setpts` to the number of wanted times strictly
// before it (an integer "slot"), and `fps` at one frame per tick then emits, for slot k, the
// last frame whose slot is ≤ k, which is exactly the last frame with pts ≤ t_k. `fps` holds one
// frame back, which is the look-ahead `select` lacks, and at end of stream it flushes the
// slots that fall after the last frame. `showinfo` before it reports every frame's own pts.
import type { SlotTimes } from "../slots.ts";
import { slotsBeforeExpression } from "../slots.ts";

/** The relay's opt-in for answering in parts (sources/relay.ts). */
export const RELAY_PARTS_HEADER = "x-stills-reads-parts";

let hintedInputs = 0;

/**
 * The relay's URL for one input that, after its seek, expects to read about `bytes` bytes
 * (sources/relay.ts ReadHints): `?reads=N&input=K`, K unique per input so that each input has
 * its own allowance. A local file, or no estimate, stays as it is.
 */
export function inputWithReadHint(input: string, bytes: number | null): string {
  if (bytes === null || !(bytes > 0) || !/^http:/i.test(input)) return input;
  const url = new URL(input);
  url.searchParams.set("reads", String(Math.ceil(bytes)));
  url.searchParams.set("input", String(++hintedInputs));
  return url.href;
}

/** Demuxers a job may use: MP4/MOV family and Matroska/WebM. No HLS, concat or image2. */
export const ALLOWED_DEMUXERS = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm";

export interface Rational {
  num: number;
  den: number;
}

/**
 * The one place input safety is decided. A local file may use only the file protocol; the
 * loopback relay only http over tcp. The demuxer whitelist means a playlist hidden inside a
 * media file (the HLS-in-AVI trick) is refused instead of reading local files or the network.
 * Returns the flags and the input argument ffmpeg should open.
 */
export function safeInputArgs(input: string): string[] {
  if (/^https?:/i.test(input)) {
    const url = new URL(input);
    const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
    if (url.protocol !== "http:" || !loopback) {
      throw new Error(`ffmpeg only reads local files or the loopback relay, not ${url.origin}`);
    }
    return [
      "-protocol_whitelist",
      "http,tcp",
      // Told so, the relay answers a request for the rest of the file with a part
      // (sources/relay.ts): at a part's end ffmpeg asks again from there, at once. A second
      // failure in a row would wait a second before the next try; the delay cap makes it an
      // error instead.
      "-headers",
      `${RELAY_PARTS_HEADER}: 1\r\n`,
      "-reconnect",
      "1",
      "-reconnect_delay_max",
      "0",
      "-format_whitelist",
      ALLOWED_DEMUXERS,
      "-i",
      url.href,
    ];
  }
  const path = input.startsWith("file://") ? new URL(input).pathname : input;
  // "file:" keeps a path such as "http:x.mp4" or "concat:a|b" from naming a protocol.
  return [
    "-protocol_whitelist",
    "file,pipe",
    "-format_whitelist",
    ALLOWED_DEMUXERS,
    "-i",
    `file:${path}`,
  ];
}

export function probeArgs(input: string): string[] {
  return [
    "-v",
    "error",
    "-print_format",
    "json",
    "-show_format",
    "-show_streams",
    ...safeInputArgs(input),
  ];
}

/**
 * One packet read after seeking to each time: the keyframe at or before it (absolute s), with
 * its stream. `stream` is an index, or "v:0" (the first video stream) when asked before the
 * probe has chosen one.
 */
export function keyframeProbeArgs(
  input: string,
  stream: number | "v:0",
  times: number[],
): string[] {
  return [
    "-v",
    "error",
    "-select_streams",
    String(stream),
    "-read_intervals",
    times.map((t) => `${formatSeconds(t)}%+#1`).join(","),
    "-show_entries",
    "packet=stream_index,pts_time,size,flags",
    // key=value: csv would print the fields in ffprobe's own order, not the order asked.
    "-print_format",
    "compact=p=0",
    ...safeInputArgs(input),
  ];
}

/** Every packet's time and duration, no decoding: the length of a file that does not say it. */
export function packetScanArgs(input: string, streamIndex: number): string[] {
  return [
    "-v",
    "error",
    "-select_streams",
    String(streamIndex),
    "-show_entries",
    "packet=pts_time,duration_time",
    "-print_format",
    "csv=p=0",
    ...safeInputArgs(input),
  ];
}

export type HdrTransfer = "pq" | "hlg";

export interface HdrSource {
  transfer: HdrTransfer;
  /** Brightest light the picture holds (mastering display or content light level), nits. */
  peakNits: number;
}

/** Filters applied only to the frames that were picked: HDR → SDR, rotation, size, RGB. */
export interface PictureSteps {
  hdr: HdrSource | null;
  /** Clockwise degrees to turn the stored picture for display. */
  rotation: 0 | 90 | 180 | 270;
  width: number;
  height: number;
  /** YCbCr matrix when the stream does not say (ffmpeg would assume BT.601 even for HD). */
  fallbackMatrix: "bt709" | "bt601" | null;
  /**
   * Also a small picture of each frame, scaled by ffmpeg from the same decoded picture and
   * written below it as extra rows (pictureChain): its size, narrower than `width`. Null or
   * absent: the frame alone.
   */
  thumbnail?: { width: number; height: number } | null;
}

/** HDR reference (diffuse) white, BT.2408: what SDR white corresponds to. */
export const HDR_REFERENCE_WHITE_NITS = 203;

// PQ and HLG BT.2020 to SDR BT.709: linearise with reference white as 1.0, convert primaries,
// then tone-map with Möbius (linear up to ~60 nits, highlights rolled off smoothly up to the
// source's peak) and encode with the BT.709 curve. Shown without this, HDR looks grey and
// washed out; Hable keeps contrast but leaves reference white at ~65 % (measured).
function hdrToSdr(hdr: HdrSource): string[] {
  const peak = Math.max(1, hdr.peakNits / HDR_REFERENCE_WHITE_NITS);
  return [
    `zscale=t=linear:npl=${HDR_REFERENCE_WHITE_NITS}`,
    "format=gbrpf32le",
    "zscale=p=bt709",
    `tonemap=tonemap=mobius:desat=0:peak=${peak.toFixed(4)}`,
    "zscale=t=bt709:m=bt709:r=tv",
    "format=yuv420p",
  ];
}

const ROTATIONS: Record<PictureSteps["rotation"], string[]> = {
  0: [],
  90: ["transpose=clock"],
  180: ["hflip", "vflip"],
  270: ["transpose=cclock"],
};

/** The steps before sizing: HDR to SDR and rotation, on the decoder's own pixel format. */
function uprightFilters(steps: PictureSteps): string[] {
  return [...(steps.hdr ? hdrToSdr(steps.hdr) : []), ...ROTATIONS[steps.rotation]];
}

/** Sizing and conversion to full-range RGB, to `width`×`height`, with a resampling kernel. */
function rgbFilters(steps: PictureSteps, size: { width: number; height: number }, flags: string) {
  const matrix = steps.hdr ? "bt709" : steps.fallbackMatrix;
  const scale = [
    `scale=w=${size.width}:h=${size.height}`,
    `flags=${flags}`,
    ...(matrix ? [`in_color_matrix=${matrix}`] : []),
    "out_range=full",
  ].join(":");
  return [scale, "setsar=1", "format=rgb24"];
}

export function pictureFilters(steps: PictureSteps): string[] {
  // Lanczos for resizing. No accurate_rnd/full_chroma_int: they cost 14 ms per 1080p frame
  // (measured) and the chroma they refine is subsampled again by JPEG and WebP.
  return [...uprightFilters(steps), ...rgbFilters(steps, steps, "lanczos")];
}

/**
 * The picture steps as a piece of a filter graph that takes one unlabeled chain in and gives
 * one out (it follows a comma). With a thumbnail, the upright picture is split: one branch is
 * the frame (pictureFilters), the other is scaled straight to the thumbnail's size with an area
 * average and padded to the frame's width, and the two are stacked, frame first. So each
 * output picture is the frame's `width`×`height` rows followed by `thumbnail.height` rows whose
 * first `thumbnail.width` pixels are the thumbnail (decode.ts cuts them apart). Scaling from
 * the decoder's YUV costs ffmpeg ~1.7 ms per 1080p frame against ~7.4 ms of CPU for sharp's
 * resize of the RGB frame (decision 0283). A batch of parts does the same around its concat
 * (batchDecodeArgs).
 */
export function pictureChain(steps: PictureSteps): string {
  const thumb = steps.thumbnail;
  if (!thumb) return pictureFilters(steps).join(",");
  const padToFrame = `pad=w=${steps.width}:h=${thumb.height}`;
  const [frame, small, frameRgb, smallRgb] = ["f", "t", "F", "T"].map((x) => `[stills_${x}]`);
  return [
    [...uprightFilters(steps), `split${frame}${small}`].join(","),
    `${frame}${rgbFilters(steps, steps, "lanczos").join(",")}${frameRgb}`,
    `${small}${[...rgbFilters(steps, thumb, "area"), padToFrame].join(",")}${smallRgb}`,
    `${frameRgb}${smallRgb}vstack`,
  ].join(";");
}

export interface DecodeSpec {
  input: string;
  /** Absolute index of the video stream in the file. */
  streamIndex: number;
  /** Absolute stream time to seek to (ffmpeg lands on the keyframe before it), or null. */
  seekSeconds: number | null;
  /** The wanted times, absolute stream seconds. */
  slots: SlotTimes;
  /** The decoder's time base, which setpts and fps count ticks in. */
  timeBase: Rational;
  picture: PictureSteps;
  /** Decoder threads; ffmpeg picks when absent. */
  threads?: number;
  /** The input hides unneeded pictures from the decoder (unneeded-frames.ts). */
  hidesFrames?: boolean;
}

/**
 * Each picture hidden from the decoder (ffmpeg/unneeded-frames.ts) counts as a decoding error,
 * and past 2/3 of them ffmpeg would exit 69; a run that hides pictures counts none.
 */
function errorRateArgs(hidesFrames: boolean | undefined): string[] {
  return hidesFrames ? ["-max_error_rate", "1"] : [];
}

export function decodeFilterGraph(spec: DecodeSpec): string {
  const { num, den } = spec.timeBase;
  return [
    "showinfo=checksum=0",
    `setpts='${slotsBeforeExpression(spec.slots)}'`,
    `fps=fps=${den}/${num}:start_time=0:round=up`,
    pictureChain(spec.picture),
  ].join(",");
}

/**
 * One thread for the rawvideo encoder. It only copies each picture into a packet, but ffmpeg
 * gives it frame threads by default (one per core plus one), and each thread holds a picture
 * and its packet: at 2160p one more 25 MB RGB picture in flight for nothing (measured: 8 frames
 * of 2160p, ffmpeg's peak 219 → 194 MB, the same time). An output option: after the inputs.
 */
const RAW_OUTPUT_THREADS = ["-threads", "1"];

/** Raw RGB24 frames on stdout, one per wanted time, in time order. */
export function decodeArgs(spec: DecodeSpec): string[] {
  const seek =
    spec.seekSeconds === null
      ? []
      : ["-ss", formatSeconds(spec.seekSeconds), "-seek_timestamp", "1", "-noaccurate_seek"];
  return [
    "-hide_banner",
    "-nostdin",
    "-nostats",
    "-loglevel",
    "level+info",
    // Rotation is applied after picking, to the few frames kept, not to every decoded frame.
    "-noautorotate",
    // Keep the file's own timestamps, so pts and wanted times share one clock.
    "-copyts",
    ...errorRateArgs(spec.hidesFrames),
    ...(spec.threads ? ["-threads", String(spec.threads)] : []),
    ...seek,
    ...safeInputArgs(spec.input),
    "-map",
    `0:${spec.streamIndex}`,
    "-an",
    "-sn",
    "-dn",
    "-vf",
    decodeFilterGraph(spec),
    "-fps_mode",
    "passthrough",
    "-frames:v",
    String(slotCount(spec.slots)),
    ...RAW_OUTPUT_THREADS,
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgb24",
    "pipe:1",
  ];
}

/** Several short seek-and-decode runs of one file in one ffmpeg (see batchDecodeArgs). */
export interface BatchDecodeSpec {
  input: string;
  streamIndex: number;
  timeBase: Rational;
  picture: PictureSteps;
  /**
   * Each part's seek point and how long to read from it (s), and its wanted times (absolute
   * s), ascending from part to part; over the relay, about how many bytes that read takes.
   */
  parts: {
    seekSeconds: number;
    readSeconds: number;
    readBytes?: number | null;
    slots: SlotTimes;
    /** This part's own address of the input, when it hides unneeded pictures. */
    input?: string;
  }[];
}

/** The showinfo instance of part k logs as `[showinfo@gk @ 0x…]` (decode.ts reads it). */
export function batchShowinfoName(part: number): string {
  return `showinfo@g${part}`;
}

/**
 * One input per part, each seeking on its own, each through the same picking chain as a
 * single run (decodeFilterGraph), ended by trim after its own frames, then concatenated in
 * order: the frames of part 0, then part 1, … on one pipe. Starting ffmpeg costs ~0.12 s of
 * CPU here (it links over 200 libraries); a sparse job's runs are mostly that start, so a
 * batch of four pays it once instead of four times (measured: 12 single-frame seeks in 1.9 s
 * CPU as 12 processes, 0.5 s as one).
 */
export function batchDecodeArgs(spec: BatchDecodeSpec): string[] {
  const { num, den } = spec.timeBase;
  const inputs = spec.parts.flatMap((part) => [
    // Input options hold for the next input only: each part needs its own, or ffmpeg turns
    // every part after the first upright itself and the picture chain turns it again.
    "-noautorotate",
    "-threads",
    "1",
    "-ss",
    formatSeconds(part.seekSeconds),
    "-seek_timestamp",
    "1",
    "-noaccurate_seek",
    // Each input stops by itself: ffmpeg 5.1 goes on decoding an input whose chain has ended
    // (measured: six inputs read to the end of the file). A part's frames must be seen past
    // its last time, which decode.ts checks; what falls short is decoded again alone.
    "-t",
    formatSeconds(part.readSeconds),
    "-thread_queue_size",
    "1",
    ...safeInputArgs(inputWithReadHint(part.input ?? spec.input, part.readBytes ?? null)),
  ]);
  const picking = (part: (typeof spec.parts)[number], k: number) => [
    `[${k}:${spec.streamIndex}]${batchShowinfoName(k)}=checksum=0`,
    `setpts='${slotsBeforeExpression(part.slots)}'`,
    `fps=fps=${den}/${num}:start_time=0:round=up`,
  ];
  const thumb = spec.picture.thumbnail;
  let graph: string;
  if (!thumb) {
    const chains = spec.parts.map((part, k) =>
      [
        ...picking(part, k),
        ...pictureFilters(spec.picture),
        `trim=end_frame=${slotCount(part.slots)}[v${k}]`,
      ].join(","),
    );
    const labels = spec.parts.map((_, k) => `[v${k}]`).join("");
    graph = [...chains, `${labels}concat=n=${spec.parts.length}:v=1:a=0[out]`].join(";");
  } else {
    // With thumbnails (pictureChain), each part splits its upright picture into the frame and
    // the thumbnail, each trimmed to the part's frames; concat joins both streams part by
    // part, and one vstack after it puts each thumbnail below its frame. A vstack in every
    // part held a full picture per part: a 6-part 1080p batch's ffmpeg peaked at 221 MB
    // against 167 MB without thumbnails; this way 188 MB, the frames' bytes the same.
    const chains = spec.parts.flatMap((part, k) => {
      const end = `trim=end_frame=${slotCount(part.slots)}`;
      return [
        [...picking(part, k), ...uprightFilters(spec.picture), `split[stills_f${k}][stills_t${k}]`],
        [
          `[stills_f${k}]${rgbFilters(spec.picture, spec.picture, "lanczos").join(",")}`,
          `${end}[v${k}]`,
        ],
        [`[stills_t${k}]${rgbFilters(spec.picture, thumb, "area").join(",")}`, `${end}[s${k}]`],
      ].map((chain) => chain.join(","));
    });
    const labels = spec.parts.map((_, k) => `[v${k}][s${k}]`).join("");
    graph = [
      ...chains,
      `${labels}concat=n=${spec.parts.length}:v=2:a=0[stills_frames][stills_thumbs]`,
      `[stills_thumbs]pad=w=${spec.picture.width}:h=${thumb.height}[stills_padded]`,
      "[stills_frames][stills_padded]vstack[out]",
    ].join(";");
  }
  const total = spec.parts.reduce((sum, part) => sum + slotCount(part.slots), 0);
  return [
    "-hide_banner",
    "-nostdin",
    "-nostats",
    "-loglevel",
    "level+info",
    "-copyts",
    ...errorRateArgs(spec.parts.some((part) => part.input !== undefined)),
    ...inputs,
    "-filter_complex",
    graph,
    "-map",
    "[out]",
    "-an",
    "-sn",
    "-dn",
    "-fps_mode",
    "passthrough",
    "-frames:v",
    String(total),
    ...RAW_OUTPUT_THREADS,
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgb24",
    "pipe:1",
  ];
}

function slotCount(slots: SlotTimes): number {
  return slots.kind === "grid" ? slots.count : slots.times.length;
}

/** Seconds as ffmpeg reads them: plain decimal, never exponent notation. */
export function formatSeconds(seconds: number): string {
  return seconds.toFixed(6);
}
