// --help for every command. The exit codes are part of the interface: scripts rely on them.
export const EXIT_CODES_HELP = `Exit codes:
  0  done
  1  the job failed or expired, or a request failed (not found, server error, network)
  2  bad usage, or a request the API refused as invalid (400)
  3  no API key, or a key the API refused (401)
  4  not enough credits (402)
  5  rate limited (429) after the retries`;

const ENVIRONMENT = `Environment:
  STILLS_API_KEY   the API key (wins over the one \`stills login\` stored)
  STILLS_BASE_URL  the API's base URL, ending in /v1 (default https://api.stills.dev/v1)`;

export const HELP: Record<string, string> = {
  main: `stills: turn a video link into still frames.

Usage:
  stills frames <url> [options]   extract frames and download them
  stills jobs list [options]      your jobs, newest first
  stills jobs get <id> [options]  one job
  stills usage [--json]           plan, credits and limits
  stills login [--key KEY]        store an API key for this user
  stills logout                   forget the stored key

Run \`stills <command> --help\` for a command's options. --json prints machine output on stdout.
Progress is drawn on stderr when stderr is a terminal, never otherwise.

${ENVIRONMENT}

${EXIT_CODES_HELP}`,

  frames: `Usage: stills frames <url> [options]

Creates a job for the video at <url>, waits for it, and downloads its frames into a directory
(frame-0001.jpg, frame-0002.jpg, … in order). Prints each file's path on stdout.

Which frames (one of; default every second):
  --count N            N frames spread evenly
  --every S            one frame every S seconds
  --at T1,T2,…         frames at these moments, in seconds (e.g. --at 1.5,3,10)
  --scenes             one frame per shot change
  --keyframes          the stream's keyframes
  --best               the best-looking frames, best first (--count N of them; default 1)
Options:
  --animated F         also a looping preview, webp or gif, saved as preview.webp|gif
  --animated-start S   where it starts (default: the best moment); --animated-duration S
                       how long (default 3, at most 10)
  --start S, --end S   only this part of the video (seconds)
  --format F           jpg (default), png or webp
  --resolution R       240, 360, 480, 720, 1080 (default), 1440 or 2160 (short side)
  --zip                also get a ZIP of the frames, saved as <job id>.zip
  -o, --output DIR     where to write (default ./stills-<job id>)
  --timeout S          give up waiting after S seconds (default 600)
  --json               print {"job": …, "files": […]} instead of paths
  -h, --help

${EXIT_CODES_HELP}`,

  jobs: `Usage:
  stills jobs list [--status S] [--limit N] [--all] [--json]
  stills jobs get <id> [--wait] [--json]

Run \`stills jobs list --help\` or \`stills jobs get --help\` for details.`,

  "jobs list": `Usage: stills jobs list [options]

Your jobs, newest first: id, status, created, frames, credits and link.

  --status S    queued, processing, completed or failed
  --limit N     at most N jobs (default 20)
  --all         every job, reading every page
  --json        print the jobs as a JSON array
  -h, --help

${EXIT_CODES_HELP}`,

  "jobs get": `Usage: stills jobs get <id> [options]

One job: its status, frames (with their signed URLs while it is completed) and credits.

  --wait        wait until the job has ended
  --json        print the job as the API returns it
  -h, --help

${EXIT_CODES_HELP}`,

  usage: `Usage: stills usage [--json]

Your plan, credits (plan and pack), the period and the plan's limits.

  --json        print the API's usage object
  -h, --help

${EXIT_CODES_HELP}`,

  login: `Usage: stills login [--key KEY]

Checks an API key against the API and stores it for this user (in the user's config directory,
readable by the user only). Without --key it asks for the key, or reads it from stdin when
stdin is not a terminal. STILLS_API_KEY, when set, is used instead of the stored key.

  --key KEY     the key (stills_live_…)
  -h, --help

${ENVIRONMENT}

${EXIT_CODES_HELP}`,

  logout: `Usage: stills logout

Deletes the key \`stills login\` stored.`,
};
