// Encodes each delivered picture once and stores it under every frame index that asked for
// that moment, as a file and (when zipped) a ZIP entry, filling in the frame results. With
// `skip`, decoded candidates go through the SkipPicker first and only its choices are encoded;
// with `storyboard`, a small tile of each delivered picture is kept for the contact sheet. A
// sink that keeps thumbnails (the edge) also gets one small thumbnail file per picture.

import type { SkipReason } from "../schema/api.ts";
import type { PlannedFrame } from "../schema/frame-plan.ts";
import type { FrameResult, JobOptions } from "../schema/messages.ts";
import type { DecodedFrame } from "./decode.ts";
import {
  COLLECT_AFTER_BYTES,
  CONTENT_TYPES,
  collectEncodedImage,
  encodePicture,
} from "./encode.ts";
import type { FrameSink, StoredObject } from "./output/frame-sink.ts";
import { ARCHIVE_FILE_NAME, frameFileName } from "./output/frame-sink.ts";
import type { ThumbnailRows } from "./output/thumbnails.ts";
import {
  encodeThumbnail,
  makeThumbnail,
  THUMBNAIL_CONTENT_TYPE,
  thumbnailFileName,
} from "./output/thumbnails.ts";
import { ZipWriter } from "./output/zip-writer.ts";
import { imageTurns } from "./priority.ts";
import type { SkipPicker } from "./quality/skip-picker.ts";
import type { OutputSize } from "./sizing.ts";
import type { Tile } from "./storyboard/contact-sheet.ts";
import { makeTile } from "./storyboard/contact-sheet.ts";
import type { FrameTextReader } from "./text/frame-text.ts";

/** One picture to deliver, and for which frames of the job. */
interface Delivery {
  pixels: Buffer;
  /** Its thumbnail as ffmpeg scaled it, when it did (decode.ts); else made from `pixels`. */
  thumbnail?: ThumbnailRows | null;
  pts: number | null;
  planned: PlannedFrame[];
  release: () => void;
  movedTo: number | null;
  movedReason: SkipReason | null;
}

export class FrameWriter {
  private readonly sink: FrameSink;
  private readonly options: JobOptions;
  private readonly size: OutputSize;
  private readonly results: Map<number, FrameResult>;
  private readonly zipped: boolean;
  /** Single files are skipped only when the job asked for the ZIP alone. */
  private readonly singleFiles: boolean;
  private zip: ZipWriter | null = null;
  private picker: SkipPicker | null = null;
  /** Tiles of the delivered pictures, when the job asked for a storyboard. */
  readonly tiles: Tile[] = [];
  /** Frame indexes whose pictures get a tile (null: none). */
  private tileFor: Set<number> | null = null;
  /** With text: reads each delivered picture's text, beside the decoding (text/frame-text.ts). */
  private text: FrameTextReader | null = null;
  /** Frame files queued with the sink and not yet known stored (finish() waits for them). */
  private readonly uploads: Promise<StoredObject>[] = [];

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

  /** Keeps a storyboard tile of the pictures delivered for these frames. */
  keepTilesFor(indexes: Set<number>): void {
    this.tileFor = indexes;
  }

  /** Reads the text on each delivered picture, as encoded, into its frames' results. */
  readTextWith(reader: FrameTextReader): void {
    this.text = reader;
  }

  /** Waits for the text of every delivered picture (throws when a read failed). */
  async finishText(): Promise<void> {
    await this.text?.finish();
  }

