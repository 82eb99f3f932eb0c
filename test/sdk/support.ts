// What the SDK tests share: a fetch that records what the SDK sent and got (the stack still
// answers every request; nothing is stubbed), and a video whose frames carry their numbers.
import { makeTestVideo } from "../support/videos.ts";

export interface Exchange {
  method: string;
  url: string;
  headers: Headers;
  status: number | null;
  retryAfter: string | null;
  startedAt: number;
  endedAt: number;
}

/** The global fetch, recording each exchange. */
export function recordingFetch() {
  const log: Exchange[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const entry: Exchange = {
      method: request.method,
      url: request.url,
      headers: request.headers,
      status: null,
      retryAfter: null,
      startedAt: Date.now(),
      endedAt: 0,
    };
    log.push(entry);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      // A new connection per request: the local dev server closes idle ones (see contract.test).
      const response = await fetch(input, {
        ...init,
        headers: { ...Object.fromEntries(request.headers), connection: "close" },
      });
      entry.status = response.status;
      entry.retryAfter = response.headers.get("retry-after");
      return response;
    } finally {
      inFlight--;
      entry.endedAt = Date.now();
    }
  };
  return {
    fetch: fetchImpl,
    log,
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

/** 10 s at 30 fps, 320×180: frame n shows n (test/support/videos.ts). */
export const VIDEO = { width: 320, height: 180, fps: 30, durationSeconds: 10, gop: 30 } as const;

export function makeSdkVideo() {
  return makeTestVideo({ ...VIDEO });
}

/** The frame on screen at `t` of VIDEO (the last frame whose time is ≤ t). */
export function frameNumberAt(t: number): number {
  return Math.floor(t * VIDEO.fps + 1e-6);
}
