// The load benchmark's side of the API (scripts/bench-load.mjs), as a customer calls it: jobs
// posted and followed with wait=true reads, accounts made through the stack's development
// route, every finished job and account checked (scripts/lib/load-jobs.mjs holds the rules),
// the authenticated read from a few clients, and the memory of the extractor's process tree
// and workerd sampled every 100 ms from /proc.
import { readFile } from "node:fs/promises";
import { treeRssKb } from "../bench-goals.mjs";
import { jobProblems } from "./load-jobs.mjs";
import { createKey, descendants, stackQuery, stackSql } from "./stack.mjs";

const JOB_DEADLINE_MS = 300_000;
const READ_CLIENTS = 4;
const FINAL = new Set(["completed", "failed", "expired"]);
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Everything the bench does against one running stack (scripts/lib/stack.mjs startStack). */
export function loadClient(stack) {
  // --- the API as a customer calls it ---
  async function api(method, path, key, body) {
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = { unparsed: text.slice(0, 300) };
    }
    return { status: response.status, json };
  }

  /** Follows a created job to its end with wait=true reads; the latency counts from `sentAt`. */
  async function follow(spec, key, sentAt, created) {
    let job = created;
    while (!FINAL.has(job?.status) && now() - sentAt < JOB_DEADLINE_MS) {
      const answer = await api("GET", `/jobs/${job.id}?wait=true`, key);
      if (answer.status !== 200) throw new Error(`reading job ${job.id}: ${answer.status}`);
      job = answer.json;
    }
    const finishedAt = now();
    // Wall-clock ends too, to set beside the job's own created/started/completed times.
    const sentEpochMs = Date.now() - (finishedAt - sentAt);
    return { spec, job, sentAt, finishedAt, sentEpochMs, seconds: (finishedAt - sentAt) / 1000 };
  }

  /** Posts a job (without wait) and follows it; `refused` when the API answered 429. */
  async function submit(spec, key) {
    const sentAt = now();
    const posted = await api("POST", "/jobs", key, spec.body);
    if (posted.status === 429) return { refused: true, spec, answer: posted.json };
    if (posted.status !== 201) {
      throw new Error(`POST /jobs answered ${posted.status}: ${JSON.stringify(posted.json)}`);
    }
    const run = follow(spec, key, sentAt, posted.json);
    run.catch(() => {}); // handled by whoever awaits it, perhaps after other posts
    return { refused: false, run };
  }

  async function runJob(spec, key) {
    const submitted = await submit(spec, key);
    if (submitted.refused) throw new Error(`refused: ${JSON.stringify(submitted.answer)}`);
    return submitted.run;
  }

  // --- accounts, and their credits checked against their charges ---
  async function newAccount(label) {
    const email = `load-${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const issued = await createKey({ email, plan: "scale", stack });
    const [row] = await stackQuery(
      stack,
      "SELECT plan_credits + pack_credits AS balance FROM accounts WHERE id = ?",
      [issued.accountId],
    );
    return { email, key: issued.key, accountId: issued.accountId, initial: row.balance };
  }

  /** Balance, holds and ledger of an account against the charges of its finished jobs. */
  async function creditProblems(account, results) {
    const charged = results.reduce((sum, r) => sum + (r.job?.credits_charged ?? 0), 0);
    const [[row], [ledger]] = await stackSql(stack, [
      {
        sql: "SELECT plan_credits + pack_credits AS balance, reserved_credits AS reserved FROM accounts WHERE id = ?",
        params: [account.accountId],
      },
      {
        sql: `SELECT coalesce(sum(plan_delta + pack_delta), 0) AS total,
                     coalesce(sum(CASE WHEN job_id IS NOT NULL THEN plan_delta + pack_delta END), 0) AS jobs
              FROM credit_ledger WHERE account_id = ?`,
        params: [account.accountId],
      },
    ]);
    const problems = [];
    const who = `account ${account.accountId}`;
    if (row.reserved !== 0) problems.push(`${who} still holds ${row.reserved} credits`);
    if (account.initial - row.balance !== charged) {
      problems.push(
        `${who} lost ${account.initial - row.balance} credits, its jobs were charged ${charged}`,
      );
    }
    if (-ledger.jobs !== charged)
      problems.push(`${who}: the ledger charged ${-ledger.jobs}, the jobs ${charged}`);
    if (ledger.total !== row.balance)
      problems.push(`${who}: ledger ${ledger.total} ≠ balance ${row.balance}`);
    return problems;
  }

  /** Every job's frames and charge, one frame of each fetched as a JPEG, then the accounts. */
  async function check(results, accounts) {
    const problems = results.flatMap((r) => jobProblems(r.spec, r.job));
    for (const r of results) {
      const url = r.job?.frames?.[0]?.url;
      if (!url) continue;
      const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
      if (!(bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)) {
        problems.push(`${r.spec.kind} job ${r.job.id}: its first frame is not a JPEG`);
      }
    }
    for (const account of accounts) {
      problems.push(
        ...(await creditProblems(
          account,
          results.filter((r) => r.account === account),
        )),
      );
    }
    return problems;
  }

  // --- memory: the extractor's process tree and workerd, every 100 ms ---
  async function workerdPid() {
    for (const pid of await descendants(stack.children.edge.pid)) {
      const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "");
      if (comm.trim() === "workerd") return pid;
    }
    return null;
  }

  const memory = { extractorKb: 0, workerdKb: 0 };
  let workerd = null;
  let sampling = false;
  const sampler = setInterval(async () => {
    if (sampling) return;
    sampling = true;
    try {
      workerd ??= await workerdPid();
      const extractor = stack.children.extractor?.pid;
      if (extractor) memory.extractorKb = Math.max(memory.extractorKb, await treeRssKb(extractor));
      if (workerd) memory.workerdKb = Math.max(memory.workerdKb, await treeRssKb(workerd));
    } finally {
      sampling = false;
    }
  }, 100);
  /**
   * CPU seconds so far (/proc/<pid>/stat, in clock ticks of 1/100 s): the extractor's own Node
   * (its JavaScript, sharp's threads), its media processes once ended (what it has reaped),
   * every workerd of the edge (`wrangler dev` runs two, and the worker's is not the first one
   * found), the Node process that hosts them (edge-host.mjs, or wrangler's), and this process
   * (the bench's origin, which serves every job's bytes, and its clients).
   */
  async function cpuSeconds() {
    const ticks = async (pid) => {
      if (!pid) return [0, 0];
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
      if (!stat) return [0, 0];
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime, stime, then cutime, cstime (children waited for): fields 14–17.
      return [(Number(f[11]) + Number(f[12])) / 100, (Number(f[13]) + Number(f[14])) / 100];
    };
    const [extractor, media] = await ticks(stack.children.extractor?.pid);
    let edge = 0;
    let [host] = await ticks(stack.children.edge.pid);
    for (const pid of await descendants(stack.children.edge.pid)) {
      const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "");
      const [own] = await ticks(pid);
      if (comm.trim() === "workerd") edge += own;
      else host += own;
    }
    const bench = process.cpuUsage();
    return {
      extractor,
      media,
      workerd: edge,
      host,
      bench: (bench.user + bench.system) / 1e6,
    };
  }

  /**
   * Runs `work` and answers its result with the peaks sampled while it ran, and the CPU seconds
   * each part used meanwhile (media processes still running at the end are not counted).
   */
  async function withPeaks(work) {
    memory.extractorKb = 0;
    memory.workerdKb = 0;
    const before = await cpuSeconds();
    const result = await work();
    await sleep(150); // one more sample after the last job
    const after = await cpuSeconds();
    const cpu = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
    return { result, peaks: { ...memory }, cpu };
  }

  // --- the authenticated read ---
  const read = { keys: [], jobId: null };
  /** GETs of one completed job from READ_CLIENTS clients until `seconds` pass or `stop()`. */
  async function reads(seconds, stop = () => false) {
    let ok = 0;
    let other = 0;
    let i = 0;
    const started = now();
    const deadline = started + seconds * 1000;
    // What the reads had of the machine: workerd's CPU, and this process's (the clients, and
    // the origin that serves the running jobs' bytes).
    const cpuBefore = await cpuSeconds();
    const benchBefore = process.cpuUsage();
    await Promise.all(
      Array.from({ length: READ_CLIENTS }, async () => {
        while (now() < deadline && !stop()) {
          const response = await fetch(`${stack.apiUrl}/jobs/${read.jobId}`, {
            headers: { authorization: `Bearer ${read.keys[i++ % read.keys.length]}` },
          });
          await response.arrayBuffer();
          if (response.status === 200) ok++;
          else other++;
        }
      }),
    );
    const elapsed = (now() - started) / 1000;
    const cpuAfter = await cpuSeconds();
    const bench = process.cpuUsage(benchBefore);
    const cpu = {
      workerd: cpuAfter.workerd - cpuBefore.workerd,
      extractor: cpuAfter.extractor - cpuBefore.extractor,
      bench: (bench.user + bench.system) / 1e6,
    };
    return { rps: ok / elapsed, seconds: elapsed, other, cpu };
  }

  /** Submits every entry at once and follows each; wall time from the first POST to the last end. */
  async function workload(entries) {
    const started = now();
    const results = await Promise.all(
      entries.map(async (e) => ({ ...(await runJob(e.spec, e.account.key)), account: e.account })),
    );
    const wall = (Math.max(...results.map((r) => r.finishedAt)) - started) / 1000;
    return { wall, results };
  }

  /** The reader: more keys on its account, so its limiter never refuses the reads. */
  async function addReadKeys(account, count) {
    const { issueKeyStatements } = await import("../../schema/accounts.ts");
    const more = [];
    for (let k = 1; k < count; k++) more.push(await issueKeyStatements({ email: account.email }));
    // Past the first two statements (the account, made already): the key alone.
    await stackSql(
      stack,
      more.flatMap((issued) => issued.statements.slice(2)),
    );
    read.keys = [account.key, ...more.map((issued) => issued.key)];
  }

  return {
    submit,
    runJob,
    workload,
    newAccount,
    check,
    addReadKeys,
    read,
    reads,
    withPeaks,
    stop: () => clearInterval(sampler),
  };
}
