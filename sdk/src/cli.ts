#!/usr/bin/env node
// The `stills` command: `npx @stills/sdk frames <url> --count 4 -o out`.
import {
  framesCommand,
  type Io,
  jobsCommand,
  loginCommand,
  logoutCommand,
  usageCommand,
} from "./cli/commands.ts";
import { EXIT, exitCodeFor, NoKeyError, UsageError } from "./cli/exit-codes.ts";
import { HELP } from "./cli/help.ts";
import { StillsConnectionError, StillsError, StillsTimeoutError } from "./errors.ts";
import { VERSION } from "./version.ts";

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  frames: framesCommand,
  jobs: jobsCommand,
  usage: usageCommand,
  login: loginCommand,
  logout: logoutCommand,
};

export async function run(argv: string[], io: Io): Promise<number> {
  const [command, ...args] = argv;
  if (command === "--version" || command === "-v") {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.done;
  }
  if (!command || command === "--help" || command === "-h" || command === "help") {
    io.stdout.write(`${HELP.main}\n`);
    return command ? EXIT.done : EXIT.usage;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    io.stderr.write(`stills: unknown command ${JSON.stringify(command)}\n\n${HELP.main}\n`);
    return EXIT.usage;
  }
  if (args.includes("--help") || args.includes("-h")) {
    const sub =
      command === "jobs" && (args[0] === "list" || args[0] === "get") ? `jobs ${args[0]}` : command;
    io.stdout.write(`${HELP[sub]}\n`);
    return EXIT.done;
  }
  try {
    return await handler(args, io);
  } catch (error) {
    io.stderr.write(`${describe(error)}\n`);
    if (error instanceof NoKeyError) return EXIT.auth;
    return exitCodeFor(error);
  }
}

function describe(error: unknown): string {
  if (error instanceof UsageError) return `stills: ${error.message}\nRun with --help for usage.`;
  if (error instanceof StillsError) {
    const lines = [`stills: ${error.userMessage} (${error.data.name}, HTTP ${error.status})`];
    for (const problem of error.errors) {
      lines.push(`  - ${problem.param ? `${problem.param}: ` : ""}${problem.message}`);
    }
    if (error.requestId) lines.push(`  request id: ${error.requestId}`);
    if (error.docUrl) lines.push(`  see ${error.docUrl}`);
    return lines.join("\n");
  }
  if (error instanceof StillsTimeoutError || error instanceof StillsConnectionError) {
    return `stills: ${error.message}`;
  }
  if (error instanceof NoKeyError) return `stills: ${error.message}`;
  return `stills: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}

const io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
run(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`stills: ${String(error)}\n`);
    process.exitCode = EXIT.failed;
  },
);
