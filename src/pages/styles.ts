/**
 * The stylesheet of the invoice and message pages. It is placed inline in a `<style nonce>` block
 * and can also be served as a file (`PAGE_CSS`); the page never uses `style=` attributes, which
 * the Content-Security-Policy would block.
 *
 * Colours are chosen for contrast of at least 4.5:1 (text) and 3:1 (focus rings, borders of
 * controls) in both the light and the dark scheme. The QR code always sits on white, because
 * wallets read dark modules on a light ground most reliably.
 */
export const PAGE_CSS = `
:root {
  color-scheme: light dark;
  --bg: #eef1f6;
  --card: #ffffff;
  --text: #161b26;
  --muted: #485264;
  --line: #d5dbe5;
  --accent: #1d4ed8;
  --accent-text: #ffffff;
  --focus: #1d4ed8;
  --field: #f7f9fc;
  --awaiting-bg: #fff5d6; --awaiting-fg: #5c3c00; --awaiting-dot: #b7791f;
  --seen-bg: #e5eeff; --seen-fg: #1e3a8a; --seen-dot: #2563eb;
  --paid-bg: #e3f5e9; --paid-fg: #0f5428; --paid-dot: #15803d;
  --expired-bg: #fde8e8; --expired-fg: #8a1c1c; --expired-dot: #c81e1e;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d111a;
    --card: #171d2a;
    --text: #eef1f6;
    --muted: #b3bdcc;
    --line: #394357;
    --accent: #93b4ff;
    --accent-text: #0d111a;
    --focus: #93b4ff;
    --field: #101520;
    --awaiting-bg: #3a2c08; --awaiting-fg: #ffe08a; --awaiting-dot: #f5b83d;
    --seen-bg: #152a55; --seen-fg: #c7d8ff; --seen-dot: #7aa2ff;
    --paid-bg: #0f3a20; --paid-fg: #b6f0c8; --paid-dot: #4ade80;
    --expired-bg: #4a1515; --expired-fg: #ffd0d0; --expired-dot: #f87171;
  }
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  min-height: 100vh;
  background: var(--bg);
  color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  display: flex;
  flex-direction: column;
  align-items: center;
  padding: 1rem 0.75rem 2rem;
}
.card {
  width: 100%;
  max-width: 30rem;
  background: var(--card);
  border: 1px solid var(--line);
  border-radius: 1rem;
  padding: 1.25rem;
  display: grid;
  gap: 1.25rem;
}
.summary { display: grid; gap: 1rem; align-content: start; min-width: 0; }
.eyebrow { margin: 0; color: var(--muted); font-size: 0.875rem; font-weight: 600; letter-spacing: 0.02em; text-transform: uppercase; }
h1 { margin: 0.125rem 0 0; font-size: 1.375rem; line-height: 1.3; overflow-wrap: anywhere; }
.method { margin: 0.25rem 0 0; color: var(--muted); font-size: 0.9375rem; }
.amount { margin: 0; }
.amount dt { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.amount dd { margin: 0; }
.amount-main { font-size: 1.75rem; font-weight: 700; line-height: 1.2; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.amount-sats, .amount-fiat { color: var(--muted); font-variant-numeric: tabular-nums; }
.amount dt.arrived { position: static; width: auto; height: auto; overflow: visible; clip-path: none; margin-top: 0.5rem; color: var(--muted); font-size: 0.9375rem; }
.amount-arrived { font-size: 1.25rem; font-weight: 700; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.unit { font-weight: 600; }
.status {
  display: flex;
  gap: 0.625rem;
  align-items: flex-start;
  margin: 0;
  padding: 0.75rem 0.875rem;
  border-radius: 0.625rem;
  font-weight: 600;
  background: var(--awaiting-bg);
  color: var(--awaiting-fg);
}
.status-dot { flex: none; width: 0.75rem; height: 0.75rem; margin-top: 0.375rem; border-radius: 50%; background: var(--awaiting-dot); }
.status[data-state="awaiting_payment"] .status-dot { animation: pulse 1.6s ease-in-out infinite; }
.status[data-state="seen"] { background: var(--seen-bg); color: var(--seen-fg); }
.status[data-state="seen"] .status-dot { background: var(--seen-dot); }
.status[data-state="paid"] { background: var(--paid-bg); color: var(--paid-fg); }
.status[data-state="paid"] .status-dot { background: var(--paid-dot); }
.status[data-outcome="underpaid"] { background: var(--awaiting-bg); color: var(--awaiting-fg); }
.status[data-outcome="underpaid"] .status-dot { background: var(--awaiting-dot); }
.status[data-state="expired"] { background: var(--expired-bg); color: var(--expired-fg); }
.status[data-state="expired"] .status-dot { background: var(--expired-dot); }
@keyframes pulse { 50% { opacity: 0.35; } }
@media (prefers-reduced-motion: reduce) { .status-dot { animation: none !important; } }
.countdown { margin: 0; color: var(--muted); }
.countdown .time-left { color: var(--text); font-weight: 700; font-variant-numeric: tabular-nums; }
.pay { display: grid; gap: 0.875rem; min-width: 0; }
.qr {
  justify-self: center;
  width: 100%;
  max-width: 18rem;
  background: #ffffff;
  border: 1px solid var(--line);
  border-radius: 0.75rem;
  padding: 0.5rem;
}
.qr svg { display: block; width: 100%; height: auto; }
.button {
  display: inline-flex;
  align-items: center;
  justify-content: center;
  min-height: 2.75rem;
  padding: 0.5rem 1rem;
  border-radius: 0.625rem;
  border: 2px solid var(--accent);
  background: transparent;
  color: var(--accent);
  font: inherit;
  font-weight: 600;
  text-decoration: none;
  cursor: pointer;
}
.button.primary { background: var(--accent); color: var(--accent-text); }
.button:hover { filter: brightness(1.08); }
a:focus-visible, button:focus-visible, textarea:focus-visible, input:focus-visible {
  outline: 3px solid var(--focus);
  outline-offset: 2px;
}
.field-label { font-weight: 600; font-size: 0.9375rem; }
.copy-row { display: grid; grid-template-columns: 1fr auto; gap: 0.5rem; align-items: start; }
.payment-text {
  width: 100%;
  min-width: 0;
  resize: none;
  padding: 0.5rem 0.625rem;
  border: 1px solid var(--line);
  border-radius: 0.5rem;
  background: var(--field);
  color: var(--text);
  font: 0.8125rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  word-break: break-all;
}
.transfer { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; margin: 0; }
.transfer dt { color: var(--muted); }
.transfer dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.payment-text.memo { font-size: 1.125rem; font-weight: 700; border: 2px solid var(--accent); }
.memo-note { margin: 0; padding: 0.5rem 0.75rem; border-radius: 0.5rem; background: var(--awaiting-bg); color: var(--awaiting-fg); font-size: 0.9375rem; font-weight: 600; }
.copy-feedback { margin: 0; min-height: 1.5em; font-size: 0.9375rem; color: var(--muted); }
.hint { margin: 0; color: var(--muted); font-size: 0.9375rem; }
.pay .hint { text-align: center; }
.noscript { margin: 0; color: var(--muted); font-size: 0.875rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.message { text-align: left; }
.message h1 { font-size: 1.5rem; }
.message p { margin: 0; color: var(--muted); }
@media (max-width: 22rem) {
  .copy-row { grid-template-columns: 1fr; }
}
@media (min-width: 48rem) {
  body { padding-top: 3rem; }
  .card { padding: 2rem; }
  body[data-state="awaiting_payment"] .card {
    max-width: 54rem;
    grid-template-columns: minmax(0, 1fr) minmax(0, 1fr);
    gap: 2rem;
  }
  .amount-main { font-size: 2rem; }
}
`.trim()
