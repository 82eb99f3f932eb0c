// Entry point: `node extractor/main.ts`. Reads its settings (extractor/config.ts lists every
// variable), decides who runs the media tools, checks ffmpeg/ffprobe, sweeps what an earlier
// run killed hard left behind, then serves POST /extract.
import { loadConfig } from "./config.ts";
import { checkMediaTools, setMediaToolPaths } from "./ffmpeg/process.ts";
import { sweepLeftovers } from "./leftovers.ts";
import { log, setLogLevel } from "./log.ts";
import { chooseMediaUser, useMediaIdentity } from "./media-sandbox.ts";
import { setMediaNice } from "./priority.ts";
import { createExtractorServer } from "./server.ts";
import { sourceOpener } from "./source-input.ts";
import { defaultPolicy } from "./sources/policy.ts";
import { setYtDlpCommand } from "./sources/ytdlp.ts";
import { EXPAND_DEADLINE_MS, expandWithYtDlp } from "./sources/ytdlp-playlist.ts";
import { checkTesseract, setOcrConcurrency } from "./text/frame-text.ts";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  setLogLevel(config.logLevel);
  setMediaToolPaths(config.mediaTools);
  setMediaNice(config.mediaNice);
  setYtDlpCommand(config.ytdlp, config.ytdlpExtraArgs);
  const media = chooseMediaUser(config.mediaUser);
  useMediaIdentity(media.identity);
  if (media.identity) log("info", "media tools run as", { user: media.identity.label });
  else if (media.warn) log("warn", "media tools share the extractor's user", { why: media.why });
  await checkMediaTools();
} catch (error) {
  fail((error as Error).message);
}

// Text on frames (text: true) reads through one pool as wide as the job slots; without
// Tesseract the extractor still starts, and only text jobs fail (uncharged).
setOcrConcurrency(config.concurrency);
const noTesseract = await checkTesseract();
if (noTesseract) log("warn", noTesseract);

const swept = await sweepLeftovers();
if (swept.tempDirs.length > 0 || swept.processGroups.length > 0 || swept.skipped) {
  log("info", "swept what an earlier run left", {
    temp_dirs: swept.tempDirs,
    process_groups: swept.processGroups,
    skipped: swept.skipped,
  });
}

const server = createExtractorServer({
  token: config.token,
  concurrency: config.concurrency,
  waitingLimit: config.waitingLimit,
  tenantWaitingLimit: config.tenantWaitingLimit,
  newcomerSlots: config.newcomerSlots,
  deadlineSeconds: config.deadlineSeconds,
  openSource: sourceOpener(config),
  expandLink: (url, maxEntries) =>
    expandWithYtDlp(url, {
      policy: defaultPolicy(config.allowPrivate),
      maxEntries,
      deadlineMs: EXPAND_DEADLINE_MS,
    }),
});

server.listen(config.port, config.host, () => {
  log("info", "extractor listening", {
    url: `http://${config.host}:${config.port}`,
    concurrency: config.concurrency,
    waiting_limit: config.waitingLimit,
    tenant_waiting_limit: config.tenantWaitingLimit,
    newcomer_slots: config.newcomerSlots,
    media_nice: config.mediaNice,
  });
});

function stop(why: string): void {
  log("info", "extractor stopping", { signal: why });
  server.close(() => process.exit(0));
  // Running jobs are abandoned after a grace period; the queue redelivers them.
  setTimeout(() => process.exit(0), 10_000).unref();
}
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => stop(signal));
// The local stack's lifeline: its end (the stack's process gone, even killed) stops us too.
if (config.stopWithParent) {
  process.stdin.once("end", () => stop("parent gone"));
  process.stdin.once("error", () => stop("parent gone"));
  process.stdin.resume();
}
