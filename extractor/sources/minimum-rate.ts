// A body that trickles (one byte every few seconds) never trips a silence timeout, and would
// hold an extractor slot until the job's deadline. Once a grace period of reading has passed,
// every window of reading must bring a minimum number of bytes, or the body ends as
// DownloadFailed. Only time spent reading counts: a body held paused by backpressure (ffmpeg
// busy decoding, an upload in flight) is our slowness, not the origin's.
import type { IncomingMessage } from "node:http";
import { downloadFailed } from "./errors.ts";

export interface MinimumRate {
  /** Reading time before the rate is judged (connection set-up, a slow first byte). */
  graceMs: number;
  /** The rate is judged over this much of the latest reading time. */
  windowMs: number;
  bytesPerSecond: number;
}

export interface RateWatch {
  received(bytes: number): void;
}

export function watchRate(response: IncomingMessage, rate: MinimumRate, host: string): RateWatch {
  let bytes = 0;
  let readingMs = 0;
  let flowing = false;
  let since = Date.now();
  // (reading time, bytes by then): the oldest kept is the newest at least a window ago.
  const samples: { at: number; bytes: number }[] = [{ at: 0, bytes: 0 }];
  const advance = () => {
    const now = Date.now();
    if (flowing) readingMs += now - since;
    since = now;
  };
  const check = () => {
    advance();
    samples.push({ at: readingMs, bytes });
    while (samples.length > 1 && samples[1].at <= readingMs - rate.windowMs) samples.shift();
    const base = samples[0];
    const span = readingMs - base.at;
    if (readingMs < rate.graceMs || span < rate.windowMs) return;
    const got = bytes - base.bytes;
    if (got >= (rate.bytesPerSecond * span) / 1000) return;
    stop();
    response.destroy(
      downloadFailed(
        `${host} sent ${got} bytes in ${(span / 1000).toFixed(1)} s of reading, below the ` +
          `minimum of ${rate.bytesPerSecond} bytes/s`,
        "The video's server is sending it too slowly to be processed.",
      ),
    );
  };
  const timer = setInterval(check, Math.max(20, Math.min(1000, rate.windowMs / 4)));
  timer.unref();
  const stop = () => clearInterval(timer);
  response.on("pause", () => {
    advance();
    flowing = false;
  });
  response.on("resume", () => {
    advance();
    flowing = true;
  });
  response.once("end", stop);
  response.once("close", stop);
  return {
    received(count) {
      bytes += count;
    },
  };
}
