// Identical jobs at once (decision 0384). An account's job that asks exactly what another of its
// jobs running here asks (the same link, options and plan limits) waits, out of its scheduler
// slot, until that one has ended and posted its result. Then it goes on as any job: it opens
// its source and reports it, and the edge serves it the other's frames, charged 0 (decision
// 0350), or, if the first failed or the file changed meanwhile, it extracts as usual, in its
// turn for a slot. A first job whose source a twin could not be served (no ETag or
// Last-Modified, or a redirect to another URL) lets its twins go as soon as it has opened it.
// The wait counts against the twin's deadline. Without this both would decode the same frames
// side by side and both be charged.
import type { ExtractRequest, SourceIdentity } from "../schema/messages.ts";
import { canonicalJson, shapingOptions } from "../schema/reuse.ts";
import type { Slot } from "./scheduler.ts";

interface Running {
  jobId: string;
  ended: Promise<void>;
}

/** The job a request is the twin of, if any, and what ends this one's turn. */
export interface TwinTurn {
  /** The job this one waited for (the last, if one after another), or null. */
  waitedFor: string | null;
  /**
   * This job has ended (its result posted or not), or its source turned out to have no
   * identity (nothing of it can be reused): a twin waiting for it goes on. Once is enough.
   */
  leave(): void;
}

export class Twins {
  readonly #running = new Map<string, Running>();

  /**
   * What makes two requests twins, or null for one never served another job's frames: a demo,
   * a job without an attempt of the edge's, `reuse: false`, a live stream.
   */
  static keyOf(request: ExtractRequest): string | null {
    const options = request.options;
    if (request.kind !== "job" || !request.attempt_id || !request.tenant) return null;
    if (options.reuse === false || options.mode === "live") return null;
    return canonicalJson({
      tenant: request.tenant,
      url: request.url,
      platform: request.platform,
      options: shapingOptions(options),
      max_video_seconds: request.max_video_seconds,
      clip_to_max: request.clip_to_max,
      max_frames: request.max_frames,
    });
  }

  /**
   * Waits (through `idle`, out of the slot) while another job with this key runs here, then
   * takes the key for `jobId` (`onWait` is told before each wait). A cancelled wait ends at
   * once and takes nothing (the caller looks at its signal). An earlier attempt of the same
   * job is not waited for.
   */
  async enter(
    key: string,
    jobId: string,
    idle: Slot["idle"],
    signal: AbortSignal,
    onWait: () => void = () => {},
  ): Promise<TwinTurn> {
    let waitedFor: string | null = null;
    for (;;) {
      const other = this.#running.get(key);
      if (!other || other.jobId === jobId || signal.aborted) break;
      waitedFor = other.jobId;
      onWait();
      // In its turn: once the first has ended, this one may run a whole extraction.
      await idle(() => endedOrAborted(other.ended, signal), "in-turn");
    }
    if (signal.aborted) return { waitedFor, leave: () => {} };
    let ended = () => {};
    const own: Running = { jobId, ended: new Promise<void>((resolve) => (ended = resolve)) };
    this.#running.set(key, own);
    return {
      waitedFor,
      leave: () => {
        if (this.#running.get(key) === own) this.#running.delete(key);
        ended();
      },
    };
  }

  /**
   * Whether a twin could be served this source's frames: its identity must be one a twin's
   * own source will also have. A platform's video id is; a file's final URL is only when no
   * redirect changed it (a redirect may lead to a URL signed for each request, which no twin
   * would share). A source with no identity is never reused at all.
   */
  static mayServe(identity: SourceIdentity | null | undefined, requestUrl: string): boolean {
    if (!identity) return false;
    return "platform_id" in identity || identity.final_url === requestUrl;
  }

  /** Keys held now (tests: nothing is kept after the jobs end). */
  get size(): number {
    return this.#running.size;
  }
}

function endedOrAborted(ended: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    signal.addEventListener("abort", stop, { once: true });
    ended.then(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    });
  });
}
