// `npm start`: the whole stack in one command. Ctrl-C (or closing its terminal) stops it; its state (D1, R2, queues)
// stays in .wrangler/state for the next start. An extractor that dies is started again by
// the stack itself (scripts/lib/stack.mjs), as the container platform does in production;
// only the edge ending stops everything. Before that: ffmpeg/ffprobe (installed from Debian's
// packages when we are root, else one line naming the command) and a current yt-dlp
// (scripts/lib/ytdlp.mjs; without a network the stack starts with the one it has). Once up, the
// worker's cron runs as it would on Cloudflare (scripts/lib/maintenance.mjs), so a restart in
// the middle of a job never leaves it behind.
import { readMaintenanceSchedule, scheduleMaintenance } from "./lib/maintenance.mjs";
import { ensureMediaTools, ensureTextTools } from "./lib/media-tools.mjs";
import { DEV_VARS, ROOT, startStack } from "./lib/stack.mjs";
import { chooseYtDlp } from "./lib/ytdlp.mjs";

try {
  ensureMediaTools();
  // Tesseract for text: true, installed the same way; without it the stack still starts.
  ensureTextTools();
  // Read first: a cron this cannot read stops the start with its reason, before anything runs.
  const schedule = readMaintenanceSchedule({ root: ROOT, devVars: DEV_VARS });
  const ytdlp = await chooseYtDlp();
  const stack = await startStack({
    devVars: DEV_VARS,
    ...(ytdlp.path ? { STILLS_YTDLP: ytdlp.path } : {}),
  });
  console.log(
    `\nStills API listening on ${stack.apiUrl}  (docs: ${stack.baseUrl}/docs, extractor: ${stack.extractorUrl}` +
      `${ytdlp.path ? `, yt-dlp ${ytdlp.version}: ${ytdlp.path}` : ""})`,
  );
  const maintenance = scheduleMaintenance({ baseUrl: stack.baseUrl, ...schedule });
  console.error(
    `maintenance (the worker's cron): now, in ${schedule.leaseSeconds + 2} s (once the last run's leases are out), then ${schedule.crons.map((c) => `"${c}"`).join(", ") || "never"} (UTC)`,
  );
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    maintenance.stop();
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  // A closed terminal: without this Node ended at once and left `wrangler dev` running.
  process.on("SIGHUP", shutdown);
  stack.children.edge.on("exit", async (code, signal) => {
    // Asked to stop: the edge ending is part of it (and a closed terminal takes no more lines).
    if (stopping) return;
    stopping = true;
    console.error(
      `the edge (wrangler dev) exited (${signal ?? `code ${code}`}); stopping the stack`,
    );
    maintenance.stop();
    await stack.stop();
    process.exit(1);
  });
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
