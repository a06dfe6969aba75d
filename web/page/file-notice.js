// A page opened as a file (double-clicking dist/site/index.html) cannot start: browsers
// refuse module scripts and workers from file:// addresses, and say so only in the
// console. This classic script (those still run from a file) says instead, in the page,
// how to serve the folder. Served over http(s) it does nothing. No imports: it must run
// where modules cannot.
(() => {
  if (location.protocol !== "file:") return;
  const windows = /^\/[A-Za-z]:\//.test(location.pathname) || /Windows/.test(navigator.userAgent);
  const parts = decodeURIComponent(location.pathname).split("/");
  const page = parts.pop() || "index.html";
  let folder = parts.join("/") || "/";
  if (windows) folder = folder.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\");
  // Quoted for a shell when it needs it (spaces, quotes, $): the command is copied as is.
  const quoted = /^[\w@%+=:,./\\-]+$/.test(folder) ? folder : windows ? `"${folder}"` : `'${folder.replaceAll("'", "'\\''")}'`;
  const address = `http://127.0.0.1:8000/${page === "index.html" ? "" : page}`;
  const python = windows ? "python" : "python3";

  /** @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag @param {string} text @param {string} [className] @returns {HTMLElementTagNameMap[K]} */
  const make = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text) node.textContent = text;
    if (className) node.className = className;
    return node;
  };
  /** @param {string} text a command to copy */
  const command = (text) => {
    const row = make("div", "", "file-command");
    row.appendChild(make("pre", "")).appendChild(make("code", text));
    if (navigator.clipboard) {
      const copy = make("button", "Copy", "copy");
      copy.type = "button";
      copy.addEventListener("click", () =>
        navigator.clipboard.writeText(text).then(
          () => (copy.textContent = "Copied"),
          () => (copy.textContent = "Select it and copy"),
        ),
      );
      row.appendChild(copy);
    }
    return row;
  };

  const box = make("main", "", "file-notice");
  box.setAttribute("role", "alert");
  box.appendChild(make("h1", "Reckon has to be opened from a web server"));
  box.appendChild(make("p", `This page was opened as a file (${decodeURI(location.href)}). Browsers do not run its scripts and Python workers from a file, so nothing can start here. Serve this folder, then open the address the command prints:`));
  box.appendChild(make("p", "With Reckon (from its checkout: .venv/bin/reckon), which also opens the browser for you:", "file-how"));
  box.appendChild(command(`reckon serve --site ${quoted} --open`));
  box.appendChild(make("p", "Or with Python alone:", "file-how"));
  box.appendChild(command(`${python} -m http.server 8000 --bind 127.0.0.1 --directory ${quoted}`));
  const open = make("p", "and open ");
  const link = make("a", address);
  link.setAttribute("href", address);
  open.append(link, ". A plain server like this works too; only Reckon's own sends the headers that let Stop interrupt a cell without restarting Python.");
  box.appendChild(open);
  document.title = "Reckon: open it from a web server";
  const show = () => document.body.replaceChildren(box);
  // Loaded with `defer`: the body is parsed by now.
  if (document.body) show();
  else document.addEventListener("DOMContentLoaded", show);
})();