  /** Decoded frames are candidates to choose from (skip); call finishPicking() after them. */
  pickWith(picker: SkipPicker): void {
    this.picker = picker;
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
        for (const delivery of this.deliveriesOf(frame, plannedFor(frame))) {
          const next = this.deliverAfter(storing, delivery);
          await storing;
          storing = next;
        }
      }
    } finally {
      await storing;
    }
  }

  /** Delivers what the picker still holds: the last wanted frame's choice. */
  async finishPicking(): Promise<void> {
    if (!this.picker) return;
    for (const picked of this.picker.flush()) {
      await this.deliverAfter(Promise.resolve(), { ...picked, release: () => {} });
    }
  }

  private deliveriesOf(frame: DecodedFrame, planned: PlannedFrame[]): Delivery[] {
    if (!this.picker) {
      return [{ ...frame, planned, movedTo: null, movedReason: null }];
    }
    try {
      return this.picker
        .offer(frame.pixels, frame.pts, planned)
        .map((picked) => ({ ...picked, release: () => {} }));
    } finally {
      frame.release();
    }
  }

  /** Starts encoding now and stores once the previous store is done; returns the store. */
  private deliverAfter(previous: Promise<void>, delivery: Delivery): Promise<void> {
    const { width, height } = this.size;
    // Each in a turn of the extractor's image work (priority.ts: a newcomer's go first).
    const encoding = Promise.all([
      imageTurns.take(() =>
        encodePicture({ pixels: delivery.pixels, width, height }, this.options.format),
      ),
      delivery.planned.some((f) => this.tileFor?.has(f.index))
        ? imageTurns.take(() => makeTile(delivery.pixels, width, height))
        : null,
      this.sink.keepsThumbnails && delivery.planned.length > 0
        ? imageTurns.take(() => {
            const rows = delivery.thumbnail;
            return rows ? encodeThumbnail(rows) : makeThumbnail(delivery.pixels, width, height);
          })
        : null,
    ]);
    encoding.then(delivery.release, delivery.release);
    const storing = Promise.all([previous, encoding]).then(async ([, [bytes, tile, thumb]]) => {
      const { stored } = await this.store(delivery, bytes, tile, thumb);
      // Once stored, a large image is garbage: collected then, not dozens of images later.
      if (bytes.length >= COLLECT_AFTER_BYTES) {
        stored.then(() => setImmediate(collectEncodedImage));
      }
    });
    // Awaited on the next turn; until then a failure must not count as unhandled.
    storing.catch(() => {});
    return storing;
  }

  /**
   * Hands the picture to the sink and the ZIP under each frame index that asked for it, and
   * fills in their results. An upload may still be queued when this returns (finish() waits
   * for them all): what it answers, boxed, settles once the sink has stored every copy.
   */
  private async store(
    delivery: Delivery,
    bytes: Buffer,
    tile: Buffer | null,
    thumb: Buffer | null,
  ): Promise<{ stored: Promise<unknown> }> {
    if (tile && delivery.planned.length > 0) {
      this.tiles.push({ moment: delivery.movedTo ?? delivery.planned[0].timestamp, image: tile });
    }
    const copies: Promise<StoredObject>[] = [];
    if (thumb) {
      // One thumbnail per picture, named after the first frame that shows it, shared by all.
      const name = thumbnailFileName(delivery.planned[0].index);
      const { stored } = await this.upload(name, thumb, THUMBNAIL_CONTENT_TYPE);
      copies.push(stored);
      stored.then((s) => {
        for (const target of delivery.planned) {
          const result = this.results.get(target.index);
          if (result) result.thumb_key = s.key;
        }
      }, ignore);
    }
    for (const target of delivery.planned) {
      const fileName = frameFileName(target.index, this.options.format);
      const result = this.results.get(target.index);
      if (this.singleFiles) {
        const { stored } = await this.upload(fileName, bytes, CONTENT_TYPES[this.options.format]);
        copies.push(stored);
        // Its key once stored: the job's outcome is read after finish(), which waits for it.
        stored.then((s) => {
          if (result) result.key = s.key;
        }, ignore);
      }
      await this.zip?.add(fileName, bytes);
      if (!result) continue;
      result.status = "ok";
      result.pts = delivery.pts === null ? null : round6(delivery.pts);
      result.error = null;
      if (delivery.movedReason !== null) {
        result.moved_to = delivery.movedTo;
        result.moved_reason = delivery.movedReason;
      }
    }
    if (this.text) {
      // The bytes as delivered, at full size; waits while this job already holds its share
      // of pictures in reads, and with it the decoding (text/frame-text.ts).
      const readFor = delivery.planned.flatMap((f) => this.results.get(f.index) ?? []);
      if (readFor.length > 0) await this.text.read(bytes, readFor);
    }
    return { stored: Promise.allSettled(copies) };
  }

  /**
   * Hands a frame's file to the sink, which may store it later (queueFile; finish() waits for
   * it), or stores it now (putFrame). Answers the store, in a box: not awaited here.
   */
  private async upload(
    fileName: string,
    bytes: Uint8Array,
    contentType: string,
  ): Promise<{ stored: Promise<StoredObject> }> {
    if (!this.sink.queueFile) {
      return { stored: Promise.resolve(await this.sink.putFrame(fileName, bytes, contentType)) };
    }
    const queued = await this.sink.queueFile(fileName, bytes, contentType);
    this.uploads.push(queued.stored);
    return queued;
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
    await this.finishText();
    await this.sink.flush?.();
    await Promise.all(this.uploads.splice(0));
    return this.zip ? this.zip.finish() : null;
  }

  /**
   * Gives up, once this writer's queued frames are stored or refused: a writer that starts
   * over (job.ts, IndexDisagreed) stores the same names, after these.
   */
  async abort(): Promise<void> {
    await this.text?.abort();
    await this.sink.flush?.().catch(ignore);
    await Promise.allSettled(this.uploads.splice(0));
    await this.zip?.abort().catch(ignore);
  }
}

function ignore(): void {}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
