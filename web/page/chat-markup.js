// The chat's static markup (the page's and the <reckon-chat> widget's). No data in
// it: everything from files, runs and models goes in later, as text.

const MARKUP = `
<header class="bar">
  <strong class="brand"><svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="7" fill="#2557d6"/><path d="M8 23V9h7.5a4.5 4.5 0 0 1 .9 8.9L21 23h-3.6l-4.2-5H11.2v5zm3.2-8h4a1.6 1.6 0 0 0 0-3.2h-4z" fill="#fff"/><circle cx="24" cy="10" r="2.2" fill="#ffd166"/></svg>Reckon</strong>
  <button id="model-chip" class="model-chip" type="button" title="The model that answers; click to change it"><span class="chip-label">Model: </span><span id="model-name">…</span></button>
  <span id="demo-note" class="demo-note" hidden title="A built-in planner for common data questions, no network. Configure a real model with reckon serve --upstream …">built-in demo</span>
  <form id="token-form" class="token-form" hidden>
    <label>This relay needs a token <input id="token" type="password" autocomplete="off"></label>
    <button type="submit">Use it</button>
  </form>
  <span id="status" class="status" role="status">loading…</span>
  <progress id="progress" max="1" value="0"></progress>
  <a href="console.html" data-page-only>Console</a>
</header>
<div id="notice" class="notice" role="alert" hidden><span id="notice-text"></span> <button id="notice-close" class="link" type="button" aria-label="Dismiss">×</button></div>
<main>
  <aside class="files" id="drop">
    <nav class="conversations" id="conversations" aria-label="Conversations">
      <div class="conversations-head">
        <h3 class="small">Conversations</h3>
        <button id="conversations-new" type="button" title="Start a new conversation (this one stays in the list)">+ New</button>
      </div>
      <ul id="conversation-list"></ul>
    </nav>
    <p id="conversation-undo" class="undo small" role="status" hidden></p>
    <div class="files-head">
      <label class="button">Add files<input id="upload" type="file" multiple hidden></label>
      <button id="conversations-toggle" class="conversations-toggle" type="button" aria-expanded="false" aria-controls="conversations">Conversations</button>
      <button id="tools-toggle" class="tools-toggle" type="button" aria-expanded="false" aria-controls="tools">Files &amp; settings</button>
    </div>
    <p class="muted small drop-hint">or drop them here. They are kept in this browser until you delete them.</p>
    <ul id="file-list" aria-label="Your files"></ul>
    <div class="tools" id="tools">
      <h3 class="small">Results</h3>
      <ul id="output-list" aria-label="Files the analysis wrote"></ul>
      <button id="new-session" type="button">New conversation</button>
      <button id="rebuild" type="button" hidden>Rebuild variables</button>
      <button id="delete-all" class="danger" type="button" title="Delete every saved file and every conversation from this browser">Delete everything</button>
      <h3 class="small">Notebook</h3>
      <div class="actions">
        <button id="export-notebook" type="button" title="Download this session as a Jupyter notebook (.ipynb)">Export notebook</button>
        <button id="export-script" type="button" title="Download this session as a Python script (.py)">Export script</button>
        <button id="export-report" type="button" title="Download this conversation as one HTML page with its code, outputs and charts">Export report</button>
      </div>
      <label class="button">Import notebook or .py<input id="import" type="file" accept=".ipynb,.py,application/x-ipynb+json,text/x-python" hidden></label>
      <details class="sql-box">
        <summary class="small">SQL over your tables</summary>
        <form id="sql-form" class="sql">
          <textarea id="sql" rows="3" spellcheck="false" placeholder="SELECT * FROM sales LIMIT 10" aria-label="SQL query"></textarea>
          <button id="run-sql" type="submit">Run SQL</button>
        </form>
      </details>
      <details class="settings" id="settings">
        <summary>Settings</summary>
        <fieldset class="rc-settings model-settings">
          <legend>Model</legend>
          <label class="rc-setting">Answers come from <select id="model" aria-label="Model"></select></label>
          <ul id="model-list" class="model-list" aria-label="Models and their state"></ul>
          <p id="model-note" class="muted small"></p>
        </fieldset>
      </details>
    </div>
  </aside>
  <section class="conversation">
    <div id="messages" aria-live="polite"></div>
    <div id="suggestions" class="suggestions" hidden></div>
    <form id="ask-form" class="ask">
      <textarea id="question" rows="2" placeholder="Ask about your data, e.g. “average price by region” or “plot a histogram of age”" aria-label="Question"></textarea>
      <div class="ask-buttons">
        <button id="ask" class="primary" type="submit">Ask</button>
        <button id="stop" type="button" disabled title="Stop (Esc)">Stop</button>
      </div>
      <p class="hint muted">Enter to send · Shift+Enter for a new line · Esc to stop</p>
    </form>
  </section>
</main>`;

/**
 * The chat's elements as a fragment. `page: false` leaves out what only makes sense
 * on Reckon's own page (the link to the console).
 * @param {{page?: boolean}} [options]
 */
export function chatMarkup({ page = true } = {}) {
  const template = document.createElement("template");
  template.innerHTML = MARKUP;
  if (!page) for (const node of template.content.querySelectorAll("[data-page-only]")) node.remove();
  return template.content;
}
