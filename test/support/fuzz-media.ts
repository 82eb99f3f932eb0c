// Broken media for the fuzzer: small generated videos of every container the extractor reads,
// and four ways to break them (bit flips, noise in the header, box and element sizes that lie,
// truncation). Pure and seeded: case N of seed S is the same file on every machine.
import { readFile } from "node:fs/promises";
import { makeTestVideo } from "./videos.ts";

export const FUZZ_CONTAINERS = ["mp4", "mov", "webm", "mkv"] as const;
export type FuzzContainer = (typeof FUZZ_CONTAINERS)[number];
export const MUTATIONS = ["bit-flips", "header-noise", "lying-size", "truncation"] as const;
export type Mutation = (typeof MUTATIONS)[number];

export const CONTENT_TYPES: Record<FuzzContainer, string> = {
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
  mkv: "video/x-matroska",
};

/** mulberry32: a small, fast, well-spread PRNG; `seed` fixes every draw. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed of its own for case `index`, so cases do not depend on the order they run in. */
export function caseSeed(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) >>> 0;
}

/** Two seconds at 160×90, 15 fps, a keyframe every 10 frames: decodes in a moment. */
export async function fuzzBaseFiles(): Promise<Record<FuzzContainer, Buffer>> {
  const small = { width: 160, height: 90, fps: 15, durationSeconds: 2, gop: 10 } as const;
  const [mp4, mov, webm, mkv] = await Promise.all([
    makeTestVideo({ ...small, container: "mp4", audio: true }),
    makeTestVideo({ ...small, container: "mov" }),
    makeTestVideo({ ...small, container: "webm", codec: "vp9" }),
    makeTestVideo({ ...small, container: "mkv", audio: true }),
  ]);
  return {
    mp4: await readFile(mp4),
    mov: await readFile(mov),
    webm: await readFile(webm),
    mkv: await readFile(mkv),
  };
}

export interface MutatedFile {
  bytes: Buffer;
  /** What was done, precisely enough to redo it by hand. */
  detail: string;
}

export function mutate(
  base: Buffer,
  container: FuzzContainer,
  mutation: Mutation,
  random: () => number,
): MutatedFile {
  const bytes = Buffer.from(base);
  const pick = (n: number) => Math.floor(random() * n);
  if (mutation === "bit-flips") {
    const flips = 1 + pick(32);
    const at: number[] = [];
    for (let i = 0; i < flips; i++) {
      const position = pick(bytes.length);
      bytes[position] ^= 1 << pick(8);
      at.push(position);
    }
    return { bytes, detail: `${flips} bits flipped at ${at.slice(0, 8).join(",")}…` };
  }
  if (mutation === "header-noise") {
    const [start, end] = headerRange(bytes, container);
    const count = 1 + pick(64);
    for (let i = 0; i < count; i++) bytes[start + pick(end - start)] = pick(256);
    return { bytes, detail: `${count} random bytes in the header [${start}, ${end})` };
  }
  if (mutation === "lying-size") {
    const fields = container === "mp4" || container === "mov" ? mp4Sizes(bytes) : ebmlSizes(bytes);
    if (fields.length === 0) return { bytes, detail: "no size field found (unchanged)" };
    const field = fields[pick(fields.length)];
    const lie = lyingValue(field, random);
    writeSize(bytes, field, lie);
    return {
      bytes,
      detail: `${field.name} at ${field.offset}: size ${field.value} → ${lie}`,
    };
  }
  const short = random() < 0.1;
  const length = short ? pick(64) : pick(bytes.length);
  return { bytes: bytes.subarray(0, length), detail: `truncated to ${length} of ${base.length}` };
}

interface SizeField {
  name: string;
  /** Where the size is written, and in how many bytes. */
  offset: number;
  length: number;
  value: number;
  /** MP4 sizes are plain 32-bit numbers; EBML sizes are variable-length integers. */
  kind: "u32" | "vint";
}

