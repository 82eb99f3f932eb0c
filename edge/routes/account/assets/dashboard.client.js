// The dashboard's little script; every page works without it. It adds copy buttons to
// one-time secrets and asks before a form does something that cannot be undone.

for (const button of document.querySelectorAll("button[data-copy-from]")) {
  const field = document.getElementById(button.dataset.copyFrom);
  const status = button.parentElement.querySelector(".copy-status");
  if (!field || !status) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = "Copied.";
    } catch {
      // No clipboard (an http page, a refused permission): select it for Ctrl+C instead.
      field.focus();
      field.select();
      status.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy.";
    }
  });
}

// A secret shown once is selected whole on focus: one click, one copy.
for (const field of document.querySelectorAll("input.secret-value")) {
  field.addEventListener("focus", () => field.select());
}

for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}

// ── Jobs that update themselves (decision 0241) ───────────────────────────────────────────
// While a job on the page runs, /dashboard/jobs/live is polled for its status and progress (as
// the API reads them); the bars follow, and when a job's status changes, the part of the page
// that shows it is fetched again and put in place, without reloading the page. Polling stops
// once nothing runs, and pauses while the tab is hidden.

const FINAL = new Set(["completed", "failed", "expired"]);
const JOB_EVERY_MS = 1000;
const LIST_EVERY_MS = 2000;
const LONGEST_WAIT_MS = 30_000;

/** The running jobs shown in `root`, by id, with the element that carries each one's status. */
function runningJobs(root) {
  const found = new Map();
  for (const element of root.querySelectorAll("[data-live-job], tr[data-job-id]")) {
    const id = element.dataset.liveJob ?? element.dataset.jobId;
    if (id && !FINAL.has(element.dataset.status)) found.set(id, element);
  }
  return found;
}

function showProgress(element, job) {
  const holder = element.querySelector("[data-progress]");
  if (!holder) return;
  const bar = holder.querySelector("progress");
  const label = holder.querySelector(".job-progress-label");
  const { progress } = job;
  if (progress?.frames_total) {
    bar.max = progress.frames_total;
    bar.value = Math.min(progress.frames_done, progress.frames_total);
  } else {
    bar.removeAttribute("value");
  }
  bar.setAttribute("aria-label", job.label);
  if (label) label.textContent = job.label;
}

/**
 * Fetches the page again and puts its copy of `selector` in place of ours; with `ifChanged`,
 * only when its `data-state` differs (nothing moves under the reader's eyes for nothing).
 * False when it could not (signed out, an error, the part gone).
 */
async function refreshPart(selector, ifChanged = false) {
  const response = await fetch(window.location.href, { credentials: "same-origin" });
  if (response.redirected || response.status === 401 || response.status === 403) return false;
  if (!response.ok) throw new Error(`the page answered ${response.status}`);
  const page = new DOMParser().parseFromString(await response.text(), "text/html");
  const fresh = page.querySelector(selector);
  const current = document.querySelector(selector);
  if (!fresh || !current) return false;
  if (ifChanged && fresh.dataset.state === current.dataset.state) return true;
  current.replaceWith(document.adoptNode(fresh));
  enhance(fresh);
  return true;
}

/**
 * Calls `step` every `every` ms while `active()` says something shown still moves: it backs off
 * (doubling, to LONGEST_WAIT_MS) while `step` throws, stops when it answers false (signed out,
 * refused), and pauses while the tab is hidden.
 */
function keepFollowing(every, active, step) {
  let wait = every;
  let timer = 0;

  async function poll() {
    timer = 0;
    if (!active() || document.hidden) return; // visibilitychange starts it again
    try {
      if ((await step()) === false) return;
      wait = every;
    } catch {
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
    schedule();
  }

  function schedule() {
    if (!timer && active()) timer = setTimeout(poll, wait);
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) schedule();
  });
  schedule();
}

function followJobs() {
  const onJobPage = document.querySelector("[data-live-job]") !== null;
  const part = onJobPage ? "[data-live-job]" : "[data-live-list]";
  if (!document.querySelector(part)) return;
  keepFollowing(
    onJobPage ? JOB_EVERY_MS : LIST_EVERY_MS,
    () => runningJobs(document).size > 0,
    async () => {
      const running = runningJobs(document);
      const ids = [...running.keys()].join(",");
      const response = await fetch(`/dashboard/jobs/live?ids=${ids}`, {
        credentials: "same-origin",
        headers: { accept: "application/json" },
      });
      // Signed out (sent to sign-in) or refused: stop rather than ask again and again.
      if (response.redirected || response.status === 401 || response.status === 403) return false;
      if (!response.ok) throw new Error(`live answered ${response.status}`);
      const answer = await response.json();
      let changed = false;
      for (const job of answer.jobs) {
        const element = running.get(job.id);
        if (!element) continue;
        if (job.status !== element.dataset.status) changed = true;
        else showProgress(element, job);
      }
      if (changed) await refreshPart(part);
    },
  );
}

