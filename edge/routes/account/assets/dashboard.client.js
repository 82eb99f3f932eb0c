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