function lyingValue(field: SizeField, random: () => number): number {
  const max = field.kind === "u32" ? 0xffffffff : 2 ** (7 * field.length) - 1;
  const choices = [
    0,
    1,
    7,
    field.value - 1,
    field.value + 1,
    field.value * 2,
    Math.floor(field.value / 2),
    max,
    max - 1,
    Math.floor(random() * max),
  ];
  const lie = choices[Math.floor(random() * choices.length)];
  return Math.min(max, Math.max(0, lie));
}

function writeSize(bytes: Buffer, field: SizeField, value: number): void {
  if (field.kind === "u32") {
    bytes.writeUInt32BE(value >>> 0, field.offset);
    return;
  }
  // Same width as before, so nothing else moves: the marker bit, then the value.
  let rest = value;
  for (let i = field.length - 1; i >= 0; i--) {
    bytes[field.offset + i] = rest % 256;
    rest = Math.floor(rest / 256);
  }
  bytes[field.offset] |= 0x80 >> (field.length - 1);
}

const MP4_CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "udta"]);

/** Every box's 32-bit size field, descending into the boxes that hold boxes. */
function mp4Sizes(bytes: Buffer): SizeField[] {
  const fields: SizeField[] = [];
  const walk = (start: number, end: number) => {
    let position = start;
    while (position + 8 <= end) {
      const size = bytes.readUInt32BE(position);
      const type = bytes.toString("latin1", position + 4, position + 8);
      if (size < 8 || position + size > end) return;
      fields.push({ name: `box ${type}`, offset: position, length: 4, value: size, kind: "u32" });
      if (MP4_CONTAINERS.has(type)) walk(position + 8, position + size);
      position += size;
    }
  };
  walk(0, bytes.length);
  return fields;
}

const EBML_MASTERS = new Set([
  0x1a45dfa3, // EBML
  0x18538067, // Segment
  0x114d9b74, // SeekHead
  0x4dbb, // Seek
  0x1549a966, // Info
  0x1654ae6b, // Tracks
  0xae, // TrackEntry
  0xe0, // Video
  0x1f43b675, // Cluster
  0x1c53bb6b, // Cues
  0xbb, // CuePoint
  0x1254c367, // Tags
]);

function readVint(bytes: Buffer, at: number, keepMarker: boolean) {
  const first = bytes[at];
  if (first === undefined || first === 0) return null;
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  for (let i = 1; i < length; i++) value = value * 256 + bytes[at + i];
  return { length, value };
}

/** Every element's size (a variable-length integer), descending into master elements. */
function ebmlSizes(bytes: Buffer): SizeField[] {
  const fields: SizeField[] = [];
  const walk = (start: number, end: number, depth: number) => {
    let position = start;
    while (position < end && depth < 8) {
      const id = readVint(bytes, position, true);
      if (!id) return;
      const size = readVint(bytes, position + id.length, false);
      if (!size) return;
      const dataStart = position + id.length + size.length;
      const unknown = size.value === 2 ** (7 * size.length) - 1;
      const name = `element 0x${id.value.toString(16)}`;
      fields.push({
        name,
        offset: position + id.length,
        length: size.length,
        value: size.value,
        kind: "vint",
      });
      const dataEnd = unknown ? end : dataStart + size.value;
      if (dataEnd > end) return;
      if (EBML_MASTERS.has(id.value)) walk(dataStart, dataEnd, depth + 1);
      position = dataEnd;
    }
  };
  walk(0, bytes.length, 0);
  return fields;
}

/** The bytes that describe the file rather than hold pictures: where header noise goes. */
function headerRange(bytes: Buffer, container: FuzzContainer): [number, number] {
  if (container === "mp4" || container === "mov") {
    const moov = mp4Sizes(bytes).find((f) => f.name === "box moov");
    if (moov) return [moov.offset, moov.offset + moov.value];
  } else {
    const cluster = ebmlSizes(bytes).find((f) => f.name === "element 0x1f43b675");
    if (cluster) return [0, cluster.offset];
  }
  return [0, Math.min(bytes.length, 4096)];
}
