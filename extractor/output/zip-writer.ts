// The frames ZIP, produced as a stream with fflate: each image is stored as it is (JPG, PNG and
// WebP are already compressed) and its bytes are handed on at once, so the archive never sits
// in memory whatever the number of frames.
import { Zip, ZipPassThrough } from "fflate";
import { ExtractError } from "../errors.ts";
import type { ArchiveUpload, StoredObject } from "./frame-sink.ts";

/**
 * fflate writes no ZIP64: sizes and offsets are 32-bit, so an archive must stay below 4 GiB
 * (with room for the central directory). Past that the job fails clearly instead of
 * delivering a corrupt archive.
 */
export const MAX_ARCHIVE_BYTES = 2 ** 32 - 64 * 1024 * 1024;

export class ZipWriter {
  private readonly upload: ArchiveUpload;
  private readonly zip: Zip;
  private readonly modified: Date;
  private pending: Uint8Array[] = [];
  private failure: Error | null = null;
  private entryBytes = 0;
  private readonly maxBytes: number;

  constructor(upload: ArchiveUpload, modified = new Date(), maxBytes = MAX_ARCHIVE_BYTES) {
    this.upload = upload;
    this.maxBytes = maxBytes;
    this.modified = modified;
    // fflate calls back synchronously while we push; chunks are queued, then awaited in order.
    this.zip = new Zip((error, chunk) => {
      if (error) this.failure = error;
      else this.pending.push(chunk);
    });
  }

  async add(fileName: string, bytes: Uint8Array): Promise<void> {
    // Local header and central directory entry: 30 + 46 bytes plus the name twice.
    this.entryBytes += bytes.length + 76 + 2 * fileName.length;
    if (this.entryBytes > this.maxBytes) {
      throw new ExtractError(
        "ExtractionFailed",
        `the ZIP would pass ${this.maxBytes} bytes, beyond what a ZIP without ZIP64 can hold`,
        "The frames are too large to fit in one ZIP. Ask for fewer frames, a lower resolution or JPG.",
      );
    }
    const entry = new ZipPassThrough(fileName);
    entry.mtime = this.modified;
    this.zip.add(entry);
    entry.push(bytes, true);
    await this.drain();
  }

  async finish(): Promise<StoredObject> {
    this.zip.end();
    await this.drain();
    return this.upload.finish();
  }

  async abort(): Promise<void> {
    this.zip.terminate();
    this.pending = [];
    await this.upload.abort();
  }

  private async drain(): Promise<void> {
    if (this.failure) throw this.failure;
    while (this.pending.length > 0) {
      const chunk = this.pending.shift() as Uint8Array;
      await this.upload.write(chunk);
    }
  }
}
