// Copy buttons of code blocks (CopyableCode): copies the block's text, says so in the status
// next to the button, and falls back to selecting the text where the clipboard is refused.
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
