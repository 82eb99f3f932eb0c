// Simulated time for a live stream's tests: the origin (hls-live-origin.ts, `now`) and the
// extractor's live source (openLiveSource's `now` and `sleep`) read one clock, and a wait moves
// it on at once instead of waiting, so a test of 6 s of stream takes the work it does, not 6 s.
// Events a test schedules (`at`) run at their own time, in order, as a wait passes them.

export interface VirtualClock {
  now(): number;
  /** Moves the clock on by `ms`, running each event it passes at its time. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `event` when the clock reaches `ms` from now. */
  at(ms: number, event: () => void): void;
}

export function virtualClock(start = Date.now()): VirtualClock {
  let time = start;
  const events: { time: number; run: () => void }[] = [];
  return {
    now: () => time,
    async sleep(ms, signal) {
      signal?.throwIfAborted();
      const until = time + Math.max(0, ms);
      for (;;) {
        events.sort((a, b) => a.time - b.time);
        const next = events[0];
        if (!next || next.time > until) break;
        events.shift();
        time = Math.max(time, next.time);
        next.run();
      }
      time = until;
      // Let other work (the origin's answers, the caller's own awaits) run, as a timer would.
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    },
    at(ms, event) {
      events.push({ time: time + ms, run: event });
    },
  };
}
