// The one script every page loads (edge/pages/layout.tsx): small enhancements of markup that
// already works without it. Copy buttons on code blocks (CopyableCode), language tabs of code
// samples (CodeSamples), times in the visitor's own zone (LocalTime) and the header's menu.

// Copy buttons: copy the block's text, say so beside the button, and fall back to selecting the
// text where the clipboard is refused (an http page, a denied permission).
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.dataset.copy);
  const status = button.parentElement.querySelector(".copy-status");
  if (!source || !status) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.textContent);
      status.textContent = "Copied.";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      status.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy.";
    }
    setTimeout(() => {
      status.textContent = "";
    }, 4000);
  });
}

// Code samples: every block is on the page; with this script they become tabs (the WAI-ARIA
// tabs pattern: arrows, Home and End move between them). The language picked is remembered and
// applied to every set of samples, as a reader who writes Python wants Python everywhere.
const LANGUAGE_KEY = "stills.sample-language";
const tabSets = [...document.querySelectorAll("[data-code-tabs]")];

function rememberedLanguage() {
  try {
    return localStorage.getItem(LANGUAGE_KEY);
  } catch {
    return null;
  }
}

function showLanguage(set, language, focus) {
  const tabs = [...set.querySelectorAll('[role="tab"]')];
  const chosen = tabs.find((tab) => tab.dataset.language === language) ?? tabs[0];
  for (const tab of tabs) {
    const selected = tab === chosen;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !selected;
  }
  if (focus) chosen.focus();
}

for (const set of tabSets) {
  const tablist = set.querySelector('[role="tablist"]');
  const tabs = [...tablist.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    const panel = document.getElementById(tab.getAttribute("aria-controls"));
    panel.setAttribute("role", "tabpanel");
    panel.setAttribute("aria-labelledby", tab.id);
    tab.addEventListener("click", () => {
      try {
        localStorage.setItem(LANGUAGE_KEY, tab.dataset.language);
      } catch {}
      for (const other of tabSets) showLanguage(other, tab.dataset.language, false);
    });
  }
  tablist.addEventListener("keydown", (event) => {
    const current = tabs.indexOf(document.activeElement);
    if (current < 0) return;
    const next = {
      ArrowRight: (current + 1) % tabs.length,
      ArrowLeft: (current - 1 + tabs.length) % tabs.length,
      Home: 0,
      End: tabs.length - 1,
    }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    showLanguage(set, tabs[next].dataset.language, true);
  });
  set.classList.add("code-tabs-ready");
  tablist.hidden = false;
  showLanguage(set, rememberedLanguage(), false);
}

// Times: the page says them in UTC; here they are said in the visitor's zone, with the UTC
// wording kept in the title for hovering.
const timeFormat = new Intl.DateTimeFormat(undefined, {
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZoneName: "short",
});
const dateFormat = new Intl.DateTimeFormat(undefined, {
  day: "numeric",
  month: "short",
  year: "numeric",
});
for (const time of document.querySelectorAll("time[data-local]")) {
  const date = new Date(time.dateTime);
  if (Number.isNaN(date.getTime())) continue;
  time.textContent = (time.dataset.local === "date" ? dateFormat : timeFormat).format(date);
}

// The header's menu: a <details> that is only a menu on narrow screens (site.css shows its list
// inline on wide ones). Escape or a click elsewhere closes it.
for (const menu of document.querySelectorAll("details.site-menu")) {
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
}

// Tabs that scroll sideways (the dashboard's sections on a phone) show the current one.
for (const current of document.querySelectorAll(".scroll-tabs [aria-current='page']")) {
  const strip = current.closest(".scroll-tabs");
  const overflow = current.offsetLeft + current.offsetWidth - strip.clientWidth;
  if (overflow > 0) strip.scrollLeft = overflow + 16;
}
