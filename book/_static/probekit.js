// While a wide table (class pk-wide, probekit/report/layout.py) is in view, fold the page's table of contents, which
// it covers, as the book's theme does for its own full-width blocks; a page without contents has nothing to fold.
document.addEventListener("DOMContentLoaded", () => {
  const contents = document.querySelector("div.bd-sidebar-secondary");
  const wide = document.querySelectorAll("div.pk-wide");
  if (!contents || !wide.length) return;
  const shown = new Set();
  const watch = new IntersectionObserver((entries) => {
    entries.forEach((e) => (e.isIntersecting ? shown.add(e.target) : shown.delete(e.target)));
    contents.classList.toggle("hide", shown.size > 0);
  }, { rootMargin: "0px 0px -33% 0px" });
  wide.forEach((el) => watch.observe(el));
});
