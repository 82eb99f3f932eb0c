// Encodes each delivered picture once and stores it under every frame index that asked for
// that moment, as a file and (when zipped) a ZIP entry, filling in the frame results.
import type { PlannedFrame } from "../schema/frame-plan.ts";
import type { FrameResult, JobOptions } from "../schema/messages.ts";
import type { DecodedFrame } from "./decode.ts";
import { CONTENT_TYPES, encodePicture } from "./encode.ts";
import type { FrameSink } from "./output/frame-sink.ts";
import { ARCHIVE_FILE_NAME, frameFileName } from "./output/frame-sink.ts";
import { ZipWriter } from "./output/zip-writer.ts";
import type { OutputSize } from "./sizing.ts";

export class FrameWriter {
  private readonly sink: FrameSink;
  private readonly options: JobOptions;
  private readonly size: OutputSize;
  private readonly results: Map<number, FrameResult>;
  private readonly zipped: boolean;
  /** Single files are skipped only when the job asked for the ZIP alone. */
  private readonly singleFiles: boolean;
  private zip: ZipWriter | null = null;

  constructor(
    sink: FrameSink,
    options: JobOptions,
    size: OutputSize,
    results: Map<number, FrameResult>,
    zipped: boolean,
  ) {
    this.sink = sink;
    this.options = options;
    this.size = size;
    this.results = results;
    this.zipped = zipped;
    this.singleFiles = !(zipped && options.output === "zip");
  }

  async open(): Promise<void> {
    if (this.zipped) this.zip = new ZipWriter(await this.sink.openArchive(ARCHIVE_FILE_NAME));
  }

  /** Encoding of one picture overlaps storing the previous one; order is kept. */
  async writeAll(
    frames: AsyncIterable<DecodedFrame>,
    plannedFor: (frame: DecodedFrame) => PlannedFrame[],
  ): Promise<void> {
    let storing: Promise<void> = Promise.resolve();
    try {
      for await (const frame of frames) {
        if (frame.pastDecodedEnd) {
          frame.release();
          continue;
        }
        const encoding = encodePicture(
          { pixels: frame.pixels, width: this.size.width, height: this.size.height },
          this.options.format,
        );
        encoding.then(frame.release, frame.release);
        await storing;
        storing = encoding.then((bytes) => this.store(frame, bytes, plannedFor(frame)));
        // Awaited on the next turn; until then a failure must not count as unhandled.
        storing.catch(() => {});
      }
    } finally {
      await storing;
    }
  }

  private async store(frame: DecodedFrame, bytes: Buffer, planned: PlannedFrame[]) {
    for (const target of planned) {
      const fileName = frameFileName(target.index, this.options.format);
      const stored = this.singleFiles
        ? await this.sink.putFrame(fileName, bytes, CONTENT_TYPES[this.options.format])
        : null;
      await this.zip?.add(fileName, bytes);
      const result = this.results.get(target.index);
      if (!result) continue;
      result.status = "ok";
      result.key = stored?.key ?? null;
      result.pts = frame.pts === null ? null : round6(frame.pts);
      result.error = null;
    }
  }

  /**
   * Stores a file of the job beside its frames (captions, storyboard), always as its own file
   * so it has a URL, and in the ZIP when there is one. Call before finish().
   */
  async addFile(name: string, bytes: Uint8Array, contentType: string): Promise<string> {
    const stored = await this.sink.putFrame(name, bytes, contentType);
    await this.zip?.add(name, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    return stored.key;
  }

  async finish(): Promise<{ key: string; bytes: number } | null> {
    return this.zip ? this.zip.finish() : null;
  }

  async abort(): Promise<void> {
    await this.zip?.abort().catch(() => {});
  }
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
