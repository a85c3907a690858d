/**
 * The console's stylesheet, placed inline with the response's nonce (no `style=` attributes: the
 * Content-Security-Policy refuses them). Colours keep a contrast of at least 4.5:1 for text and 3:1
 * for focus rings and control borders, in the light and the dark scheme; every focusable element
 * shows a visible ring when reached by keyboard.
 */
export const CONSOLE_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f3f5f9; --card: #ffffff; --text: #161b26; --muted: #485264; --line: #c9d1dd;
  --accent: #1d4ed8; --accent-text: #ffffff; --focus: #1d4ed8; --field: #ffffff;
  --bad-bg: #fde8e8; --bad-fg: #8a1c1c; --good-bg: #e3f5e9; --good-fg: #0f5428;
  --warn-bg: #fff5d6; --warn-fg: #5c3c00; --nav-bg: #161b26; --nav-fg: #eef1f6; --nav-current: #93b4ff;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d111a; --card: #171d2a; --text: #eef1f6; --muted: #b3bdcc; --line: #4a556b;
    --accent: #93b4ff; --accent-text: #0d111a; --focus: #93b4ff; --field: #101520;
    --bad-bg: #4a1515; --bad-fg: #ffd0d0; --good-bg: #0f3a20; --good-fg: #b6f0c8;
    --warn-bg: #3a2c08; --warn-fg: #ffe08a; --nav-bg: #05070c; --nav-fg: #eef1f6; --nav-current: #93b4ff;
  }
}
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", Arial, sans-serif; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: 0.5rem; top: -3rem; background: var(--card); color: var(--accent);
  padding: 0.5rem 0.75rem; border: 2px solid var(--focus); z-index: 10; }
.skip:focus { top: 0.5rem; }
header.top { background: var(--nav-bg); color: var(--nav-fg); display: flex; flex-wrap: wrap;
  align-items: center; gap: 0.5rem 1.5rem; padding: 0.5rem 1rem; }
header.top .brand { font-weight: 700; }
header.top a { color: var(--nav-fg); }
header.top :focus-visible { outline-color: var(--nav-current); }
nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
nav a { text-decoration: none; padding: 0.25rem 0.1rem; display: inline-block; }
nav a:hover { text-decoration: underline; }
nav a[aria-current="page"] { color: var(--nav-current); border-bottom: 2px solid var(--nav-current); }
.who { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; font-size: 0.9rem; }
.who form { display: inline; margin: 0; }
.who button { background: transparent; color: var(--nav-fg); border: 1px solid var(--nav-fg); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
section.card, .card { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 1rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em;
  overflow-wrap: anywhere; }
form.inline { display: inline; margin: 0; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-end; margin-bottom: 1rem; }
label { display: block; font-weight: 600; margin-bottom: 0.2rem; }
fieldset { border: 1px solid var(--line); border-radius: 4px; padding: 0.4rem 0.75rem; margin: 0; }
fieldset.checks { display: flex; flex-wrap: wrap; gap: 0.35rem 1rem; }
.check { display: inline-flex; align-items: center; gap: 0.35rem; }
.check label { display: inline; font-weight: 400; margin: 0; }
legend { font-weight: 600; padding: 0 0.25rem; }
ol.timeline { margin: 0; padding-left: 1.25rem; }
ol.timeline li { margin-bottom: 0.25rem; }
.field { margin-bottom: 0.75rem; }
.hint { color: var(--muted); font-size: 0.9rem; margin: 0.2rem 0 0; }
input, select { font: inherit; color: var(--text); background: var(--field); border: 1px solid var(--muted);
  border-radius: 4px; padding: 0.4rem 0.5rem; min-width: 12rem; }
/* A checkbox is a box, not a text field: no field width that would push it away from its label. */
input[type="checkbox"], input[type="radio"] { min-width: 0; width: 1.1rem; height: 1.1rem; margin: 0; padding: 0;
  accent-color: var(--accent); }
button { font: inherit; cursor: pointer; border-radius: 4px; padding: 0.4rem 0.8rem;
  background: var(--accent); color: var(--accent-text); border: 1px solid var(--accent); }
button.secondary { background: transparent; color: var(--accent); }
.notice { padding: 0.6rem 0.8rem; border-radius: 4px; margin: 0 0 1rem; }
.notice.bad { background: var(--bad-bg); color: var(--bad-fg); }
.notice.good { background: var(--good-bg); color: var(--good-fg); }
.notice.warn { background: var(--warn-bg); color: var(--warn-fg); }
.muted { color: var(--muted); }
.signin { max-width: 24rem; margin: 3rem auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
svg.chart { max-width: 100%; height: auto; }
svg.chart text { fill: var(--text); font-size: 11px; }
svg.chart .axis { stroke: var(--muted); }
svg.chart .bar { fill: var(--accent); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
`
