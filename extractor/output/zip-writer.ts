// The frames ZIP, produced as a stream with fflate: each image is stored as it is (JPG, PNG and
// WebP are already compressed) and its bytes are handed on at once, so the archive never sits
// in memory whatever the number of frames.
import { Zip, ZipPassThrough } from "fflate";
import type { ArchiveUpload, StoredObject } from "./frame-sink.ts";

export class ZipWriter {
  private readonly upload: ArchiveUpload;
  private readonly zip: Zip;
  private readonly modified: Date;
  private pending: Uint8Array[] = [];
  private failure: Error | null = null;

  constructor(upload: ArchiveUpload, modified = new Date()) {
    this.upload = upload;
    this.modified = modified;
    // fflate calls back synchronously while we push; chunks are queued, then awaited in order.
    this.zip = new Zip((error, chunk) => {
      if (error) this.failure = error;
      else this.pending.push(chunk);
    });
  }

  async add(fileName: string, bytes: Uint8Array): Promise<void> {
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
