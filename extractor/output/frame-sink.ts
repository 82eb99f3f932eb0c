// Where finished frames go. The job writes through this interface only, so tests and the bench
// use a directory while the service uploads to the edge.

export interface StoredObject {
  key: string;
  bytes: number;
}

export interface FrameSink {
  /**
   * True when the frames go where a gallery shows them (the edge): each delivered picture also
   * gets a small thumbnail file (output/thumbnails.ts). A directory of frames gets none.
   */
  readonly keepsThumbnails?: boolean;
  /** Stores one frame image under `fileName` (e.g. frame-0001.jpg); returns its key. */
  putFrame(fileName: string, bytes: Uint8Array, contentType: string): Promise<StoredObject>;
  /**
   * Takes a file to store after the ones taken before it, answering once it is taken (a writer
   * that runs ahead of the uploads waits here); `stored` settles when it is stored, which may
   * be as late as flush(). Optional: a sink without it stores each file with putFrame.
   */
  queueFile?(
    fileName: string,
    bytes: Uint8Array,
    contentType: string,
  ): Promise<{ stored: Promise<StoredObject> }>;
  /** Stores every queued file now; throws if one could not be stored. */
  flush?(): Promise<void>;
  /** Starts the archive; bytes are written in order as the ZIP is produced. */
  openArchive(fileName: string): Promise<ArchiveUpload>;
}

export interface ArchiveUpload {
  /** Resolves when the chunk may be dropped (written or buffered within a fixed budget). */
  write(chunk: Uint8Array): Promise<void>;
  finish(): Promise<StoredObject>;
  /** Gives up; must not throw. */
  abort(): Promise<void>;
}

/** frame-0001.jpg: 1-based, zero-padded to 4 digits (more digits past 9999). */
export function frameFileName(index: number, extension: string): string {
  return `frame-${String(index).padStart(4, "0")}.${extension}`;
}

export const ARCHIVE_FILE_NAME = "frames.zip";