// ── Batches that update themselves (decision 0383) ────────────────────────────────────────
// While a batch shown is not completed, the page is fetched again every few seconds and its
// batch part put in place when what it shows changed (its `data-state`: statuses, counts,
// jobs, credits). Polling stops once every batch shown is completed, backs off on errors, stops
// when signed out, and pauses while the tab is hidden.

const BATCH_EVERY_MS = 3000;

function followBatches() {
  const part = document.querySelector("[data-live-batch]")
    ? "[data-live-batch]"
    : "[data-live-batches]";
  if (!document.querySelector(part)) return;
  keepFollowing(
    BATCH_EVERY_MS,
    () =>
      [...document.querySelectorAll("[data-live-batch], tr[data-batch-id]")].some(
        (element) => element.dataset.status !== "completed",
      ),
    () => refreshPart(part, true),
  );
}

// ── The frames' lightbox ──────────────────────────────────────────────────────────────────
// A click on a frame opens it in a modal dialog (focus stays inside; Esc closes it natively);
// ← and → move to the previous and next frame, and the dialog says each one's number, time,
// pts and caption. Without this script the link opens the frame itself.

function openLightbox(links, start) {
  const dialog = document.getElementById("lightbox");
  if (!dialog || typeof dialog.showModal !== "function") return false;
  // Made on opening and dropped on closing: an <img> without a picture would sit in the page.
  const image = document.createElement("img");
  image.className = "lightbox-image";
  dialog.querySelector(".lightbox-picture").replaceChildren(image);
  const title = dialog.querySelector(".lightbox-title");
  const caption = dialog.querySelector(".lightbox-caption");
  const original = dialog.querySelector("[data-lightbox-original]");
  let index = start;

  function show(next) {
    index = (next + links.length) % links.length;
    const link = links[index];
    image.src = link.dataset.full;
    image.alt = link.querySelector("img")?.alt ?? link.dataset.title;
    title.textContent = `${link.dataset.title} (${index + 1} of ${links.length})`;
    caption.textContent = link.dataset.caption ?? "";
    caption.hidden = !link.dataset.caption;
    original.href = link.dataset.full;
    original.hidden = link.dataset.onlyThumb === "true";
  }

  const onKey = (event) => {
    if (event.key === "ArrowRight") show(index + 1);
    else if (event.key === "ArrowLeft") show(index - 1);
    else return;
    event.preventDefault();
  };
  const prev = dialog.querySelector("[data-lightbox-prev]");
  const next = dialog.querySelector("[data-lightbox-next]");
  const close = dialog.querySelector("[data-lightbox-close]");
  const onPrev = () => show(index - 1);
  const onNext = () => show(index + 1);
  const onClose = () => dialog.close();
  dialog.addEventListener("keydown", onKey);
  prev.addEventListener("click", onPrev);
  next.addEventListener("click", onNext);
  close.addEventListener("click", onClose);
  dialog.addEventListener(
    "close",
    () => {
      dialog.removeEventListener("keydown", onKey);
      prev.removeEventListener("click", onPrev);
      next.removeEventListener("click", onNext);
      close.removeEventListener("click", onClose);
      image.remove();
      links[index].focus();
    },
    { once: true },
  );
  show(start);
  dialog.showModal();
  close.focus();
  return true;
}

function enhanceGallery(root) {
  for (const gallery of root.querySelectorAll("[data-gallery]")) {
    const links = [...gallery.querySelectorAll("a[data-lightbox]")];
    links.forEach((link, i) => {
      link.addEventListener("click", (event) => {
        // A new tab or window (Ctrl, ⌘, Shift, middle click) opens the file as before.
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        if (openLightbox(links, i)) event.preventDefault();
      });
    });
  }
}

// ── Parts put in place by followJobs get what site.client.js gave the page at load ────────────
const localTime = new Intl.DateTimeFormat(undefined, {
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});

function enhance(root) {
  enhanceGallery(root);
  for (const time of root.querySelectorAll("time[data-local='time']")) {
    const date = new Date(time.dateTime);
    if (!Number.isNaN(date.getTime())) time.textContent = localTime.format(date);
  }
  for (const button of root.querySelectorAll("button[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    const status = button.parentElement.querySelector(".copy-status");
    if (!source || !status) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(source.textContent);
        status.textContent = "Copied.";
      } catch {
        status.textContent = "Select the text and press Ctrl+C (⌘C on a Mac) to copy.";
      }
    });
  }
}

enhanceGallery(document);
followJobs();
followBatches();
