// A file on this machine as a job's source (the command line: operators, the bench). ffmpeg
// reads it directly; a decode run that can leave out pictures it does not need reads it through
// a loopback relay of its own, started on first use, as the service reads every source
// (ffmpeg/unneeded-frames.ts).
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import type { SourceHandle } from "../source-input.ts";
import type { ChunkWriter, ServedMedia } from "./ranged-origin.ts";
import type { Relay } from "./relay.ts";
import { startRelay } from "./relay.ts";

const READ_CHUNK = 256 * 1024;

class LocalFile implements ServedMedia {
  readonly contentType = "application/octet-stream";
  private readonly file: FileHandle;
  private readonly bytes: number;

  constructor(file: FileHandle, bytes: number) {
    this.file = file;
    this.bytes = bytes;
  }

  async size(): Promise<number> {
    return this.bytes;
  }

  async pump(start: number, end: number, write: ChunkWriter, signal: AbortSignal): Promise<void> {
    for (let at = start; at <= end; ) {
      signal.throwIfAborted();
      const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, end + 1 - at));
      const { bytesRead } = await this.file.read(chunk, 0, chunk.length, at);
      if (bytesRead === 0) return;
      await write(chunk.subarray(0, bytesRead));
      at += bytesRead;
    }
  }

  async close(): Promise<void> {
    await this.file.close();
  }
}

async function relayOf(path: string): Promise<Relay> {
  const file = await open(path, "r");
  try {
    return await startRelay(new LocalFile(file, (await file.stat()).size));
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** `path` as a source; close() stops its relay if one was started. */
export function localFileSource(path: string): SourceHandle {
  let relay: Promise<Relay> | null = null;
  return {
    input: path,
    bytesRead: () => 0,
    hidingRelay: () => {
      relay ??= relayOf(path);
      return relay;
    },
    close: async () => {
      await (await relay?.catch(() => null))?.close();
    },
  };
}
