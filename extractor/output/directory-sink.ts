// Frames as files in a local directory: for tests, the bench and the command line.

import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ArchiveUpload, FrameSink, StoredObject } from "./frame-sink.ts";

export class DirectorySink implements FrameSink {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = directory;
  }

  async putFrame(fileName: string, bytes: Uint8Array): Promise<StoredObject> {
    await mkdir(this.directory, { recursive: true });
    await writeFile(join(this.directory, fileName), bytes);
    return { key: fileName, bytes: bytes.length };
  }

  async openArchive(fileName: string): Promise<ArchiveUpload> {
    await mkdir(this.directory, { recursive: true });
    const path = join(this.directory, fileName);
    const stream = createWriteStream(path);
    let bytes = 0;
    return {
      async write(chunk) {
        // An aborted job destroys the stream while a frame's ZIP entry may still be on its way:
        // writing then would raise an error event nobody listens to.
        if (stream.destroyed) throw new Error("the archive was aborted");
        bytes += chunk.length;
        if (!stream.write(chunk)) await once(stream, "drain");
      },
      async finish() {
        stream.end();
        await once(stream, "finish");
        return { key: fileName, bytes };
      },
      async abort() {
        // A write still on its way (or the file still opening) fails once the stream is
        // destroyed, as an error event: the archive is being thrown away, so it is not one.
        stream.on("error", () => {});
        stream.destroy();
        await rm(path, { force: true });
      },
    };
  }
}
